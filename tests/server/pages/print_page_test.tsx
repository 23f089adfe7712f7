// The print view's shell at /print/cards?set=S (page §14.7): the PrintCards island with the set
// and the voting page's address, and nothing else; the codes never reach the server.
import assert from "node:assert/strict";
import { build } from "../../../scripts/build.ts";
import { createPageApp } from "../../../server/pages/pages.ts";

Deno.test("GET /print/cards renders the print view's island with the set and the address", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-print-test-" });
  try {
    const outDir = new URL(`file://${dir}/`);
    const { manifest } = await build({ outDir });
    const app = createPageApp({ ringSize: 8, buildDir: outDir, publicUrl: "http://room.test/" });
    const res = await app.request("/print/cards?set=0123456789abcdef");
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /<title>Ringvote: join cards to print<\/title>/);
    assert.match(html, /<div data-island="PrintCards" data-island-props="island-props-0">/);
    assert.match(html, /\{"set":"0123456789abcdef","address":"http:\/\/room\.test\/"\}<\/script>/);
    assert.ok(html.includes(`<script type="module" src="${manifest.islands.PrintCards}">`));
    // A set that is not 16 hex characters is none: the view says so in the browser.
    const odd = await (await app.request("/print/cards?set=%3Cscript%3E")).text();
    assert.match(odd, /\{"set":null,"address":"http:\/\/room\.test\/"\}<\/script>/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
