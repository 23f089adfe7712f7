// Signed heads on every block record the API serves (protocol §4 "Signed heads"): the server's
// key signs `utf8("ringvote/v1/head") ‖ u64be(height) ‖ hash`. Ed25519 signatures are
// deterministic, so each head is signed once per process and remembered; the block hash and every
// other field stay as stored.
import { utf8 } from "../lib/protocol/bytes.ts";
import { serverPublicKey, signHead } from "../lib/protocol/head.ts";
import { sha512 } from "../lib/protocol/hash.ts";

/** Signs block heads with the server key; `key` is its hex public key. */
export type HeadSigner = {
  key: string;
  /** The head signature of the block at `height` with hex `hash`. */
  sign(head: { height: number; hash: string }): string;
};

/** A signer over the 32-byte `seed`, remembering the signature of each head it has signed. */
export function createHeadSigner(seed: Uint8Array): HeadSigner {
  const signed = new Map<string, string>();
  return {
    key: serverPublicKey(seed),
    sign({ height, hash }) {
      const id = `${height}:${hash}`;
      let signature = signed.get(id);
      if (signature === undefined) {
        signature = signHead(seed, { height, hash });
        signed.set(id, signature);
      }
      return signature;
    },
  };
}

/** `record` with its `head_signature` added after the existing fields. */
export function withHeadSignature<T extends { height: number; hash: string }>(
  signer: HeadSigner,
  record: T,
): T & { head_signature: string } {
  return { ...record, head_signature: signer.sign(record) };
}

/** Domain label of the lens key's derivation from the server seed (protocol §4.7). */
export const LENS_KEY_LABEL = "ringvote/v1/lens-key";

/**
 * The seed of the attack lab's lens key: the first 32 bytes of
 * `SHA-512(utf8("ringvote/v1/lens-key") ‖ serverSeed)`. Derived, so nothing new is stored, and a
 * key of its own, so nothing the lens signs verifies under the server key (protocol §4.7).
 */
export function lensSeed(serverSeed: Uint8Array): Uint8Array {
  return sha512(utf8(LENS_KEY_LABEL), serverSeed).slice(0, 32);
}
