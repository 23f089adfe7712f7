// Signed heads on every block record the API serves (protocol §4 "Signed heads"): the server's
// key signs `utf8("ringvote/v1/head") ‖ u64be(height) ‖ hash`. Ed25519 signatures are
// deterministic, so each head is signed once per process and remembered; the block hash and every
// other field stay as stored.
import { serverPublicKey, signHead } from "../lib/protocol/head.ts";

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
