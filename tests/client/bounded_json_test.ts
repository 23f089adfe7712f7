// JSON parsed behind its bounds (lib/client/bounded_json.ts): nesting and length refused by one
// scan before `JSON.parse` sees the text, brackets inside strings not counted; an election record's
// hostile line (protocol §4.8) refused with its line number before it is parsed, however long.
import assert from "node:assert/strict";
import {
  checkJsonBounds,
  JsonBoundsError,
  parseBoundedJson,
} from "../../lib/client/bounded_json.ts";
import { MAX_LINE_DEPTH, RECORD_KIND } from "../../lib/client/audit/election_record.ts";
import { recordSource } from "../../lib/client/audit/election_record_source.ts";

const BOUNDS = { maxChars: 1000, maxDepth: 3 };

Deno.test("parseBoundedJson parses what is within its bounds", () => {
  assert.deepEqual(parseBoundedJson('{"a":[{"b":1}]}', BOUNDS), { a: [{ b: 1 }] });
  assert.deepEqual(parseBoundedJson('"[[[[[["', BOUNDS), "[[[[[[");
  assert.deepEqual(parseBoundedJson('["\\"[[[[", 1]', BOUNDS), ['"[[[[', 1]);
  assert.deepEqual(parseBoundedJson("[[],[],[[]]]", BOUNDS), [[], [], [[]]]);
});

Deno.test("parseBoundedJson refuses too deep or too long before parsing", () => {
  const cases: { desc: string; text: string; error: RegExp }[] = [
    { desc: "four arrays", text: "[[[[]]]]", error: /nested deeper than 3 levels.*character 4/ },
    { desc: "objects count too", text: '{"a":{"b":{"c":{}}}}', error: /nested deeper than 3/ },
    { desc: "too long", text: `"${"x".repeat(1000)}"`, error: /longer than 1000 characters/ },
    {
      desc: "unbalanced, so never parsed",
      text: "[".repeat(4) + "]".repeat(2),
      error: /nested deeper than 3/,
    },
  ];
  for (const { desc, text, error } of cases) {
    assert.throws(() => parseBoundedJson(text, BOUNDS), JsonBoundsError, desc);
    assert.throws(() => checkJsonBounds(text, BOUNDS), error, desc);
  }
  assert.throws(() => parseBoundedJson("[1,", BOUNDS), SyntaxError, "not JSON: JSON.parse says");
});

/** `text` as a stream of 64 KiB chunks. */
function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at += 65536));
    },
  });
}

Deno.test("a record line of 20 MB of nested [ is refused, named by its line number", async () => {
  const hostile = "[".repeat(20_000_000) + "\n";
  await assert.rejects(
    () => recordSource(streamOf(hostile)).serverKey(),
    new RegExp(`^RecordLineError: record line 1: nested deeper than ${MAX_LINE_DEPTH} levels`),
  );
  const header = JSON.stringify({
    kind: RECORD_KIND,
    key: "ab".repeat(32),
    height: 0,
    hash: "cd".repeat(32),
    timestamp: 0,
  });
  const source = recordSource(streamOf(`${header}\n{"kind":"key","id":[[[[1]]]]}\n`));
  assert.equal((await source.serverKey()).key, "ab".repeat(32));
  await assert.rejects(
    () => source.checkpoint().catch(() => source.keys(0, 100)),
    /record line 2: nested deeper than 3 levels of arrays and objects \(at character 22\)/,
  );
});
