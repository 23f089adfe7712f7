/**
 * Browser-safe. The one client of the HTTP API (protocol §4): each call's path, answer schema,
 * paging and one error policy, over an injected transport; no other module writes an API path.
 * @module
 */
import * as z from "zod/mini";
import {
  BlockHash,
  BlockList,
  type BlockRecord,
  BlockStatus,
  BlockVotes,
  CosignatureAccepted,
  type CosignatureSubmission,
  KeyPage,
  KeyRecord,
  type KeyRegistration,
  OpenBlock,
  RoundCreated,
  RoundGroups,
  RoundList,
  type RoundStart,
  ServerKey,
  TagRecord,
  Tally,
  VoteAccepted,
  VoteProof,
  type VoteSubmission,
  VotingOpened,
  WitnessPins,
} from "../protocol/schemas.ts";
import { BlockGroups, RoundGroupRead, RoundState } from "../protocol/hall_schemas.ts";
import { ApiCallError, type PagedCall, send, TEXT, type Transport } from "./api_transport.ts";
import { CardSet, CardSetCreated, RoundCards } from "../protocol/card_schemas.ts";

export {
  ApiCallError,
  type ClientErrorCode,
  type Failure,
  type Page,
  type PagedCall,
  pagesOf,
  readPages,
  type Transport,
} from "./api_transport.ts";

/**
 * Which ledger a client calls: the election's (round 1), the attack lab's practice ledger, or a
 * round of protocol §4.9 by id.
 */
export type LedgerName = "election" | "lab" | "lab-cards" | { round: number };

/**
 * The API prefix of `ledger`: `/api/`, `/api/lab/`, the lab's carded practice directory
 * `/api/lab/cards/` (protocol §4.7) or `/api/rounds/{id}/` (round 1 is `/api/`).
 */
export function ledgerBase(ledger: LedgerName): string {
  if (ledger === "election") return "/api/";
  if (ledger === "lab") return "/api/lab/";
  if (ledger === "lab-cards") return "/api/lab/cards/";
  return ledger.round === 1 ? "/api/" : `/api/rounds/${ledger.round}/`;
}

/**
 * Where the API is: the transport and the base URL paths are appended to ("" = same origin).
 * `ledger` names the ledger every call goes to: the election's (`/api/…`, the default) or the
 * attack lab's practice ledger (`/api/lab/…`, protocol §4.7), served by the same code.
 * `lens` names a lie of the lying-server lens over that ledger: every read goes to
 * `/api/lab/lens/{lens}/…` instead of `/api/lab/…` (or `/api/lens/{lens}/…` instead of
 * `/api/…`; read-only, writes are refused there). `onBlocks`
 * hears every signed block record an answer carries (the status head, the blocks listed, a vote
 * proof's block), so a page's fork watch checks everything the page is shown. `timeoutMs` is each
 * call's deadline, answer body included: a call with no whole answer by then is aborted and fails
 * with `timeout` (none by default).
 */
export type ApiClientOptions = {
  fetch: Transport;
  baseUrl?: string;
  ledger?: LedgerName;
  lens?: string;
  onBlocks?: (records: readonly (BlockRecord | BlockStatus)[]) => void;
  timeoutMs?: number;
};

/** A key of the directory as listed: its id and hex key. */
export type DirectoryEntry = KeyPage["keys"][number];
/** A vote as listed in its block: its id, leaf index and the vote. */
export type BlockVoteEntry = BlockVotes["votes"][number];

/** Every call of protocol §4, typed; each one throws {@link ApiCallError} and nothing else. */
export type ApiClient = ReturnType<typeof createApiClient>;

