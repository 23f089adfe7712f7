/**
 * Browser-safe. The gateway's side of HPKE (RFC 9180) for the one suite of protocol §4.11, base
 * mode: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM — open the first message of a
 * context and export its response secret. The X25519 is WebCrypto's (native, constant-time), the
 * HKDF noble's (synchronous), the AES-GCM WebCrypto's: one asynchronous step each for the key
 * agreement and the decryption, where a general HPKE library takes a dozen (the HKDF on
 * WebCrypto), which was most of a relayed request's CPU. Checked byte for byte against RFC 9458
 * Appendix A (tests/protocol/ohttp_test.ts) and against an independent Go client.
 * @module
 */
import { expand, extract } from "@noble/hashes/hkdf.js";
import { sha256 } from "@noble/hashes/sha2.js";

const text = new TextEncoder();
const VERSION = text.encode("HPKE-v1");
/** suite_id of the KEM: "KEM" ‖ I2OSP(0x0020, 2). */
const KEM_SUITE = new Uint8Array([...text.encode("KEM"), 0x00, 0x20]);
/** suite_id of the key schedule: "HPKE" ‖ KEM ‖ KDF ‖ AEAD ids. */
const HPKE_SUITE = new Uint8Array([...text.encode("HPKE"), 0x00, 0x20, 0x00, 0x01, 0x00, 0x01]);
const NK = 16;
const NN = 12;
const NH = 32;
/** PKCS #8 header of a raw X25519 private key (RFC 8410). */
const PKCS8_X25519 = new Uint8Array([
  0x30,
  0x2e,
  0x02,
  0x01,
  0x00,
  0x30,
  0x05,
  0x06,
  0x03,
  0x2b,
  0x65,
  0x6e,
  0x04,
  0x22,
  0x04,
  0x20,
]);

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function labeledExtract(suite: Uint8Array, salt: Uint8Array, label: string, ikm: Uint8Array) {
  return extract(sha256, concat(VERSION, suite, text.encode(label), ikm), salt);
}

function labeledExpand(
  suite: Uint8Array,
  prk: Uint8Array,
  label: string,
  info: Uint8Array,
  length: number,
) {
  const header = new Uint8Array([length >> 8, length & 0xff]);
  return expand(sha256, prk, concat(header, VERSION, suite, text.encode(label), info), length);
}

const EMPTY = new Uint8Array(0);
/** psk_id_hash of base mode: the same for every message. */
const PSK_ID_HASH = labeledExtract(HPKE_SUITE, EMPTY, "psk_id_hash", EMPTY);

/** A recipient's X25519 key: the private key imported once, and the raw public key. */
export type RecipientKey = { privateKey: CryptoKey; publicKey: Uint8Array };

/** Imports a raw 32-byte X25519 private key for {@link openBase}. */
export async function importRecipientKey(
  privateKey: Uint8Array,
  publicKey: Uint8Array,
): Promise<RecipientKey> {
  const key = await crypto.subtle.importKey(
    "pkcs8",
    concat(PKCS8_X25519, privateKey),
    { name: "X25519" },
    false,
    ["deriveBits"],
  );
  return { privateKey: key, publicKey: publicKey.slice() };
}

/**
 * Opens `ct`, the first message of a base-mode context set up with `enc` and `info`, and exports
 * `exportLength` bytes under `exportContext`. Throws when it does not open (any error: the caller
 * words it), including a key agreement that gives the all-zero value.
 */
export async function openBase(
  recipient: RecipientKey,
  enc: Uint8Array,
  info: Uint8Array,
  ct: Uint8Array,
  exportContext: Uint8Array,
  exportLength: number,
): Promise<{ plaintext: Uint8Array; exported: Uint8Array }> {
  const pkE = await crypto.subtle.importKey("raw", enc.slice(), { name: "X25519" }, true, []);
  const dh = new Uint8Array(
    await crypto.subtle.deriveBits({ name: "X25519", public: pkE }, recipient.privateKey, 256),
  );
  if (dh.every((byte) => byte === 0)) throw new Error("X25519 gave the all-zero value");
  // DHKEM's ExtractAndExpand (RFC 9180 §4.1).
  const eaePrk = labeledExtract(KEM_SUITE, EMPTY, "eae_prk", dh);
  const shared = labeledExpand(
    KEM_SUITE,
    eaePrk,
    "shared_secret",
    concat(enc, recipient.publicKey),
    NH,
  );
  // The key schedule of base mode (RFC 9180 §5.1).
  const context = concat(
    new Uint8Array([0]),
    PSK_ID_HASH,
    labeledExtract(HPKE_SUITE, EMPTY, "info_hash", info),
  );
  const secret = labeledExtract(HPKE_SUITE, shared, "secret", EMPTY);
  const key = labeledExpand(HPKE_SUITE, secret, "key", context, NK);
  const nonce = labeledExpand(HPKE_SUITE, secret, "base_nonce", context, NN);
  const exporter = labeledExpand(HPKE_SUITE, secret, "exp", context, NH);
  // The first message: sequence number 0, so the nonce is the base nonce; no associated data.
  const aes = await crypto.subtle.importKey("raw", concat(key), "AES-GCM", false, ["decrypt"]);
  const plaintext = new Uint8Array(
    await crypto.subtle.decrypt({ name: "AES-GCM", iv: concat(nonce) }, aes, concat(ct)),
  );
  const exported = labeledExpand(HPKE_SUITE, exporter, "sec", exportContext, exportLength);
  return { plaintext, exported };
}
