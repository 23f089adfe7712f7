// A transparency log built in the test, for the witness to cosign: made-up leaf hashes, its
// checkpoints signed with the log's Ed25519 key (lib/protocol/checkpoint.ts), its roots and
// consistency proofs (lib/protocol/merkle.ts), and add-checkpoint request bodies over them.
import { bytesToBase64, concatBytes, utf8 } from "../../lib/protocol/bytes.ts";
import { signCheckpoint } from "../../lib/protocol/checkpoint.ts";
import { ed25519 } from "@noble/curves/ed25519.js";
import { sha512 } from "../../lib/protocol/hash.ts";
import { keyPairFromSeed, L } from "../../lib/protocol/keys.ts";
import { consistencyProof, hashLeaf, rootOfSize } from "../../lib/protocol/merkle.ts";
import {
  ED25519_TYPE,
  formatVerifierKey,
  signerKey,
  type VerifierKey,
} from "../../lib/protocol/note.ts";

/** Leaves every test log holds; sizes up to this many can be cosigned. */
export const LEAVES = 64;

/** A log built in the test. */
export type TestLog = {
  origin: string;
  seed: Uint8Array;
  key: VerifierKey;
  /** Its Ed25519 note vkey, as `--log` takes it. */
  vkey: string;
  leaves: Uint8Array[];
  /** MTH of the first `size` leaves. */
  root(size: number): Uint8Array;
  /** The checkpoint note of `size` (or of `root` at that size), signed by the log's key. */
  checkpoint(size: number, root?: Uint8Array): string;
  /** PROOF(oldSize, D[size]). */
  proof(oldSize: number, size: number): Uint8Array[];
  /** The add-checkpoint body from `oldSize` to the checkpoint of `size`, with its real proof. */
  request(oldSize: number, size: number): string;
};

/**
 * The log `origin` signed by `seed`; `salt` changes its leaves, so that two logs of one origin and
 * key with different salts are a fork of each other.
 */
export function createTestLog(
  { origin = "vote.example.org/witness-test", seed = new Uint8Array(32).fill(11), salt = "" }: {
    origin?: string;
    seed?: Uint8Array;
    salt?: string;
  } = {},
): TestLog {
  const leaves = Array.from({ length: LEAVES }, (_, i) => hashLeaf(utf8(`${salt}leaf ${i}`)));
  const key = signerKey({ name: origin, seed }, ED25519_TYPE);
  const root = (size: number) => rootOfSize(leaves, size);
  const checkpoint = (size: number, r = root(size)) =>
    signCheckpoint({ origin, size, root: r }, seed);
  const proof = (oldSize: number, size: number) => consistencyProof(leaves, oldSize, size);
  return {
    origin,
    seed,
    key,
    vkey: formatVerifierKey(key),
    leaves,
    root,
    checkpoint,
    proof,
    request: (oldSize, size) => requestBody(oldSize, proof(oldSize, size), checkpoint(size)),
  };
}

/**
 * An add-checkpoint body: `old <oldSize>`, one base64 line per proof hash, an empty line, then
 * `note`. `oldSize` may be any text, for malformed bodies.
 */
export function requestBody(oldSize: number | string, proof: Uint8Array[], note: string): string {
  return `old ${oldSize}\n${proof.map((h) => `${bytesToBase64(h)}\n`).join("")}\n${note}`;
}

/**
 * The signature of a note line by `seed` over `text` (64 bytes of Ed25519, without the key ID)
 * made with a random nonce: valid under the same key, yet other bytes than RFC 8032's own line.
 */
export function otherSignature(seed: Uint8Array, text: string): Uint8Array {
  const { secret, publicKey } = keyPairFromSeed(seed);
  const message = utf8(text);
  const r = scalarOf(crypto.getRandomValues(new Uint8Array(64)));
  const R = ed25519.Point.BASE.multiply(r).toBytes();
  const k = scalarOf(sha512(R, publicKey, message));
  const s = (r + k * secret) % L;
  const out = new Uint8Array(32);
  for (let i = 0, n = s; i < 32; i++, n >>= 8n) out[i] = Number(n & 0xffn);
  return concatBytes(R, out);
}

/** `bytes` read as a little-endian integer, reduced mod L. */
function scalarOf(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
  return n % L;
}
