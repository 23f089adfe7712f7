// Browser-safe. The lying-server lens's catalogue: each lie a demonstrator can make the server
// tell about a lab voter's vote or the chain, in plain words, and the check that must catch it.
// The server tells them under `/api/lens/{lie}/…` (server/lens.ts); honest reads are untouched.

/** Ids of the lies, as the lens path and the page's `data-lie` attributes name them. */
export type LieId =
  | "rewrite-payload"
  | "rewrite-signature"
  | "drop-vote"
  | "alter-path"
  | "rewrite-block-hash"
  | "fork-chain";

/** The voter's checks a lie can trip, as the page names them. */
export type CheckName =
  | "content mismatch"
  | "signature mismatch"
  | "vote missing"
  | "Merkle root mismatch"
  | "block hash mismatch"
  | "fork";

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
      "it with its own key.",
    caughtBy: "block hash mismatch",
  },
  {
    id: "fork-chain",
    title: "Rewrite history",
    explanation: "The server shows a different, internally consistent chain — every block hash " +
      "and link checks out — but it is not the chain this browser saw before. Both versions " +
      "are signed by the server: that is proof it lied.",
    caughtBy: "fork",
  },
];

/** True when `id` names a lie of the catalogue. */
export function isLieId(id: string): id is LieId {
  return LIES.some((lie) => lie.id === id);
}
