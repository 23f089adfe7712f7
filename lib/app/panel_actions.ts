// Browser-safe. The voter panel's actions (page §4, calls of page §7, ring of protocol §2) over an
// injected storage and HTTP client, so that the page and its tests drive the same code. Answers
// are validated with the wire schemas before use; nothing here touches the DOM or globals.
import { type TagCheck, tagCheckLine, tagOfSignature } from "./record_checks.ts";
import { base64ToBytes, bytesToHex, hexToBytes } from "../protocol/bytes.ts";
import { generateSeed, storedKeysFromSeed } from "../protocol/keys.ts";
import { encodeSignature, signRing } from "../protocol/ring_signature.ts";
import {
  BlockHash,
  BlockStatus,
  describeIssues,
  ErrorBody,
  KeyPage,
  KeyRecord,
  TagRecord,
  VoteAccepted,
  VoteProof,
  VoteSubmission,
} from "../protocol/schemas.ts";
import {
  decideKeyStatus,
  decideVoteStatus,
  type KeyStatus,
  keyStatusLine,
  keyStatusNeedsServer,
  type StatusLine,
  storedBlockId,
  type StoredKeys,
  type StoredVote,
  voteStage,
  type VoteStatus,
} from "./status.ts";
import {
  cryptoRandomIndex,
  type RandomIndex,
  REGISTRATION_NAME,
  sampleRing,
  storageKey,
  TooFewKeysError,
  VOTE_ENTRIES,
} from "./voters.ts";

/** The part of the Web Storage API the page uses. */
export type VoterStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** An HTTP answer: status and parsed JSON body (null when the body is not JSON). */
export type Answer = { ok: boolean; status: number; body: unknown };

/** What the actions need from the outside world. `request` rejects on a network failure. */
export type ClientIO = {
  storage: VoterStorage;
  request(method: "GET" | "POST", path: string, body?: unknown): Promise<Answer>;
  log(message: string): void;
};

/** The voter's stored key entries. */
export function readStoredKeys(storage: VoterStorage, namespace: string): StoredKeys {
  return {
    publicKey: storage.getItem(storageKey(namespace, "publicKey")),
    privateKey: storage.getItem(storageKey(namespace, "privateKey")),
    keyId: storage.getItem(storageKey(namespace, "keyId")),
  };
}

/** The voter's stored vote entries. */
export function readStoredVote(storage: VoterStorage, namespace: string): StoredVote {
  return {
    voteId: storage.getItem(storageKey(namespace, "voteId")),
    blockId: storage.getItem(storageKey(namespace, "blockId")),
    voteContent: storage.getItem(storageKey(namespace, "voteContent")),
    voteSignature: storage.getItem(storageKey(namespace, "voteSignature")),
  };
}

/** A wire schema: anything with zod's `safeParse`. */
type Schema<T> = { safeParse(v: unknown): { success: true; data: T } | { success: false } };

/** GET `path`; null (logged) when the request itself fails. */
async function getAnswer(io: ClientIO, path: string): Promise<Answer | null> {
  try {
    return await io.request("GET", path);
  } catch (error) {
    io.log(`GET ${path} failed: ${messageOf(error)}`);
    return null;
  }
}

/** GET `path` and parse the answer with `schema`; null (logged) on any failure. */
async function getParsed<T>(
  io: ClientIO,
  { path, schema }: { path: string; schema: Schema<T> },
): Promise<T | null> {
  const answer = await getAnswer(io, path);
  if (answer === null) return null;
  if (!answer.ok) {
    io.log(`GET ${path} answered ${answer.status}: ${reasonOf(answer)}`);
    return null;
  }
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success) {
    io.log(`GET ${path} answered an unexpected body`);
    return null;
  }
  return parsed.data;
}

/** Key status on load (page §4), reading the server's key for the stored id when it matters. */
export async function loadKeyStatus(
  io: ClientIO,
  namespace: string,
): Promise<StatusLine<KeyStatus>> {
  const stored = readStoredKeys(io.storage, namespace);
  let serverKey: string | null = null;
  if (keyStatusNeedsServer(stored)) {
    const path = `/api/pki/key/id/${encodeURIComponent(stored.keyId!)}`;
    serverKey = (await getParsed(io, { path, schema: KeyRecord }))?.key ?? null;
  }
  return decideKeyStatus(stored, serverKey);
}

