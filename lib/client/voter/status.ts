/**
 * Browser-safe. The key and vote statuses of page §4 decided from facts the page gathered, with the
 * integrity checks of page §5 as typed mismatches, the panel's check of its own tag, and the words
 * of a vote refused or waiting for voters (page §11).
 * @module
 */
import { bytesToHex, hexToBytes } from "../../protocol/bytes.ts";
import { blockHash } from "../../protocol/chain.ts";
import { publicKeyFromPrivate } from "../../protocol/keys.ts";
import { voteLeaf } from "../../protocol/merkle.ts";
import { rootFromInclusionProof } from "../../protocol/merkle_verify.ts";
import { sameRing } from "../../protocol/same_ring.ts";
import type { VoteProof } from "../../protocol/schemas.ts";
import { ringOfSignature } from "../../protocol/signature_fields.ts";
import { messageOf } from "../text.ts";

/** The status colours of page §4. */
export type Colour = "red" | "orange" | "green" | "blue";

/** A status line as shown: its status (null before a decision), text and colour. */
export type ColouredLine<S extends string> = {
  status: S | null;
  text: string;
  colour: Colour | null;
};

/** The key statuses of page §4. */
export type KeyStatus = "ungenerated" | "unregistered" | "registered" | "invalid" | "broken";
/** The vote statuses of page §4. */
export type VoteStatus = "unvoted" | "voted" | "invalid" | "pending";
/** A key status line. */
export type KeyLine = ColouredLine<KeyStatus>;
/** A vote status line. */
export type VoteLine = ColouredLine<VoteStatus>;

/** The key line before any decision (page §4). */
export const KEY_UNLOADED: ColouredLine<KeyStatus> = {
  status: null,
  text: "Key Unloaded",
  colour: null,
};
/** The vote line before any decision; page §4 names none, so it mirrors the key line (page §11). */
export const VOTE_UNLOADED: ColouredLine<VoteStatus> = {
  status: null,
  text: "Vote Unloaded",
  colour: null,
};

/** The key status line of page §4; `keyId` is shown by the registered and invalid texts. */
export function keyStatusLine(status: KeyStatus, keyId?: string | number): ColouredLine<KeyStatus> {
  switch (status) {
    case "ungenerated":
      return { status, text: "Key Ungenerated", colour: "red" };
    case "unregistered":
      return { status, text: "Key Unregistered", colour: "orange" };
    case "registered":
      return { status, text: `Key Registered with ID: ${keyId}`, colour: "green" };
    case "invalid":
      return {
        status,
        text: `Key Invalid with ID: ${keyId}, maybe you need to contact the admin`,
        colour: "red",
      };
    case "broken":
      return { status, text: "Key Broken, please regenerate", colour: "red" };
  }
}

/** The vote status line of page §4 for a vote in block `blockId` with id `voteId`. */
export function voteStatusLine(
  status: VoteStatus,
  ids?: { blockId: string | number; voteId: string },
): ColouredLine<VoteStatus> {
  if (status === "unvoted") return { status, text: "Vote Unvoted", colour: "orange" };
  const voted = `Vote Voted with Block ID: ${ids?.blockId} and Vote ID: ${ids?.voteId}`;
  switch (status) {
    case "voted":
      return { status, text: voted, colour: "green" };
    case "invalid":
      return {
        status,
        text: `${voted}, but Invalid - maybe you need to contact the admin`,
        colour: "red",
      };
    case "pending":
      return {
        status,
        text: `${voted}, please wait for a minute and refresh the page`,
        colour: "blue",
      };
  }
}

/** A voter's stored key entries (null when absent). */
export type StoredKeys = {
  publicKey: string | null;
  privateKey: string | null;
  keyId: string | null;
};

/**
 * True when both keys are stored and the public key equals the one derived from the private key
 * (page §5); a malformed private key is not a match.
 */
