/**
 * Browser-safe. The voter panel's actions (page §4, §7, §11; the ring of protocol §2.8) over an
 * injected storage and API client, so that the page, the lab and the tests drive the same code.
 * @module
 */
import { base64ToBytes, bytesToHex, hexToBytes } from "../../protocol/bytes.ts";
import { generateSeed, storedKeysFromSeed } from "../../protocol/keys.ts";
import { signRing } from "../../protocol/ring_signature.ts";
import { encodeSignature } from "../../protocol/signature_wire.ts";
import { describeIssues, type VoteAccepted, VoteSubmission } from "../../protocol/schemas.ts";
import { ApiCallError, type ApiClient } from "../api_client.ts";
import { messageOf } from "../text.ts";
import { tagOfSignature } from "../../protocol/signature_fields.ts";
import {
  type ColouredLine,
  decideKeyStatus,
  decideVoteStatus,
  type KeyLine,
  keyStatusLine,
  keyStatusNeedsServer,
  mismatchText,
  storedBlockId,
  type StoredKeys,
  type StoredVote,
  type TagCheck,
  tagCheckLine,
  type VoteLine,
  voteStage,
} from "./status.ts";
import {
  cryptoRandomIndex,
  KEY_ENTRIES,
  type RandomIndex,
  REGISTRATION_NAME,
  sampleRing,
  storageKey,
  TooFewKeysError,
  VOTE_ENTRIES,
  type VoterEntry,
} from "./voters.ts";

/** The part of the Web Storage API the page uses. */
export type VoterStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** What the actions need from the outside world: storage, the API client and a console. */
export type ClientIO = {
  storage: VoterStorage;
  api: ApiClient;
  log(message: string): void;
};

/** The voter's stored key entries. */
export function readStoredKeys(storage: VoterStorage, namespace: string): StoredKeys {
  return readEntries(storage, namespace, KEY_ENTRIES);
}

/** The voter's stored vote entries. */
export function readStoredVote(storage: VoterStorage, namespace: string): StoredVote {
  return readEntries(storage, namespace, VOTE_ENTRIES);
}

function readEntries<E extends VoterEntry>(
  storage: VoterStorage,
  namespace: string,
  entries: readonly E[],
): Record<E, string | null> {
  const read = entries.map((entry) => [entry, storage.getItem(storageKey(namespace, entry))]);
  return Object.fromEntries(read) as Record<E, string | null>;
}

/** The answer of `call`, or null when it failed: the failure is logged (page §8). */
async function orLogged<T>(io: ClientIO, call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (error) {
    io.log(messageOf(error));
    return null;
  }
}

