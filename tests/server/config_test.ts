// Configuration (server/config.ts, protocol §6): the defaults, every variable read, the platform's
// database on Deno Deploy, and a bad value stopping the start with the variable's name.
import assert from "node:assert/strict";
import { DEFAULT_KV_PATH, isKvFile, readConfig } from "../../server/config.ts";

function env(vars: Record<string, string>) {
  return (name: string) => vars[name];
}

Deno.test("readConfig: defaults of protocol §6", () => {
  assert.deepEqual(readConfig(env({})), {
    port: 8000,
    kvPath: DEFAULT_KV_PATH,
    blockIntervalMs: null,
    ringSize: 8,
    labMaxKeys: 500,
    labMaxVotes: 500,
  });
  assert.equal(DEFAULT_KV_PATH, "./data/ringvote.kv");
});

Deno.test("readConfig: every variable is read", () => {
  assert.deepEqual(
    readConfig(
      env({
        PORT: "9001",
        KV_PATH: ":memory:",
        BLOCK_INTERVAL_MS: "500",
        RING_SIZE: "4",
        LAB_MAX_KEYS: "40",
        LAB_MAX_VOTES: "30",
      }),
    ),
    {
      port: 9001,
      kvPath: ":memory:",
      blockIntervalMs: 500,
      ringSize: 4,
      labMaxKeys: 40,
      labMaxVotes: 30,
    },
  );
});

Deno.test("readConfig: on Deno Deploy with no KV_PATH the platform's database is used", () => {
  assert.equal(readConfig(env({ DENO_DEPLOYMENT_ID: "abc" })).kvPath, null);
  const url = "https://api.deno.com/databases/0000/connect";
  assert.equal(readConfig(env({ DENO_DEPLOYMENT_ID: "abc", KV_PATH: url })).kvPath, url);
});

Deno.test("readConfig: a bad value stops the start naming the variable", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: "eighty" }, /PORT/],
    [{ PORT: "70000" }, /PORT/],
    [{ BLOCK_INTERVAL_MS: "0" }, /BLOCK_INTERVAL_MS/],
    [{ BLOCK_INTERVAL_MS: "1.5" }, /BLOCK_INTERVAL_MS/],
    [{ RING_SIZE: "1" }, /RING_SIZE/],
    [{ RING_SIZE: "65" }, /RING_SIZE/],
    [{ RING_SIZE: "8.5" }, /RING_SIZE/],
    [{ RING_SIZE: "-3" }, /RING_SIZE/],
    [{ RING_SIZE: "eight" }, /RING_SIZE/],
    [{ LAB_MAX_KEYS: "0" }, /LAB_MAX_KEYS/],
    [{ LAB_MAX_KEYS: "10001" }, /LAB_MAX_KEYS/],
    [{ LAB_MAX_VOTES: "many" }, /LAB_MAX_VOTES/],
  ];
  for (const [vars, message] of cases) assert.throws(() => readConfig(env(vars)), message);
});

Deno.test("isKvFile: only file paths get a folder created", () => {
  assert.equal(isKvFile("./data/ringvote.kv"), true);
  assert.equal(isKvFile("/tmp/x.kv"), true);
  assert.equal(isKvFile(":memory:"), false);
  assert.equal(isKvFile("https://api.deno.com/databases/0000/connect"), false);
  assert.equal(isKvFile("http://localhost:4512"), false);
  assert.equal(isKvFile(null), false);
});
