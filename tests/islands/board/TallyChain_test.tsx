/**
 * The bulletin board's tally and chain sections (islands/board/TallySection.tsx,
 * islands/board/ChainSection.tsx) rendered to HTML over a state set by hand: a block whose listing
 * is not the votes its header commits to turns the recount's line red with both numbers, and blocks
 * served with a gap, or stopping below the chain's height, are never summed up green.
 * @module
 */
import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import ChainSection from "../../../islands/board/ChainSection.tsx";
import TallySection from "../../../islands/board/TallySection.tsx";
import { createBulletinState } from "../../../islands/board/state.ts";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { countPayloads } from "../../../lib/client/board/recount.ts";
import type { BlockVoteEntry } from "../../../lib/client/api_client.ts";
import { makeChain } from "../../helpers/chain_fixture.ts";

/** A board state that reads nothing: every test sets its signals. */
function board() {
  const unused = createApiClient({ fetch: () => Promise.reject(new Error("no server")) });
  return createBulletinState(unused, { pollMs: 60_000 });
}

/** What the recount keeps of a block of `size` whose listing said `total` and held `payloads`. */
function counted(payloads: string[], total: number, size: number | null) {
  const entries = payloads.map((payload) => ({ vote: { payload } }) as unknown as BlockVoteEntry);
  return { size, total, counted: payloads.length, payloads: countPayloads(entries) };
}

/** The text of `html` without its tags. */
const text = (html: string) => html.replace(/<[^>]*>/g, "");

Deno.test("the tally's line names a block whose listing is not what its header commits to", () => {
  const bulletin = board();
  bulletin.height.value = 2;
  bulletin.tally.value = { total: 3, results: [{ payload: "yes", count: 3 }] };
  bulletin.counted.value = new Map([
    [1, counted(["yes", "yes"], 2, 3)],
    [2, counted(["yes"], 1, 1)],
  ]);
  const html = renderToString(<TallySection bulletin={bulletin} />);
  assert.match(html, /<span data-recount-problem="1" class="summary-bad">/);
  assert.match(
    text(html),
    /3 sealed votes\. Not recounted: block 1's header commits to 3 votes, but its listing says 2 and holds 2\./,
  );
  assert.doesNotMatch(html, /the counts agree/);

  bulletin.counted.value = new Map([[1, counted(["yes"], 1, null)], [2, counted(["yes"], 1, 1)]]);
  assert.match(
    text(renderToString(<TallySection bulletin={bulletin} />)),
    /Not recounted: block 1's header does not match its hash or the block before, so its votes cannot be counted\./,
  );

  bulletin.tally.value = { total: 4, results: [{ payload: "yes", count: 4 }] };
  bulletin.counted.value = new Map([[1, counted(["yes", "yes", "yes"], 3, 3)], [
    2,
    counted(["yes"], 1, 1),
  ]]);
  assert.match(
    renderToString(<TallySection bulletin={bulletin} />),
    /Recounted in this browser from every sealed vote: the counts agree\./,
  );
});

Deno.test("the chain's summary is red for a block left out, and for blocks stopping short", () => {
  const { blocks } = makeChain([1, 2, 1]);
  const bulletin = board();
  bulletin.height.value = 3;
  bulletin.blocks.value = blocks;
  const summary = () =>
    /<p class="(summary-\w+)">([^<]*)<\/p>/.exec(
      renderToString(<ChainSection bulletin={bulletin} />),
    )!.slice(1);
  assert.deepEqual(summary(), [
    "summary-ok",
    "Every block's hash matches its fields and every link matches the block before.",
  ]);
  bulletin.blocks.value = [blocks[0], blocks[1], blocks[3]];
  assert.deepEqual(summary(), ["summary-bad", "1 block(s) fail a check: #3"]);
  bulletin.blocks.value = blocks.slice(0, 3);
  assert.deepEqual(summary(), [
    "summary-bad",
    "The blocks served stop at block 2, below the chain's height 3.",
  ]);
  bulletin.blocks.value = [];
  assert.deepEqual(summary(), [
    "summary-bad",
    "The blocks served stop at none, below the chain's height 3.",
  ]);
});
