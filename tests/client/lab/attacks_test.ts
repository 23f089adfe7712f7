/**
 * Every attack of the lab's catalogue, built from lab keys by lib/client/lab/attacks.ts and sent to
 * the real application over in-memory Deno KV: each gets its documented status and error code, and
 * the ledger — height, vote count, tally and every KV entry — is exactly as it was.
 * @module
 */
import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { bytesToNumberLE } from "@noble/curves/utils.js";
import { sha512 } from "@noble/hashes/sha2.js";
import {
  type AttackInput,
  ATTACKS,
  type LabKey,
  shortenRequest,
} from "../../../lib/client/lab/attacks.ts";
import {
  orderEightPoint,
  signWithTorsionedTag,
} from "../../../lib/client/lab/forged_signatures.ts";
import { concatBytes, hexToBytes } from "../../../lib/protocol/bytes.ts";
import { G } from "../../../lib/protocol/keys.ts";
import { hashToPoint, tagOf, transcript } from "../../../lib/protocol/ring_signature.ts";
import { decodeSignature } from "../../../lib/protocol/signature_wire.ts";
import { createApp } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { call, dumpKv, makeVoters, signedVote } from "../../helpers/ledger_fixtures.ts";

const RING_SIZE = 4;

/** The reason each refusal must give: the check the attack names, and no earlier one. */
const REASONS: Record<string, RegExp> = {
  "double-vote": /already voted/,
  replay: /already voted/,
  "unregistered-member": /not in the key directory/,
  "torsion-tag": /tag has a small-order component/,
  "payload-swap": /ring equations do not close/,
  "noncanonical-scalar": /r\[0\] is not a canonical scalar/,
  "duplicate-member": /is repeated/,
  "ring-too-small": /ring size must be 2\.\.64, got 1/,
  "forged-signature": /ring equations do not close/,
};

/** A ledger where the lab's voter has voted and the vote is sealed on the board. */
async function labLedger() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store });
  const members: LabKey[] = makeVoters(RING_SIZE + 3);
  for (const m of members) assert.equal((await call(app, "POST", "/api/pki/key", m)).status, 201);
  const [voter, spare] = members;
  const honest = signedVote(voter, members.slice(0, RING_SIZE), "Choice A");
  assert.equal((await call(app, "POST", "/api/vote", honest)).status, 202);
  await sealNextBlock(store, Date.now());
  const board = await call(app, "GET", "/api/block/id/1/votes");
  const input: AttackInput = {
    voter,
    spare,
    members,
    stranger: makeVoters(1)[0],
    honest,
    boardVote: board.body.votes[0].vote,
    ringSize: RING_SIZE,
  };
  return { kv, app, input };
}

async function ledgerFacts(app: Parameters<typeof call>[0]) {
  const [status, tally] = await Promise.all([
    call(app, "GET", "/api/block/status"),
    call(app, "GET", "/api/tally"),
  ]);
  return { height: status.body.height, openBlock: status.body.openBlock, tally: tally.body };
}

Deno.test("every attack is refused with its status and code, and the ledger is unchanged", async (t) => {
  const { kv, app, input } = await labLedger();
  const before = await ledgerFacts(app);
  assert.deepEqual(before.tally, { total: 1, results: [{ payload: "Choice A", count: 1 }] });
  for (const attack of ATTACKS) {
    await t.step(`${attack.id}: ${attack.status} ${attack.code}`, async () => {
      const kvBefore = await dumpKv(kv);
      const { body } = attack.build(input);
      const answer = await call(app, "POST", "/api/vote", body);
      assert.equal(answer.status, attack.status, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, attack.code);
      assert.match(answer.body.error.message, REASONS[attack.id]);
      assert.deepEqual(await dumpKv(kv), kvBefore);
      assert.deepEqual(await ledgerFacts(app), before);
    });
  }
  // Sealing after the attacks still finds nothing to seal: no attack left a pending vote.
  assert.deepEqual(await sealNextBlock(await createStore(kv), Date.now()), []);
  kv.close();
});