export function keyPairMatches(stored: Pick<StoredKeys, "publicKey" | "privateKey">): boolean {
  if (stored.publicKey === null || stored.privateKey === null) return false;
  try {
    return publicKeyFromPrivate(stored.privateKey) === stored.publicKey;
  } catch {
    return false;
  }
}

/** True when the decision needs the server's key for the stored key id (page §4 step 4). */
export function keyStatusNeedsServer(stored: StoredKeys): boolean {
  return stored.keyId !== null && keyPairMatches(stored);
}

/**
 * Key status decision on load (page §4): no stored keys → ungenerated; a public key that does
 * not match the private key → broken; no key id → unregistered; otherwise the server's key for
 * the id (`serverKey`, null when it has none or could not be read) equal to the stored public key
 * → registered, else invalid.
 */
export function decideKeyStatus(
  stored: StoredKeys,
  serverKey: string | null,
): ColouredLine<KeyStatus> {
  if (stored.publicKey === null && stored.privateKey === null) return keyStatusLine("ungenerated");
  if (!keyPairMatches(stored)) return keyStatusLine("broken");
  if (stored.keyId === null) return keyStatusLine("unregistered");
  return serverKey !== null && serverKey === stored.publicKey
    ? keyStatusLine("registered", stored.keyId)
    : keyStatusLine("invalid", stored.keyId);
}

/** A voter's stored vote entries (null when absent). */
export type StoredVote = {
  voteId: string | null;
  blockId: string | null;
  voteContent: string | null;
  voteSignature: string | null;
};

/** The facts a vote-status decision is made from; a null answer means the fetch failed. */
export type VoteFacts = {
  stored: StoredVote;
  /** `height` of GET /api/block/status, null when it could not be read. */
  height: number | null;
  /** Answer of GET /api/block/id/{blockId}/vote/{voteId}; null when it could not be read. */
  proof?: VoteProof | null;
  /** `hash` of GET /api/block/hash/id/{blockId - 1}; null when it could not be read. */
  prevHash?: string | null;
};

/** Which fetches the decision needs next, given what is stored and the chain height. */
export type VoteStage = "none" | "pending" | "proof";

/**
 * One client integrity check of page §5 the server's answer failed: the stored content, signature
 * or ring unlike the server's, or a block field unlike the one recomputed (`computed` is the value
 * recomputed, or the reason in parentheses when the proof was malformed).
 */
export type VoteMismatch =
  | { kind: "content" }
  | { kind: "signature" }
  | { kind: "ring" }
  | { kind: "block-height"; expected: string; found: number }
  | { kind: "merkle-root"; computed: string; found: string }
  | { kind: "block-hash"; computed: string; found: string };

/** A decision and the integrity mismatches to log (page §8). */
export type VoteDecision = { line: ColouredLine<VoteStatus>; mismatches: VoteMismatch[] };

/** The console line of a mismatch (page §8): the one place its words are made. */
export function mismatchText(mismatch: VoteMismatch): string {
  switch (mismatch.kind) {
    case "content":
      return "Vote content mismatch";
    case "signature":
      return "Vote signature mismatch";
    case "ring":
      return "Vote ring mismatch";
    case "block-height":
      return `Block height mismatch: expected ${mismatch.expected}, got ${mismatch.found}`;
    case "merkle-root":
      return `Merkle root mismatch: computed ${mismatch.computed}, block has ${mismatch.found}`;
    case "block-hash":
      return `Block hash mismatch: computed ${mismatch.computed}, block has ${mismatch.found}`;
  }
}

/** The stored block id as a positive integer, or null when absent or malformed. */
export function storedBlockId(stored: StoredVote): number | null {
  if (stored.blockId === null || !/^[1-9][0-9]*$/.test(stored.blockId)) return null;
  const id = Number(stored.blockId);
  return Number.isSafeInteger(id) ? id : null;
}

/**
 * The first steps of the vote decision (page §4): nothing stored → "none"; chain height below
 * the stored block id → "pending"; otherwise the proof must be fetched ("proof").
 */
export function voteStage(stored: StoredVote, height: number): VoteStage {
  const blockId = storedBlockId(stored);
  if (stored.voteId === null || blockId === null) return "none";
  return height < blockId ? "pending" : "proof";
}

