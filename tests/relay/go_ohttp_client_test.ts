// An Oblivious HTTP client that shares no code with Ringvote's (tests/go/ohttp_client: HPKE from
// Cloudflare's circl, its own Binary HTTP) goes through the relay process to a real server's
// gateway: it reads GET /api/rounds with the same JSON as a direct read, casts a vote that gets
// sealed, and a request it tampers with gets a 4xx. Skipped, with the reason in its name, where
// Go or golang-github-cloudflare-circl-dev is missing — except under CI=true.
import assert from "node:assert/strict";
import { buildGoProgram, goMissing } from "../helpers/go_program.ts";
import { sealCall, voteLength } from "../../lib/client/relay/ohttp_client.ts";
import { bytesToBase64 } from "../../lib/protocol/bytes.ts";
import { KEYS_PATH, parseKeyConfigs } from "../../lib/protocol/ohttp.ts";
import { makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { startRelay } from "./relay_process.ts";

const PROGRAM = new URL("../go/ohttp_client/", import.meta.url);
const CIRCL = "/usr/share/gocode/src/github.com/cloudflare/circl/hpke";
const CI = Deno.env.get("CI") === "true";

const reason = await goMissing(CIRCL, "golang-github-cloudflare-circl-dev");

type GoResult = { relay: number; status?: number; body?: string; length?: number; error?: string };

async function runGo(binary: string, job: unknown): Promise<GoResult[]> {
  const child = new Deno.Command(binary, { stdin: "piped", stdout: "piped", stderr: "piped" })
    .spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(job)));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  return new TextDecoder().decode(stdout).trim().split("\n").map((l) => JSON.parse(l));
}

Deno.test({
  name: reason === null
    ? "an independent Go client reads, votes and is refused a tampered request through the relay"
    : `an independent Go client through the relay (skipped: ${reason})`,
  ignore: reason !== null && !CI,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "ohttp-go-" });
    const server = await startServer({ env: { BLOCK_INTERVAL_MS: "250" } });
    let relay;
    try {
      const binary = await buildGoProgram(PROGRAM, dir, "ohttp_client");
      relay = await startRelay(server.url);
      const keys = new Uint8Array(await (await fetch(new URL(KEYS_PATH, relay.url))).arrayBuffer());
      const authority = new URL(server.url).host;
      // Key registration is direct: it is identified by design (protocol §7.3).
      const voters = makeVoters(3);
      for (const v of voters) {
        const res = await fetch(new URL("/api/pki/key", server.url), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ key: v.key }),
        });
        assert.equal(res.status, 201);
        await res.body?.cancel();
      }
      const vote = signedVote(voters[1], ringFor(voters[1], voters, 3), "Yes");
      const target = { config: parseKeyConfigs(keys)[0], scheme: "http" as const, authority };
      const padTo = voteLength(target, "/api/vote", []);
      const results = await runGo(binary, {
        relay: relay.url,
        keys: bytesToBase64(keys),
        scheme: "http",
        authority,
        calls: [
          { method: "GET", path: "/api/rounds" },
          { method: "POST", path: "/api/vote", body: JSON.stringify(vote), padTo },
          { method: "GET", path: "/api/rounds", tamper: true },
        ],
      });
      const direct = await (await fetch(new URL("/api/rounds", server.url))).json();
      assert.equal(results[0].relay, 200, JSON.stringify(results[0]));
      assert.equal(results[0].status, 200);
      assert.deepEqual(JSON.parse(results[0].body ?? ""), direct);
      assert.equal((results[0].length ?? 1) % 1024, 0);

      assert.equal(results[1].status, 202, JSON.stringify(results[1]));
      const { voteId, blockId } = JSON.parse(results[1].body ?? "");
      let sealed = 0;
      for (let i = 0; i < 200 && sealed !== 200; i++) {
        const res = await fetch(new URL(`/api/block/id/${blockId}/vote/${voteId}`, server.url));
        sealed = res.status;
        await res.body?.cancel();
        if (sealed !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(sealed, 200, "the vote cast through the relay is sealed in its block");

      assert.ok(results[2].relay >= 400 && results[2].relay < 500, JSON.stringify(results[2]));
      assert.equal(JSON.parse(results[2].body ?? "").error.code, "bad_encapsulation");

      // The project's own client reads the same through the same relay.
      const ours = await sealCall(target, { method: "GET", path: "/api/rounds" });
      const res = await fetch(relay.url, {
        method: "POST",
        headers: { "content-type": "message/ohttp-req" },
        body: ours.encapsulated.slice(),
      });
      const inner = await ours.open(new Uint8Array(await res.arrayBuffer()));
      assert.deepEqual(JSON.parse(new TextDecoder().decode(inner.body)), direct);
    } finally {
      await relay?.stop();
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
