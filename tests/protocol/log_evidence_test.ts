/**
 * Checkpoint fork evidence (lib/protocol/log_evidence.ts, protocol §4.5, §4.10): two checkpoints
 * signed by one key under one origin that no consistency proof joins. Both forms are proven; every
 * case that proves nothing is refused with its reason (unsigned, another key, two origins, one
 * root, a proof that joins them, malformed), and no change to a note survives; it never throws.
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { bytesToBase64, utf8 } from "../../lib/protocol/bytes.ts";
import { signCheckpoint } from "../../lib/protocol/checkpoint.ts";
import { sha256 } from "../../lib/protocol/hash.ts";
import { serverPublicKey } from "../../lib/protocol/head.ts";
import {
  checkLogForkEvidence,
  LOG_FORK_EVIDENCE_KIND,
  logForkEvidence,
} from "../../lib/protocol/log_evidence.ts";
import { consistencyProof, hashLeaf, rootOfSize } from "../../lib/protocol/merkle.ts";
import { formatNote, parseNote, signCosignature } from "../../lib/protocol/note.ts";

const seed = sha256(utf8("log evidence test seed"));
const key = serverPublicKey(seed);
const otherSeed = sha256(utf8("log evidence other seed"));
const ORIGIN = "vote.example.org/log";

/** Leaf hashes of eight entries; `fork` replaces entries from index 3 on. */
function leaves(fork = false): Uint8Array[] {
  return Array.from(
    { length: 8 },
    (_, i) => hashLeaf(utf8(fork && i >= 3 ? `forked ${i}` : `${i}`)),
  );
}
const honest = leaves();
const forked = leaves(true);

/** The checkpoint of the first `size` of `tree`, signed by `by` under `origin`. */
function checkpoint(
  tree: Uint8Array[],
  size: number,
  { by = seed, origin = ORIGIN }: { by?: Uint8Array; origin?: string } = {},
): string {
  return signCheckpoint({ origin, size, root: rootOfSize(tree, size) }, by);
}

/** The consistency proof from `m` to `n` in `tree`, as evidence carries it. */
const proofOf = (tree: Uint8Array[], m: number, n: number) =>
  consistencyProof(tree, m, n).map(bytesToBase64);

Deno.test("two roots at one size prove a fork", () => {
  const evidence = logForkEvidence(key, [checkpoint(honest, 5), checkpoint(forked, 5)]);
  assert.deepEqual(checkLogForkEvidence(evidence), {
    ok: true,
    form: "same-size",
    origin: ORIGIN,
    sizes: [5, 5],
  });
  // As JSON, the way a file carries it.
  assert.equal(checkLogForkEvidence(JSON.parse(JSON.stringify(evidence))).ok, true);
});

Deno.test("two sizes whose enclosed consistency proof fails prove a fork, in either order", () => {
  // The proof the honest log gives from 3 to 6 cannot join the forked tree of 6.
  const proof = proofOf(honest, 3, 6);
  const small = checkpoint(honest, 3);
  const large = checkpoint(forked, 6);
  assert.deepEqual(checkLogForkEvidence(logForkEvidence(key, [small, large], proof)), {
    ok: true,
    form: "failed-proof",
    origin: ORIGIN,
    sizes: [3, 6],
  });
  assert.deepEqual(checkLogForkEvidence(logForkEvidence(key, [large, small], proof)), {
    ok: true,
    form: "failed-proof",
    origin: ORIGIN,
    sizes: [6, 3],
  });
  // No proof at all joins two sizes neither: from 3 to 6 a proof is never empty.
  assert.equal(checkLogForkEvidence(logForkEvidence(key, [small, large])).ok, true);
});

