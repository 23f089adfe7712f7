// The tag's table width: building a width-W table plus the n+1 walks one verification makes with
// it (n challenges and the torsion check), by ring size. checkRing's tagWindow follows the winner.
//   deno bench -A bench/point_table_bench.ts
import { G, L } from "../lib/protocol/keys.ts";
import { multiplyByTable, pointTable } from "../lib/protocol/point_table.ts";

const tag = G.multiply(0x7a6n);
const challenges = Array.from(
  { length: 64 },
  (_, i) => (BigInt(i + 1) * 0x9e3779b97f4a7c15n ** 4n) % L,
);

for (const n of [2, 8, 16, 32, 64]) {
  for (const window of [3, 4, 5]) {
    Deno.bench(`tag table W=${window}, ring ${n}`, {
      group: `tag, ring ${n}`,
      baseline: window === 3,
    }, () => {
      const table = pointTable(tag, window);
      multiplyByTable(table, L);
      for (let i = 0; i < n; i++) multiplyByTable(table, challenges[i]);
    });
  }
}
