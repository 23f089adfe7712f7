/**
 * Browser-safe. The voter panel's actions (page §4, §7, §11; the ring of protocol §2.8) over an
 * injected storage and API client, so that the page, the lab and the tests drive the same code.
 * @module
 */
import { base64ToBytes, hexToBytes } from "../../protocol/bytes.ts";
import { generateSeed, storedKeysFromSeed } from "../../protocol/keys.ts";
import { describeIssues, type VoteAccepted, VoteSubmission } from "../../protocol/schemas.ts";
import { ApiCallError } from "../api_client.ts";
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
  type TagCheck,
  tagCheckLine,
  type VoteLine,
  type VoteRefusal,
  voteRefusal,
  voteStage,
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

import { type ClientIO, orLogged, readStoredKeys, readStoredVote } from "./voter_io.ts";
import {
  dropVotePair,
  postProblem,
  recoverVote,
  writeVoteIds,
  writeVotePair,
} from "./vote_recovery.ts";

export { orLogged, readStoredKeys, readStoredVote } from "./voter_io.ts";
export type { ClientIO, VoterStorage } from "./voter_io.ts";
export { recoverVote, type VoteRecovery } from "./vote_recovery.ts";

/** Key status on load (page §4), reading the server's key for the stored id when it matters. */
export async function loadKeyStatus(io: ClientIO, namespace: string): Promise<KeyLine> {
  const stored = readStoredKeys(io.storage, namespace);
  let serverKey: string | null = null;
  if (keyStatusNeedsServer(stored)) {
    serverKey = (await orLogged(io, io.api.keyById(stored.keyId!)))?.key ?? null;
  }
  return decideKeyStatus(stored, serverKey);
}

/** The signing code, a chunk of its own: fetched once, then answered from the module cache. */
export function loadSigning(): Promise<typeof import("./ring_signing.ts")> {
  return import("./ring_signing.ts");
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
  // The signing code loads now, with the key, so that the vote fetches nothing before it is sent.
  loadSigning().catch(() => {});
  io.storage.setItem(storageKey(namespace, "publicKey"), publicKey);
  io.storage.setItem(storageKey(namespace, "privateKey"), privateKey);
  io.storage.removeItem(storageKey(namespace, "keyId"));
  for (const entry of VOTE_ENTRIES) io.storage.removeItem(storageKey(namespace, entry));
  return keyStatusLine("unregistered");
}

/**
 * In a carded round (page §14.7), the card a key registers with: `sign` makes the card's
 * admission of the voter key (hex), and `refused` hears the failure of the registration.
 */
export type RegistrationCard = {
  sign(voterKey: string): { key: string; sig: string };
  refused(error: unknown): void;
};

/**
 * Registers the stored public key with the placeholder name (page §7), and with `card`'s
 * admission in a carded round. Success stores the id and answers registered; a failure clears the
 * stored id; no stored public key answers unregistered.
 */
export async function registerKey(
  io: ClientIO,
  namespace: string,
  card: RegistrationCard | null = null,
): Promise<KeyLine> {
  const stored = readStoredKeys(io.storage, namespace);
  if (stored.publicKey === null) return keyStatusLine("unregistered");
  const key = stored.publicKey;
  const body = card === null
    ? { key, name: REGISTRATION_NAME }
    : { key, name: REGISTRATION_NAME, card: card.sign(key) };
  const record = await orLogged(
    io,
    io.api.registerKey(body).catch((error) => {
      card?.refused(error);
      throw error;
    }),
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
  opts: {
    content: string;
    ringSize: number;
    randomIndex?: RandomIndex;
    now?: () => number;
    /** In a round with groups: the keys of the voter's group in id order, or why there are none. */
    groupRing?: (ownId: number) => Promise<string[] | VoteRefusal>;
  },
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
  const chosen = opts.groupRing
    ? await opts.groupRing(ownId)
    : await sampledRing(io, { ringSize, ownId }, randomIndex);
  if (!Array.isArray(chosen)) return chosen;
  const ring = chosen;

  let body: VoteSubmission;
  let signMs: number;
  try {
    const { signBallot } = await loadSigning();
    const started = now();
    const { signature, tag } = signBallot({
      ring: ring.map((key) => hexToBytes(key, 32, "ring key")),
      seed: base64ToBytes(stored.privateKey, "privateKey"),
      message: content,
    });
    signMs = now() - started;
    body = { publicKeys: ring, signature, tag, payload: content };
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
 * The ring of protocol §2.8 for key `ownId`: reads the directory's total, samples `ringSize` ids
 * with the own id forced in, and fetches every member's key; or the refusal saying why not.
 */
async function sampledRing(
  io: ClientIO,
  { ringSize, ownId }: { ringSize: number; ownId: number },
  randomIndex: RandomIndex,
): Promise<string[] | VoteRefusal> {
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
  return records.map((record) => record!.key);
}
