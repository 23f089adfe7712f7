/**
 * Browser-safe. The lying-server lens's catalogue (protocol §4.7): each lie the server can tell about
 * a lab voter's vote or the chain, in plain words, and the lab's check that must catch it.
 * @module
 */

/** Ids of the lies, as the lens path and the page's `data-lie` attributes name them. */
export type LieId =
  | "rewrite-payload"
  | "rewrite-signature"
  | "drop-vote"
  | "alter-path"
  | "rewrite-block-hash"
  | "fork-chain"
  | "split-view";

/** The voter's checks a lie can trip, as the page names them. */
export type CheckName =
  | "content mismatch"
  | "signature mismatch"
  | "vote missing"
  | "Merkle root mismatch"
  | "block hash mismatch"
  | "history link"
  | "fork"
  | "witness cosignature";

/** One lie of the catalogue. */
export type Lie = {
  id: LieId;
  title: string;
  /** What the server claims, for someone who is not a cryptographer. */
  explanation: string;
  /** The check that must catch it. */
  caughtBy: CheckName;
};

/** Every lie, in the order the lab shows them. */
export const LIES: readonly Lie[] = [
  {
    id: "rewrite-payload",
    title: "Change the vote's choice",
    explanation: "The server shows the voter a different choice than the one they cast.",
    caughtBy: "content mismatch",
  },
  {
    id: "rewrite-signature",
    title: "Change the vote's signature",
    explanation: "The server shows a signature the voter never made.",
    caughtBy: "signature mismatch",
  },
  {
    id: "drop-vote",
    title: "Make the vote disappear",
    explanation: "The server accepted the vote, then claims it never received it.",
    caughtBy: "vote missing",
  },
  {
    id: "alter-path",
    title: "Tamper with the proof of inclusion",
    explanation: "One hash of the path linking the vote to its block is changed, as if the vote " +
      "sat in another tree.",
    caughtBy: "Merkle root mismatch",
  },
  {
    id: "rewrite-block-hash",
    title: "Change the block's fingerprint",
    explanation: "The server gives the block a hash that does not match its contents, and signs " +
      "it (in the lab, with the lens's key).",
    caughtBy: "block hash mismatch",
  },
  {
    id: "fork-chain",
    title: "Rewrite history",
    explanation: "The server shows a different, internally consistent chain — every block hash " +
      "and link checks out — but it is not the chain this browser saw before. Both versions " +
      "are signed by one key: that is proof it lied. In the lab the lens signs with a key of " +
      "its own, so this proof names the lens, never the real server.",
    caughtBy: "fork",
  },
  {
    id: "split-view",
    title: "A split view for a newcomer",
    explanation: "The server shows a browser that has never visited it before a different, " +
      "forked history — every block, link, checkpoint and proof checks out, signed (in the " +
      "lab) with the lens's key. With nothing remembered there is nothing to compare it with: " +
      "alone, the newcomer believes it. A witness — here the projector, which already cosigned " +
      "the history everyone else sees — never cosigns a second history of the same blocks, so a " +
      "browser told to require the projector's cosignature refuses it.",
    caughtBy: "witness cosignature",
  },
];

/** True when `id` names a lie of the catalogue. */
export function isLieId(id: string): id is LieId {
  return LIES.some((lie) => lie.id === id);
}

/** The lens view that tells no lie: the honest reads, their heads signed with the lens key. */
export const HONEST_VIEW = "honest";

/** What the lens can show: a lie of the catalogue, or the honest baseline. */
export type LensView = LieId | typeof HONEST_VIEW;

/** True when `id` names a lens view: a lie, or {@link HONEST_VIEW}. */
export function isLensView(id: string): id is LensView {
  return id === HONEST_VIEW || isLieId(id);
}
