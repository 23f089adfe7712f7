// The API suites again, on a runtime without `Worker` (an edge runtime such as Deno Deploy): the
// global is removed before the suites load, so their verifier and createVerifier both fall back
// to verifying on this thread.
import assert from "node:assert/strict";

delete (globalThis as { Worker?: unknown }).Worker;

const { createVerifier } = await import("../../server/verifier/mod.ts");
const { testVerifier } = await import("../helpers/test_verifier.ts");

Deno.test("without Worker, createVerifier verifies in-process", async () => {
  const verifier = await createVerifier();
  try {
    assert.equal("replaced" in verifier, false, "not the worker pool");
    assert.equal("replaced" in testVerifier, false, "the suites below run in-process too");
    assert.equal(typeof await verifier.precompute("00".repeat(32)), "string");
  } finally {
    verifier.close();
  }
});

await import("./api_test.ts");
await import("./api/vote_test.ts");
await import("./attack_test.ts");
await import("./fuzz_test.ts");