/**
 * Vote status decision (page §4, checks of page §5 and protocol §3): no stored vote or a failed
 * fetch → unvoted; chain height below the stored block id → pending; stored content or signature
 * unlike the server's, or the server's `publicKeys` unlike the ring inside the stored signature →
 * invalid; then the Merkle root recomputed from the vote's leaf hash, its
 * index and path, and the block hash recomputed with the previous block's hash, must equal the
 * block's: voted, else invalid. Every mismatch found is returned for the console.
 */
export function decideVoteStatus(facts: VoteFacts): VoteDecision {
  const { stored, height } = facts;
  const unvoted = { line: voteStatusLine("unvoted"), mismatches: [] };
  if (height === null) return unvoted;
  const stage = voteStage(stored, height);
  if (stage === "none") return unvoted;
  const ids = { blockId: stored.blockId!, voteId: stored.voteId! };
  if (stage === "pending") return { line: voteStatusLine("pending", ids), mismatches: [] };
  const { proof, prevHash } = facts;
  if (!proof || prevHash === undefined || prevHash === null) return unvoted;

  const mismatches: VoteMismatch[] = [];
  if (proof.vote.payload !== stored.voteContent) mismatches.push({ kind: "content" });
  if (proof.vote.signature !== stored.voteSignature) mismatches.push({ kind: "signature" });
  // The leaf hashes publicKeys too: a ring other than the signed one would still prove inclusion
  // of a record the voter never made.
  if (!sameRing(proof.vote.publicKeys, ringOfSignature(stored.voteSignature))) {
    mismatches.push({ kind: "ring" });
  }
  if (mismatches.length > 0) return { line: voteStatusLine("invalid", ids), mismatches };

  const { block } = proof;
  if (block.height !== storedBlockId(stored)) {
    mismatches.push({ kind: "block-height", expected: ids.blockId, found: block.height });
  }
  const root = merkleRootOf(proof);
  if (root !== block.merkle_root) {
    mismatches.push({ kind: "merkle-root", computed: root, found: block.merkle_root });
  }
  const hash = blockHashOf(proof, prevHash);
  if (hash !== block.hash) {
    mismatches.push({ kind: "block-hash", computed: hash, found: block.hash });
  }
  return {
    line: voteStatusLine(mismatches.length === 0 ? "voted" : "invalid", ids),
    mismatches,
  };
}

/** Root recomputed from the vote's leaf hash, index and path; the error text when malformed. */
function merkleRootOf(proof: VoteProof): string {
  try {
    return bytesToHex(rootFromInclusionProof({
      index: proof.index,
      size: proof.block.size,
      leafHash: voteLeaf(proof.vote),
      proof: proof.path.map((node, i) => hexToBytes(node, 32, `path[${i}]`)),
    }));
  } catch (error) {
    return `(${messageOf(error)})`;
  }
}

/** Block hash recomputed with the previous block's hash; the error text when malformed. */
function blockHashOf(proof: VoteProof, prevHash: string): string {
  const { merkle_root, timestamp, height, size } = proof.block;
  try {
    return blockHash({ merkle_root, timestamp, height, prev_hash: prevHash, size });
  } catch (error) {
    return `(${messageOf(error)})`;
  }
}

/** Statuses of the voting page's tag check (page §11). */
export type TagCheck = "once" | "reused" | "missing";

/**
 * What the bulletin board's answer for a voter's own tag means (the tag lookup of protocol §4,
 * the lines of page §11):
 * the vote under the tag is the voter's stored vote → green "once"; another vote → red "reused"
 * (the key signed a vote this voter did not cast); no vote at all → red "missing". `answer` is
 * the answer's `voteId`, or null for 404 `unknown_tag`.
 */
