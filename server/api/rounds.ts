/**
 * The rounds of protocol §4.9: `GET /api/rounds`, the presenter's `POST /api/rounds` and
 * `GET /api/presenter`, and every round's ledger API under `/api/rounds/{id}/` — the same
 * `createLedgerApi` as the election's and the practice ledger's, with the round's choices — plus
 * `GET /api/rounds/{id}/block/open`, the presenter's `POST /api/rounds/{id}/voting` and
 * `GET /api/rounds/{id}/groups`. Only the current round takes keys, and votes once voting opened.
 * @module
 */
import { Hono, type MiddlewareHandler } from "hono";
import * as z from "zod/mini";
import { presenterOnly } from "../presenter_auth.ts";
import { type RoundGroups, RoundStart } from "../../lib/protocol/schemas.ts";
import { liveJson } from "./caching.ts";
import { parseJson } from "./common.ts";
import { quote, refusal } from "../errors.ts";
import { nextSealAt, type PhaseRecord, type Rounds } from "../store/rounds.ts";
import { joinDeadline } from "../store/round_phases.ts";
import type { Store } from "../store/mod.ts";
import { mountCards } from "./cards.ts";
import { mountRoundReads } from "./round_reads.ts";
import { DEFAULT_VERIFY_RATE, sendWindowMs } from "../../lib/protocol/hall.ts";

/** Builds the ledger API of one round's store under `base`, refusing payloads outside `choices`. */
export type LedgerApiFactory = (
  store: Store,
  options: { base: string; choices: readonly string[] },
) => Hono;

/** Where every round's API lives: `/api/rounds/{id}/…`. */
export const ROUNDS_API = "/api/rounds";

/** The body of `POST /api/rounds/{id}/relay` (protocol §4.9). */
const RelayDeclaration = z.object({ relayed: z.literal(true) });

/** A round id in a path: a positive decimal integer of at most 9 digits. */
const ROUND_ID = /^[1-9][0-9]{0,8}$/;

/**
 * Mounts the rounds' calls on `app`: the list, the presenter's calls, and each round's API (built
 * once per round by `ledgerApi`). `now` answers the time for the next seal tick.
 */
