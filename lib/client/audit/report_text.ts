/**
 * Browser-safe. The audit's findings in words, the one place they are made: each failure as the
 * line the command line prints and the board shows (protocol §4.6), and the whole printed report.
 * @module
 */
import type { VoteFinding } from "../../protocol/check_vote.ts";
import type { AuditReport } from "./audit.ts";
import { cardsLine } from "./cards.ts";
import {
  type AuditFinding,
  type BeyondProblem,
  isVoteFailure,
  type VoteProblem,
} from "./findings.ts";

/** A vote's problem in words, without the vote: "invalid signature: …". */
export function voteProblemText(problem: VoteProblem): string {
  switch (problem.kind) {
    case "unreadable-vote":
      return `unreadable vote: ${problem.reason}`;
    case "leaf-index":
      return `expected leaf index ${problem.expected}`;
    case "vote-order":
      return `vote id not after the previous leaf's ${problem.previous}: out of order`;
    case "vote-id-repeated":
      return `vote id already listed in block ${problem.height}`;
    default:
      return ruleText(problem);
  }
}

/** A broken rule of the rulebook (lib/protocol/check_vote.ts) in the audit's words. */
function ruleText(finding: VoteFinding): string {
  switch (finding.kind) {
    case "payload-too-long":
      return `payload longer than ${finding.max} characters`;
    case "not-a-choice":
      return `payload ${JSON.stringify(finding.payload)} is not one of the round's choices`;
    case "malformed-signature":
      return `malformed signature: ${finding.reason}`;
    case "ring-mismatch":
      return "publicKeys differ from the signature's ring";
    case "tag-mismatch":
      return `tag ${finding.tag} differs from the signature's`;
    case "unregistered-member":
      return `ring member ${finding.key} is not registered`;
    case "not-a-group":
      return "ring is not one of the round's groups";
    case "duplicate-tag":
      return finding.height === null
        ? `tag ${finding.tag} already voted`
        : `tag ${finding.tag} already voted in block ${finding.height}`;
    case "invalid-signature":
      return `invalid signature: ${finding.reason}`;
  }
}

