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
import { ringOfSignature, tagOfSignature } from "../../protocol/signature_fields.ts";
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
  type VoteProblem,
  type VoteRefusal,
  voteRefusal,
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
 * Vote status (page §4): a vote in doubt settled first ({@link recoverVote}), so that a reload
 * recovers by itself; then the chain height, then, once the block is sealed, the vote's record
 * and proof and the previous block's hash; integrity mismatches are logged (page §8).
 */
export async function loadVoteStatus(
  io: ClientIO,
  namespace: string,
): Promise<VoteLine & { block?: { height: number; hash: string } }> {
  await recoverVote(io, namespace);
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
  if (decision.line.status !== "voted" || !proof) return decision.line;
  // The block a verified vote is in, for the page's log view to prove included (page §10.13).
  return { ...decision.line, block: { height: proof.block.height, hash: proof.block.hash } };
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

/** A vote accepted with its ids and signing time, or refused, typed, with its words (page §11). */
export type VoteOutcome =
  | { ok: true; voteId: string; blockId: number; signMs: number }
  | VoteRefusal;

/**
 * Signs `opts.content` over a ring of registered keys and submits it (protocol §2.8, page §7):
 * settles an earlier vote still in doubt ({@link recoverVote}), reads the total, samples
 * `ringSize` ids with the own id forced in, fetches every member's key the same way, signs in id
 * order, stores content and signature, then posts the vote; on acceptance stores voteId and
 * blockId (page §11 "Nothing lost on reload"). A refusal that means the vote will never count
 * removes the two entries again; no answer, a 5xx or a 409 `duplicate_tag` keeps them for
 * recovery. Never sends the private key or the signer's position. A vote that cannot be made or is refused answers a typed
 * refusal with the words the panel shows (page §11).
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
    return voteRefusal({ code: "no_key" });
  }
  // A new vote carries the same tag as one still in doubt: writing its entries over that one's
  // would lose it, so the earlier one is settled first.
  if ((await recoverVote(io, namespace)).kind === "unsettled") {
    return voteRefusal({ code: "unsettled" });
  }
  const page = await orLogged(io, io.api.keys(0, 1));
  if (page === null) return voteRefusal({ code: "no_directory" });

  let ids: number[];
  try {
    ids = sampleRing({ total: page.total, ringSize, ownId }, randomIndex);
  } catch (error) {
    if (error instanceof TooFewKeysError) {
      return voteRefusal({
        code: "too_few_keys",
        registered: error.registered,
        needed: error.needed,
      });
    }
    return voteRefusal({ code: "no_ring", error: messageOf(error) });
  }
  const records = await Promise.all(ids.map((id) => orLogged(io, io.api.keyById(id))));
  const missing = ids.filter((_, i) => records[i] === null);
  if (missing.length > 0) return voteRefusal({ code: "unreadable_keys", ids: missing });
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
    return voteRefusal({ code: "not_signed", keyId: stored.keyId, error: messageOf(error) });
  }
  const checked = VoteSubmission.safeParse(body);
  if (!checked.success) {
    return voteRefusal({ code: "malformed_vote", issues: describeIssues(checked.error) });
  }

  // Written ahead only for a first vote: a voter with a vote on record keeps its entries, and the
  // server refuses the new vote anyway (409 duplicate_tag: one key, one tag).
  const first = readStoredVote(io.storage, namespace).voteId === null;
  if (first) writeVotePair(io.storage, namespace, { content, signature: body.signature });
  let accepted: VoteAccepted;
  try {
    accepted = await io.api.submitVote(checked.data);
  } catch (error) {
    const problem = postProblem(error);
    if (first && problem.code === "refused") dropVotePair(io.storage, namespace, body.signature);
    return voteRefusal(problem);
  }
  const { voteId, blockId } = accepted;
  // All four again: another tab of this voter may have written its own pair meanwhile.
  writeVotePair(io.storage, namespace, { content, signature: body.signature });
  writeVoteIds(io.storage, namespace, accepted);
  return { ok: true, voteId, blockId, signMs };
}

/**
 * How {@link recoverVote} settled a vote in doubt: nothing was in doubt; the server holds it
 * under its tag (ids stored); it never arrived and was sent again (ids stored); it was refused
 * for good or its entries are malformed (entries removed, the refusal as the panel would show
 * it); or it cannot be settled now (storage unchanged, the failure logged: try again later).
 */
export type VoteRecovery =
  | { kind: "none" }
  | { kind: "recovered" | "resent"; voteId: string; blockId: number }
  | { kind: "dropped"; refusal: VoteRefusal }
  | { kind: "unsettled" };

/**
 * Settles a vote in doubt (page §11 "Nothing lost on reload"): stored content and signature but
 * no vote id, because the page was closed or the answer lost while the vote was on its way. Asks
 * the board for the vote under its tag (`GET /api/tag/{tag}`) and stores its ids; on 404
 * `unknown_tag` sends the very same signed vote again (same ring in the signed order, same
 * signature, tag and payload, so nothing new about the signer is sent) and stores the ids of a
 * 202; a 409 `duplicate_tag` means another tab sent it meanwhile, so the tag is asked again.
 */
export async function recoverVote(io: ClientIO, namespace: string): Promise<VoteRecovery> {
  const stored = readStoredVote(io.storage, namespace);
  const { voteContent: payload, voteSignature: signature } = stored;
  if (stored.voteId !== null || payload === null || signature === null) return { kind: "none" };
  const resend = storedSubmission(payload, signature);
  if (!resend.ok) {
    dropVotePair(io.storage, namespace, signature);
    const refusal = voteRefusal(resend.problem);
    io.log(`Stored vote dropped: ${refusal.reason}`);
    return { kind: "dropped", refusal };
  }
  const body = resend.body;
  // Twice at most: a 409 after a 404 is another tab's copy landing in between; a second 404
  // after that is a board that does not list a tag its ledger holds.
  for (let round = 0; round < 2; round++) {
    try {
      const found = await io.api.voteOfTag(body.tag);
      adoptVoteIds(io.storage, namespace, signature, found);
      return { kind: "recovered", voteId: found.voteId, blockId: found.blockId };
    } catch (error) {
      if (!(error instanceof ApiCallError && error.code === "unknown_tag")) {
        io.log(messageOf(error));
        return { kind: "unsettled" };
      }
    }
    try {
      const accepted = await io.api.submitVote(body);
      adoptVoteIds(io.storage, namespace, signature, accepted);
      return { kind: "resent", voteId: accepted.voteId, blockId: accepted.blockId };
    } catch (error) {
      const problem = postProblem(error);
      if (problem.code === "duplicate_tag") continue;
      io.log(messageOf(error));
      if (problem.code !== "refused") return { kind: "unsettled" };
      dropVotePair(io.storage, namespace, signature);
      return { kind: "dropped", refusal: voteRefusal(problem) };
    }
  }
  io.log(`Vote not settled: tag ${body.tag} is refused as used but no vote is listed under it`);
  return { kind: "unsettled" };
}

/**
 * How many more keys must be registered before a ring of `ringSize` can be sampled:
 * max(0, ringSize − total), or null (logged) when the key directory cannot be read. Throws
 * RangeError unless `ringSize` is a non-negative integer.
 */
export async function keysStillNeeded(io: ClientIO, ringSize: number): Promise<number | null> {
  if (!Number.isSafeInteger(ringSize) || ringSize < 0) {
    throw new RangeError(`ring size must be a non-negative integer, got ${ringSize}`);
  }
  const total = await registeredKeyCount(io);
  return total === null ? null : Math.max(0, ringSize - total);
}

/**
 * The problem of a failed `POST /api/vote`. A 4xx other than 409 `duplicate_tag` (and the
 * "try again" 408 and 429) means the vote will never count: "refused". No answer, a 5xx or an
 * answer the page does not expect leaves it in doubt: "unconfirmed".
 */
function postProblem(error: unknown): VoteProblem {
  if (!(error instanceof ApiCallError) || error.status === 0) {
    return { code: "unconfirmed", status: 0, message: messageOf(error) };
  }
  const { status, code, reason } = error;
  if (code === "duplicate_tag") return { code: "duplicate_tag", message: reason };
  const forGood = status >= 400 && status < 500 && status !== 408 && status !== 429;
  return forGood
    ? { code: "refused", status, serverCode: code, message: reason }
    : { code: "unconfirmed", status, message: reason };
}

/** The submission a stored vote was sent as, rebuilt from its payload and wire signature. */
function storedSubmission(
  payload: string,
  signature: string,
): { ok: true; body: VoteSubmission } | { ok: false; problem: VoteProblem } {
  const publicKeys = ringOfSignature(signature);
  const tag = tagOfSignature(signature);
  if (publicKeys === null || tag === null) {
    return {
      ok: false,
      problem: { code: "malformed_vote", issues: "signature: not a wire signature (protocol §2)" },
    };
  }
  const checked = VoteSubmission.safeParse({ publicKeys, signature, tag, payload });
  return checked.success
    ? { ok: true, body: checked.data }
    : { ok: false, problem: { code: "malformed_vote", issues: describeIssues(checked.error) } };
}

/** Stores the content and signature of a vote about to be sent (or accepted). */
function writeVotePair(
  storage: VoterStorage,
  namespace: string,
  { content, signature }: { content: string; signature: string },
): void {
  storage.setItem(storageKey(namespace, "voteContent"), content);
  storage.setItem(storageKey(namespace, "voteSignature"), signature);
}

/** Stores an accepted vote's ids, the vote id last: a stored vote id means the server took it. */
function writeVoteIds(storage: VoterStorage, namespace: string, ids: VoteAccepted): void {
  storage.setItem(storageKey(namespace, "blockId"), String(ids.blockId));
  storage.setItem(storageKey(namespace, "voteId"), ids.voteId);
}

/**
 * Stores `ids` for the vote signed `signature` if it is still the one in doubt: another tab may
 * have settled it, or stored another vote, meanwhile.
 */
function adoptVoteIds(
  storage: VoterStorage,
  namespace: string,
  signature: string,
  ids: VoteAccepted,
): void {
  const now = readStoredVote(storage, namespace);
  if (now.voteId === null && now.voteSignature === signature) writeVoteIds(storage, namespace, ids);
}

/** Removes the content and signature of the vote signed `signature`, if still in doubt. */
function dropVotePair(storage: VoterStorage, namespace: string, signature: string): void {
  const now = readStoredVote(storage, namespace);
  if (now.voteId !== null || now.voteSignature !== signature) return;
  storage.removeItem(storageKey(namespace, "voteContent"));
  storage.removeItem(storageKey(namespace, "voteSignature"));
}