/** The client over `fetch` at `baseUrl`. */
export function createApiClient(
  { fetch, baseUrl = "", ledger = "election", lens, onBlocks, timeoutMs }: ApiClientOptions,
) {
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new RangeError(`timeoutMs must be a positive number of milliseconds, got ${timeoutMs}`);
  }
  const root = baseUrl.replace(/\/+$/, "");
  const base = ledgerBase(ledger);
  const prefix = lens === undefined ? base : `${base}lens/${encodeURIComponent(lens)}/`;
  const at = (path: string) => prefix + path.slice("/api/".length);
  const transport = { fetch, root, timeoutMs };
  const get = <T>(path: string, schema: z.ZodMiniType<T>) =>
    send(transport, { method: "GET", path: at(path), schema });
  const post = <T>(path: string, body: unknown, schema: z.ZodMiniType<T>) =>
    send(transport, { method: "POST", path: at(path), body, schema });
  const text = (path: string) => send(transport, { method: "GET", path: at(path), schema: TEXT });
  const proof = async (path: string) => proofLines(`GET ${at(path)}`, await text(path));
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const id = (value: string | number) => encodeURIComponent(String(value));
  const roundPath = () => `/api/rounds/${typeof ledger === "object" ? ledger.round : 1}/`;
  const heard = <T>(answer: T, records: (a: T) => (BlockRecord | BlockStatus)[]) => {
    onBlocks?.(records(answer));
    return answer;
  };

  return {
    /** GET /api/block/status: the chain's head and the open block. */
    blockStatus: async () => heard(await get("/api/block/status", BlockStatus), (s) => [s]),
    /** GET /api/rounds/{id}/block/open: the open block, its waiting votes, the next seal tick. */
    openBlock: () =>
      send(transport, {
        method: "GET",
        path: `${roundPath()}block/open`,
        schema: OpenBlock,
      }),
    /** GET /api/rounds: every round, with its phase, and the current one (protocol §4.9). */
    rounds: () => send(transport, { method: "GET", path: "/api/rounds", schema: RoundList }),
    /** POST /api/cards: the presenter (`token`) posts a card set's keys, in card order. */
    postCards: (keys: readonly string[], token: string) =>
      send(transport, {
        method: "POST",
        path: "/api/cards",
        body: { keys },
        headers: bearer(token),
        schema: CardSetCreated,
      }),
    /** GET /api/cards/{set}: a card set's keys in card order (protocol §2.11). */
    cardSet: (set: string) =>
      send(transport, { method: "GET", path: `/api/cards/${id(set)}`, schema: CardSet }),
    /** GET /api/rounds/{id}/cards: the round's card set and the cards used (protocol §2.11). */
    roundCards: () =>
      send(transport, { method: "GET", path: `${roundPath()}cards`, schema: RoundCards }),
    /** GET /api/rounds/{id}/groups: the round's groups and the keys still pending (protocol §2.8). */
    groups: () =>
      send(transport, { method: "GET", path: `${roundPath()}groups`, schema: RoundGroups }),
    /** GET /api/rounds/{id}/state: the one poll of a round, the same for every phone (§4.9). */
    roundState: () =>
      send(transport, { method: "GET", path: `${roundPath()}state`, schema: RoundState }),
    /** GET /api/rounds/{id}/groups/{g}: group `g` whole, its keys in id order, padded (§4.9). */
    group: (g: number) =>
      send(transport, {
        method: "GET",
        path: `${roundPath()}groups/${id(g)}`,
        schema: RoundGroupRead,
      }),
    /** GET /api/rounds/{id}/block/id/{height}/groups: a sealed block's ballots per group. */
    blockGroups: (height: number) =>
      send(transport, {
        method: "GET",
        path: `${roundPath()}block/id/${id(height)}/groups`,
        schema: BlockGroups,
      }),
    /**
     * POST /api/rounds/{id}/voting: the presenter (`token`) opens voting; 409 `too_few_voters`
     * says how many more keys must join.
     */
    openVoting: (token: string) =>
      send(transport, {
        method: "POST",
        path: `${roundPath()}voting`,
        headers: bearer(token),
        schema: VotingOpened,
      }),
    /**
     * POST /api/rounds/{id}/relay: the presenter (`token`) declares that the round's votes go
     * through a relay, naming none (protocol §7.4); idempotent.
     */
    declareRelayed: (token: string) =>
      send(transport, {
        method: "POST",
        path: `${roundPath()}relay`,
        headers: bearer(token),
        body: { relayed: true },
        schema: z.object({ relayed: z.literal(true) }),
      }),
    /** POST /api/rounds: starts a round and makes it current (the presenter's `token`). */
    startRound: (body: RoundStart, token: string) =>
      send(transport, {
        method: "POST",
        path: "/api/rounds",
        body,
        headers: bearer(token),
        schema: RoundCreated,
      }),
    /** POST /api/log/witnesses/pin: the presenter (`token`) pins `vkey` as the room's witness. */
    pinWitness: (vkey: string, token: string) =>
      send(transport, {
        method: "POST",
        path: "/api/log/witnesses/pin",
        body: { vkey },
        headers: bearer(token),
        schema: WitnessPins,
      }),
    /** GET /api/presenter: resolves when `token` is the presenter's, throws 401 otherwise. */
    checkPresenter: (token: string) =>
      send(transport, {
        method: "GET",
        path: "/api/presenter",
        headers: bearer(token),
        schema: z.unknown(),
      }),
    /** GET /api/log/checkpoint: the log's checkpoint as a signed note (protocol §4.10). */
    checkpoint: () => text("/api/log/checkpoint"),
    /**
     * GET /api/log/cosigned?min={min}&key={vkey}…: the newest checkpoint that carries at least
     * `min` kept cosignatures (of the witnesses whose vkeys are given, if any); 404 `not_found`
     * when none does.
     */
    cosignedCheckpoint: (min: number, vkeys: readonly string[] = []) =>
      text(`/api/log/cosigned?min=${id(min)}${vkeys.map((k) => `&key=${id(k)}`).join("")}`),
    /** GET /api/log/consistency/{old}/{new}: the consistency proof, one base64 hash a line. */
    consistencyProof: (oldSize: number, newSize: number) =>
      proof(`/api/log/consistency/${id(oldSize)}/${id(newSize)}`),
    /** GET /api/log/inclusion/{height}/{size}: block `height`'s inclusion proof in tree `size`. */
    inclusionProof: (height: number, size: number) =>
      proof(`/api/log/inclusion/${id(height)}/${id(size)}`),
    /** POST /api/log/cosignature: a witness's cosignature of the checkpoint of `size`. */
    submitCosignature: (body: CosignatureSubmission) =>
      post("/api/log/cosignature", body, CosignatureAccepted),
    /** GET /api/block/hash/id/{height}: a sealed block's hash. */
    blockHash: (height: number) => get(`/api/block/hash/id/${id(height)}`, BlockHash),
    /** GET /api/block/id/{blockId}/vote/{voteId}: a vote, its inclusion path and its block. */
    voteProof: async (blockId: number, voteId: string) =>
      heard(
        await get(`/api/block/id/${id(blockId)}/vote/${id(voteId)}`, VoteProof),
        (proof) => [proof.block],
      ),
    /** GET /api/pki/key/id/{id}: one registered key and the directory's size. */
    keyById: (keyId: string | number) => get(`/api/pki/key/id/${id(keyId)}`, KeyRecord),
    /** POST /api/pki/key: registers a key (201). */
    registerKey: (body: KeyRegistration) => post("/api/pki/key", body, KeyRecord),
    /**
     * POST /api/lab/reset (with `ledger: "lab"`): starts a fresh practice ledger and answers its
     * status; 429 `reset_too_soon`, with `retryAfterSeconds`, when one was started moments ago. The
     * election's ledger has no such call.
     */
    resetLedger: async () => heard(await post("/api/reset", undefined, BlockStatus), (s) => [s]),
    /** POST /api/vote: submits a signed vote (202). */
    submitVote: (body: VoteSubmission) => post("/api/vote", body, VoteAccepted),
    /** GET /api/tally: the tally of sealed votes. */
    tally: () => get("/api/tally", Tally),
    /** GET /api/server-key: the hex Ed25519 key that signs block heads. */
    serverKey: () => get("/api/server-key", ServerKey),
    /** GET /api/tag/{tag}: the vote cast with a tag; 404 `unknown_tag` when none. */
    voteOfTag: (tag: string) => get(`/api/tag/${id(tag)}`, TagRecord),
    /** GET /api/pki/key/offset/{o}/limit/{l}: the key directory, ids ascending from o + 1. */
    keys: (async (offset: number, limit: number) => {
      const page = await get(`/api/pki/key/offset/${id(offset)}/limit/${id(limit)}`, KeyPage);
      return { items: page.keys, total: page.total };
    }) satisfies PagedCall<DirectoryEntry>,
    /** GET /api/blocks?from=&limit=: block records ascending from height `offset`. */
    blocks: (async (offset: number, limit: number) => {
      const page = heard(
        await get(`/api/blocks?from=${id(offset)}&limit=${id(limit)}`, BlockList),
        (list) => list.blocks,
      );
      return { items: page.blocks, total: page.height + 1 };
    }) satisfies PagedCall<BlockRecord>,
    /** GET /api/block/id/{height}/votes?offset=&limit=: a block's votes in leaf order. */
    blockVotes: (height: number): PagedCall<BlockVoteEntry> => async (offset, limit) => {
      const path = `/api/block/id/${id(height)}/votes?offset=${id(offset)}&limit=${id(limit)}`;
      const page = await get(path, BlockVotes);
      return { items: page.votes, total: page.total };
    },
  };
}

