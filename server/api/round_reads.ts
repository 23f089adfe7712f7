/**
 * The reads a hall of phones shares (protocol §4.9): `GET /api/rounds/{id}/state`, the one poll,
 * the same for every phone and served from one cache a second per round; `GET …/groups/{g}`, a
 * whole group by its index, padded to one length; `GET …/block/id/{height}/groups`, a sealed
 * block's ballots per group, padded to one length. None takes a per-phone parameter.
 * @module
 */
import type { Hono } from "hono";
import type { RoundGroups } from "../../lib/protocol/schemas.ts";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import {
  BLOCK_GROUPS_BYTES,
  GROUP_READ_BYTES,
  paddedJson,
  sendWindowMs,
} from "../../lib/protocol/hall.ts";
import { NO_STORE } from "./caching.ts";
import { ApiError, refusal } from "../errors.ts";
import { nextSealAt, type RoundRecord, type Rounds } from "../store/rounds.ts";

/** A decimal index or height: no sign, no leading zero, at most 9 digits. */
const INDEX = /^(0|[1-9][0-9]{0,8})$/;

/** Most sealed blocks' per-group counts one process keeps, all rounds together. */
const BLOCKS_KEPT = 256;

/** Most groups' keys one process keeps, all rounds together: a round of 1,000 keys has 16 to 125. */
const GROUPS_KEPT = 2_048;

/** Most rounds whose state one process keeps: the current one, and the few phones still read. */
const STATES_KEPT = 16;

/** 503 `busy`: a part of a shared read could not be read now (nothing is cached). */
function unreadable(what: string): never {
  throw refusal("busy", `The round's ${what} could not be read now: retry shortly`, {
    headers: { "Retry-After": "1" },
  });
}

/** A refusal as it is; anything else (the database failing) as 503 `busy`, logged. */
function failClosed(error: unknown, what: string): never {
  if (error instanceof ApiError) throw error;
  console.error(`A round's ${what} could not be read:`, error);
  return unreadable(what);
}

/** Adds `value` under `key` to `map`, dropping the oldest entry past `most`. */
function keep<V>(map: Map<string | number, V>, key: string | number, value: V, most: number): void {
  map.set(key, value);
  if (map.size > most) map.delete(map.keys().next().value!);
}

/** What the reads need from the rounds' mount. */
export type RoundReadOptions = {
  rounds: Rounds;
  /** The round's ledger API (./rounds.ts), for its tally, checkpoint and head. */
  apiOf: (id: number, choices: readonly string[]) => Promise<Hono>;
  /** The round's groups as `GET …/groups` answers them, from its cache. */
  groupsOf: (id: number) => Promise<RoundGroups>;
  /** The round (2 and up) a path names; 404 `unknown_round` otherwise. */
  laterRoundOf: (param: string) => Promise<RoundRecord>;
  now: () => number;
  /** `VERIFY_RATE`: votes a second, fixed at start (protocol §6). */
  verifyRate: number;
};

/** 400 `invalid_request` for any query: a read every phone makes carries nothing of its own. */
function refuseQuery(url: string): void {
  if (new URL(url).search !== "") {
    throw refusal(
      "invalid_request",
      "This read is the same for every phone and takes no query (protocol §4.9)",
    );
  }
}

/** JSON text `body`, served as it is and never stored. */
function jsonAnswer(body: string): Response {
  return new Response(body, {
    headers: { "content-type": "application/json", "cache-control": NO_STORE },
  });
}

