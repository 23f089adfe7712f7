// Test helpers over Deno KV.

/** Runs `test` over a fresh in-memory database, closed afterwards. */
export function withKv(test: (kv: Deno.Kv) => Promise<void>): () => Promise<void> {
  return async () => {
    const kv = await Deno.openKv(":memory:");
    try {
      await test(kv);
    } finally {
      kv.close();
    }
  };
}
