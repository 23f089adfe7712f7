// Two main.ts processes on one KV Connect database, voting under a steady load, and the database
// goes down for twice the API's bound, then comes back on the same port (protocol §5.5): every
// request is answered before the database is back (no answer waits for it), every vote answered
// 202 is sealed exactly once, the votes answered 503 are sent again and end stored once, and the
// sealers resume on their own.
import assert from "node:assert/strict";
import { KV_DEADLINE_MS, KV_SILENCE_MS } from "../../../server/app.ts";
import type { VoteSubmission } from "../../../lib/protocol/schemas.ts";
import { startKvConnectServer } from "../../helpers/kv_connect_server.ts";
import {
  call,
  makeVoters,
  proofVerifies,
  ringFor,
  signedVote,
} from "../../helpers/ledger_fixtures.ts";
import { startServer } from "../../helpers/server_process.ts";

/** Votes sent, one every SPACING_MS, alternating between the two processes. */
const VOTES = 80;
const SPACING_MS = 100;
/** When the database goes down after the first vote, and how long it stays down. */
const DOWN_AFTER_MS = 1_500;
const DOWN_FOR_MS = 2 * (KV_DEADLINE_MS + KV_SILENCE_MS);

type Sent = {
  vote: VoteSubmission;
  server: string;
  sentAt: number;
  answeredAt: number;
  status: number;
  code?: string;
  voteId?: string;
  blockId?: number;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("the database down for twice the bound under load: no answer waits for it, every 202 sealed once", async () => {
  const kvServer = await startKvConnectServer();
  const env = { ...kvServer.env(), BLOCK_INTERVAL_MS: "200" };
  const processes = [await startServer({ env }), await startServer({ env })];
  const urls = processes.map((p) => p.url);
  const kv = await kvServer.openKv();
  try {
    const voters = makeVoters(VOTES);
    const registered = await Promise.all(
      voters.map((v, i) => call(urls[i % 2], "POST", "/api/pki/key", { key: v.key })),
    );
    for (const r of registered) assert.equal(r.status, 201, JSON.stringify(r.body));
    const votes = voters.map((v, i) => signedVote(v, ringFor(v, voters, 8, i), `choice ${i % 4}`));

    const send = async (vote: VoteSubmission, server: string): Promise<Sent> => {
      const sentAt = performance.now();
      const answer = await call(server, "POST", "/api/vote", vote);
      return {
        vote,
        server,
        sentAt,
        answeredAt: performance.now(),
        status: answer.status,
        code: answer.body?.error?.code,
        voteId: answer.body?.voteId,
        blockId: answer.body?.blockId,
      };
    };
    const started = performance.now();
    const outage = (async () => {
      await sleep(DOWN_AFTER_MS);
      await kvServer.down("refuse");
      const downAt = performance.now();
      await sleep(DOWN_FOR_MS);
      const upAt = performance.now();
      await kvServer.up();
      return { downAt, upAt };
    })();
    const sent = await Promise.all(votes.map(async (vote, i) => {
      await sleep(started + i * SPACING_MS - performance.now());
      return await send(vote, urls[i % 2]);
    }));
    const { downAt, upAt } = await outage;

    // No answer waited for the database: whatever was in flight at the outage, or sent during
    // it, was answered before it came back.
    const caught = sent.filter((s) => s.answeredAt > downAt && s.sentAt < upAt);
    assert.ok(caught.length > 10, `${caught.length} votes met the outage`);
    for (const s of caught) {
      assert.ok(s.answeredAt < upAt, `a vote sent ${s.sentAt - downAt} ms into the outage waited`);
    }
    for (const s of sent) {
      assert.ok(
        s.status === 202 || (s.status === 503 && s.code === "kv_unavailable"),
        `${s.status} ${s.code}`,
      );
    }
    const refused = sent.filter((s) => s.status === 503);
    assert.ok(refused.length > 0, "the outage refused some votes");

    // Sent again once the database is back: accepted, or refused 409 if the first copy landed.
    const resent: Sent[] = [];
    for (const s of refused) {
      let answer: Sent;
      do answer = await send(s.vote, s.server); while (answer.status === 503);
      resent.push(answer);
    }
    for (const r of resent) {
      assert.ok(
        r.status === 202 || (r.status === 409 && r.code === "duplicate_tag"),
        `${r.status} ${r.code}`,
      );
    }

    const accepted = [...sent, ...resent].filter((s) => s.status === 202);
    const top = Math.max(...accepted.map((s) => s.blockId!));
    for (;;) {
      const status = await Promise.all(urls.map((url) => call(url, "GET", "/api/block/status")));
      if (status.every((s) => s.body.height >= top)) break;
      await sleep(100);
    }
    for (const s of accepted) {
      const proof = await call(s.server, "GET", `/api/block/id/${s.blockId}/vote/${s.voteId}`);
      assert.equal(proof.status, 200, JSON.stringify(proof.body));
      assert.equal(proof.body.vote.signature, s.vote.signature);
      assert.ok(proofVerifies(proof.body));
    }

    // Exactly once: every stored tag is in a sealed block, and the blocks hold nothing else.
    const tags = await Array.fromAsync(
      kv.list<{ voteId: string; height: number }>({ prefix: ["tag"] }),
    );
    assert.equal(tags.length, VOTES, "every vote stored once: one tag per voter");
    const { body } = await call(urls[0], "GET", "/api/blocks?from=0&limit=100");
    const sealedVotes = body.blocks.reduce((n: number, b: { size: number }) => n + b.size, 0);
    assert.equal(sealedVotes, VOTES, "every stored vote sealed, none twice");
    assert.equal(new Set(accepted.map((s) => s.voteId)).size, accepted.length);
    const tally = await call(urls[1], "GET", "/api/tally");
    assert.equal(tally.body.total, VOTES);

    const slowest = Math.max(...sent.map((s) => s.answeredAt - s.sentAt));
    console.log(
      `Outage of ${DOWN_FOR_MS} ms under ${VOTES} votes: ${
        sent.length - refused.length
      } answered ` +
        `202 and ${refused.length} answered 503 kv_unavailable at first; sent again, ` +
        `${resent.filter((r) => r.status === 202).length} answered 202 and ` +
        `${
          resent.filter((r) => r.status === 409).length
        } 409 (their first copy had landed after its 503); ` +
        `${accepted.length} votes answered 202 in all, ${sealedVotes} sealed; slowest answer ` +
        `${Math.round(slowest)} ms`,
    );
  } finally {
    kv.close();
    await Promise.all(processes.map((p) => p.stop()));
    await kvServer.close();
  }
});
