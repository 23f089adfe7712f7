// The tag's multiples in one verification: a comb of the tag (lib/protocol/comb_table.ts), which
// checkRing builds, against width-W window tables, each counted with the n+1 walks a verification
// makes (n challenges and the torsion check), by ring size.
//   deno bench -A bench/point_table_bench.ts
import { combTable, multiplyByComb } from "../lib/protocol/comb_table.ts";
import { G, L } from "../lib/protocol/keys.ts";
import { multiplyByTable, pointTable } from "../lib/protocol/point_table.ts";

const tag = G.multiply(0x7a6n);
const challenges = Array.from(
  { length: 64 },
  (_, i) => (BigInt(i + 1) * 0x9e3779b97f4a7c15n ** 4n) % L,
);

for (const n of [2, 8, 16, 32, 64]) {
  const group = `tag, ring ${n}`;
  Deno.bench(`tag comb, ring ${n}`, { group, baseline: true }, () => {
    const comb = combTable(tag, { affine: false });
    multiplyByComb(comb, L);
    for (let i = 0; i < n; i++) multiplyByComb(comb, challenges[i]);
  });
  for (const window of [3, 4, 5]) {
    Deno.bench(`tag table W=${window}, ring ${n}`, { group }, () => {
      const table = pointTable(tag, window);
      multiplyByTable(table, L);
      for (let i = 0; i < n; i++) multiplyByTable(table, challenges[i]);
    });
  }
}
