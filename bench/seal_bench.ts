// Time to seal one block (close, tree, every proof written, block record) of 1,000, 10,000 and
// 100,000 votes on a Deno KV file, then the cost of answering a proof request from each block:
// the same one getMany of four keys whatever the block size (protocol §5), and the proof's size.
// Votes have the size of ring-8 votes; sealing does not verify signatures, so they are not
// signed. Run: deno bench -A bench/seal_bench.ts
import { bytesToHex } from "../lib/protocol/bytes.ts";
import { sealNextBlock } from "../server/sealer.ts";
import { createStore, type Store } from "../server/store/mod.ts";

function randomHex(): string {
  return bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
}

/** A vote with the field sizes of a ring-8 vote, and its tag. */
function ringEightSizedVote(i: number) {
  const ring = Array.from({ length: 8 }, randomHex);
  const tag = randomHex();
  const signature = JSON.stringify({
    c0: randomHex(),
    r: ring.map(randomHex),
    I: tag,
    ring,
  });
  return { vote: { payload: `option ${i % 4}`, signature, publicKeys: ring }, tag };
}

async function fill(store: Store, n: number): Promise<void> {
  const inFlight = 64;
  for (let i = 0; i < n; i += inFlight) {
    await Promise.all(
      Array.from({ length: Math.min(inFlight, n - i) }, (_, j) => {
        const { vote, tag } = ringEightSizedVote(i + j);
        return store.submitVote(vote, tag);
      }),
    );
  }
}

const dir = await Deno.makeTempDir({ prefix: "ringvote-seal-bench-" });
const kv = await Deno.openKv(`${dir}/ledger.kv`);
const store = await createStore(kv);
globalThis.addEventListener("unload", () => {
  kv.close();
  Deno.removeSync(dir, { recursive: true });
});

/** Vote ids spread over one sealed block of each size, for the proof benchmarks. */
const sampled = new Map<number, { height: number; voteIds: string[] }>();
const SAMPLE = 50;

async function sampleVotes(height: number, size: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < SAMPLE; i++) {
    const offset = Math.floor((i * size) / SAMPLE);
    const { votes } = await store.blockVotes(height, offset, 1);
    ids.push(votes[0].voteId);
  }
  return ids;
}

const sizes = [1_000, 10_000, 100_000];
for (const size of sizes) {
  const big = size >= 100_000;
  Deno.bench({
    name: `seal a block of ${size.toLocaleString("en")} votes`,
    group: "seal",
    // A 100,000-vote block takes minutes to fill: measured once.
    n: big ? 1 : 3,
    warmup: big ? 0 : 1,
    async fn(b) {
      await fill(store, size);
      b.start();
      const [block] = await sealNextBlock(store, Date.now());
      b.end();
      if (block?.size !== size) throw new Error(`Sealed ${block?.size} votes, expected ${size}`);
      if (!sampled.has(size)) {
        sampled.set(size, { height: block.height, voteIds: await sampleVotes(block.height, size) });
      }
    },
  });
}

const proofRows: (() => string | null)[] = [];
for (const size of sizes) {
  const timings: number[] = [];
  let at = 0;
  let last: Awaited<ReturnType<Store["voteProof"]>> | null = null;
  Deno.bench({
    name: `proof answer from a block of ${size.toLocaleString("en")} votes`,
    group: "proof",
    baseline: size === sizes[0],
    n: 500,
    warmup: 50,
    async fn() {
      const { height, voteIds } = sampled.get(size)!;
      const started = performance.now();
      last = await store.voteProof(height, voteIds[at++ % voteIds.length]);
      timings.push(performance.now() - started);
    },
  });
  proofRows.push(() => {
    if (!last) return null;
    timings.sort((a, b) => a - b);
    const p50 = timings[Math.floor(timings.length / 2)];
    const bytes = JSON.stringify(last).length;
    return `| ${size.toLocaleString("en")} | ${
      (p50 * 1000).toFixed(0)
    } µs | 1 getMany of 4 keys | ` +
      `${last.path.length} | ${bytes} |`;
  });
}

globalThis.addEventListener("unload", () => {
  console.log(
    "\n| block size | proof answer p50 | reads per answer | path entries | proof JSON bytes |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: |");
  for (const row of proofRows) console.log(row() ?? "");
});