/** One failure as a line of the report, without the leading "  - ". */
export function findingText(finding: AuditFinding): string {
  if (isVoteFailure(finding)) {
    const { height, index, voteId } = finding.vote;
    return `block ${height} vote ${index} (${voteId}): ${voteProblemText(finding)}`;
  }
  const f = finding;
  switch (f.kind) {
    // The key directory and the chain of blocks.
    case "key-id":
      return `key directory: expected id ${f.expected}, got ${f.id}`;
    case "key-repeated":
      return `key directory: key ${f.key} is listed twice`;
    case "key-count":
      return `key directory: total ${f.total}, listed ${f.listed}`;
    case "head-unsigned":
      return `${headName(f.height)}: no head signature`;
    case "head-signature":
      return `${headName(f.height)}: head signature is not the server key's (${f.key})`;
    case "chain-short":
      return `blocks: the chain stops at height ${f.last}, status says ${f.height}`;
    case "genesis":
      return "block 0: not a genesis block (height 0, size 0, empty root, zero prev_hash)";
    case "block-hash":
      return `block ${f.height}: hash does not match its fields`;
    case "block-height":
      return `block ${f.height}: served with height ${f.served}`;
    case "block-empty":
      return `block ${f.height}: sealed with no votes`;
    case "block-link":
      return `block ${f.height}: prev_hash does not link to block ${f.height - 1}`;
    case "status-hash":
      return `status: head hash differs from block ${f.height}`;
    case "status-timestamp":
      return `status: head timestamp ${f.timestamp} differs from block ${f.height}'s`;
    case "status-signature":
      return `status: head signature differs from block ${f.height}'s`;
    case "merkle-root":
      return `block ${f.height}: Merkle root does not match its ${f.votes} votes`;
    case "block-size":
      return `block ${f.height}: size ${f.size}, but ${f.read} votes read`;
    case "listing-total":
      return `block ${f.height}: size ${f.size}, but its votes listing says total ${f.total}`;
    // What the auditor trusts.
    case "server-key":
      return `server key: the server answers ${f.served}, but the trusted key is ${f.trusted}`;
    case "remembered-key":
      return `remembered heads: ${f.count} ${f.count === 1 ? "head was" : "heads were"} ` +
        `signed under key ${f.key}, not the server key ${f.served}`;
    case "remembered-above":
      return `remembered head ${f.height}: above the audited height ${f.audited}: blocks are ` +
        "hidden or the chain went back";
    case "remembered-missing":
      return `remembered head ${f.height}: the audited chain has no block at this height`;
    case "remembered-hash":
      return `block ${f.height}: hash ${f.hash}, but the remembered head at this height has ` +
        `hash ${f.remembered}${REMEMBERED_HOW[f.how]}`;
    // The log.
    case "checkpoint-not-given":
      return `checkpoint: not given: ${f.reason}`;
    case "checkpoint-too-long":
      return `checkpoint: malformed: longer than ${f.max} characters`;
    case "checkpoint-malformed":
      return `checkpoint: malformed: ${f.reason}`;
    case "checkpoint-unsigned":
      return `checkpoint: not signed by the server key ${f.key} under its origin "${f.origin}"`;
    case "checkpoint-root": {
      const made = f.size === 0 ? "the empty tree has" : `the audited blocks 0–${f.size - 1} make`;
      return `checkpoint: size ${f.size} has root ${f.root}, but ${made} ${f.made}`;
    }
    case "checkpoint-unserved":
      return `checkpoint: size ${f.size}, beyond the audited height ${f.audited}, but only ` +
        `blocks up to height ${f.served} are served`;
    case "checkpoint-block":
      return `checkpoint: block ${f.height}, beyond the audited height ${f.audited}: ` +
        beyondText(f.height, f.problem);
    case "witnesses-unchecked":
      return "witnesses: not checked: the checkpoint did not verify, so no cosignature counts";
    case "witness-quorum":
      return `witnesses: ${f.count} of the ${f.trusted} trusted witnesses cosigned checkpoint ` +
        `${f.size}, ${f.quorum} needed`;
    case "witnesses-prefix":
      return `witnesses: checkpoint ${f.size} covers ` +
        (f.size === 0 ? "no block" : `blocks 0–${f.size - 1} only`) +
        `, below the audited height ${f.height}: no cosignature vouches for the blocks above it`;
    // The tally.
    case "tally-not-comparable":
      return `tally: the chain grew from height ${f.from} to ${f.to} during each of ${f.runs} ` +
        "runs of the audit, so the served tally could not be compared";
    case "tally-total":
      return `tally: total ${f.total}, but the chain holds ${f.votes} votes`;
    case "tally-row-repeated":
      return `tally: "${f.payload}" is served in more than one row`;
    case "tally-sum":
      return `tally: the served counts add up to ${f.sum}, but the served total is ${f.total}`;
    case "tally-count":
      return `tally: "${f.payload}" has ${f.count} votes, served ${f.served}`;
    case "tally-extra":
      return `tally: "${f.payload}" is served but no vote carries it`;
    case "tally-order":
      return "tally: not in count-descending order";
    case "tally-tie-order":
      return `tally: "${f.first}" and "${f.second}" have ${f.count} votes each but are not in ` +
        "payload order (UTF-16 code units, ascending)";
    // An election record's own lines.
    case "record-misplaced-vote":
      return misplacedText(
        f.line,
        `vote ${f.voteId} of block ${f.height} lies outside its block's listing`,
      );
    case "record-misplaced-block":
      return misplacedText(f.line, `block ${f.height} lies beyond the head's height ${f.head}`);
    case "record-misplaced-line":
      return misplacedText(f.line, `a "${f.lineKind}" line lies where the audit reads none`);
    case "record-more-misplaced":
      return `record: ${f.count} more lines out of place`;
    case "record-end-counts":
      return `record line ${f.line}: the end line counts ${f.end.keys} keys, ${f.end.blocks} ` +
        `blocks and ${f.end.votes} votes, but the record holds ${f.held.keys}, ` +
        `${f.held.blocks} and ${f.held.votes}`;
    case "record-after-end":
      return `record line ${f.line}: a line after the end line`;
    case "record-unreadable":
      return f.reason;
    case "card_missing":
      return `key directory: key ${f.id} (${f.key}) carries no card`;
    case "card_not_in_set":
      return `key directory: key ${f.id} carries card key ${f.card}, not one of the round's cards`;
    case "card_signature":
      return `key directory: key ${f.id}'s card ${f.card} did not sign for it in this round`;
    case "card_reused":
      return `key directory: card ${f.card} admitted key ${f.first} and key ${f.id} too`;
    case "cards_changed":
      return f.why === "set"
        ? `cards: card set ${f.set} as served does not hash to the sha256 it names`
        : `cards: the round's genesis does not commit to card set ${f.set}`;
    case "record-no-groups":
      return "the record's header carries no group rule, so its rings were held to the " +
        "election's rule: it is not a round's record, or its rule was taken out";
    case "stopped":
      return `audit stopped: ${f.reason}`;
  }
}

