// A ring of fresh keys for the benchmarks: its public keys, the signer's seed (the middle member)
// and the message both signers sign.
import { generateSeed, keyPairFromSeed } from "../lib/protocol/keys.ts";

/** A ring of `n` fresh public keys, the seed of its middle member and a fixed message. */
export function ringFixture(n: number): { ring: Uint8Array[]; seed: Uint8Array; message: string } {
  const seeds = Array.from({ length: n }, generateSeed);
  const ring = seeds.map((s) => keyPairFromSeed(s).publicKey);
  return { ring, seed: seeds[n >> 1], message: "candidate A" };
}