Deno.test("evidence that proves nothing is refused with its reason", () => {
  const [a, b] = [checkpoint(honest, 5), checkpoint(forked, 5)];
  const witness = { name: "witness.example", seed: otherSeed };
  const witnessOnly = (note: string) => {
    const { text } = parseNote(note);
    return formatNote({ text, signatures: [signCosignature(text, witness, 1_767_225_600)] });
  };
  const flipSignature = (note: string) =>
    note.replace(
      / (\S{10})(\S)(\S*)\n$/,
      (_, head, c, rest) => ` ${head}${c === "A" ? "B" : "A"}${rest}\n`,
    );
  const valid = logForkEvidence(key, [a, b]);
  const cases: { desc: string; evidence: unknown; reason: RegExp }[] = [
    {
      desc: "unsigned: a signature changed",
      evidence: logForkEvidence(key, [a, flipSignature(b)]),
      reason: new RegExp(`^Checkpoint 2 is not signed by key ${key}$`),
    },
    {
      desc: "unsigned: no line by the log's key, a witness's only",
      evidence: logForkEvidence(key, [witnessOnly(a), b]),
      reason: new RegExp(`^Checkpoint 1 is not signed by key ${key}$`),
    },
    {
      desc: "another key: both notes signed by a key other than the evidence's",
      evidence: logForkEvidence(serverPublicKey(otherSeed), [a, b]),
      reason: /^Checkpoint 1 is not signed by key [0-9a-f]{64}$/,
    },
    {
      desc: "another key: one note signed by another key",
      evidence: logForkEvidence(key, [a, checkpoint(forked, 5, { by: otherSeed })]),
      reason: new RegExp(`^Checkpoint 2 is not signed by key ${key}$`),
    },
    {
      desc: "two origins",
      evidence: logForkEvidence(key, [a, checkpoint(forked, 5, { origin: "other.example/log" })]),
      reason: /^The checkpoints name two logs: vote\.example\.org\/log and other\.example\/log$/,
    },
    {
      desc: "the same root at one size",
      evidence: logForkEvidence(key, [a, checkpoint(honest, 5)]),
      reason: /^Both checkpoints are of size 5 with the same root$/,
    },
    {
      desc: "a proof that joins them",
      evidence: logForkEvidence(
        key,
        [checkpoint(honest, 3), checkpoint(honest, 6)],
        proofOf(honest, 3, 6),
      ),
      reason: /^The proof shows checkpoint 3 a prefix of checkpoint 6$/,
    },
    {
      desc: "a proof that joins them, the larger given first",
      evidence: logForkEvidence(
        key,
        [checkpoint(honest, 8), checkpoint(honest, 1)],
        proofOf(honest, 1, 8),
      ),
      reason: /^The proof shows checkpoint 1 a prefix of checkpoint 8$/,
    },
    {
      desc: "malformed: a note that is not a note",
      evidence: logForkEvidence(key, [a, "vote.example.org/log\n5\n"]),
      reason: /^Checkpoint 2 is malformed: note has no blank line before its signatures$/,
    },
    {
      desc: "malformed: a signed note that is not a checkpoint",
      evidence: logForkEvidence(key, [
        formatNote({ text: `${ORIGIN}\n`, signatures: parseNote(a).signatures }),
        b,
      ]),
      reason: /^Checkpoint 1 is malformed: checkpoint must have an origin, a size and a root$/,
    },
    {
      desc: "malformed: an origin that cannot name a key",
      evidence: logForkEvidence(key, [a.replace(ORIGIN, "vote example"), b]),
      reason: /^Checkpoint 1 is malformed: name must be non-empty, without spaces/,
    },
    {
      desc: "malformed: a proof hash that is not base64",
      evidence: logForkEvidence(
        key,
        [checkpoint(honest, 3), checkpoint(forked, 6)],
        ["not base64!"],
      ),
      reason: /^The proof is malformed: proof\[0\] is not padded standard base64$/,
    },
    {
      desc: "malformed: no kind",
      evidence: { ...valid, kind: undefined },
      reason: /^Not fork evidence: kind /,
    },
    {
      desc: "malformed: the heads form's kind",
      evidence: { ...valid, kind: "ringvote/v1/fork-evidence" },
      reason: /^Not fork evidence: kind /,
    },
    {
      desc: "malformed: an uppercase key",
      evidence: { ...valid, key: key.toUpperCase() },
      reason: /^Not fork evidence: key /,
    },
    {
      desc: "malformed: one checkpoint",
      evidence: { ...valid, checkpoints: [a] },
      reason: /^Not fork evidence: checkpoints/,
    },
    {
      desc: "malformed: a note of over 20,000 characters",
      evidence: { ...valid, checkpoints: [a, b + "x".repeat(20_000)] },
      reason: /^Not fork evidence: checkpoints\.1 /,
    },
    {
      desc: "malformed: 129 proof hashes",
      evidence: { ...valid, proof: Array(129).fill(bytesToBase64(honest[0])) },
      reason: /^Not fork evidence: proof /,
    },
    { desc: "malformed: null", evidence: null, reason: /^Not fork evidence: / },
    { desc: "malformed: a string", evidence: "fork", reason: /^Not fork evidence: / },
    { desc: "malformed: an array", evidence: [a, b], reason: /^Not fork evidence: / },
  ];
  for (const c of cases) {
    const result = checkLogForkEvidence(c.evidence);
    assert.equal(result.ok, false, c.desc);
    assert.match((result as { reason: string }).reason, c.reason, c.desc);
  }
  assert.equal(LOG_FORK_EVIDENCE_KIND, "ringvote/v1/log-fork-evidence");
});

Deno.test("no change to a note of same-size evidence leaves a proven fork", () => {
  const [a, b] = [checkpoint(honest, 5), checkpoint(forked, 5)];
  for (const [which, note] of [a, b].entries()) {
    for (let i = 0; i < note.length; i++) {
      for (const c of ["A", "\n", "5"]) {
        if (note[i] === c) continue;
        const changed = note.slice(0, i) + c + note.slice(i + 1);
        const pair: [string, string] = which === 0 ? [changed, b] : [a, changed];
        const result = checkLogForkEvidence(logForkEvidence(key, pair));
        assert.equal(result.ok, false, `note ${which + 1}, character ${i} as ${JSON.stringify(c)}`);
      }
    }
  }
});

Deno.test("checkLogForkEvidence never throws, whatever it is given", () => {
  const valid = logForkEvidence(
    key,
    [checkpoint(honest, 3), checkpoint(forked, 6)],
    proofOf(honest, 3, 6),
  );
  fc.assert(
    fc.property(
      fc.oneof(
        fc.anything(),
        fc.record({
          kind: fc.constant(LOG_FORK_EVIDENCE_KIND),
          key: fc.oneof(fc.constant(key), fc.stringMatching(/^[0-9a-f]{64}$/)),
          checkpoints: fc.tuple(fc.string(), fc.constant(valid.checkpoints[1])),
          proof: fc.array(fc.base64String({ maxLength: 64 }), { maxLength: 4 }),
        }),
        fc.integer({ min: 0, max: JSON.stringify(valid).length }).map((cut) =>
          JSON.stringify(valid).slice(0, cut)
        ),
      ),
      (value) => {
        const result = checkLogForkEvidence(value);
        return typeof result.ok === "boolean";
      },
    ),
    { numRuns: 500 },
  );
});
