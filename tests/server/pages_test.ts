import assert from "node:assert/strict";
import { build, staticImports } from "../../scripts/build.ts";
import { createApp } from "../../server/app.ts";
import { createPageApp, readManifest } from "../../server/pages.ts";
import { createStore } from "../../server/store.ts";
import { serializeProps } from "../../components/Island.ts";
import { bytesToHex } from "../../lib/protocol/bytes.ts";

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
        /<script type="application\/json" id="island-props-0">\{"ringSize":5\}<\/script>/,
      );
      assert.match(html, /<button[^>]*>Generate A new Voter<\/button>/);
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
      assert.ok(html.includes(`{"ringSize":${expected}}</script>`), `ring size ${expected}`);
    }
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