/**
 * Generates and stores a new key pair, clears the key id and every vote entry, and answers
 * unregistered (page §4). `seed` is injectable for tests.
 */
export function generateKeys(
  io: ClientIO,
  namespace: string,
  { seed = generateSeed() }: { seed?: Uint8Array } = {},
): StatusLine<KeyStatus> {
  const { publicKey, privateKey } = storedKeysFromSeed(seed);
  io.storage.setItem(storageKey(namespace, "publicKey"), publicKey);
  io.storage.setItem(storageKey(namespace, "privateKey"), privateKey);
  io.storage.removeItem(storageKey(namespace, "keyId"));
  for (const entry of VOTE_ENTRIES) io.storage.removeItem(storageKey(namespace, entry));
  return keyStatusLine("unregistered");
}

/**
 * Registers the stored public key with the placeholder name (page §7). Success stores the id and
 * answers registered; a failure clears the stored id; no stored public key answers unregistered.
 */
export async function registerKey(
  io: ClientIO,
  namespace: string,
): Promise<StatusLine<KeyStatus>> {
  const stored = readStoredKeys(io.storage, namespace);
  if (stored.publicKey === null) return keyStatusLine("unregistered");
  let record: KeyRecord | null = null;
  try {
    const answer = await io.request("POST", "/api/pki/key", {
      key: stored.publicKey,
      name: REGISTRATION_NAME,
    });
    const parsed = KeyRecord.safeParse(answer.body);
    if (answer.ok && parsed.success) record = parsed.data;
    else io.log(`Key registration answered ${answer.status}: ${reasonOf(answer)}`);
  } catch (error) {
    io.log(`Key registration failed: ${messageOf(error)}`);
  }
  if (record === null) {
    io.storage.removeItem(storageKey(namespace, "keyId"));
    return decideKeyStatus({ ...stored, keyId: null }, null);
  }
  io.storage.setItem(storageKey(namespace, "keyId"), String(record.id));
  return keyStatusLine("registered", record.id);
}

/** Height of the chain's last sealed block, or null (logged) when it cannot be read. */
export async function chainHeight(io: ClientIO): Promise<number | null> {
  return (await getParsed(io, { path: "/api/block/status", schema: BlockStatus }))?.height ?? null;
}

/**
 * Vote status (page §4): the chain height first, then, once the block is sealed, the vote's
 * record and proof and the previous block's hash; integrity mismatches are logged (page §8).
 */
export async function loadVoteStatus(
  io: ClientIO,
  namespace: string,
): Promise<StatusLine<VoteStatus>> {
  const stored = readStoredVote(io.storage, namespace);
  const blockId = storedBlockId(stored);
  const height = stored.voteId !== null && blockId !== null ? await chainHeight(io) : null;
  if (height === null || voteStage(stored, height) !== "proof") {
    return decideVoteStatus({ stored, height }).line;
  }
  const [proof, previous] = await Promise.all([
    getParsed(io, {
      path: `/api/block/id/${blockId}/vote/${encodeURIComponent(stored.voteId!)}`,
      schema: VoteProof,
    }),
    getParsed(io, { path: `/api/block/hash/id/${blockId! - 1}`, schema: BlockHash }),
  ]);
  const decision = decideVoteStatus({
    stored,
    height,
    proof,
    prevHash: previous?.hash ?? null,
  });
  for (const mismatch of decision.mismatches) io.log(mismatch);
  return decision.line;
}

/**
 * Asks the public board which vote holds this voter's tag (GET /api/tag/{tag}, the tag being `I`
 * of the stored signature) and compares it with the stored vote id: the key voted once (green),
 * or someone else cast a vote with it (red). Null, logged, when there is no stored vote or the
 * board could not be read.
 */
export async function checkOwnTag(
  io: ClientIO,
  namespace: string,
): Promise<StatusLine<TagCheck> | null> {
  const stored = readStoredVote(io.storage, namespace);
  const tag = tagOfSignature(stored.voteSignature);
  if (stored.voteId === null || tag === null) return null;
  const path = `/api/tag/${tag}`;
  const answer = await getAnswer(io, path);
  if (answer === null) return null;
  const refusal = ErrorBody.safeParse(answer.body);
  if (answer.status === 404 && refusal.success && refusal.data.error.code === "unknown_tag") {
    return tagCheckLine(stored.voteId, null);
  }
  const parsed = TagRecord.safeParse(answer.body);
  if (!answer.ok || !parsed.success) {
    io.log(`GET ${path} answered ${answer.status}: ${reasonOf(answer)}`);
    return null;
  }
  return tagCheckLine(stored.voteId, parsed.data);
}

