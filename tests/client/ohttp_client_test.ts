// The client's sealing of API calls for the gateway: a key configuration accepted only with its
// pinned hash, every message a multiple of 1,024 bytes, and every vote of a round one length
// whatever its choice and ring.
import assert from "node:assert/strict";
import { isVotePath, pinnedTarget, sealCall, voteLength } from "../../lib/client/relay/ohttp_client.ts";
import { decodeRequest, encodeResponse, pad } from "../../lib/protocol/bhttp.ts";
import {
  decapsulateRequest,
  encapsulateResponse,
  encodeKeyConfigs,
  generateGatewayKey,
  keyConfigsHash,
} from "../../lib/protocol/ohttp.ts";
import { MAX_RING } from "../../lib/protocol/ring_signature.ts";
import { MAX_PAYLOAD_CODE_POINTS } from "../../lib/protocol/schemas.ts";
import { VOTE_BOUNDS } from "../../lib/protocol/vote_padding.ts";
import { makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";

const key = await generateGatewayKey(9);
const keys = encodeKeyConfigs([key.config]);
const target = pinnedTarget(keys, keyConfigsHash(keys), "http://192.168.1.20:8000")!;

Deno.test("a key configuration is taken only with the hash the presenter's code pinned", async () => {
  assert.deepEqual(target, { config: key.config, scheme: "http", authority: "192.168.1.20:8000" });
  const other = encodeKeyConfigs([(await generateGatewayKey(9)).config]);
  assert.equal(pinnedTarget(other, keyConfigsHash(keys), "http://192.168.1.20:8000"), null);
  assert.equal(pinnedTarget(keys, keyConfigsHash(keys), "https://vote.example")?.scheme, "https");
});

Deno.test("every vote of a round has one length, whatever its choice and ring", async () => {
  const path = "/api/rounds/2/vote";
  const choices = ["Yes", "No", "Abstain"];
  const bytes = voteLength(target, path, choices);
  const voters = makeVoters(8);
  const lengths = new Set<number>();
  for (const [size, choice] of [[2, "Yes"], [8, "Abstain"], [5, "No"]] as const) {
    const vote = signedVote(voters[0], ringFor(voters[0], voters, size), choice);
    const sealed = await sealCall(target, { method: "POST", path, body: JSON.stringify(vote) }, {
      voteBytes: bytes,
    });
    lengths.add(sealed.encapsulated.length);
    const opened = await decapsulateRequest(key, sealed.encapsulated);
    assert.equal(opened.request.length, bytes);
    const inner = decodeRequest(opened.request);
    assert.deepEqual(inner.headers, [["content-type", "application/json"]]);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(inner.content)), vote);
  }
  assert.equal(lengths.size, 1);
  assert.ok(voteLength(target, path, []) > bytes, "a free-text vote is padded further");
  await assert.rejects(
    sealCall(target, { method: "POST", path, body: "x".repeat(bytes) }, { voteBytes: bytes }),
    RangeError,
  );
});

Deno.test("a read is a padded GET with no header, and its answer opens", async () => {
  const sealed = await sealCall(target, { method: "GET", path: "/api/rounds" });
  const opened = await decapsulateRequest(key, sealed.encapsulated);
  assert.equal(opened.request.length, 1024);
  const inner = decodeRequest(opened.request);
  assert.deepEqual([inner.method, inner.path, inner.headers.length], ["GET", "/api/rounds", 0]);
  const body = new TextEncoder().encode('{"current":1}');
  const answer = pad(encodeResponse({ status: 404, headers: [], content: body }));
  const result = await sealed.open(await encapsulateResponse(opened.context, answer));
  assert.equal(result.status, 404);
  assert.deepEqual(result.body, body);
});

Deno.test("vote paths", () => {
  assert.ok(isVotePath("/api/vote") && isVotePath("/api/rounds/12/vote"));
  assert.ok(!isVotePath("/api/votes") && !isVotePath("/api/rounds/x/vote"));
});

Deno.test("the vote length's bounds are the protocol's", () => {
  assert.deepEqual(VOTE_BOUNDS, { ring: MAX_RING, payloadCodePoints: MAX_PAYLOAD_CODE_POINTS });
});
