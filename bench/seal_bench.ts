// Time to seal one block (close, tree, every proof written, block record) of 1,000 and of 10,000
// votes on a Deno KV file. Votes have the size of ring-8 votes; sealing does not verify
// signatures, so they are not signed. Run: deno bench -A bench/seal_bench.ts
import { bytesToHex } from "../lib/bytes.ts";
import { sealNextBlock } from "../server/sealer.ts";
import { createStore, type Store } from "../server/store.ts";

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

for (const size of [1_000, 10_000]) {
  Deno.bench({
    name: `seal a block of ${size.toLocaleString("en")} votes`,
    n: 3,
    warmup: 1,
    async fn(b) {
      await fill(store, size);
      b.start();
      const [block] = await sealNextBlock(store, Date.now());
      b.end();
      if (block?.size !== size) throw new Error(`Sealed ${block?.size} votes, expected ${size}`);
    },
  });
}
