/**
 * The anonymity lens's job as it crosses to its worker and back (lib/client/anonymity/
 * anonymity_lens.ts): keys as indexes both ways, and the result unpacked on the page's side equal
 * to the lens run on the ballots themselves — consistent records with certain signers and repeated
 * ring members, reveals, an inconsistent record, and the decoy-use test with unlisted keys.
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Reveal, RingBallot } from "../../../lib/client/anonymity/anonymity.ts";
import {
  type LensRequest,
  packBallots,
  runLens,
  runLensMessage,
  unpackBallots,
  unpackLensResult,
} from "../../../lib/client/anonymity/anonymity_lens.ts";

const key = (n: number) => `k${n}`;

/** The lens run through the wire: packed, run as the worker runs it, unpacked as the page does. */
function throughWorker(request: LensRequest) {
  const packed = packBallots(request.ballots);
  const message = structuredClone({ ...request, ballots: packed });
  const answer = structuredClone(runLensMessage(message));
  return unpackLensResult(answer, { ballots: request.ballots, packed });
}

Deno.test("ballots packed list each key once and unpack to the same rings", () => {
  const ballots: RingBallot[] = [
    { id: "b1", ring: [key(1), key(2), key(3)] },
    { id: "b2", ring: [key(3), key(4)] },
    { id: "b3", ring: [key(4), key(4), key(1)] },
  ];
  const packed = packBallots(ballots);
  assert.deepEqual(packed.keys, [key(1), key(2), key(3), key(4)]);
  assert.deepEqual([...packed.members], [0, 1, 2, 2, 3, 3, 3, 0]);
  assert.deepEqual([...packed.ends], [3, 5, 8]);
  assert.deepEqual(unpackBallots(packed), ballots);
  assert.deepEqual(unpackBallots(packBallots([])), []);
});

Deno.test("a closed set, a reveal and the decoy test come back as the lens computed them", () => {
  // Eight ballots over keys 1..8 and a ninth over 9 and 1..7: ballot 9 is certainly key 9's.
  const ballots: RingBallot[] = Array.from({ length: 8 }, (_, i) => ({
    id: `b${i + 1}`,
    ring: Array.from({ length: 8 }, (_, k) => key(k + 1)),
  }));
  ballots.push({ id: "b9", ring: [key(9), ...Array.from({ length: 7 }, (_, k) => key(k + 1))] });
  ballots.push({ id: "b10", ring: [key(10), key(11), key(11), key(12)] });
  const directory = Array.from({ length: 11 }, (_, k) => key(k + 1)); // key 12 is unlisted
  const reveals: Reveal[] = [{ key: key(10), ballot: "b10" }];
  for (
    const request of [
      { seq: 1, ballots, reveals: [], directory },
      { seq: 2, ballots, reveals, directory },
      { seq: 3, ballots, reveals: [], directory: null },
    ]
  ) {
    assert.deepEqual(throughWorker(request), runLens(request));
  }
  const result = throughWorker({ seq: 4, ballots, reveals: [], directory });
  assert.ok(result.base.consistent);
  if (!result.base.consistent) return;
  assert.deepEqual(result.base.ballots[8].possibleSigners, [key(9)]);
  assert.deepEqual(result.base.ballots[9].ring, [key(10), key(11), key(12)]);
  assert.deepEqual(result.decoy?.unlisted, [key(12)]);
});

Deno.test("an inconsistent record comes back as it is", () => {
  const ballots: RingBallot[] = [
    { id: "b1", ring: [key(1), key(2)] },
    { id: "b2", ring: [key(1), key(2)] },
    { id: "b3", ring: [key(2), key(1)] },
  ];
  const request = { seq: 1, ballots, reveals: [], directory: null };
  const result = throughWorker(request);
  assert.equal(result.base.consistent, false);
  assert.deepEqual(result, runLens(request));
});

Deno.test("any record and reveals cross to the worker and back unchanged", () => {
  const record = fc.array(fc.uniqueArray(fc.integer({ min: 1, max: 9 }), { minLength: 1 }), {
    minLength: 1,
    maxLength: 8,
  });
  fc.assert(
    fc.property(record, fc.nat(), fc.boolean(), (rings, pick, decoy) => {
      const ballots = rings.map((ring, b) => ({ id: `b${b}`, ring: ring.map(key) }));
      const chosen = ballots[pick % ballots.length];
      const reveals = pick % 3 === 0
        ? [{ key: chosen.ring[pick % chosen.ring.length], ballot: chosen.id }]
        : [];
      const directory = decoy ? Array.from({ length: 8 }, (_, k) => key(k + 1)) : null;
      const request = { seq: pick, ballots, reveals, directory };
      assert.deepEqual(throughWorker(request), runLens(request));
    }),
  );
});
