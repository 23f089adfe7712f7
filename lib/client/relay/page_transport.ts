/**
 * Browser-safe. The one choice of how a page's API calls travel (protocol §7): with no relay
 * pinned, straight to the server; with one, the key registration goes straight to the server once
 * the relay's key configuration is held to the pin, and every call after it goes through the relay,
 * never straight again. A vote waits for its send window; a call naming a ballot made soon after
 * the page loaded waits a random time, so a page load is not a beacon for the call that follows,
 * and once answered it is kept and never asked again.
 * @module
 */
import { callKind, roundOfPath, type Transport } from "../api_client.ts";
import type { RelayPin } from "./fragment.ts";
import { type KeyCheck, RelayError } from "./relayed_transport.ts";
import { classifyVoteAnswer, MAX_VOTE_SENDS, nextVoteStep, tagCheckStep } from "./vote_retry.ts";
import {
  type HallSendPlan,
  planHallSend,
  planResume,
  planVoteSend,
  type Random,
  type SendPlan,
} from "./send_window.ts";

// Which call a path is, and which round it calls, are the API client's to say: it alone writes
// the API's paths (lib/client/api_client.ts).
export { type CallKind, callKind, roundOfPath } from "../api_client.ts";

/**
 * When a round's voting opened and how often it seals (`GET /api/rounds`); with the state read
 * (page §14.8), the send window W the phone worked out itself.
 */
export type RoundTiming = {
  openedAt: number;
  intervalMs: number;
  windowMs?: number;
  /** A seal tick of the round (ms since the epoch): the next ones follow every `intervalMs`. */
  sealAt?: number;
};

/** Keeps a page's relayed requests within a number a minute (`RequestBudget`, page §14.8). */
export type Budget = { delayFor(now: number): number; record(now: number): void };

/** A wait the page is in: a vote held for its send window, or a ballot read held after a load. */
export type Wait = { kind: "vote" | "ballot"; until: number };

/** What the page transport needs from the page. */
export type PageTransportDeps = {
  /** The network, straight to the server. */
  direct: Transport;
  /** The relay pin calls of `round` go through, read at each call (protocol §7.4). */
  pin(round: number | "list" | null): RelayPin | null;
  /**
   * True once this browser registered a key with the relay pinned (kept in its storage), or holds
   * a registered key of `round` (made before the pin was held).
   */
  registered(round: number | "list"): boolean;
  /** Records that this browser registered a key of `round`, or voted in it (it has joined). */
  markRegistered(round: number | "list"): void;
  /**
   * Reads the relay's key configuration and holds it to `pin`, the pin of `round` (no HPKE
   * needed), before a registration in `round`.
   */
  keyCheck(pin: RelayPin, round: number | "list"): Promise<KeyCheck>;
  /** The relayed transport for `pin`, its HPKE code loaded on first use. */
  relayed(pin: RelayPin): Promise<Transport>;
  /** The timing of round `round`, read through the relay; null when unknown. */
  timing(round: number): Promise<RoundTiming | null>;
  /** The clock, a sleep and the random source of the send window. */
  now(): number;
  sleep(ms: number, signal?: AbortSignal | null): Promise<void>;
  random: Random;
  /** When the page loaded (ms since the epoch). */
  loadedAt: number;
  /** Hears a mismatch of the relay's key configuration (the page shows `[data-relay-alert]`). */
  onAlert?(check: KeyCheck & { kind: "mismatch" }): void;
  /** Hears a wait beginning and its end (null). */
  onWait?(wait: Wait | null): void;
  /** Every relayed request waits until it fits this budget (none: sent at once). */
  budget?: Budget;
  /**
   * Answers kept by path: a ballot's tag, proof and the block hash before it, once answered 200,
   * never change (the fork watch guards them from then on), so they are read once.
   */
  kept?: {
    get(path: string): KeptAnswer | null;
    set(path: string, answer: KeptAnswer): void;
  };
};

/** A kept answer: its content type and body. */
export type KeptAnswer = { type: string; body: string };

/** The sealing interval assumed for a round whose timing could not be read (protocol default). */
export const FALLBACK_INTERVAL_MS = 15_000;

