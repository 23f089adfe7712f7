// Browser-safe. The rule that a vote's `publicKeys` are its signature's ring (protocol §4.3): the
// same keys in the same order, so the leaf (protocol §3.1) commits to the ring that was signed.

/** True when `publicKeys` equal the signature's `ring` (hex keys), in order; false for no ring. */
export function sameRing(publicKeys: readonly string[], ring: readonly string[] | null): boolean {
  return ring !== null && publicKeys.length === ring.length &&
    publicKeys.every((key, i) => key === ring[i]);
}