/** Key status on load (page §4), reading the server's key for the stored id when it matters. */
export async function loadKeyStatus(io: ClientIO, namespace: string): Promise<KeyLine> {
  const stored = readStoredKeys(io.storage, namespace);
  let serverKey: string | null = null;
  if (keyStatusNeedsServer(stored)) {
    serverKey = (await orLogged(io, io.api.keyById(stored.keyId!)))?.key ?? null;
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
): KeyLine {
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
export async function registerKey(io: ClientIO, namespace: string): Promise<KeyLine> {
  const stored = readStoredKeys(io.storage, namespace);
  if (stored.publicKey === null) return keyStatusLine("unregistered");
  const record = await orLogged(
    io,
    io.api.registerKey({ key: stored.publicKey, name: REGISTRATION_NAME }),
  );
  if (record === null) {
    io.storage.removeItem(storageKey(namespace, "keyId"));
    return decideKeyStatus({ ...stored, keyId: null }, null);
  }
  io.storage.setItem(storageKey(namespace, "keyId"), String(record.id));
  return keyStatusLine("registered", record.id);
}

/**
 * How many keys the key directory holds (`total` of the page §7 call a vote makes first), or null
 * (logged) when it cannot be read.
 */
export async function registeredKeyCount(io: ClientIO): Promise<number | null> {
  return (await orLogged(io, io.api.keys(0, 1)))?.total ?? null;
}

/** Height of the chain's last sealed block, or null (logged) when it cannot be read. */
export async function chainHeight(io: ClientIO): Promise<number | null> {
  return (await orLogged(io, io.api.blockStatus()))?.height ?? null;
}

/**
 * Vote status (page §4): the chain height first, then, once the block is sealed, the vote's
 * record and proof and the previous block's hash; integrity mismatches are logged (page §8).
 */
export async function loadVoteStatus(io: ClientIO, namespace: string): Promise<VoteLine> {
  const stored = readStoredVote(io.storage, namespace);
  const blockId = storedBlockId(stored);
  const height = stored.voteId !== null && blockId !== null ? await chainHeight(io) : null;
  if (height === null || voteStage(stored, height) !== "proof") {
    return decideVoteStatus({ stored, height }).line;
  }
  const [proof, previous] = await Promise.all([
    orLogged(io, io.api.voteProof(blockId!, stored.voteId!)),
    orLogged(io, io.api.blockHash(blockId! - 1)),
  ]);
  const decision = decideVoteStatus({
    stored,
    height,
    proof,
    prevHash: previous?.hash ?? null,
  });
  for (const mismatch of decision.mismatches) io.log(mismatchText(mismatch));
  return decision.line;
}

/**
 * Asks the bulletin board which vote holds this voter's tag (the tag lookup of protocol §4, the
 * tag being `I` of the stored signature; page §11) and compares it with the stored vote id: the
 * key voted once (green), or someone else cast a vote with it (red). Null, logged, when there is
 * no stored vote or the board could not be read.
 */
export async function checkOwnTag(
  io: ClientIO,
  namespace: string,
): Promise<ColouredLine<TagCheck> | null> {
  const stored = readStoredVote(io.storage, namespace);
  const tag = tagOfSignature(stored.voteSignature);
  if (stored.voteId === null || tag === null) return null;
  try {
    return tagCheckLine(stored.voteId, await io.api.voteOfTag(tag));
  } catch (error) {
    if (error instanceof ApiCallError && error.code === "unknown_tag") {
      return tagCheckLine(stored.voteId, null);
    }
    io.log(messageOf(error));
    return null;
  }
}

/** A vote accepted with its ids and signing time, or refused with a reason (page §11). */
export type VoteOutcome =
  | { ok: true; voteId: string; blockId: number; signMs: number }
  | { ok: false; reason: string };

/**
 * Signs `opts.content` over a ring of registered keys and submits it (protocol §2.8, page §7):
 * reads the total, samples `ringSize` ids with the own id forced in, fetches every member's key
 * the same way, signs in id order and posts the vote; on acceptance stores voteId, blockId,
 * content and signature. Never sends the private key or the signer's position. A vote that cannot
 * be made or is refused answers the reason the panel shows (page §11).
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
  const page = await orLogged(io, io.api.keys(0, 1));
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
  const records = await Promise.all(ids.map((id) => orLogged(io, io.api.keyById(id))));
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

  let accepted: VoteAccepted;
  try {
    accepted = await io.api.submitVote(checked.data);
  } catch (error) {
    const refused = error instanceof ApiCallError && error.status !== 0;
    return {
      ok: false,
      reason: refused
        ? `Vote refused: ${error.reason}`
        : `The vote could not be sent: ${messageOf(error)}`,
    };
  }
  const { voteId, blockId } = accepted;
  io.storage.setItem(storageKey(namespace, "voteId"), voteId);
  io.storage.setItem(storageKey(namespace, "blockId"), String(blockId));
  io.storage.setItem(storageKey(namespace, "voteContent"), content);
  io.storage.setItem(storageKey(namespace, "voteSignature"), body.signature);
  return { ok: true, voteId, blockId, signMs };
}
