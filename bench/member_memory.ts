// What one registered key costs: heap bytes of a decoded member with both combs (the figure behind
// MEMBER_BYTES and the member cache budget), memory of its record in the request thread's record
// cache (behind RECORD_BYTES), bytes of its stored precomputation in KV, and the time
// registration spends checking and precomputing it, also as a ratio to one ring-8 verification by
// the baseline verifier (bench/baseline_lsag.ts) timed in the same run.
//
//   deno run -A --v8-flags=--expose-gc bench/member_memory.ts
import { serialize } from "node:v8";
import { generateSeed, keyPairFromSeed } from "../lib/protocol/keys.ts";
import { bytesToHex } from "../lib/protocol/bytes.ts";
import {
  type KeyPrecomputation,
  memberFromPrecomputation,
  precomputeKey,
} from "../lib/protocol/key_precomputation.ts";
import { createLruCache, createMemberCache, MEMBER_BYTES } from "../lib/protocol/member_cache.ts";
import { RECORD_BYTES } from "../server/store/mod.ts";
import { baselineSign, baselineVerify } from "./baseline_lsag.ts";

const MEMBERS = 200;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("Run with --v8-flags=--expose-gc so the heap can be measured");

const keys = Array.from({ length: MEMBERS }, () => keyPairFromSeed(generateSeed()).publicKey);
precomputeKey(keys[0]); // warm the code paths before timing
const started = performance.now();
const stored = keys.map((key) => precomputeKey(key) as KeyPrecomputation);
const precomputeMs = (performance.now() - started) / MEMBERS;

const seeds = Array.from({ length: 8 }, generateSeed);
const ring = seeds.map((seed) => keyPairFromSeed(seed).publicKey);
const sig = baselineSign(ring, seeds[0], "Yes");
const baselineStarted = performance.now();
for (let i = 0; i < 20; i++) baselineVerify(sig, "Yes");
const baselineMs = (performance.now() - baselineStarted) / 20;

const cache = createMemberCache({ budgetBytes: Number.MAX_SAFE_INTEGER });
gc();
const before = Deno.memoryUsage().heapUsed;
stored.forEach((pre, i) => cache.set(bytesToHex(keys[i]), memberFromPrecomputation(pre)));
gc();
const perMember = (Deno.memoryUsage().heapUsed - before) / MEMBERS;
if (cache.size !== MEMBERS) throw new Error("The cache lost members");

// A record as the request thread keeps it: read from KV (a fresh copy), under its hex key.
const records = createLruCache<{ id: number; pre: KeyPrecomputation }>(MEMBERS);
const memory = () => Deno.memoryUsage().heapUsed + Deno.memoryUsage().external;
gc();
const beforeRecords = memory();
stored.forEach((pre, i) =>
  records.set(bytesToHex(keys[i]), { id: i + 1, pre: structuredClone(pre) })
);
gc();
const perRecord = (memory() - beforeRecords) / MEMBERS;

console.log(`| measure | per key |`);
console.log(`| --- | ---: |`);
console.log(`| registration checks and precomputation | ${precomputeMs.toFixed(2)} ms |`);
console.log(
  `| the same ÷ one baseline ring-8 verification | ${(precomputeMs / baselineMs).toFixed(3)} |`,
);
console.log(
  `| stored precomputation (KV value, V8 serialised) | ${serialize(stored[0]).length} B |`,
);
console.log(
  `| decoded member in the cache (heap) | ${Math.round(perMember).toLocaleString("en")} B |`,
);
console.log(`| MEMBER_BYTES (budget accounting) | ${MEMBER_BYTES.toLocaleString("en")} B |`);
console.log(
  `| key record in the request thread's cache (heap and buffers) | ${
    Math.round(perRecord).toLocaleString("en")
  } B |`,
);
console.log(`| RECORD_BYTES (budget accounting) | ${RECORD_BYTES.toLocaleString("en")} B |`);