/** "status" for the status's head (height null), "block {h}" for a block's. */
function headName(height: number | null): string {
  return height === null ? "status" : `block ${height}`;
}

/** The end of a remembered-head line, by what signs the remembered head. */
const REMEMBERED_HOW: Record<"fork" | "unsigned" | "differs", string> = {
  fork: ", both signed by the server key: a fork",
  unsigned: " (the remembered head is not signed by the server key)",
  differs: "",
};

/** Why a block beyond the audited height does not hold, in words. */
function beyondText(height: number, problem: BeyondProblem): string {
  switch (problem.is) {
    case "height":
      return `served with height ${problem.served}`;
    case "hash":
      return "hash does not match its fields";
    case "link":
      return `prev_hash does not link to block ${height - 1}`;
    case "signature":
      return "head signature is not the server key's";
  }
}

function misplacedText(line: number, what: string): string {
  return `record line ${line}: ${what}, so the audit did not read it`;
}

/** The printed report: what was checked, the recomputed tally, failures and the verdict. */
export function formatReport(url: string, report: AuditReport): string {
  const trust = report.keyPinned ? "(pinned)" : "(not pinned: compare it out of band)";
  const lines = [
    `Ringvote audit of ${url}`,
    `  server key        ${report.serverKey ?? "(not read)"} ${trust}`,
    ...(report.trustedHeads > 0 ? [`  remembered heads  ${report.trustedHeads}`] : []),
    `  keys registered   ${report.keys}`,
    ...(report.cards ? [`  cards             ${cardsLine(report.cards)}`] : []),
    `  blocks            ${report.blocks} (height ${report.height})`,
    ...checkpointLines(report),
    `  votes verified    ${report.votes}`,
    `  ring rule         ${ringRuleText(report)}`,
    // An audit held to an earlier one's memory says how many of them it took from there.
    ...(report.remembered > 0
      ? [`    of which remembered from an earlier audit (not read again): ${report.remembered}`]
      : []),
    "  tally (recomputed from the chain):",
    ...report.tally.map((t) => `    ${String(t.count).padStart(6)}  ${JSON.stringify(t.payload)}`),
  ];
  if (report.ok) {
    lines.push("VERDICT: the record is consistent: every check holds");
  } else {
    lines.push(`VERDICT: INCONSISTENT: ${report.failures.length} failure(s)`);
    lines.push(...report.failures.map((f) => `  - ${findingText(f)}`));
  }
  return lines.join("\n");
}

/** The ring rule the votes were held to, in words (protocol §2.8). */
function ringRuleText({ groupRule: rule }: AuditReport): string {
  if (rule === undefined) return "not known: the audit stopped before it read the votes";
  if (rule === null) return "the election's: rings drawn from the registered keys (no groups)";
  if (rule.keysAtOpen === null) return "a round's groups: voting never opened";
  return `a round's groups: ${rule.keysAtOpen} keys at the opening, minVoters ` +
    `${rule.minVoters}, late joiners ${rule.lateJoiners ? "on" : "off"}`;
}

/** The report's lines on the log: the checkpoint verified, and each trusted witness's finding. */
function checkpointLines({ checkpoint, witnesses }: AuditReport): string[] {
  const lines = [
    checkpoint === null
      ? "  checkpoint        (not verified)"
      : `  checkpoint        size ${checkpoint.size} of log ${checkpoint.origin}, root ` +
        `${checkpoint.root}`,
  ];
  if (witnesses === null) return lines;
  for (const { vkey, cosignedAt } of witnesses.findings) {
    const when = cosignedAt === null
      ? "no valid cosignature"
      : `cosigned at ${new Date(cosignedAt).toISOString()}`;
    lines.push(`  witness           ${vkey}: ${when}`);
  }
  const count = witnesses.findings.filter((f) => f.cosignedAt !== null).length;
  lines.push(
    `  witnesses         ${count} of ${witnesses.findings.length} cosigned, ` +
      `${witnesses.quorum} needed`,
  );
  return lines;
}
