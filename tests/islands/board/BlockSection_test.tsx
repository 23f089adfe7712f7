/**
 * The bulletin board's block section (islands/board/BlockSection.tsx) rendered to HTML: the 'Leaf'
 * column is the server's leaf index, and a hash not yet checked reads as neutral.
 * @module
 */
import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import BlockSection, { HashVerdict } from "../../../islands/board/BlockSection.tsx";
import { createBulletinState } from "../../../islands/board/state.ts";
import { createApiClient } from "../../../lib/client/api_client.ts";
import type { BlockRecord } from "../../../lib/protocol/schemas.ts";

const HEX = (c: string) => c.repeat(64);

Deno.test("the 'Leaf' column shows each vote's leaf index as the server lists it", () => {
  const unused = createApiClient({ fetch: () => Promise.reject(new Error("no server")) });
  const bulletin = createBulletinState(unused, { pollMs: 60_000 });
  const block: BlockRecord = {
    height: 1,
    timestamp: 1_700_000_000_000,
    size: 6,
    merkle_root: HEX("a"),
    prev_hash: HEX("b"),
    hash: HEX("c"),
  } as BlockRecord;
  const entry = (voteId: string, index: number) => ({
    voteId,
    index,
    vote: { payload: `p${index}`, signature: "x", publicKeys: [HEX("d")] },
  });
  bulletin.blocks.value = [block];
  bulletin.selected.value = 1;
  bulletin.votes.value = new Map([[1, { entries: [entry("v4", 4), entry("v5", 5)], total: 6 }]]);
  const html = renderToString(<BlockSection bulletin={bulletin} />);
  const leaves = [...html.matchAll(/<td class="vote-leaf">(\d+)<\/td>/g)].map((m) => m[1]);
  assert.deepEqual(leaves, ["4", "5"]);
});

Deno.test("a hash still being checked reads 'checking…', not red", () => {
  assert.equal(
    renderToString(<HashVerdict hashOk={undefined} />),
    '<span class="summary-checking">checking…</span>',
  );
  assert.match(renderToString(<HashVerdict hashOk />), /summary-ok">matches its fields/);
  assert.match(
    renderToString(<HashVerdict hashOk={false} />),
    /summary-bad">does not match its fields/,
  );
});
