// Bytes of heap one tabled member takes in a member cache (lib/protocol/member_cache.ts), by window width:
// the figure behind TABLE_BYTES_PER_MEMBER and the cache budgets. Also times building one member's
// tables, the work a worker does when a key is registered or first met.
//
//   deno run -A --v8-flags=--expose-gc bench/member_memory.ts
import { generateSeed, keyPairFromSeed } from "../lib/protocol/keys.ts";
import { bytesToHex } from "../lib/protocol/bytes.ts";
import { admitKey, createMemberCache, type MemberWindow } from "../lib/protocol/member_cache.ts";

const MEMBERS = 100;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("Run with --v8-flags=--expose-gc so the heap can be measured");

const keys = Array.from(
  { length: MEMBERS },
  () => bytesToHex(keyPairFromSeed(generateSeed()).publicKey),
);
// Warm the code paths (and build the one-off base table) before measuring anything.
admitKey(createMemberCache({ window: 3 }), keys[0]);

console.log(`| window | bytes per tabled member | tables built per member |`);
console.log(`| ---: | ---: | ---: |`);
for (const window of [3, 4, 5, 6] as MemberWindow[]) {
  const untabled = createMemberCache({ window, tableBudgetBytes: 0 });
  const tabled = createMemberCache({ window, tableBudgetBytes: Number.MAX_SAFE_INTEGER });
  gc();
  const before = Deno.memoryUsage().heapUsed;
  for (const key of keys) admitKey(untabled, key);
  gc();
  const plain = Deno.memoryUsage().heapUsed;
  const started = performance.now();
  for (const key of keys) admitKey(tabled, key);
  const buildMs = (performance.now() - started) / MEMBERS;
  gc();
  const after = Deno.memoryUsage().heapUsed;
  const perMember = (after - plain - (plain - before)) / MEMBERS;
  console.log(
    `| ${window} | ${Math.round(perMember).toLocaleString("en")} | ${buildMs.toFixed(2)} ms |`,
  );
  // Keep both caches alive until measured.
  if (untabled.size + tabled.size !== 2 * MEMBERS) throw new Error("Cache lost members");
}
