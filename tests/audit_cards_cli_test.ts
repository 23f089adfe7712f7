// `deno task audit URL --round N` on a carded round (protocol §2.11, §4.6), as a user runs it: a
// subprocess against the app served on a free loopback port. Twelve cards, ten keys admitted by ten
// of them, voting opened, every key voting: the audit passes and reports "10 keys from 10 distinct
// cards of 12", online and from the record it saves; a key the server slipped in without a card
// fails it, online and offline, with that finding.
import assert from "node:assert/strict";
import { sealNextBlock } from "../server/sealer.ts";
import { fullApp, PRESENTER_TOKEN } from "./helpers/app_fixture.ts";
import { call, makeVoters, signedVote } from "./helpers/ledger_fixtures.ts";
import { cardBody, makeCards, setOf } from "./helpers/cards.ts";

const AUDIT = new URL("../audit.ts", import.meta.url).pathname;
const TASK = ["--allow-net", "--allow-read", "--allow-write"];

async function audit(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...TASK, AUDIT, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test({
  name: "deno task audit URL --round N on a carded round: 10 keys from 10 distinct cards of 12",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "ringvote-cards-cli-" });
    using kv = await Deno.openKv(":memory:");
    const { app, rounds } = await fullApp(kv, { currentTtlMs: 0 });
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
    const url = `http://127.0.0.1:${server.addr.port}/`;
    const presenter = (path: string, body?: unknown) =>
      app.request(path, {
        method: "POST",
        headers: { authorization: `Bearer ${PRESENTER_TOKEN}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    try {
      const cards = makeCards(12);
      const set = setOf(cards);
      assert.equal((await presenter("/api/cards", { keys: cards.map((c) => c.key) })).status, 201);
      const started = await presenter("/api/rounds", {
        question: "Members?",
        choices: ["Yes", "No"],
        cards: set.set,
      });
      assert.deepEqual(await started.json(), { id: 2 });
      const voters = makeVoters(10);
      for (const [i, v] of voters.entries()) {
        const res = await call(
          app,
          "POST",
          "/api/rounds/2/pki/key",
          cardBody(cards[i], set.sha256, 2, v.key),
        );
        assert.equal(res.status, 201);
      }
      assert.equal((await presenter("/api/rounds/2/voting")).status, 200);
      for (const [i, v] of voters.entries()) {
        const ballot = signedVote(v, voters, i % 3 ? "Yes" : "No");
        assert.equal((await call(app, "POST", "/api/rounds/2/vote", ballot)).status, 202);
      }
      await sealNextBlock(await rounds.storeOf(2), Date.now());

      await t.step("online and from its record: exit 0 and the cards line", async () => {
        const run = await audit(url, "--round", "2", "--save", `${dir}/round2.ndjson`);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(run.stdout, /^ {2}cards {13}10 keys from 10 distinct cards of 12$/m);
        assert.match(run.stdout, /votes verified {4}10\n/);
        const offline = await audit(`${dir}/round2.ndjson`, "--round", "2");
        assert.equal(offline.code, 0, offline.stdout + offline.stderr);
        assert.match(offline.stdout, /10 keys from 10 distinct cards of 12/);
      });

      await t.step(
        "a key slipped in without a card: exit 1, card_missing, online and offline",
        async () => {
          const extra = makeVoters(1)[0];
          await kv.atomic()
            .set(["round", 2, "key", 11], { key: extra.key })
            .set(["round", 2, "keyid", extra.key], { id: 11 })
            .set(["round", 2, "cfg", "keys"], { total: 11 })
            .commit();
          const run = await audit(url, "--round", "2", "--save", `${dir}/lying.ndjson`);
          assert.equal(run.code, 1, run.stdout + run.stderr);
          assert.match(
            run.stdout,
            new RegExp(`key directory: key 11 \\(${extra.key}\\) carries no card`),
          );
          const saved = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
          const record = saved.find((name) => name.startsWith("lying"))!;
          const offline = await audit(`${dir}/${record}`, "--round", "2");
          assert.equal(offline.code, 1);
          assert.match(offline.stdout, /key 11 .* carries no card/);
        },
      );
    } finally {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
