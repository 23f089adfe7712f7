// The Host guard (server/security.ts): a Host header over MAX_HOST_LENGTH characters, or one that
// is not a host, is 400 `invalid_host` JSON on pages and API alike, never a 500, with the security
// headers; an ordinary Host is served as ever.
import assert from "node:assert/strict";
import { ErrorBody } from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { HOST_HEADER, MAX_HOST_LENGTH, SECURITY_HEADERS } from "../../server/security.ts";
import { createStore } from "../../server/store/mod.ts";

/** The whole app over in-memory KV, its pages served from a stub build in a temporary folder. */
async function setup() {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-security-test-" });
  const manifest = {
    fingerprint: "stub",
    islands: {
      VotingPage: "/static/build/voting.js",
      Board: "/static/build/board.js",
      AttackLab: "/static/build/lab.js",
    },
    preload: {},
    styles: [],
    workers: {},
  };
  await Deno.writeTextFile(`${dir}/manifest.json`, JSON.stringify(manifest));
  const kv = await Deno.openKv(":memory:");
  const app = createApp({ store: await createStore(kv), buildDir: new URL(`file://${dir}/`) });
  return {
    app,
    async close() {
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const PATHS = ["/", "/api/block/status", "/board"];

Deno.test("a 3,000-character Host is 400 invalid_host JSON on pages and API, never a 500", async () => {
  const { app, close } = await setup();
  try {
    const host = `${"a".repeat(2995)}:8000`;
    assert.equal(host.length, 3000);
    for (const path of PATHS) {
      const res = await app.request(path, { headers: { Host: host } });
      const text = await res.text();
      assert.equal(res.status, 400, `${path}: ${text}`);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/, path);
      const body = JSON.parse(text);
      assert.ok(ErrorBody.safeParse(body).success, text);
      assert.equal(body.error.code, "invalid_host");
      assert.match(body.error.message, new RegExp(`over ${MAX_HOST_LENGTH} characters`));
      assert.ok(!text.includes("aaaaaaaaaa"), "the header is not echoed");
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
        assert.equal(res.headers.get(name), value, `${path}: header ${name}`);
      }
    }
  } finally {
    await close();
  }
});

Deno.test("a browser asking a page with a 3,000-character Host gets the 400 as plain text", async () => {
  const { app, close } = await setup();
  try {
    const headers = { Host: `${"a".repeat(2995)}:8000`, Accept: "text/html,*/*;q=0.8" };
    for (const path of ["/", "/board"]) {
      const res = await app.request(path, { headers });
      assert.equal(res.status, 400, path);
      assert.match(res.headers.get("content-type") ?? "", /^text\/plain/, path);
      assert.match(await res.text(), new RegExp(`over ${MAX_HOST_LENGTH} characters`));
    }
    const api = await app.request("/api/block/status", { headers });
    assert.equal(api.status, 400);
    assert.match(api.headers.get("content-type") ?? "", /^application\/json/, "the API stays JSON");
    assert.equal((await api.json()).error.code, "invalid_host");
  } finally {
    await close();
  }
});

Deno.test("a Host that is not a host name is 400 invalid_host; the longest name passes", async () => {
  const { app, close } = await setup();
  try {
    for (const host of ["a b", "example.org/path", "<script>", "user@example.org", "[::1"]) {
      const res = await app.request("/api/block/status", { headers: { Host: host } });
      assert.equal(res.status, 400, host);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      assert.equal((await res.json()).error.code, "invalid_host", host);
    }
    const longest = `${"a".repeat(MAX_HOST_LENGTH - 6)}:65535`;
    assert.equal(longest.length, MAX_HOST_LENGTH);
    const res = await app.request("/api/block/status", { headers: { Host: longest } });
    assert.equal(res.status, 200);
    await res.body?.cancel();
  } finally {
    await close();
  }
});

Deno.test("an ordinary Host passes the guard: localhost:8000, an address, IPv6", async () => {
  const { app, close } = await setup();
  try {
    for (const host of ["localhost:8000", "192.168.1.20:8000", "[::1]:8000", "vote.example.org"]) {
      assert.match(host, HOST_HEADER);
      const api = await app.request("/api/block/status", { headers: { Host: host } });
      assert.equal(api.status, 200, host);
      assert.match(api.headers.get("content-type") ?? "", /^application\/json/);
      assert.equal((await api.json()).height, 0);
      for (const path of ["/", "/board"]) {
        const page = await app.request(path, { headers: { Host: host, Accept: "text/html" } });
        assert.equal(page.status, 200, `${path} on ${host}`);
        assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
        assert.match(await page.text(), /^<!DOCTYPE html>/);
      }
    }
  } finally {
    await close();
  }
});

/** The status line's code of a raw HTTP/1.1 GET of `path` with `host` to 127.0.0.1:`port`. */
async function rawStatus(port: number, path: string, host: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const request = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\n` +
      "Connection: close\r\n\r\n";
    await conn.write(new TextEncoder().encode(request));
    let text = "";
    const buffer = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
      if (text.includes("\r\n")) break;
    }
    return Number(text.split(" ")[1]);
  } finally {
    conn.close();
  }
}

Deno.test("over real HTTP, a Host no URL can hold is 400, never a 500; a container's name passes", async () => {
  const { app, close } = await setup();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  try {
    const { port } = server.addr;
    for (const host of ["999.1.1.1", "127.0.0.1:99999", "[::1]:99999", "1.2.3.4.5"]) {
      for (const path of PATHS) {
        assert.equal(await rawStatus(port, path, host), 400, `${host} ${path}`);
      }
    }
    for (const host of ["ringvote_app:8000", `localhost:${port}`, "[::1]:8000"]) {
      for (const path of PATHS) {
        assert.equal(await rawStatus(port, path, host), 200, `${host} ${path}`);
      }
    }
  } finally {
    await server.shutdown();
    await close();
  }
});
