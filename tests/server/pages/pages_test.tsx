import assert from "node:assert/strict";
import { build, staticImports } from "../../../scripts/build.ts";
import { createApp } from "../../../server/app.ts";
import { createPageApp, readManifest } from "../../../server/pages/pages.ts";
import { createStore } from "../../../server/store/mod.ts";
import { Island, serializeProps } from "../../../server/pages/island.ts";
import { renderPage } from "../../../server/pages/render.tsx";
import { bytesToHex } from "../../../lib/protocol/bytes.ts";

/** A fresh build in a temporary directory, so tests never race the served static/build/. */
async function freshBuild() {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-pages-test-" });
  const outDir = new URL(`file://${dir}/`);
  const result = await build({ outDir });
  return { dir, outDir, ...result };
}

Deno.test("the page and its bundles", async (t) => {
  const { dir, outDir, manifest } = await freshBuild();
  const kv = await Deno.openKv(":memory:");
  // The whole app, so refusals reach the app's one error handler.
  const app = createApp({
    store: await createStore(kv),
    config: { ringSize: 5 },
    buildDir: outDir,
  });
  try {
    await t.step("GET / renders the shell with the island, its props and its module", async () => {
      const res = await app.request("/");
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
      const html = await res.text();
      assert.ok(html.startsWith("<!DOCTYPE html>"));
      assert.match(html, /<div data-island="VotingPage" data-island-props="island-props-0">/);
      assert.match(
        html,
        /<script type="application\/json" id="island-props-0">\{"ringSize":5,"address":"http:\/\/[^"]+\/"\}<\/script>/,
      );
      // The island finds the current round before it shows the voters (page §14.1).
      assert.match(html, /data-simulated[ =>]/);
      assert.match(html, /Finding the current round/);
      assert.ok(html.includes(`<script type="module" src="${manifest.islands.VotingPage}">`));
      for (const href of manifest.styles) assert.ok(html.includes(`href="${href}"`));
      // No inline code: every script either loads a file or carries JSON data.
      for (const tag of html.match(/<script[^>]*>/g) ?? []) {
        assert.match(tag, /\bsrc="|type="application\/json"/, tag);
      }
    });

    await t.step(
      "island bundles are served with their content hash and a year of cache",
      async () => {
        const url = manifest.islands.VotingPage;
        const res = await app.request(url);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("content-type"), "text/javascript; charset=utf-8");
        assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
        const body = new Uint8Array(await res.arrayBuffer());
        const digest = bytesToHex(new Uint8Array(await crypto.subtle.digest("SHA-256", body)));
        assert.equal(url, `/static/build/VotingPage-${digest.slice(0, 12)}.js`);
        const css = await app.request(manifest.styles[0]);
        assert.equal(css.status, 200);
        assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
        await css.body?.cancel();
      },
    );

    await t.step("faker is a separate chunk, imported only on demand", async () => {
      const code = await Deno.readTextFile(
        new URL(manifest.islands.VotingPage.slice("/static/build/".length), outDir),
      );
      const lazy = [...code.matchAll(/import\(["']\.\/(voter_names-[A-Z0-9]+\.js)["']\)/g)];
      assert.equal(lazy.length, 1, "one dynamic import of the names chunk");
      assert.ok(!staticImports(code).some((f) => f.startsWith("voter_names")));
      assert.ok(!manifest.preload.VotingPage.some((f) => f.includes("voter_names")));
      const chunk = await app.request(`/static/build/${lazy[0][1]}`);
      assert.equal(chunk.status, 200);
      assert.ok((await chunk.text()).length > code.length, "faker outweighs the island");
    });

    await t.step("anything else under /static/build/ is a JSON 404", async () => {
      for (const path of ["manifest.json", "nothing-here.js", "..%2Fdeno.json", ".hidden.js"]) {
        const res = await app.request(`/static/build/${path}`);
        assert.equal(res.status, 404, path);
        assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
        const body = await res.json();
        assert.equal(body.error.code, "not_found");
      }
    });

    await t.step("a second build from the same sources is skipped", async () => {
      const again = await build({ outDir, ifNeeded: true });
      assert.equal(again.built, false);
      assert.deepEqual(again.manifest, readManifest(outDir));
    });
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GET / without a build answers 503 with the command to run", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const app = createPageApp({ ringSize: 8, buildDir: new URL(`file://${dir}/`) });
    const res = await app.request("/");
    assert.equal(res.status, 503);
    assert.match(await res.text(), /deno task build/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a page without a build is the error type's 503 not_built: text for a browser", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(":memory:");
  try {
    const app = createApp({ store: await createStore(kv), buildDir: new URL(`file://${dir}/`) });
    const browser = await app.request("/board", { headers: { Accept: "text/html,*/*;q=0.8" } });
    assert.equal(browser.status, 503);
    assert.match(browser.headers.get("content-type") ?? "", /^text\/plain/);
    assert.equal(await browser.text(), "The page's scripts are not built: run `deno task build`");
    assert.ok(browser.headers.get("content-security-policy"), "the security headers are kept");
    const client = await app.request("/");
    assert.equal(client.status, 503);
    assert.equal(client.headers.get("content-type"), "application/json");
    const body = await client.json();
    assert.equal(body.error.code, "not_built");
    assert.match(body.error.message, /deno task build/);
    // An API route keeps its JSON answer whatever the client accepts.
    const api = await app.request("/api/nothing", { headers: { Accept: "text/html" } });
    assert.equal(api.status, 404);
    assert.equal((await api.json()).error.code, "not_found");
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serializeProps cannot close the script element it lives in", () => {
  const text = serializeProps({ note: "</script><script>alert(1)</script>", sep: "\u2028&" });
  assert.ok(!/[<>&\u2028]/.test(text));
  assert.deepEqual(JSON.parse(text), {
    note: "</script><script>alert(1)</script>",
    sep: "\u2028&",
  });
});

Deno.test("the page gets the ring size createApp was configured with, 8 by default", async () => {
  const { dir, outDir } = await freshBuild();
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    for (const [config, expected] of [[{ ringSize: 12 }, 12], [undefined, 8]] as const) {
      const app = createApp({ store, config, buildDir: outDir });
      const res = await app.request("/");
      assert.equal(res.status, 200);
      const html = await res.text();
      assert.ok(html.includes(`{"ringSize":${expected},`), `ring size ${expected}`);
    }
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the page carries OHTTP_RELAY to the island only when it is set", async () => {
  const { dir, outDir } = await freshBuild();
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const relayed = createApp({
      store,
      config: { ohttpRelay: "http://relay.example:8002" },
      buildDir: outDir,
    });
    const html = await (await relayed.request("/")).text();
    assert.ok(html.includes(`"relay":"http://relay.example:8002"`), "the relay is in the props");
    const plain = createApp({ store, buildDir: outDir });
    assert.ok(!(await (await plain.request("/")).text()).includes(`"relay"`), "no relay named");
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("staticImports lists static chunk imports, not dynamic ones", () => {
  const code = `import{a as b}from"./chunk-AB12.js";import"./side-CD34.js";` +
    `const m=()=>import("./lazy-EF56.js");`;
  assert.deepEqual(staticImports(code), ["chunk-AB12.js", "side-CD34.js"]);
});

Deno.test("a file of islands/workers/ becomes a module worker the page can start by name", async () => {
  // A project root with the real build inputs and one island plus one worker of its own.
  const root = await Deno.makeTempDir({ prefix: "ringvote-worker-build-" });
  const project = new URL("../../../", import.meta.url).pathname;
  try {
    for (const entry of ["deno.json", "deno.lock", "components", "lib", "static", "scripts"]) {
      await Deno.symlink(`${project}${entry}`, `${root}/${entry}`);
    }
    await Deno.mkdir(`${root}/islands/workers`, { recursive: true });
    await Deno.symlink(`${project}islands/runtime.ts`, `${root}/islands/runtime.ts`);
    await Deno.writeTextFile(
      `${root}/islands/Probe.tsx`,
      `export default function Probe() { return <p>probe</p>; }\n`,
    );
    await Deno.writeTextFile(
      `${root}/islands/workers/echo.ts`,
      `import { bytesToHex } from "../../lib/protocol/bytes.ts";\n` +
        `self.onmessage = (e) => self.postMessage(bytesToHex(new Uint8Array(e.data)));\n`,
    );
    const outDir = new URL(`file://${root}/out/`);
    const { manifest, files } = await build({ root: new URL(`file://${root}/`), outDir });

    assert.deepEqual(Object.keys(manifest.workers), ["echo"]);
    assert.match(manifest.workers.echo, /^\/static\/build\/worker-echo-[0-9a-f]{12}\.js$/);
    assert.ok(files.some((f) => manifest.workers.echo.endsWith(f.name)), "the worker is built");
    const code = await Deno.readTextFile(
      new URL(manifest.workers.echo.slice("/static/build/".length), outDir),
    );
    assert.match(code, /onmessage/);
    assert.ok(!("worker-echo" in manifest.islands), "a worker is not an island");

    const html = renderPage(<Island name="Probe" component={() => <p>probe</p>} props={{}} />, {
      title: "t",
      manifest: { ...manifest, islands: { Probe: "/static/build/Probe.js" } },
    });
    const map = html.match(/<script type="application\/json" id="island-workers">(.*?)<\/script>/);
    assert.ok(map, "the page carries the worker map");
    assert.deepEqual(JSON.parse(map[1]), manifest.workers);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("GET /board renders the board shell, linked both ways with the voting page", async () => {
  const { dir, outDir, manifest } = await freshBuild();
  try {
    const app = createPageApp({ ringSize: 8, buildDir: outDir });
    const res = await app.request("/board");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    assert.equal(res.headers.get("cache-control"), "no-cache");
    const html = await res.text();
    assert.match(html, /<title>Ringvote: public bulletin board<\/title>/);
    assert.match(html, /<h1[^>]*>Public bulletin board<\/h1>/);
    assert.match(html, /<a href="\/">Back to the voting page<\/a>/);
    assert.match(html, /<div data-island="Board" data-island-props="island-props-0">/);
    // The voting page's address phones use, for the board's witness QR code (page §10.13).
    assert.match(html, /\{"pollMs":2000,"vote":null,"address":"http:\/\/[^"]+\/"\}<\/script>/);
    assert.ok(html.includes(`<script type="module" src="${manifest.islands.Board}">`));
    assert.ok(!html.includes(manifest.islands.VotingPage), "only the board's own island");
    for (const href of manifest.preload.Board) assert.ok(html.includes(`href="${href}"`));

    // A shared walkthrough link hands its vote id to the island, escaped like every prop.
    const shared = await (await app.request("/board?vote=Ab-_9%3Cx")).text();
    assert.match(
      shared,
      /\{"pollMs":2000,"vote":"Ab-_9\\u003cx","address":"http:[^"]+"\}<\/script>/,
    );

    const index = await (await app.request("/")).text();
    assert.match(index, /<a href="\/board">Public bulletin board<\/a>/);

    // The board's first load: its module and the chunks it imports, without faker.
    const files = [manifest.islands.Board, ...manifest.preload.Board];
    assert.ok(!files.some((f) => f.includes("voter_names")));
    for (const file of files) {
      const code = await Deno.readTextFile(new URL(file.slice("/static/build/".length), outDir));
      assert.ok(!code.includes("faker"), file);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the icon: named by every page's head, answered at /favicon.svg and /favicon.ico", async () => {
  const { dir, outDir } = await freshBuild();
  try {
    const app = createPageApp({ ringSize: 8, buildDir: outDir });
    for (const page of ["/", "/board"]) {
      const html = await (await app.request(page)).text();
      assert.ok(html.includes('<link rel="icon" type="image/svg+xml" href="/favicon.svg"/>'), page);
    }
    const svg = await Deno.readTextFile(new URL("../../../static/favicon.svg", import.meta.url));
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const res = await app.request(path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("content-type"), "image/svg+xml");
      assert.equal(await res.text(), svg);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GET /lab renders the lab shell, linked from and to both other pages", async () => {
  const { dir, outDir, manifest } = await freshBuild();
  try {
    const app = createPageApp({ ringSize: 6, buildDir: outDir });
    const res = await app.request("/lab");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    const html = await res.text();
    assert.match(html, /<title>Ringvote: attack lab<\/title>/);
    assert.match(html, /<div data-island="AttackLab" data-island-props="island-props-0">/);
    assert.match(html, /\{"ringSize":6\}<\/script>/);
    assert.ok(html.includes(`<script type="module" src="${manifest.islands.AttackLab}">`));
    assert.match(html, /<a href="\/">Voting page<\/a>/);
    assert.match(html, /<a href="\/board">Public bulletin board<\/a>/);
    for (const page of ["/", "/board"]) {
      assert.match(await (await app.request(page)).text(), /<a href="\/lab">Attack lab<\/a>/);
    }
    // It says it runs on a practice ledger of its own, and links that ledger's board.
    assert.match(html, /practice ledger of its own/);
    assert.match(html, /Nothing done here touches the real election\./);
    assert.match(
      html,
      /<a href="\/board\?ledger=lab">See the practice ledger(?:'|&#39;)s chain<\/a>/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GET /board?ledger=lab renders the practice ledger's board, saying so", async () => {
  const { dir, outDir } = await freshBuild();
  try {
    const app = createPageApp({ ringSize: 8, buildDir: outDir });
    const html = await (await app.request("/board?ledger=lab")).text();
    assert.match(html, /<h1[^>]*>Practice ledger of the attack lab<\/h1>/);
    assert.match(html, /nothing here counts in the real election/);
    assert.match(html, /\{"pollMs":2000,"vote":null,"ledger":"lab"\}<\/script>/);
    assert.match(html, /data-ledger="lab"/);
    assert.doesNotMatch(html, /Audit everything/, "the election's audit is not shown");
    // Any other value is the election's board.
    const other = await (await app.request("/board?ledger=real")).text();
    assert.match(other, /<h1[^>]*>Public bulletin board<\/h1>/);
    assert.match(other, /\{"pollMs":2000,"vote":null,"address":"http:\/\/[^"]+\/"\}<\/script>/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
