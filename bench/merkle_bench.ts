// Sealing cost of protocol §3 blocks: the root and every leaf's audit path of a block of votes.
import { u32be } from "../lib/protocol/bytes.ts";
import { allInclusionProofs, hashLeaf, merkleRoot } from "../lib/protocol/merkle.ts";

for (const size of [1_000, 10_000, 100_000]) {
  const leaves = Array.from({ length: size }, (_, i) => hashLeaf(u32be(i)));
  Deno.bench({ name: `merkleRoot, ${size} leaves`, group: `${size}`, baseline: true }, () => {
    merkleRoot(leaves);
  });
  Deno.bench({ name: `allInclusionProofs, ${size} leaves`, group: `${size}` }, () => {
    allInclusionProofs(leaves);
  });
}