/** Most lines of a proof answer: a proof between sizes below 2^53 has at most 106 hashes. */
const MAX_PROOF_LINES = 128;

/**
 * The hashes of a proof answer (one base64 hash a line, each ending in a newline), still base64;
 * the caller decodes and checks them. Throws ApiCallError `malformed_answer` otherwise.
 */
function proofLines(call: string, text: string): string[] {
  if (text === "") return [];
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : null;
  if (lines === null || lines.length > MAX_PROOF_LINES || lines.some((l) => l.length !== 44)) {
    throw new ApiCallError(call, {
      status: 200,
      code: "malformed_answer",
      reason: "a proof must be base64 hashes of 32 bytes, one a line",
    });
  }
  return lines;
}

/** What a call is, for the routing: what it names decides how it may travel. */
export type CallKind = "registration" | "vote" | "ballot" | "other";

/** The API prefix of a ledger: `/api/`, `/api/lab/` or `/api/rounds/{id}/`. */
const LEDGER = String.raw`/api/(?:rounds/[0-9]+/|lab/)?`;
const REGISTRATION = new RegExp(`^${LEDGER}pki/key$`);
const VOTE = new RegExp(`^${LEDGER}vote$`);
/** Reads that name one ballot: its tag, its proof, the hash of the block before its block. */
const BALLOT = new RegExp(
  `^${LEDGER}(?:tag/[^/]+|block/id/[0-9]+/vote/[^/]+|block/hash/id/[0-9]+)$`,
);

/** The kind of the call `method path` (path without query). */
export function callKind(method: string, path: string): CallKind {
  const write = method.toUpperCase() === "POST";
  if (write && REGISTRATION.test(path)) return "registration";
  if (write && VOTE.test(path)) return "vote";
  if (!write && BALLOT.test(path)) return "ballot";
  return "other";
}

/**
 * The round whose ledger an API path calls, for a round of protocol §4.9 (2 and on); "list" for
 * `GET /api/rounds`; null for the election's own calls (round 1, unchanged) and the lab's.
 */
export function roundOfPath(path: string): number | "list" | null {
  if (path === "/api/rounds") return "list";
  const match = path.match(/^\/api\/rounds\/([0-9]+)\//);
  return match && Number(match[1]) > 1 ? Number(match[1]) : null;
}