/** Outcome of a vote: accepted with its ids and the signing time, or refused with a reason. */
export type VoteOutcome =
  | { ok: true; voteId: string; blockId: number; signMs: number }
  | { ok: false; reason: string };

/**
 * Signs `opts.content` over a ring of registered keys and submits it (protocol §2 "Ring", page §7):
 * reads the total, samples `ringSize` ids with the own id forced in, fetches every member's key
 * the same way, signs in id order and posts the vote; on acceptance stores voteId, blockId,
 * content and signature. Never sends the private key or the signer's position.
 */
export async function submitVote(
  io: ClientIO,
  namespace: string,
  opts: { content: string; ringSize: number; randomIndex?: RandomIndex; now?: () => number },
): Promise<VoteOutcome> {
  const { content, ringSize, randomIndex = cryptoRandomIndex, now = () => performance.now() } =
    opts;
  const stored = readStoredKeys(io.storage, namespace);
  const ownId = Number(stored.keyId);
  if (stored.privateKey === null || stored.keyId === null || !Number.isSafeInteger(ownId)) {
    return { ok: false, reason: "This voter has no registered key" };
  }
  const page = await getParsed(io, { path: "/api/pki/key/offset/0/limit/1", schema: KeyPage });
  if (page === null) return { ok: false, reason: "The key directory could not be read" };

  let ids: number[];
  try {
    ids = sampleRing({ total: page.total, ringSize, ownId }, randomIndex);
  } catch (error) {
    if (error instanceof TooFewKeysError) {
      return {
        ok: false,
        reason:
          `Not enough registered keys to vote: ${error.registered} registered, ${error.needed} needed`,
      };
    }
    return { ok: false, reason: messageOf(error) };
  }
  const records = await Promise.all(
    ids.map((id) => getParsed(io, { path: `/api/pki/key/id/${id}`, schema: KeyRecord })),
  );
  const missing = ids.filter((_, i) => records[i] === null);
  if (missing.length > 0) {
    return { ok: false, reason: `The keys with ids ${missing.join(", ")} could not be read` };
  }
  const ring = records.map((record) => record!.key);

  let body: VoteSubmission;
  let signMs: number;
  try {
    const started = now();
    const signature = signRing({
      ring: ring.map((key) => hexToBytes(key, 32, "ring key")),
      seed: base64ToBytes(stored.privateKey, "privateKey"),
      message: content,
    });
    signMs = now() - started;
    body = {
      publicKeys: ring,
      signature: encodeSignature(signature),
      tag: bytesToHex(signature.tag),
      payload: content,
    };
  } catch (error) {
    return {
      ok: false,
      reason: `The vote could not be signed with key ${stored.keyId}: ${messageOf(error)}`,
    };
  }
  const checked = VoteSubmission.safeParse(body);
  if (!checked.success) return { ok: false, reason: describeIssues(checked.error) };

  let answer: Answer;
  try {
    answer = await io.request("POST", "/api/vote", checked.data);
  } catch (error) {
    return { ok: false, reason: `The vote could not be sent: ${messageOf(error)}` };
  }
  const accepted = VoteAccepted.safeParse(answer.body);
  if (!answer.ok || !accepted.success) {
    return { ok: false, reason: `Vote refused: ${reasonOf(answer)}` };
  }
  const { voteId, blockId } = accepted.data;
  io.storage.setItem(storageKey(namespace, "voteId"), voteId);
  io.storage.setItem(storageKey(namespace, "blockId"), String(blockId));
  io.storage.setItem(storageKey(namespace, "voteContent"), content);
  io.storage.setItem(storageKey(namespace, "voteSignature"), body.signature);
  return { ok: true, voteId, blockId, signMs };
}

/** The server's reason from an error answer, else its status. */
function reasonOf(answer: Answer): string {
  const parsed = ErrorBody.safeParse(answer.body);
  return parsed.success ? parsed.data.error.message : `status ${answer.status}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
