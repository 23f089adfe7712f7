/**
 * The board's and the command line's one verdict on a fork-evidence file
 * (lib/client/audit/evidence.ts): either form proven, its key compared with the trusted one, and
 * anything else refused with the reason of the form its kind names.
 * @module
 */
import assert from "node:assert/strict";
import { checkEvidence } from "../../../lib/client/audit/evidence.ts";
import { utf8 } from "../../../lib/protocol/bytes.ts";
import { signCheckpoint } from "../../../lib/protocol/checkpoint.ts";
import { sha256 } from "../../../lib/protocol/hash.ts";
import { forkEvidence, serverPublicKey, signHead } from "../../../lib/protocol/head.ts";
import { logForkEvidence } from "../../../lib/protocol/log_evidence.ts";

const seed = sha256(utf8("evidence verdict seed"));
const key = serverPublicKey(seed);
const other = serverPublicKey(sha256(utf8("another server")));

const head = (hash: string) => ({
  height: 2,
  hash,
  head_signature: signHead(seed, { height: 2, hash }),
});
const checkpoint = (size: number, root: number) =>
  signCheckpoint(
    { origin: "vote.example.org/log", size, root: new Uint8Array(32).fill(root) },
    seed,
  );

Deno.test("checkEvidence: two signed heads, trusted, untrusted or unknown key", () => {
  const evidence = forkEvidence(key, [head("aa".repeat(32)), head("bb".repeat(32))]);
  const fork = { kind: "fork", form: "heads", height: 2, key } as const;
  assert.deepEqual(checkEvidence(evidence, key.toUpperCase()), { ...fork, keyMatches: true });
  assert.deepEqual(checkEvidence(evidence, other), { ...fork, keyMatches: false });
  assert.deepEqual(checkEvidence(evidence, null), { ...fork, keyMatches: null });
});

Deno.test("checkEvidence: two checkpoints, each form, with the origin and sizes", () => {
  const sameSize = logForkEvidence(key, [checkpoint(4, 1), checkpoint(4, 2)]);
  assert.deepEqual(checkEvidence(sameSize, key), {
    kind: "fork",
    form: "same-size",
    origin: "vote.example.org/log",
    sizes: [4, 4],
    key,
    keyMatches: true,
  });
  const failed = logForkEvidence(key, [checkpoint(3, 1), checkpoint(6, 2)], []);
  assert.deepEqual(checkEvidence(failed, other), {
    kind: "fork",
    form: "failed-proof",
    origin: "vote.example.org/log",
    sizes: [3, 6],
    key,
    keyMatches: false,
  });
});

Deno.test("checkEvidence refuses what proves nothing, by the form its kind names", () => {
  const same = logForkEvidence(key, [checkpoint(4, 1), checkpoint(4, 1)]);
  assert.deepEqual(checkEvidence(same, key), {
    kind: "no-fork",
    reason: "Both checkpoints are of size 4 with the same root",
  });
  const heads = forkEvidence(key, [head("aa".repeat(32)), head("aa".repeat(32))]);
  assert.deepEqual(checkEvidence(heads, key), {
    kind: "no-fork",
    reason: "The heads name the same hash",
  });
  for (const value of [null, "fork", 7, [], { kind: "ringvote/v1/other" }]) {
    const verdict = checkEvidence(value, key);
    assert.equal(verdict.kind, "no-fork");
    assert.match((verdict as { reason: string }).reason, /^Not fork evidence: /);
  }
});