Deno.test("each attack breaks only the check it names", async (t) => {
  const { input } = await labLedger();
  const built = Object.fromEntries(ATTACKS.map((a) => [a.id, a.build(input)]));
  const sig = (id: string) => decodeSignature(built[id].body.signature);

  await t.step("double-vote: a fresh ring, the same tag as the first vote", () => {
    const { body, facts } = built["double-vote"];
    assert.notDeepEqual([...body.publicKeys].sort(), [...input.honest.publicKeys].sort());
    assert.equal(body.tag, input.honest.tag);
    assert.deepEqual(facts.at(-1), { label: "Tags equal", value: "yes" });
  });
  await t.step("replay: the board's vote, byte for byte", () => {
    const { body } = built.replay;
    assert.equal(body.signature, input.boardVote!.signature);
    assert.equal(body.tag, input.honest.tag);
  });
  await t.step("unregistered-member: the stranger signs and sits in the ring", () => {
    assert.ok(built["unregistered-member"].body.publicKeys.includes(input.stranger.key));
  });
  await t.step("torsion-tag: the tag is the real tag plus an order-8 point", () => {
    const real = ed25519.Point.fromBytes(tagOf(input.voter.seed));
    const sent = ed25519.Point.fromBytes(sig("torsion-tag").tag);
    assert.ok(sent.subtract(real).equals(orderEightPoint()));
    assert.equal(ringCloses(sig("torsion-tag"), built["torsion-tag"].body.payload), true);
  });
  await t.step("payload-swap: the signature closes over the signed payload only", () => {
    assert.equal(ringCloses(sig("payload-swap"), "Choice A"), true);
    assert.equal(ringCloses(sig("payload-swap"), "Choice B"), false);
  });
  await t.step("noncanonical-scalar: r_0 ≥ L, the same value mod L", () => {
    const r0 = bytesToNumberLE(sig("noncanonical-scalar").r[0]);
    assert.ok(r0 >= ed25519.Point.Fn.ORDER);
  });
  await t.step("duplicate-member: one key twice, and the ring closes", () => {
    const keys = built["duplicate-member"].body.publicKeys;
    assert.equal(new Set(keys).size, keys.length - 1);
    assert.equal(ringCloses(sig("duplicate-member"), "Lab attack"), true);
  });
  await t.step("ring-too-small: a closing ring of one", () => {
    assert.equal(sig("ring-too-small").ring.length, 1);
    assert.equal(ringCloses(sig("ring-too-small"), "Lab attack"), true);
  });
  await t.step("forged-signature: every member registered, the signer none of them", () => {
    const keys = built["forged-signature"].body.publicKeys;
    const registered = new Set(input.members.map((m) => m.key));
    assert.ok(keys.every((k) => registered.has(k)));
    assert.equal(new Set(keys).size, keys.length);
    assert.equal(ringCloses(sig("forged-signature"), "Lab attack"), false);
  });
});

Deno.test("every builder succeeds whatever the random draws (30 rounds)", async () => {
  const { input } = await labLedger();
  for (let round = 0; round < 30; round++) {
    for (const attack of ATTACKS) {
      if (attack.id === "torsion-tag") continue; // ~8 signatures each: covered above
      const { body } = attack.build(input);
      assert.ok(body.publicKeys.length >= 1, attack.id);
    }
  }
});

Deno.test("the torsioned signer needs about 8 tries, never 0", () => {
  const [signer, other] = makeVoters(2);
  const ring = [signer, other].map((v) => hexToBytes(v.key));
  let total = 0;
  for (let i = 0; i < 16; i++) {
    const { tries } = signWithTorsionedTag({ ring, seed: signer.seed, message: "m" });
    assert.ok(tries >= 1);
    total += tries;
  }
  // 16 draws of a geometric(1/8) variable: a mean of 8, far from 1 and from 100.
  assert.ok(total > 16 && total < 1600, `total tries ${total}`);
});

Deno.test("shortenRequest keeps the structure and shortens every long hex value", async () => {
  const { input } = await labLedger();
  const shown = shortenRequest(ATTACKS[0].build(input).body);
  const parsed = JSON.parse(shown);
  assert.deepEqual(Object.keys(parsed), ["publicKeys", "signature", "tag", "payload"]);
  assert.deepEqual(Object.keys(parsed.signature), ["c0", "r", "I", "ring"]);
  assert.doesNotMatch(shown, /[0-9a-f]{17,}/);
  assert.equal(parsed.payload, "A second choice");
});

/**
 * The ring equations of protocol §2 alone, with none of the point or scalar checks: written here
 * independently of the verifier, to show which attacks close and are refused only by a check.
 */
function ringCloses(
  sig: ReturnType<typeof decodeSignature>,
  message: string,
): boolean {
  const L = ed25519.Point.Fn.ORDER;
  const t = transcript(sig.ring, sig.tag, message);
  const tag = ed25519.Point.fromBytes(sig.tag);
  const c0 = bytesToNumberLE(sig.c0);
  let c = c0;
  sig.ring.forEach((key, i) => {
    const r = bytesToNumberLE(sig.r[i]) % L;
    const li = G.multiply(r || L).add(ed25519.Point.fromBytes(key).multiply(c));
    const ri = hashToPoint(key).multiply(r || L).add(tag.multiply(c));
    c = bytesToNumberLE(sha512(concatBytes(t, li.toBytes(), ri.toBytes()))) % L;
  });
  return c === c0;
}
