// The API's answers on the wire (protocol §4.1), kind by kind, over in-memory KV through
// `app.request`: every answer over 1 KiB brotli- or gzip-encoded as Accept-Encoding allows and
// decoded back to the same bytes by the standard decoders (node:zlib), the sealed blocks' votes and
// proofs cacheable for good with an ETag (304 when it is sent back), the head, the checkpoint, the
// tally and the open block never stored, the practice ledger's blocks only revalidated. Status,
// then headers, then body.
import assert from "node:assert/strict";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { chooseEncoding, COMPRESS_MIN_BYTES } from "../../server/compression.ts";
import { IMMUTABLE, matches, NO_STORE, REVALIDATE } from "../../server/api/caching.ts";
import { buildLedger } from "../helpers/ledger_builder.ts";
import { fullApp } from "../helpers/app_fixture.ts";

/** Votes in the ledger: a full block of 100 and one of 20. */
const VOTES = 120;

async function setup() {
  const kv = await Deno.openKv(":memory:");
  const { store, lab, app } = await fullApp(kv, { electionIntervalMs: 250, currentTtlMs: 0 });
  const built = await buildLedger(store, { votes: VOTES, perBlock: 100 });
  await buildLedger((await lab.open()).store, { votes: 3, perBlock: 3 });
  return { kv, app, built };
}

/** One GET with `headers`: the status, the headers, the body's bytes as sent and as decoded. */
async function get(
  app: Awaited<ReturnType<typeof setup>>["app"],
  path: string,
  headers: Record<string, string> = { "Accept-Encoding": "gzip, deflate, br, zstd" },
) {
  const res = await app.request(path, { headers });
  const sent = new Uint8Array(await res.arrayBuffer());
  const encoding = res.headers.get("content-encoding");
  const body = encoding === "br"
    ? brotliDecompressSync(sent)
    : encoding === "gzip"
    ? gunzipSync(sent)
    : sent;
  return { status: res.status, headers: res.headers, sent, text: new TextDecoder().decode(body) };
}

Deno.test("chooseEncoding takes the accepted encoding of highest weight, brotli on a tie", () => {
  const cases: [string | null, string | null][] = [
    [null, null],
    ["", null],
    ["identity", null],
    ["gzip, deflate, br, zstd", "br"],
    ["gzip", "gzip"],
    ["GZIP;Q=0.5", "gzip"],
    ["br;q=0, gzip", "gzip"],
    ["br;q=0.5, gzip;q=0.8", "gzip"],
    ["gzip;q=0, br;q=0", null],
    ["*", "br"],
    ["*;q=0.1, gzip", "gzip"],
    ["br;q=0, *", "gzip"],
    ["deflate", null],
  ];
  for (const [header, expected] of cases) {
    assert.equal(chooseEncoding(header), expected, `Accept-Encoding: ${header}`);
  }
});

Deno.test("If-None-Match names a tag weakly, in a list, or with *", () => {
  assert.equal(matches(undefined, '"a"'), false);
  assert.equal(matches('"a"', '"a"'), true);
  assert.equal(matches('W/"a"', '"a"'), true);
  assert.equal(matches('"b", W/"a"', '"a"'), true);
  assert.equal(matches("*", '"a"'), true);
  assert.equal(matches('"b"', '"a"'), false);
});

