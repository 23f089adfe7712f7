/**
 * Browser-safe. Every failure an audit can find (protocol §4.6), as data: a `kind` and the values
 * that say where and what. The words shown to a person are made from them in one place,
 * ./report_text.ts; code decides on kinds, never on words.
 * @module
 */
import type { VoteFinding } from "../../protocol/check_vote.ts";

/** Where a vote is: its block, its leaf index as served, its position in the listing, its id. */
export type VoteAt = { height: number; index: number; position: number; voteId: string };

/** What the audit finds of one vote beside the rulebook's findings: its place in its block. */
export type LeafFinding =
  /** The vote cannot be hashed into its leaf (protocol §3.1). */
  | { kind: "unreadable-vote"; reason: string }
  /** Served with another leaf index than its position in the listing. */
  | { kind: "leaf-index"; expected: number }
  /** Its id is not after the previous leaf's: the block is out of order. */
  | { kind: "vote-order"; previous: string }
  /** Its id was listed before, in block `height`. */
  | { kind: "vote-id-repeated"; height: number };

/** Something wrong with one vote: a broken rule of the rulebook, or its place in its block. */
export type VoteProblem = VoteFinding | LeafFinding;

/** A {@link VoteProblem} with the vote it is about. */
export type VoteFailureFinding = VoteProblem & { vote: VoteAt };

/** What is wrong with the key directory. */
export type DirectoryFinding =
  | { kind: "key-id"; expected: number; id: number }
  | { kind: "key-repeated"; key: string }
  | { kind: "key-count"; total: number; listed: number };

/** A block header, or the status, that does not hold; `height` null means the status. */
export type BlockFinding =
  | { kind: "head-unsigned"; height: number | null }
  | { kind: "head-signature"; height: number | null; key: string }
  | { kind: "chain-short"; last: number; height: number }
  | { kind: "genesis" }
  | { kind: "block-hash"; height: number }
  | { kind: "block-height"; height: number; served: number }
  | { kind: "block-empty"; height: number }
  | { kind: "block-link"; height: number }
  | { kind: "status-hash"; height: number }
  | { kind: "status-timestamp"; height: number; timestamp: number }
  | { kind: "status-signature"; height: number }
  | { kind: "merkle-root"; height: number; votes: number }
  | { kind: "block-size"; height: number; size: number; read: number }
  | { kind: "listing-total"; height: number; size: number; total: number };

/**
 * What the auditor trusts and the server contradicts: another key, or a remembered head the chain
 * does not hold. `how` says of a remembered head with another hash whether it is signed by the
 * server key ("fork": the block is too), not signed by it ("unsigned"), or neither ("differs").
 */
export type TrustFinding =
  | { kind: "server-key"; served: string; trusted: string }
  | { kind: "remembered-key"; count: number; key: string; served: string }
  | { kind: "remembered-above"; height: number; audited: number }
  | { kind: "remembered-missing"; height: number }
  | {
    kind: "remembered-hash";
    height: number;
    hash: string;
    remembered: string;
    how: "fork" | "unsigned" | "differs";
  };

/** Why a block beyond the audited height, read for the checkpoint, does not hold. */
export type BeyondProblem =
  | { is: "height"; served: number }
  | { is: "hash" }
  | { is: "link" }
  | { is: "signature" };

/** What is wrong with the log's checkpoint and its witnesses (protocol §4.10). */
export type LogFinding =
  | { kind: "checkpoint-not-given"; reason: string }
  | { kind: "checkpoint-too-long"; max: number }
  | { kind: "checkpoint-malformed"; reason: string }
  | { kind: "checkpoint-unsigned"; key: string; origin: string }
  | { kind: "checkpoint-root"; size: number; root: string; made: string }
  | { kind: "checkpoint-unserved"; size: number; audited: number; served: number }
  | { kind: "checkpoint-block"; height: number; audited: number; problem: BeyondProblem }
  | { kind: "witnesses-unchecked" }
  | { kind: "witness-quorum"; count: number; trusted: number; size: number; quorum: number }
  | { kind: "witnesses-prefix"; size: number; height: number };

/** What is wrong with the served tally. */
export type TallyFinding =
  | { kind: "tally-not-comparable"; from: number; to: number; runs: number }
  | { kind: "tally-total"; total: number; votes: number }
  | { kind: "tally-row-repeated"; payload: string }
  | { kind: "tally-sum"; sum: number; total: number }
  | { kind: "tally-count"; payload: string; count: number; served: number }
  | { kind: "tally-extra"; payload: string }
  | { kind: "tally-order" }
  | { kind: "tally-tie-order"; first: string; second: string; count: number };

/** What is wrong with an election record's own lines (protocol §4.8). */
export type RecordFinding =
  | { kind: "record-misplaced-vote"; line: number; voteId: string; height: number }
  | { kind: "record-misplaced-block"; line: number; height: number; head: number | null }
  | { kind: "record-misplaced-line"; line: number; lineKind: string }
  | { kind: "record-more-misplaced"; count: number }
  | {
    kind: "record-end-counts";
    line: number;
    end: { keys: number; blocks: number; votes: number };
    held: { keys: number; blocks: number; votes: number };
  }
  | { kind: "record-after-end"; line: number }
  | { kind: "record-unreadable"; reason: string }
  | { kind: "record-no-groups" };

/**
 * What is wrong with a carded round's cards (protocol §2.11): a key without a card, with a card
 * key not in the set, with a signature that does not admit it, a card that admitted a second key
 * (`first` the id of its first), or a set that is not the one the genesis commits to (`why`: the
 * set read does not hash to what it names, or the genesis commits to another).
 */
export type CardFinding =
  | { kind: "card_missing"; id: number; key: string }
  | { kind: "card_not_in_set"; id: number; key: string; card: string }
  | { kind: "card_signature"; id: number; key: string; card: string }
  | { kind: "card_reused"; id: number; key: string; card: string; first: number }
  | { kind: "cards_changed"; set: string; why: "set" | "genesis" };

/** The audit could not go on: an answer it needed was not given or could not be read. */
export type StopFinding = { kind: "stopped"; reason: string };

/** Every failure an audit reports, in the order found. */
export type AuditFinding =
  | VoteFailureFinding
  | DirectoryFinding
  | BlockFinding
  | TrustFinding
  | LogFinding
  | TallyFinding
  | RecordFinding
  | CardFinding
  | StopFinding;

/** One kind of {@link AuditFinding}. */
export type AuditFindingKind = AuditFinding["kind"];

/** True when `finding` is about one vote (it then names the vote). */
export function isVoteFailure(finding: AuditFinding): finding is VoteFailureFinding {
  return "vote" in finding;
}
