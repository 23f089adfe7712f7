/**
 * The voter's signing code (protocol §2.6), a chunk of the page's bundle of its own: the
 * first load carries none of it, and {@link loadSigning} fetches it when a key is made, so that
 * nothing is fetched when the vote is sent.
 * @module
 */
import { bytesToHex } from "../../protocol/bytes.ts";
import { signRing } from "../../protocol/ring_signature.ts";
import { encodeSignature } from "../../protocol/signature_wire.ts";

/** A vote's signature in its wire form (protocol §2.9) and its tag, hex. */
export type SignedBallot = { signature: string; tag: string };

/** Signs `message` over `ring` (32-byte keys) with the voter's 32-byte `seed`. */
export function signBallot(
  { ring, seed, message }: { ring: Uint8Array[]; seed: Uint8Array; message: string },
): SignedBallot {
  const signature = signRing({ ring, seed, message });
  return { signature: encodeSignature(signature), tag: bytesToHex(signature.tag) };
}

// A carded round's phone signs with its card too (page §14.7): that code loads with this chunk.
export { admitWithCard, cardKeyOf, checkRoundSet, readCardCode } from "./card_code.ts";