/** Mounts the three reads on `app`, before the round's ledger API. */
export function mountRoundReads(app: Hono, options: RoundReadOptions): void {
  const { rounds, apiOf, groupsOf, laterRoundOf, now, verifyRate } = options;
  const base = (id: number) => `/api/rounds/${id}`;

  // A group never changes once formed: one read of the directory per group per process.
  const groupReads = new Map<string | number, Promise<{ ids: number[]; keys: string[] }>>();
  const groupKeys = (id: number, g: number, ids: number[]) => {
    const at = `${id}/${g}`;
    let read = groupReads.get(at);
    if (read === undefined) {
      read = rounds.storeOf(id).then(async (store) => {
        const page = await store.keyPage(ids[0] - 1, ids.length);
        const keys = page.keys.map((entry) => entry.key);
        if (page.keys.length !== ids.length || page.keys.some((entry, i) => entry.id !== ids[i])) {
          unreadable(`group ${g}`);
        }
        return { ids, keys };
      }).catch((error) => failClosed(error, `group ${g}`));
      keep(groupReads, at, read, GROUPS_KEPT);
      read.catch(() => groupReads.delete(at));
    }
    return read;
  };

  app.get(`/api/rounds/:id/groups/:g`, async (c) => {
    refuseQuery(c.req.url);
    const record = await laterRoundOf(c.req.param("id"));
    const served = await groupsOf(record.id);
    if (served.phase === "join" || served.keysAtOpen === null) {
      throw refusal(
        "voting_not_open",
        `Voting has not opened in round ${record.id}: no groups yet`,
      );
    }
    const param = c.req.param("g");
    const g = INDEX.test(param) ? Number(param) : -1;
    if (g < 0 || g >= served.groups.length) {
      throw refusal(
        "unknown_group",
        `Round ${record.id} has ${served.groups.length} groups, numbered from 0`,
      );
    }
    const { ids, keys } = await groupKeys(record.id, g, served.groups[g]);
    return jsonAnswer(paddedJson({ group: g, ids, keys }, GROUP_READ_BYTES));
  });

  // Every phone polls the state: one answer a second per round serves them all.
  const states = new Map<
    string | number,
    { at: number; state: Promise<RoundState>; text?: { next: number; body: string } }
  >();
  const readState = async (record: RoundRecord): Promise<RoundState> => {
    const api = await apiOf(record.id, record.choices);
    const inner = async (path: string) => {
      const res = await api.fetch(new Request(`http://localhost${base(record.id)}${path}`));
      if (!res.ok) {
        await res.body?.cancel();
        unreadable(`state (${path} answered ${res.status})`);
      }
      return res;
    };
    const [list, served, store, status, tally, checkpoint] = await Promise.all([
      rounds.list(),
      groupsOf(record.id),
      rounds.storeOf(record.id),
      inner("/block/status").then((res) => res.json()),
      inner("/tally").then((res) => res.json()),
      inner("/log/checkpoint").then((res) => res.text()),
    ]);
    const [open, page] = await Promise.all([store.openBlock(), store.keyPage(0, 0)]);
    const listed = list.rounds.find((round) => round.id === record.id);
    const intervalMs = record.blockIntervalMs;
    const keysAtOpen = served.keysAtOpen;
    return {
      round: record.id,
      current: list.current,
      phase: served.phase,
      openedAt: listed?.openedAt ?? null,
      keysAtOpen,
      groups: served.groups,
      pending: served.pending,
      total: page.total,
      intervalMs,
      verifyRate,
      sendWindowMs: keysAtOpen === null
        ? null
        : sendWindowMs({ keysAtOpen, intervalMs, verifyRate }),
      open: { ...open, nextSealAt: nextSealAt(now(), intervalMs) },
      sealed: { height: status.height, hash: status.hash },
      tally,
      checkpoint,
    };
  };
  app.get(`/api/rounds/:id/state`, async (c) => {
    refuseQuery(c.req.url);
    const record = await laterRoundOf(c.req.param("id"));
    let entry = states.get(record.id);
    if (entry === undefined || now() - entry.at >= rounds.ttlMs) {
      // A database that fails a part fails the read with 503 `busy`, never a 500; nothing is kept.
      const state = readState(record).catch((error) => failClosed(error, "state"));
      entry = { at: now(), state };
      keep(states, record.id, entry, STATES_KEPT);
      entry.state.catch(() => states.delete(record.id));
    }
    const state = await entry.state;
    // The next seal tick is the clock's, not the cache's; the text is made once per tick.
    const next = nextSealAt(now(), state.intervalMs);
    if (entry.text?.next !== next) {
      const open = { ...state.open, nextSealAt: next };
      entry.text = { next, body: JSON.stringify({ ...state, open }) };
    }
    return jsonAnswer(entry.text.body);
  });

  // A sealed block never changes: its ballots per group are counted once per process.
  const counted = new Map<string | number, Promise<number[]>>();
  const countBlock = async (id: number, height: number): Promise<number[]> => {
    const served = await groupsOf(id);
    const store = await rounds.storeOf(id);
    const firstKeys = new Map<string, number>();
    await Promise.all(served.groups.map(async (ids, g) => {
      const { keys } = await groupKeys(id, g, ids);
      firstKeys.set(`${keys.length}/${keys[0]}`, g);
    }));
    const counts = served.groups.map(() => 0);
    // A ballot of a group formed since the groups were read: the count is answered, not kept.
    let whole = true;
    for (let offset = 0;;) {
      const page = await store.blockVotes(height, offset, 100);
      for (const { vote } of page.votes) {
        // A round's ring is its group in id order (protocol §2.8): its first key names it.
        const g = firstKeys.get(`${vote.publicKeys.length}/${vote.publicKeys[0]}`);
        if (g !== undefined) counts[g]++;
        else whole = false;
      }
      offset += page.votes.length;
      if (page.votes.length === 0 || offset >= page.total) break;
    }
    if (!whole) counted.delete(`${id}/${height}`);
    return counts;
  };
  app.get(`/api/rounds/:id/block/id/:height/groups`, async (c) => {
    refuseQuery(c.req.url);
    const record = await laterRoundOf(c.req.param("id"));
    const param = c.req.param("height");
    const height = INDEX.test(param) ? Number(param) : -1;
    const at = `${record.id}/${height}`;
    let counts = counted.get(at);
    if (counts === undefined) {
      // Only a sealed block is counted (and kept): a block counted once is not read again.
      const block = height >= 1
        ? await rounds.storeOf(record.id).then((store) => store.block(height)).catch((error) =>
          failClosed(error, `block ${height}`)
        )
        : null;
      if (block === null) {
        throw refusal("not_found", `Block "${param}" of round ${record.id} is not sealed`);
      }
      counts = countBlock(record.id, height).catch((error) =>
        failClosed(error, `block ${height}'s ballots`)
      );
      keep(counted, at, counts, BLOCKS_KEPT);
      counts.catch(() => counted.delete(at));
    }
    return jsonAnswer(paddedJson({ height, counts: await counts }, BLOCK_GROUPS_BYTES));
  });
}
