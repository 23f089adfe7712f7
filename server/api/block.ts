/**
 * The block and bulletin-board reads of protocol §4: `/api/block…`, `/api/blocks`, `/api/tally`
 * and `/api/tag/{tag}`. Proofs come from data stored at sealing, in a few point reads. Answers about
 * a sealed block are cached for good, the head and the tally never (./caching.ts).
 * @module
 */
import { Hono } from "hono";
import { Hex32, VoteId } from "../../lib/protocol/schemas.ts";
import { growingJson, liveJson, sealedJson } from "./caching.ts";
import { integerParam, integerQuery, pageLimit } from "./common.ts";
import { invalidRequest, quote, refusal } from "../errors.ts";
import { type HeadSigner, withHeadSignature } from "../head_signer.ts";
import type { Store } from "../store/mod.ts";

const DEFAULT_PAGE = 100;

/**
 * Routes under `/api`, for blocks, votes, the tally, tags and the server key. Every block record
 * (status, blocks list, vote proofs) carries the server's `head_signature`.
 */
export function createBlockApp(store: Store, signer: HeadSigner): Hono {
  const app = new Hono();

  app.get("/server-key", (c) => c.json({ key: signer.key }));

  app.get(
    "/block/status",
    async (c) => liveJson(c, withHeadSignature(signer, await store.status())),
  );

  app.get("/block/hash/id/:height", async (c) => {
    const height = integerParam(c.req.param("height"), "height");
    const block = await store.block(height);
    if (!block) throw refusal("unknown_block", `No sealed block at height ${height}`);
    return sealedJson(c, { height: block.height, hash: block.hash });
  });

  app.get("/block/id/:height/vote/:voteId", async (c) => {
    const height = integerParam(c.req.param("height"), "blockId");
    const voteId = c.req.param("voteId");
    if (!VoteId.safeParse(voteId).success) {
      throw refusal("unknown_vote", `No vote "${quote(voteId)}" in block ${height}`);
    }
    const proof = await store.voteProof(height, voteId);
    return sealedJson(c, { ...proof, block: withHeadSignature(signer, proof.block) });
  });

  app.get("/block/id/:height/votes", async (c) => {
    const height = integerParam(c.req.param("height"), "height");
    const offset = integerQuery(c, "offset", 0);
    const limit = pageLimit(integerQuery(c, "limit", DEFAULT_PAGE));
    return sealedJson(c, await store.blockVotes(height, offset, limit));
  });

  app.get("/blocks", async (c) => {
    const from = integerQuery(c, "from", 0);
    const limit = pageLimit(integerQuery(c, "limit", DEFAULT_PAGE));
    const { blocks, height } = await store.blocks(from, limit);
    // Its `height` is the head's: the same query answers more as the chain grows.
    return growingJson(c, {
      blocks: blocks.map((block) => withHeadSignature(signer, block)),
      height,
    });
  });

  app.get("/tally", async (c) => liveJson(c, await store.tally()));

  app.get("/tag/:tag", async (c) => {
    const tag = c.req.param("tag");
    if (!Hex32.safeParse(tag).success) {
      throw invalidRequest(`tag must be 64 lowercase hex characters, got "${quote(tag)}"`);
    }
    return c.json(await store.tagUse(tag));
  });

  return app;
}