/** The page's transport (see the module comment). */
export function createPageTransport(deps: PageTransportDeps): Transport {
  // Called on its own, never as a method of `deps`: `fetch` refuses any `this` but the window.
  const { direct } = deps;
  /** Straight calls under way, and registrations under way. */
  const underway = new Set<Promise<Response>>();
  let registering = 0;
  let quietAt: number | null = null;
  const ballotQuietAt = async (round: number) => {
    if (quietAt === null) {
      // Without its timing, the round is taken as opened long ago: a draw from the load on.
      const { openedAt, intervalMs } = await deps.timing(round) ??
        { openedAt: 0, intervalMs: FALLBACK_INTERVAL_MS };
      quietAt = planResume({ openedAt, loadedAt: deps.loadedAt, intervalMs }, deps.random).at;
    }
    return quietAt;
  };

  const hold = async (wait: Wait, signal: AbortSignal | null) => {
    const ms = wait.until - deps.now();
    if (ms <= 0) return;
    deps.onWait?.(wait);
    try {
      await deps.sleep(ms, signal);
    } finally {
      deps.onWait?.(null);
    }
  };

  return async (url, init) => {
    const path = new URL(url, "http://page.invalid").pathname;
    const round = roundOfPath(path);
    const pin = deps.pin(round);
    // The election (round 1) and the lab keep their specified calls, straight to the server; so
    // does the presenter's, which names its sender by its token anyway.
    const presenter = new Headers(init.headers).has("authorization");
    if (pin === null || round === null || presenter) return await direct(url, init);
    const kind = callKind(init.method ?? "GET", path);
    if (kind === "registration") {
      const check = await deps.keyCheck(pin, round);
      if (check.kind === "mismatch") {
        deps.onAlert?.(check);
        throw new RelayError("key-mismatch", mismatchText(pin, check));
      }
      if (check.kind === "unavailable") {
        throw new RelayError("relay-unreachable", `Nothing was sent: ${check.reason}`);
      }
      // From here on every other call goes through the relay, and the registration waits for the
      // straight calls already under way: none reaches the server after it.
      registering++;
      try {
        await Promise.allSettled(underway);
        const response = await direct(url, init);
        if (response.ok || await registeredAlready(response)) deps.markRegistered(round);
        return response;
      } finally {
        registering--;
      }
    }
    // A vote says the phone has joined, whether or not this browser saw its registration (made
    // before the pin was held, or refused as made already): it and everything after it go through
    // the relay. A read naming a ballot never goes straight.
    if (kind === "vote") deps.markRegistered(round);
    if (registering === 0 && !deps.registered(round) && kind !== "ballot") {
      const call = Promise.resolve(direct(url, init));
      underway.add(call);
      try {
        return await call;
      } finally {
        underway.delete(call);
      }
    }
    const signal = init.signal ?? null;
    /** The relayed transport, each request held until it fits the page's budget. */
    const relayedCall = async (): Promise<Transport> => {
      const transport = await deps.relayed(pin);
      return async (url, init) => {
        if (deps.budget) {
          for (
            let d = deps.budget.delayFor(deps.now());
            d > 0;
            d = deps.budget.delayFor(deps.now())
          ) {
            await deps.sleep(d, signal);
          }
          deps.budget.record(deps.now());
        }
        return await transport(url, init);
      };
    };
    if (kind === "vote" && round !== "list") {
      const timing = await deps.timing(round);
      const plan = votePlan(timing, deps);
      await hold({ kind: "vote", until: plan.at }, signal);
      // A quiet phone's vote is sent again when the server is busy or the relay timed out.
      if (timing?.windowMs !== undefined) {
        return await sendVote(url, init, { timing, path, relayedCall, hold, deps });
      }
    } else if (kind === "ballot" && round !== "list") {
      // A sealed ballot's answer, once read, is never asked again: a reload names nothing.
      const kept = deps.kept?.get(path);
      if (kept) return new Response(kept.body, { headers: { "content-type": kept.type } });
      // Only the first few seconds after a load are held: later, the draw has passed.
      await hold({ kind: "ballot", until: await ballotQuietAt(round) }, signal);
      const answer = await (await relayedCall())(url, init);
      if (answer.status === 200 && deps.kept) {
        const type = answer.headers.get("content-type") ?? "application/json";
        deps.kept.set(path, { type, body: await answer.clone().text() });
      }
      return answer;
    }
    const transport = await relayedCall();
    return await transport(url, init);
  };
}

/** What a vote's sends need: its round's timing, its path, the relayed call, the page's wait. */
type VoteSend = {
  timing: RoundTiming;
  path: string;
  relayedCall(): Promise<Transport>;
  hold(wait: Wait, signal: AbortSignal | null): Promise<void>;
  deps: PageTransportDeps;
};

/**
 * A vote sent through the relay, the same bytes again as `nextVoteStep` says (page §14.8): after
 * `Retry-After` and a random delay when the server is busy (503), after a lookup of its tag past the
 * next seal when the relay timed out (504) and the tag is not there; at most `MAX_VOTE_SENDS`
 * times. Every wait is shown as the vote's. A tag found answers as the vote's acceptance would.
 */