Deno.test("every kind of API answer on the wire", async (t) => {
  const { kv, app, built } = await setup();
  try {
    const votesPage = "/api/block/id/1/votes?offset=0&limit=100";

    await t.step("a sealed block's votes: compressed, cached for good, an ETag", async () => {
      const plain = await get(app, votesPage, {});
      assert.equal(plain.status, 200);
      assert.equal(plain.headers.get("content-type"), "application/json");
      assert.equal(plain.headers.get("content-encoding"), null);
      assert.equal(plain.headers.get("cache-control"), IMMUTABLE);
      assert.match(plain.headers.get("etag") ?? "", /^"[0-9a-f]{32}"$/);
      assert.equal(plain.headers.get("vary"), "Accept-Encoding");
      assert.equal(JSON.parse(plain.text).votes.length, 100);
      for (const [accept, encoding] of [["gzip, deflate, br, zstd", "br"], ["gzip", "gzip"]]) {
        const packed = await get(app, votesPage, { "Accept-Encoding": accept });
        assert.equal(packed.status, 200);
        assert.equal(packed.headers.get("content-encoding"), encoding);
        assert.equal(packed.headers.get("content-length"), null);
        assert.equal(packed.headers.get("cache-control"), IMMUTABLE);
        assert.equal(packed.headers.get("etag"), `W/${plain.headers.get("etag")}`);
        assert.equal(packed.headers.get("vary"), "Accept-Encoding");
        assert.equal(packed.text, plain.text, "decoded, the same bytes");
        // Measured, not timed: a sealed vote's bytes on the wire.
        const perVote = packed.sent.length / 100;
        assert.ok(perVote <= 800, `${encoding}: ${perVote} bytes per vote`);
      }
    });

    await t.step("its ETag sent back: 304 with no body, compressed or not", async () => {
      const first = await get(app, votesPage);
      for (const tag of [first.headers.get("etag")!, first.headers.get("etag")!.slice(2)]) {
        const again = await get(app, votesPage, { "If-None-Match": tag, "Accept-Encoding": "br" });
        assert.equal(again.status, 304);
        assert.equal(again.sent.length, 0);
        assert.equal(again.headers.get("cache-control"), IMMUTABLE);
        assert.equal(again.headers.get("vary"), "Accept-Encoding");
      }
      const other = await get(app, votesPage, { "If-None-Match": '"0000"' });
      assert.equal(other.status, 200);
    });

    await t.step("a vote's proof: compressed, cached for good", async () => {
      const { voteId, blockId } = built[0];
      const proof = await get(app, `/api/block/id/${blockId}/vote/${voteId}`);
      assert.equal(proof.status, 200);
      assert.equal(proof.headers.get("content-type"), "application/json");
      assert.ok(proof.text.length > COMPRESS_MIN_BYTES);
      assert.equal(proof.headers.get("content-encoding"), "br");
      assert.equal(proof.headers.get("cache-control"), IMMUTABLE);
      assert.match(proof.headers.get("etag") ?? "", /^W\/"[0-9a-f]{32}"$/);
      assert.equal(JSON.parse(proof.text).vote.payload, built[0].payload);
    });

    await t.step("a sealed block's hash: cached for good, too short to compress", async () => {
      const hash = await get(app, "/api/block/hash/id/1");
      assert.equal(hash.status, 200);
      assert.equal(hash.headers.get("content-encoding"), null);
      assert.equal(hash.headers.get("vary"), null, "the same bytes for every request");
      assert.equal(hash.headers.get("cache-control"), IMMUTABLE);
      assert.match(hash.headers.get("etag") ?? "", /^"[0-9a-f]{32}"$/);
    });

    await t.step("the log's proofs: cached for good, as text", async () => {
      for (const path of ["/api/log/inclusion/1/3", "/api/log/consistency/1/3"]) {
        const proof = await get(app, path);
        assert.equal(proof.status, 200, path);
        assert.equal(proof.headers.get("content-type"), "text/plain; charset=utf-8");
        assert.equal(proof.headers.get("cache-control"), IMMUTABLE, path);
        assert.match(proof.headers.get("etag") ?? "", /^"[0-9a-f]{32}"$/);
        assert.match(proof.text, /^([A-Za-z0-9+/]{43}=\n)+$/);
      }
    });

    await t.step("the head, the checkpoint, the tally and the open block: no-store", async () => {
      const live = [
        "/api/block/status",
        "/api/log/checkpoint",
        "/api/tally",
        "/api/rounds/1/block/open",
        "/api/rounds",
      ];
      for (const path of live) {
        const answer = await get(app, path);
        assert.equal(answer.status, 200, path);
        assert.equal(answer.headers.get("cache-control"), NO_STORE, path);
        assert.equal(answer.headers.get("etag"), null, path);
      }
      const tally = JSON.parse((await get(app, "/api/tally")).text);
      assert.equal(tally.total, VOTES);
    });

    await t.step("the blocks listing, which grows: revalidated by its ETag", async () => {
      const blocks = await get(app, "/api/blocks?from=0&limit=100");
      assert.equal(blocks.status, 200);
      assert.ok(blocks.text.length > COMPRESS_MIN_BYTES);
      assert.equal(blocks.headers.get("content-encoding"), "br");
      assert.equal(blocks.headers.get("cache-control"), REVALIDATE);
      const tag = blocks.headers.get("etag")!;
      const again = await get(app, "/api/blocks?from=0&limit=100", { "If-None-Match": tag });
      assert.equal(again.status, 304);
      assert.equal(JSON.parse(blocks.text).blocks.length, 3);
    });

    await t.step(
      "the key directory, which grows: compressed, revalidated by its ETag",
      async () => {
        const keys = await get(app, "/api/pki/key/offset/0/limit/100");
        assert.equal(keys.status, 200);
        assert.equal(keys.headers.get("content-encoding"), "br");
        assert.equal(keys.headers.get("cache-control"), REVALIDATE);
        assert.equal(JSON.parse(keys.text).keys.length, 100);
        assert.ok(keys.sent.length < keys.text.length / 2, `${keys.sent.length} bytes sent`);
        const tag = keys.headers.get("etag")!;
        const again = await get(app, "/api/pki/key/offset/0/limit/100", { "If-None-Match": tag });
        assert.equal(again.status, 304);
      },
    );

    await t.step("a refusal is never cached for good", async () => {
      const unsealed = await get(app, "/api/block/id/9/votes?offset=0&limit=100");
      assert.equal(unsealed.status, 404);
      assert.equal(unsealed.headers.get("content-type"), "application/json");
      assert.notEqual(unsealed.headers.get("cache-control"), IMMUTABLE);
      assert.equal(JSON.parse(unsealed.text).error.code, "unknown_block");
      const early = await get(app, "/api/log/inclusion/1/99");
      assert.equal(early.status, 404);
      assert.notEqual(early.headers.get("cache-control"), IMMUTABLE);
    });

    await t.step(
      "a round's sealed block is cached for good, the practice ledger's not",
      async () => {
        const round = await get(app, "/api/rounds/1/block/id/1/votes?offset=0&limit=100");
        assert.equal(round.status, 200);
        assert.equal(round.headers.get("cache-control"), IMMUTABLE);
        const lab = await get(app, "/api/lab/block/id/1/votes?offset=0&limit=100");
        assert.equal(lab.status, 200);
        assert.equal(JSON.parse(lab.text).votes.length, 3);
        assert.equal(lab.headers.get("cache-control"), REVALIDATE);
        assert.ok(lab.headers.get("etag"));
      },
    );

    await t.step("the lying-server lens is never cached for good", async () => {
      const lens = await get(app, "/api/lens/honest/block/id/1/votes?offset=0&limit=100");
      assert.equal(lens.status, 200);
      assert.notEqual(lens.headers.get("cache-control"), IMMUTABLE);
      assert.equal(lens.headers.get("content-encoding"), "br");
    });
  } finally {
    kv.close();
  }
});
