// Configuration (server/config.ts, protocol §6): the defaults, every variable read, the platform's
// database on Deno Deploy, PUBLIC_URL normalised, TRUST_PROXY, ADMIN_TOKEN and LOG_ORIGIN values,
// and a bad value stopping the start with the variable's name.
import assert from "node:assert/strict";
import { DEFAULT_KV_PATH, isKvFile, readConfig } from "../../server/config.ts";
import { DEFAULT_VERIFY_RATE } from "../../lib/protocol/hall.ts";

function env(vars: Record<string, string>) {
  return (name: string) => vars[name];
}

Deno.test("readConfig: defaults of protocol §6", () => {
  assert.deepEqual(readConfig(env({})), {
    port: 8000,
    hostname: "0.0.0.0",
    kvPath: DEFAULT_KV_PATH,
    blockIntervalMs: null,
    ringSize: 8,
    labMaxKeys: 500,
    labMaxVotes: 500,
    publicUrl: null,
    trustProxy: false,
    adminToken: null,
    logOrigin: null,
    witnessPolicy: null,
    ohttpRelay: null,
    verifyRate: DEFAULT_VERIFY_RATE,
  });
  assert.equal(DEFAULT_KV_PATH, "./data/ringvote.kv");
});

Deno.test("readConfig: every variable is read", () => {
  assert.deepEqual(
    readConfig(
      env({
        PORT: "9001",
        LISTEN_HOSTNAME: "127.0.0.1",
        KV_PATH: ":memory:",
        BLOCK_INTERVAL_MS: "500",
        RING_SIZE: "4",
        LAB_MAX_KEYS: "40",
        LAB_MAX_VOTES: "30",
        PUBLIC_URL: "https://vote.example.org/room/",
        TRUST_PROXY: "1",
        ADMIN_TOKEN: "presenter-token-0123",
        LOG_ORIGIN: "vote.example.org/log",
        OHTTP_RELAY: "https://relay.example.net/ohttp/",
        VERIFY_RATE: "40",
      }),
    ),
    {
      port: 9001,
      hostname: "127.0.0.1",
      kvPath: ":memory:",
      blockIntervalMs: 500,
      ringSize: 4,
      labMaxKeys: 40,
      labMaxVotes: 30,
      publicUrl: "https://vote.example.org/room/",
      trustProxy: true,
      adminToken: "presenter-token-0123",
      logOrigin: "vote.example.org/log",
      witnessPolicy: null,
      ohttpRelay: "https://relay.example.net/ohttp",
      verifyRate: 40,
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
    [{ LISTEN_HOSTNAME: "0.0.0.0:8000/" }, /LISTEN_HOSTNAME/],
    [{ PUBLIC_URL: "ftp://vote.example.org/" }, /PUBLIC_URL/],
    [{ PUBLIC_URL: "javascript:alert(1)" }, /PUBLIC_URL/],
    [{ PUBLIC_URL: "/room/" }, /PUBLIC_URL/],
    [{ PUBLIC_URL: "vote.example.org" }, /PUBLIC_URL/],
    [{ OHTTP_RELAY: "relay.example.net" }, /OHTTP_RELAY/],
    [{ OHTTP_RELAY: "ftp://relay.example.net" }, /OHTTP_RELAY/],
    [{ OHTTP_RELAY: "https://relay.example.net/?x=1" }, /OHTTP_RELAY/],
    [{ VERIFY_RATE: "0" }, /VERIFY_RATE/],
    [{ VERIFY_RATE: "1001" }, /VERIFY_RATE/],
    [{ VERIFY_RATE: "25.5" }, /VERIFY_RATE/],
    [{ TRUST_PROXY: "maybe" }, /TRUST_PROXY/],
    [{ TRUST_PROXY: "2" }, /TRUST_PROXY/],
    [{ ADMIN_TOKEN: "a".repeat(15) }, /ADMIN_TOKEN/],
    [{ ADMIN_TOKEN: "a".repeat(129) }, /ADMIN_TOKEN/],
    [{ ADMIN_TOKEN: "presenter token 0123" }, /ADMIN_TOKEN/],
    [{ ADMIN_TOKEN: "presenter/token/0123" }, /ADMIN_TOKEN/],
    [{ ADMIN_TOKEN: "presenter&admin=0123" }, /ADMIN_TOKEN/],
    [{ ADMIN_TOKEN: "présentateur-0123456" }, /ADMIN_TOKEN/],
    [{ ADMIN_TOKEN: "a".repeat(16) }, /ADMIN_TOKEN is too easy to guess: it has 1 different/],
    [{ ADMIN_TOKEN: "ab".repeat(32) }, /ADMIN_TOKEN is too easy to guess/],
    [{ ADMIN_TOKEN: "123412341234123412" }, /ADMIN_TOKEN is too easy to guess/],
    [{ LOG_ORIGIN: "vote.example.org/log 2" }, /LOG_ORIGIN/],
    [{ LOG_ORIGIN: "vote.example.org/log+2" }, /LOG_ORIGIN/],
    [{ LOG_ORIGIN: "vote.example.org/\u00a0log" }, /LOG_ORIGIN/],
    [{ LOG_ORIGIN: "vote.example.org/\tlog" }, /LOG_ORIGIN/],
    [{ LOG_ORIGIN: "v".repeat(256) }, /LOG_ORIGIN/],
  ];
  for (const [vars, message] of cases) assert.throws(() => readConfig(env(vars)), message);
});

Deno.test("readConfig: PUBLIC_URL is normalised to an absolute address ending in a slash", () => {
  const cases: [string, string][] = [
    ["https://vote.example.org", "https://vote.example.org/"],
    ["https://vote.example.org/room", "https://vote.example.org/room/"],
    ["https://vote.example.org/room/", "https://vote.example.org/room/"],
    ["http://192.168.1.20:8000", "http://192.168.1.20:8000/"],
    ["https://vote.example.org/room?x=1#top", "https://vote.example.org/room/"],
    ["https://vote.example.org/?admin=secret", "https://vote.example.org/"],
    ["HTTPS://Vote.Example.org:443/", "https://vote.example.org/"],
  ];
  for (const [value, expected] of cases) {
    assert.equal(readConfig(env({ PUBLIC_URL: value })).publicUrl, expected, value);
  }
  assert.equal(readConfig(env({ PUBLIC_URL: "" })).publicUrl, null, "empty is unset");
});

Deno.test("readConfig: TRUST_PROXY is a yes/no setting, unset is no", () => {
  const cases: [string, boolean][] = [
    ["", false],
    ["0", false],
    ["false", false],
    ["no", false],
    ["NO", false],
    ["1", true],
    ["true", true],
    ["yes", true],
    ["True", true],
  ];
  for (const [value, expected] of cases) {
    assert.equal(readConfig(env({ TRUST_PROXY: value })).trustProxy, expected, value);
  }
});

Deno.test("readConfig: ADMIN_TOKEN takes 16 to 128 URL-safe characters, 10 of them different", () => {
  for (
    const token of [
      "0123456789abcdef",
      "A-z_0.9~bc".repeat(12) + "Zm9vYmFy",
      "Zm9vYmFyYmF6cXV4cXV1eA",
    ]
  ) {
    assert.equal(readConfig(env({ ADMIN_TOKEN: token })).adminToken, token);
  }
  assert.equal(readConfig(env({ ADMIN_TOKEN: "" })).adminToken, null, "empty is unset");
});

Deno.test("readConfig: LOG_ORIGIN is a key name of at most 255 characters, empty is unset", () => {
  for (const origin of ["vote.example.org/log", "example.com/behind-the-sofa", "v".repeat(255)]) {
    assert.equal(readConfig(env({ LOG_ORIGIN: origin })).logOrigin, origin);
  }
  assert.equal(readConfig(env({ LOG_ORIGIN: "" })).logOrigin, null, "empty is unset");
});

Deno.test("isKvFile: only file paths get a folder created", () => {
  assert.equal(isKvFile("./data/ringvote.kv"), true);
  assert.equal(isKvFile("/tmp/x.kv"), true);
  assert.equal(isKvFile(":memory:"), false);
  assert.equal(isKvFile("https://api.deno.com/databases/0000/connect"), false);
  assert.equal(isKvFile("http://localhost:4512"), false);
  assert.equal(isKvFile(null), false);
});
