/**
 * The audit's findings in words (lib/client/audit/report_text.ts), the one place they are made:
 * every kind of finding has words of its own, a vote's finding names the vote, and the printed
 * report lists the findings in the order found, each as its words.
 * @module
 */
import assert from "node:assert/strict";
import type { AuditReport } from "../../../lib/client/audit/audit.ts";
import type { AuditFinding, AuditFindingKind } from "../../../lib/client/audit/findings.ts";
import { findingText, formatReport } from "../../../lib/client/audit/report_text.ts";

const vote = { height: 2, index: 1, position: 1, voteId: "A".repeat(22) };
const key = "ab".repeat(32);

/** One finding of every kind: the type makes the list complete. */
const EXAMPLES: { [K in AuditFindingKind]: Extract<AuditFinding, { kind: K }> } = {
  "payload-too-long": { kind: "payload-too-long", length: 1001, max: 1000, vote },
  "not-a-choice": { kind: "not-a-choice", payload: "x", choices: ["a"], vote },
  "malformed-signature": { kind: "malformed-signature", reason: "why", vote },
  "ring-mismatch": { kind: "ring-mismatch", vote },
  "tag-mismatch": { kind: "tag-mismatch", tag: key, vote },
  "unregistered-member": { kind: "unregistered-member", key, vote },
  "not-a-group": { kind: "not-a-group", vote },
  "duplicate-tag": { kind: "duplicate-tag", tag: key, height: 1, vote },
  "invalid-signature": { kind: "invalid-signature", reason: "why", vote },
  "unreadable-vote": { kind: "unreadable-vote", reason: "why", vote },
  "leaf-index": { kind: "leaf-index", expected: 1, vote },
  "vote-order": { kind: "vote-order", previous: "B".repeat(22), vote },
  "vote-id-repeated": { kind: "vote-id-repeated", height: 1, vote },
  "key-id": { kind: "key-id", expected: 2, id: 3 },
  "key-repeated": { kind: "key-repeated", key },
  "key-count": { kind: "key-count", total: 3, listed: 2 },
  "head-unsigned": { kind: "head-unsigned", height: null },
  "head-signature": { kind: "head-signature", height: 1, key },
  "chain-short": { kind: "chain-short", last: 1, height: 2 },
  "genesis": { kind: "genesis" },
  "block-hash": { kind: "block-hash", height: 1 },
  "block-height": { kind: "block-height", height: 1, served: 2 },
  "block-empty": { kind: "block-empty", height: 1 },
  "block-link": { kind: "block-link", height: 1 },
  "status-hash": { kind: "status-hash", height: 2 },
  "status-timestamp": { kind: "status-timestamp", height: 2, timestamp: 5 },
  "status-signature": { kind: "status-signature", height: 2 },
  "merkle-root": { kind: "merkle-root", height: 1, votes: 3 },
  "block-size": { kind: "block-size", height: 1, size: 3, read: 2 },
  "listing-total": { kind: "listing-total", height: 1, size: 3, total: 4 },
  "server-key": { kind: "server-key", served: key, trusted: "cd".repeat(32) },
  "remembered-key": { kind: "remembered-key", count: 2, key, served: "cd".repeat(32) },
  "remembered-above": { kind: "remembered-above", height: 9, audited: 2 },
  "remembered-missing": { kind: "remembered-missing", height: 1 },
  "remembered-hash": {
    kind: "remembered-hash",
    height: 1,
    hash: key,
    remembered: "cd".repeat(32),
    how: "fork",
  },
  "checkpoint-not-given": { kind: "checkpoint-not-given", reason: "why" },
  "checkpoint-too-long": { kind: "checkpoint-too-long", max: 100_000 },
  "checkpoint-malformed": { kind: "checkpoint-malformed", reason: "why" },
  "checkpoint-unsigned": { kind: "checkpoint-unsigned", key, origin: "o" },
  "checkpoint-root": { kind: "checkpoint-root", size: 3, root: "r", made: "m" },
  "checkpoint-unserved": { kind: "checkpoint-unserved", size: 5, audited: 3, served: 3 },
  "checkpoint-block": {
    kind: "checkpoint-block",
    height: 4,
    audited: 3,
    problem: { is: "hash" },
  },
  "witnesses-unchecked": { kind: "witnesses-unchecked" },
  "witness-quorum": { kind: "witness-quorum", count: 0, trusted: 1, size: 3, quorum: 1 },
  "witnesses-prefix": { kind: "witnesses-prefix", size: 2, height: 3 },
  "tally-not-comparable": { kind: "tally-not-comparable", from: 2, to: 3, runs: 3 },
  "tally-total": { kind: "tally-total", total: 3, votes: 2 },
  "tally-row-repeated": { kind: "tally-row-repeated", payload: "a" },
  "tally-sum": { kind: "tally-sum", sum: 3, total: 2 },
  "tally-count": { kind: "tally-count", payload: "a", count: 1, served: 2 },
  "tally-extra": { kind: "tally-extra", payload: "a" },
  "tally-order": { kind: "tally-order" },
  "tally-tie-order": { kind: "tally-tie-order", first: "b", second: "a", count: 1 },
  "record-misplaced-vote": { kind: "record-misplaced-vote", line: 9, voteId: "v", height: 1 },
  "record-misplaced-block": { kind: "record-misplaced-block", line: 9, height: 3, head: 2 },
  "record-misplaced-line": { kind: "record-misplaced-line", line: 9, lineKind: "key" },
  "record-more-misplaced": { kind: "record-more-misplaced", count: 4 },
  "record-end-counts": {
    kind: "record-end-counts",
    line: 9,
    end: { keys: 1, blocks: 2, votes: 3 },
    held: { keys: 1, blocks: 2, votes: 2 },
  },
  "record-after-end": { kind: "record-after-end", line: 10 },
  "record-unreadable": { kind: "record-unreadable", reason: "why" },
  "record-no-groups": { kind: "record-no-groups" },
  "card_missing": { kind: "card_missing", id: 3, key },
  "card_not_in_set": { kind: "card_not_in_set", id: 3, key, card: "C".repeat(43) },
  "card_signature": { kind: "card_signature", id: 3, key, card: "C".repeat(43) },
  "card_reused": { kind: "card_reused", id: 3, key, card: "C".repeat(43), first: 1 },
  "cards_changed": { kind: "cards_changed", set: "0123456789abcdef", why: "genesis" },
  "stopped": { kind: "stopped", reason: "why" },
};