export function mountRounds(
  app: Hono,
  { rounds, ledgerApi, now = Date.now, trustProxy = false, verifyRate = DEFAULT_VERIFY_RATE }: {
    rounds: Rounds;
    ledgerApi: LedgerApiFactory;
    now?: () => number;
    /** `TRUST_PROXY`: the presenter's wrong tokens are counted by the proxy's client address. */
    trustProxy?: boolean;
    /** `VERIFY_RATE`: votes a second the verifier is set to take (protocol §6). */
    verifyRate?: number;
  },
): void {
  const apis = new Map<number, Promise<Hono>>();
  const apiOf = (id: number, choices: readonly string[]) => {
    let api = apis.get(id);
    if (!api) {
      api = rounds.storeOf(id).then((store) =>
        ledgerApi(store, { base: `${ROUNDS_API}/${id}`, choices })
      );
      apis.set(id, api);
      api.catch(() => apis.delete(id));
    }
    return api;
  };
  const presenter = presenterOnly(rounds.adminToken, { trustProxy });

  app.get(ROUNDS_API, async (c) => liveJson(c, await rounds.list()));
  app.post(ROUNDS_API, presenter, async (c) => {
    const body = await parseJson(c, RoundStart);
    return c.json({ id: await rounds.start(body) }, 201);
  });
  app.get("/api/presenter", presenter, (c) => c.body(null, 204));
  mountCards(app, { rounds, presenter });

  // Every open page asks every two seconds: one count a second per round serves them all.
  const counted = new Map<
    number,
    { at: number; open: Promise<{ height: number; votes: number }> }
  >();
  app.get(`${ROUNDS_API}/:id/block/open`, async (c) => {
    const record = await roundOf(rounds, c.req.param("id"));
    let entry = counted.get(record.id);
    if (entry === undefined || now() - entry.at >= rounds.ttlMs) {
      const open = rounds.storeOf(record.id).then((store) => store.openBlock());
      entry = { at: now(), open };
      counted.set(record.id, entry);
      open.catch(() => counted.delete(record.id));
    }
    const { height, votes } = await entry.open;
    const intervalMs = record.blockIntervalMs;
    return liveJson(c, { height, votes, intervalMs, nextSealAt: nextSealAt(now(), intervalMs) });
  });
  // The groups answered lately, one per round, reused for a second (see `GET …/groups`).
  const grouped = new Map<number, { at: number; groups: Promise<RoundGroups> }>();
  // The presenter opens voting (protocol §4.9); anyone reads the groups it fixed (§2.8).
  app.post(`${ROUNDS_API}/:id/voting`, presenter, async (c) => {
    const record = await laterRoundOf(rounds, c.req.param("id"));
    await c.req.arrayBuffer(); // the body is empty, or ignored
    const opened = await rounds.openVoting(record.id);
    // A join-phase answer kept from before must not outlive the opening in this process: a voter
    // told "voting is open" reads its group at once (the demo round does).
    grouped.delete(record.id);
    const { groups } = await rounds.groups(record.id);
    return c.json({ phase: opened.phase, groups: groups.slice(0, openingGroups(groups, opened)) });
  });
  // The presenter declares that the round's votes go through a relay, naming none (§7.4).
  app.post(`${ROUNDS_API}/:id/relay`, presenter, async (c) => {
    const record = await laterRoundOf(rounds, c.req.param("id"));
    // `{relayed: true}` only: the declaration cannot be taken back, so no other body makes it.
    await parseJson(c, RelayDeclaration);
    await rounds.declareRelayed(record.id);
    return c.json({ relayed: true });
  });
  // Every waiting phone asks every few seconds: one answer a second per round serves them all.
  const groupsOf = async (id: number): Promise<RoundGroups> => {
    let entry = grouped.get(id);
    if (entry === undefined || now() - entry.at >= rounds.ttlMs) {
      entry = { at: now(), groups: rounds.groups(id) };
      grouped.set(id, entry);
      entry.groups.catch(() => grouped.delete(id));
    }
    return await entry.groups;
  };
  app.get(`${ROUNDS_API}/:id/groups`, async (c) => {
    const record = await laterRoundOf(rounds, c.req.param("id"));
    const served = await groupsOf(record.id);
    const { keysAtOpen } = served;
    const window = keysAtOpen === null
      ? null
      : sendWindowMs({ keysAtOpen, intervalMs: record.blockIntervalMs, verifyRate });
    return liveJson(c, { ...served, verifyRate, sendWindowMs: window });
  });
  mountRoundReads(app, {
    rounds,
    apiOf,
    groupsOf,
    laterRoundOf: (param) => laterRoundOf(rounds, param),
    now,
    verifyRate,
  });
  app.all(`${ROUNDS_API}/:id/*`, async (c) => {
    const record = await roundOf(rounds, c.req.param("id"));
    // Keys and votes go to the current round only; a witness may cosign an old round's log.
    if (c.req.method === "POST" && !c.req.path.endsWith("/log/cosignature")) {
      await refuseUnlessCurrent(rounds, record.id);
      // Past its join deadline a round opens voting at its first read (./store/round_phases.ts).
      const deadline = record.id === 1 ? null : joinDeadline(record);
      if (deadline !== null && now() >= deadline) await rounds.phase(record.id);
    }
    const api = await apiOf(record.id, record.choices);
    return await api.fetch(c.req.raw);
  });
}

/**
 * Middleware for the election's own write calls (`POST /api/vote`, `POST /api/pki/key`): once a
 * later round is current, round 1 takes no more keys or votes (409 `round_closed`).
 */
export function electionWrites(rounds: Rounds): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === "POST") await refuseUnlessCurrent(rounds, 1);
    await next();
  };
}

/** The round a path names; 404 `unknown_round` for a malformed or unknown id. */
async function roundOf(rounds: Rounds, param: string) {
  const record = ROUND_ID.test(param) ? await rounds.round(Number(param)) : null;
  if (!record) throw refusal("unknown_round", `No round "${quote(param)}"`);
  return record;
}

/** The round a path names, 2 and up; 404 `unknown_round` for round 1 (it has no phases). */
async function laterRoundOf(rounds: Rounds, param: string) {
  const record = await roundOf(rounds, param);
  if (record.id === 1) {
    throw refusal("unknown_round", "Round 1 is the election: it has no phases and no groups");
  }
  return record;
}

/** How many of `groups` the opening `phase` fixed: the opening's, before any late group. */
function openingGroups(groups: number[][], phase: PhaseRecord): number {
  const keysAtOpen = phase.keysAtOpen ?? 0;
  return groups.filter((group) => group[group.length - 1] <= keysAtOpen).length;
}

/** Throws 409 `round_closed` when round `id` is not the current one. */
async function refuseUnlessCurrent(rounds: Rounds, id: number): Promise<void> {
  if (await rounds.isCurrent(id)) return;
  const current = await rounds.current();
  if (current === id) return;
  throw refusal(
    "round_closed",
    `Round ${id} is over and takes no more keys or votes: the current round is ${current}`,
    { extra: { current } },
  );
}