async function sendVote(
  url: string,
  init: RequestInit,
  { timing, path, relayedCall, hold, deps }: VoteSend,
): Promise<Response> {
  const signal = init.signal ?? null;
  const { intervalMs } = timing;
  const tagPath = () => {
    const tag = JSON.parse(String(init.body)).tag;
    return path.replace(/vote$/, `tag/${encodeURIComponent(tag)}`);
  };
  for (let sends = 1;; sends++) {
    let response: Response | null = null;
    let failure: unknown = null;
    try {
      response = await (await relayedCall())(url, init);
    } catch (error) {
      if (!(error instanceof RelayError) || !RETRIED.has(error.kind)) throw error;
      failure = error;
    }
    const outcome = response === null ? classifyVoteAnswer({ status: null }) : classifyVoteAnswer({
      status: response.status,
      code: await errorCode(response),
      retryAfter: response.headers.get("retry-after"),
    });
    // A first send refused as a duplicate is the page's to settle (its vote recovery).
    if (outcome.kind === "duplicate" && sends === 1) return response!;
    const now = deps.now();
    const nextSealAt = nextTick(timing, now);
    let step = nextVoteStep({ outcome, sends, now, nextSealAt, intervalMs }, deps.random);
    // A lookup that gets no answer (or a server error) tells nothing: it is made again after the
    // next seal, at most MAX_VOTE_SENDS times; only a 404 says the tag is absent.
    for (let lookups = 1; step.kind === "check-tag"; lookups++) {
      await hold({ kind: "vote", until: step.at }, signal);
      let found: Response | null = null;
      try {
        found = await (await relayedCall())(tagPath(), { method: "GET", signal });
      } catch (error) {
        if (!(error instanceof RelayError) || !RETRIED.has(error.kind)) throw error;
        failure = error;
      }
      if (found?.status === 200) {
        const body = await found.text();
        return new Response(body, { status: 202, headers: { "content-type": "application/json" } });
      }
      await found?.body?.cancel();
      const at = deps.now();
      if (found?.status === 404) {
        step = tagCheckStep({ found: false, sends, now: at, intervalMs }, deps.random);
      } else if (lookups < MAX_VOTE_SENDS) {
        const unknown = { kind: "relay-timeout" } as const;
        step = nextVoteStep(
          { outcome: unknown, sends, now: at, nextSealAt: nextTick(timing, at), intervalMs },
          deps.random,
        );
      } else break;
    }
    if (step.kind !== "resend") {
      if (response !== null) return response;
      throw failure;
    }
    await hold({ kind: "vote", until: step.at }, signal);
  }
}

/** Relay failures after which a vote may have reached the server, or not: its tag is looked up. */
const RETRIED = new Set(["gateway-timeout", "timeout", "relay-unreachable"]);

/** The error code of a refused answer, if it carries one. */
async function errorCode(response: Response): Promise<string | undefined> {
  if (response.ok) return undefined;
  try {
    return (await response.clone().json())?.error?.code;
  } catch {
    return undefined;
  }
}

/** The round's next seal tick after `now`, from a tick it knows; one interval on without one. */
function nextTick({ sealAt, intervalMs }: RoundTiming, now: number): number {
  if (sealAt === undefined) return now + intervalMs;
  if (sealAt > now) return sealAt;
  return sealAt + Math.ceil((now - sealAt) / intervalMs) * intervalMs;
}

/** True for a registration refused 409 `duplicate_key`: the key is registered all the same. */
async function registeredAlready(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  try {
    return (await response.clone().json())?.error?.code === "duplicate_key";
  } catch {
    return false;
  }
}

/**
 * The send plan of a vote asked for now: its round's window (the phone's own W when it has one:
 * ready after its drawn time, it draws again over what is left), or U[0, W] from now without one.
 */
function votePlan(
  timing: RoundTiming | null,
  { now, random }: Pick<PageTransportDeps, "now" | "random">,
): SendPlan | HallSendPlan {
  const at = now();
  if (timing?.windowMs !== undefined) {
    const { openedAt, windowMs } = timing;
    return planHallSend({ openedAt, readyAt: at, windowMs }, random);
  }
  const { openedAt, intervalMs } = timing ?? { openedAt: at, intervalMs: FALLBACK_INTERVAL_MS };
  return planVoteSend({ openedAt, pressedAt: at, intervalMs }, random);
}

/**
 * The words of a key configuration mismatch: what the relay served (or the server publishes), what
 * the code said.
 */
export function mismatchText(
  pin: RelayPin,
  check: { served: string; expected: string; by?: "relay" | "server" },
): string {
  const served = check.served.slice(0, 8);
  const expected = check.expected.slice(0, 8);
  if (check.by === "server") {
    return `The server publishes key configuration ${served}, not ${expected} as the presenter's ` +
      `code says: the relay ${pin.relay} could read every call it forwards. Nothing was sent. ` +
      "Scan the presenter's code again.";
  }
  return `The relay ${pin.relay} serves key configuration ${served}, not ${expected} as the ` +
    "presenter's code says: nothing was sent. Scan the presenter's code again.";
}
