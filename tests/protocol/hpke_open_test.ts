// The gateway's HPKE receiver (lib/protocol/hpke_open.ts) against hpke-js as the sender: it opens
// what hpke-js seals and exports the same secret, with any info; it refuses a tampered message, a
// wrong key, and an encapsulated key of small order (the all-zero key agreement of RFC 9180 §7.1.4).
import assert from "node:assert/strict";
import { Aes128Gcm, CipherSuite, HkdfSha256 } from "@hpke/core";
import { DhkemX25519HkdfSha256 } from "@hpke/dhkem-x25519";
import { importRecipientKey, openBase } from "../../lib/protocol/hpke_open.ts";

const suite = new CipherSuite({
  kem: new DhkemX25519HkdfSha256(),
  kdf: new HkdfSha256(),
  aead: new Aes128Gcm(),
});
const text = new TextEncoder();

async function recipient() {
  const pair = await suite.kem.generateKeyPair();
  const key = await importRecipientKey(
    new Uint8Array(await suite.kem.serializePrivateKey(pair.privateKey)),
    new Uint8Array(await suite.kem.serializePublicKey(pair.publicKey)),
  );
  return { pair, key };
}

Deno.test("the receiver opens what hpke-js seals and exports the same secret", async () => {
  const { pair, key } = await recipient();
  for (const length of [0, 1, 1024, 20_480]) {
    const info = text.encode(`info ${length}`);
    const sender = await suite.createSenderContext({ recipientPublicKey: pair.publicKey, info });
    const message = crypto.getRandomValues(new Uint8Array(length));
    const ct = new Uint8Array(await sender.seal(message));
    const exportContext = text.encode("message/bhttp response");
    const opened = await openBase(key, new Uint8Array(sender.enc), info, ct, exportContext, 16);
    assert.deepEqual(opened.plaintext, message);
    assert.deepEqual(
      opened.exported,
      new Uint8Array(await sender.export(exportContext, 16)),
    );
  }
});

Deno.test("the receiver refuses tampering, another key, another info and a small-order enc", async () => {
  const { pair, key } = await recipient();
  const other = await recipient();
  const info = text.encode("info");
  const sender = await suite.createSenderContext({ recipientPublicKey: pair.publicKey, info });
  const ct = new Uint8Array(await sender.seal(new Uint8Array(64)));
  const enc = new Uint8Array(sender.enc);
  const refused = (promise: Promise<unknown>) => promise.then(() => "opened", () => "refused");
  const flipped = ct.slice();
  flipped[3] ^= 1;
  assert.equal(await refused(openBase(key, enc, info, flipped, info, 16)), "refused");
  assert.equal(await refused(openBase(other.key, enc, info, ct, info, 16)), "refused");
  assert.equal(await refused(openBase(key, enc, text.encode("infp"), ct, info, 16)), "refused");
  // Points of small order: zero, one, and the order-8 point of RFC 7748's curve.
  const small = [
    new Uint8Array(32),
    Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 1 : 0)),
    Uint8Array.from(
      "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800".match(/../g)!,
      (h) => parseInt(h, 16),
    ),
  ];
  for (const point of small) {
    assert.equal(await refused(openBase(key, point, info, ct, info, 16)), "refused");
  }
  assert.equal(await refused(openBase(key, enc, info, ct, info, 16)), "opened");
});