Deno.test("every kind of finding has words of its own; a vote's names the vote", () => {
  const words = Object.values(EXAMPLES).map((f) => findingText(f));
  assert.equal(new Set(words).size, words.length, "no two kinds share their words");
  for (const [i, finding] of Object.values(EXAMPLES).entries()) {
    assert.ok(words[i].length > 0);
    if ("vote" in finding) assert.ok(words[i].startsWith(`block 2 vote 1 (${vote.voteId}): `));
  }
});

Deno.test("the printed report lists the findings in the order found, each in its words", () => {
  const failures: AuditFinding[] = [EXAMPLES["block-size"], EXAMPLES["invalid-signature"]];
  const report: AuditReport = {
    ok: false,
    serverKey: key,
    keyPinned: false,
    trustedHeads: 0,
    checkpoint: null,
    witnesses: null,
    height: 2,
    keys: 4,
    blocks: 3,
    votes: 5,
    remembered: 0,
    memory: null,
    tally: [],
    groupRule: { keysAtOpen: 24, minVoters: 8, lateJoiners: true },
    failures,
    voteFailures: [],
  };
  const printed = formatReport("test", report).split("\n");
  assert.ok(
    printed.includes(
      "  ring rule         a round's groups: 24 keys at the opening, minVoters 8, late joiners on",
    ),
  );
  const { groupRule: _, ...stopped } = report;
  assert.ok(
    formatReport("test", stopped).split("\n").includes(
      "  ring rule         not known: the audit stopped before it read the votes",
    ),
  );
  const listed = printed.slice(printed.findIndex((l) => l.startsWith("VERDICT")) + 1);
  assert.deepEqual(listed, failures.map((f) => `  - ${findingText(f)}`));
});

Deno.test("a prefix checkpoint's words name the blocks it covers, or none", () => {
  assert.equal(
    findingText({ kind: "witnesses-prefix", size: 2, height: 3 }),
    "witnesses: checkpoint 2 covers blocks 0–1 only, below the audited height 3: no cosignature " +
      "vouches for the blocks above it",
  );
  assert.equal(
    findingText({ kind: "witnesses-prefix", size: 0, height: 3 }),
    "witnesses: checkpoint 0 covers no block, below the audited height 3: no cosignature vouches " +
      "for the blocks above it",
  );
});
