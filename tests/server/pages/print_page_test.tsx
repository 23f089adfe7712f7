// The print view's shell at /print/cards?set=S (page §14.7): the RoomView island in print mode with
// the set and the voting page's address, and nothing else; the codes never reach the server.
import assert from "node:assert/strict";
import { build } from "../../../scripts/build.ts";
import { createPageApp } from "../../../server/pages/pages.ts";

Deno.test("GET /print/cards renders the print view with the set and the address", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-print-test-" });
  try {
    const outDir = new URL(`file://${dir}/`);
    const { manifest } = await build({ outDir });
    const app = createPageApp({ ringSize: 8, buildDir: outDir, publicUrl: "http://room.test/" });
    const res = await app.request("/print/cards?set=0123456789abcdef");
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /<title>Ringvote: join cards to print<\/title>/);
    assert.match(html, /<div data-island="RoomView" data-island-props="island-props-0">/);
    assert.match(
      html,
      /\{"pollMs":2000,"round":null,"address":"http:\/\/room\.test\/","print":"0123456789abcdef"\}<\/script>/,
    );
    assert.ok(html.includes(`<script type="module" src="${manifest.islands.RoomView}">`));
    // A set that is not 16 hex characters is none: the page says so, with no island.
    const odd = await (await app.request("/print/cards?set=%3Cscript%3E")).text();
    assert.match(odd, /data-print-ready="none"[^>]*>No card set is named\.<\/p>/);
    assert.ok(!odd.includes("data-island="));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