export function tagCheckLine(
  storedVoteId: string,
  answer: { voteId: string } | null,
): ColouredLine<TagCheck> {
  if (answer === null) {
    return {
      status: "missing",
      text: "Tag not found on the board: the server lists no vote under this key",
      colour: "red",
    };
  }
  if (answer.voteId !== storedVoteId) {
    return {
      status: "reused",
      text: `Your key was used for another vote: ${answer.voteId}`,
      colour: "red",
    };
  }
  return { status: "once", text: "Tag checked: this key voted once", colour: "green" };
}

/**
 * Why a vote was not made, not sent or not counted (page §11), as a typed result; its words are
 * made by {@link voteRefusal}. `unconfirmed` (no answer, a 5xx, an answer the page does not
 * expect) and `unsettled` (an earlier vote not confirmed yet) leave a vote that may still count:
 * the next vote status load settles it (page §11 "Nothing lost on reload").
 */
export type VoteProblem =
  | { code: "no_key" }
  | { code: "no_directory" }
  | { code: "too_few_keys"; registered: number; needed: number }
  | { code: "no_ring"; error: string }
  | { code: "unreadable_keys"; ids: number[] }
  | { code: "not_signed"; keyId: string; error: string }
  | { code: "malformed_vote"; issues: string }
  | { code: "unsettled" }
  | { code: "unconfirmed"; status: number; message: string }
  | { code: "duplicate_tag"; message: string }
  | { code: "refused"; status: number; serverCode: string; message: string };

/**
 * A vote refused as the panel shows it: the problem, its sentence (`reason`), and, where the
 * server's own words would crowd the line, those words as `detail` (shown folded).
 */
export type VoteRefusal = VoteProblem & { ok: false; reason: string; detail?: string };

/**
 * The refusal of `problem` with its words (page §11): the one place they are made. An
 * `unconfirmed` problem with status 0 had no answer (`message` is the client's line, page §8);
 * otherwise `message` is the server's message, or `status {code}` without one.
 */
export function voteRefusal(problem: VoteProblem): VoteRefusal {
  const refused = (reason: string, detail?: string): VoteRefusal =>
    detail === undefined
      ? { ...problem, ok: false, reason }
      : { ...problem, ok: false, reason, detail };
  switch (problem.code) {
    case "no_key":
      return refused("This voter has no registered key");
    case "no_directory":
      return refused("The key directory could not be read");
    case "too_few_keys":
      return refused(
        `Not enough registered keys to vote: ${problem.registered} registered, ` +
          `${problem.needed} needed`,
      );
    case "no_ring":
      return refused(problem.error);
    case "unreadable_keys":
      return refused(`The keys with ids ${problem.ids.join(", ")} could not be read`);
    case "not_signed":
      return refused(`The vote could not be signed with key ${problem.keyId}: ${problem.error}`);
    case "malformed_vote":
      return refused(problem.issues);
    case "unsettled":
      return refused(
        "The vote could not be sent: an earlier vote of this voter is not confirmed yet",
      );
    case "unconfirmed":
      return refused(
        problem.status === 0
          ? `The vote could not be sent: ${problem.message}`
          : `Vote refused: ${problem.message}`,
      );
    case "duplicate_tag":
      // The server's message quotes the 64-digit tag: true, but no words for a person.
      return refused("Vote refused: this voter has already voted", problem.message);
    case "refused":
      return refused(`Vote refused: ${problem.message}`);
  }
}

/**
 * What a voter waits for while fewer keys are registered than a ring holds (page §11), in words
 * for a participant on a phone: `missing` more people must join a ring of `ringSize`. Throws
 * RangeError unless `missing` and `ringSize` are non-negative integers.
 */
export function waitingForVotersText(missing: number, ringSize: number): string {
  for (const [name, value] of [["missing", missing], ["ringSize", ringSize]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
    }
  }
  const among = `a vote hides among ${ringSize} registered voters`;
  if (missing === 0) return `Enough people have joined: ${among}, so it can be sent now.`;
  const people = missing === 1 ? "1 more person" : `${missing} more people`;
  return `Waiting for ${people} to join: ${among}, so it can be sent once ${ringSize} have joined.`;
}
