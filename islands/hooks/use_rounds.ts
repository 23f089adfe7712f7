/**
 * The pages' view of the rounds (protocol §4.9): the list, followed every few seconds so that an
 * open page moves to a new round by itself; and the presenter's sign-in, kept in this browser.
 * @module
 */
import { useEffect, useState } from "react";
import { ApiCallError, createApiClient } from "../../lib/client/api_client.ts";
import { pageFetch } from "./page_fetch.ts";
import type { PhasedRoundInfo, PhasedRoundList } from "../../lib/client/rounds/phases.ts";
import { ADMIN_TOKEN_KEY, signInPresenter } from "../../lib/client/rounds/presenter_sign_in.ts";
import { quietRoom } from "./quiet_signals.ts";

/** How often a page asks which round is current. */
export const ROUNDS_POLL_MS = 3000;

export { ADMIN_TOKEN_KEY } from "../../lib/client/rounds/presenter_sign_in.ts";

/** Round 1 as a server without rounds answers it: the election, free text. */
export const ELECTION_ROUND: PhasedRoundInfo = {
  id: 1,
  question: "",
  choices: [],
  createdAt: 0,
  blockIntervalMs: 60_000,
  phase: "voting",
  minVoters: 8,
  lateJoiners: false,
  openedAt: 0,
  joinDeadline: null,
  relayed: false,
};

/**
 * The rounds and the current one, read now and every {@link ROUNDS_POLL_MS}; null until the first
 * answer. A server without rounds (404) has round 1 only; a failed read keeps what was known and
 * asks again. A quiet phone (page §14.8) reads nothing more while its round is current: the phase
 * comes from its round's state read, and the list is read again once that says another round is.
 */
export function useRounds(): PhasedRoundList | null {
  const [list, setList] = useState<PhasedRoundList | null>(null);
  useEffect(() => {
    const api = createApiClient({ fetch: pageFetch });
    let live = true;
    const read = async () => {
      const quiet = quietRoom.peek();
      if (quiet !== null) {
        const state = quiet.state;
        if (state === null || state.current === state.round) {
          if (state !== null) setList((old) => old === null ? old : withState(old, state));
          return;
        }
      }
      try {
        const answer = await api.rounds();
        if (live) setList((old) => sameList(old, answer) ? old : answer);
      } catch (error) {
        if (!live) return;
        // Only a server without rounds means round 1; a failed read keeps what was known, or keeps
        // the page finding the current round, so a phone never joins a round that is over.
        if (error instanceof ApiCallError && error.status === 404) {
          setList((old) => old ?? { current: 1, rounds: [ELECTION_ROUND] });
        } else {
          console.error(`The rounds could not be read: ${(error as Error).message}`);
        }
      }
    };
    read();
    const timer = setInterval(read, ROUNDS_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  return list;
}

/** `list` with the phase and opening of the quiet round as its state read says. */
function withState(
  list: PhasedRoundList,
  state: { round: number; phase: PhasedRoundInfo["phase"]; openedAt: number | null },
): PhasedRoundList {
  const round = list.rounds.find((r) => r.id === state.round);
  if (round === undefined || (round.phase === state.phase && round.openedAt === state.openedAt)) {
    return list;
  }
  const changed = { ...round, phase: state.phase, openedAt: state.openedAt };
  return { ...list, rounds: list.rounds.map((r) => r.id === state.round ? changed : r) };
}

/** True when nothing the pages show changed: the current round, the rounds and their phases. */
function sameList(a: PhasedRoundList | null, b: PhasedRoundList): boolean {
  return a !== null && a.current === b.current && a.rounds.length === b.rounds.length &&
    a.rounds.every((round, i) => round.phase === b.rounds[i].phase);
}

/** The round `id` of `list`, or round 1 when it is not listed. */
export function roundOf(list: PhasedRoundList, id: number): PhasedRoundInfo {
  return list.rounds.find((round) => round.id === id) ?? ELECTION_ROUND;
}

/**
 * The presenter's sign-in: `?admin=TOKEN` (or `#admin=TOKEN`, which never reaches a server log)
 * is removed from the address bar at once, and kept in this browser's storage only once
 * `GET /api/presenter` accepts it; until then the token kept before stays (page §14.3). Answers
 * the accepted token, else null, and the sign-out.
 */
export function usePresenter(): { token: string | null; signOut(): void } {
  const [token, setToken] = useState<string | null>(null);
  useEffect(() => {
    const url = new URL(location.href);
    const fragment = new URLSearchParams(url.hash.slice(1));
    const given = url.searchParams.get("admin") ?? fragment.get("admin");
    if (given !== null) {
      url.searchParams.delete("admin");
      fragment.delete("admin");
      const hash = fragment.size > 0 ? `#${fragment}` : "";
      history.replaceState(history.state, "", url.pathname + url.search + hash);
    }
    let live = true;
    const api = createApiClient({ fetch });
    signInPresenter({
      given,
      storage: localStorage,
      check: (candidate) =>
        api.checkPresenter(candidate).then(
          () => "accepted" as const,
          (error) =>
            error instanceof ApiCallError && error.status === 401 ? "refused" as const : "unknown",
        ),
      log: (message) => console.error(message),
    }).then((accepted) => live && setToken(accepted));
    return () => {
      live = false;
    };
  }, []);
  return {
    token,
    signOut() {
      localStorage.removeItem(ADMIN_TOKEN_KEY);
      setToken(null);
    },
  };
}
