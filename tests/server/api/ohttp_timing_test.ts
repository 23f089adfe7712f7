// The gateway's answer to a vote leaves no sooner than a floor after the vote arrived, so that the
// time its verification took (linear in its ring) does not show to the relay; other calls are not
// held. The gateway is fed a clock and a wait of the test's own: nothing here is timed.
import assert from "node:assert/strict";
import { sealCall, voteLength } from "../../../lib/client/relay/ohttp_client.ts";
import { parseKeyConfigs } from "../../../lib/protocol/ohttp.ts";
import { createGatewayApp, VOTE_ANSWER_FLOOR_MS } from "../../../server/api/ohttp.ts";
import { createGatewayKeys } from "../../../server/store/ohttp_key.ts";
import { withKv } from "../../helpers/kv.ts";

Deno.test(
  "a vote is answered at the floor after its arrival whatever its verification took; a read is not held",
  withKv(async (kv) => {
    let clock = 0;
    let verifying = 0;
    const waits: number[] = [];
    const app = createGatewayApp({
      keys: await createGatewayKeys(kv),
      // The application: a vote takes `verifying` ms of the clock; anything else answers at once.
      serve: (request) => {
        const { pathname } = new URL(request.url);
        if (pathname === "/api/vote") {
          clock += verifying;
          return Response.json({ voteId: "v", blockId: 1 }, { status: 202 });
        }
        return Response.json({ error: { code: "not_found", message: "" } }, { status: 404 });
      },
      now: () => clock,
      sleep: (ms) => {
        waits.push(ms);
        clock += ms;
        return Promise.resolve();
      },
    });
    const keys = await app.request("http://localhost/.well-known/ohttp-gateway");
    const config = parseKeyConfigs(new Uint8Array(await keys.arrayBuffer()))[0];
    const target = { config, scheme: "http" as const, authority: "localhost" };
    const voteBytes = voteLength(target, "/api/vote", []);
    const send = async (call: Parameters<typeof sealCall>[1]) => {
      const sealed = await sealCall(target, call, {
        voteBytes: call.method === "POST" ? voteBytes : undefined,
      });
      const res = await app.request("http://localhost/api/ohttp", {
        method: "POST",
        headers: { "content-type": "message/ohttp-req" },
        body: sealed.encapsulated.slice(),
      });
      assert.equal(res.status, 200);
      return (await sealed.open(new Uint8Array(await res.arrayBuffer()))).status;
    };
    const answeredAfter = async (ms: number) => {
      verifying = ms;
      const start = clock;
      assert.equal(await send({ method: "POST", path: "/api/vote", body: "{}" }), 202);
      return clock - start;
    };
    // A small ring's vote and a large ring's are answered at the same time after they arrived.
    assert.equal(await answeredAfter(20), VOTE_ANSWER_FLOOR_MS);
    assert.equal(await answeredAfter(250), VOTE_ANSWER_FLOOR_MS);
    assert.deepEqual(waits, [VOTE_ANSWER_FLOOR_MS - 20, VOTE_ANSWER_FLOOR_MS - 250]);
    // Past the floor nothing is added; a read is never held.
    assert.equal(await answeredAfter(VOTE_ANSWER_FLOOR_MS + 5), VOTE_ANSWER_FLOOR_MS + 5);
    assert.equal(await send({ method: "GET", path: "/api/tag/" + "0".repeat(64) }), 404);
    assert.equal(waits.length, 2);
  }),
);
