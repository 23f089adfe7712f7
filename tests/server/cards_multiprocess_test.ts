// Two server processes on one Deno KV file race one card (protocol §2.11): each takes the card
// with a key of its own at the same moment, many times over; every time exactly one key is
// stored, the other is 409 card_used, and the directory and the audit agree.
import assert from "node:assert/strict";
import { createApiClient } from "../../lib/client/api_client.ts";
import { auditLedger } from "../../lib/client/audit/audit.ts";
import { withGroupRule } from "../../lib/client/audit/groups.ts";
import { call } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { cardBody, makeCards, setOf, voterKey } from "../helpers/cards.ts";

const TOKEN = "presenter-token-multiprocess-0123";

async function asPresenter(url: string, path: string, body: unknown) {
  const res = await fetch(new URL(path, url), {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  assert.ok(res.status < 300, JSON.stringify(answer));
  return answer;
}

Deno.test("two processes racing each card: one key per card, the other 409 card_used", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-cards-" });
  const env = { KV_PATH: `${dir}/ledger.kv`, ADMIN_TOKEN: TOKEN };
  const a = await startServer({ env });
  const b = await startServer({ env });
  try {
    const cards = makeCards(16);
    const set = setOf(cards);
    await asPresenter(a.url, "/api/cards", { keys: cards.map((c) => c.key) });
    // The round is started on one process, the set read by the other from KV.
    const { id } = await asPresenter(b.url, "/api/rounds", {
      question: "Race?",
      choices: ["Yes", "No"],
      cards: set.set,
    });
    const stored: string[] = [];
    for (const card of cards) {
      const keys = [voterKey(), voterKey()];
      const answers = await Promise.all(
        [a.url, b.url].map((url, i) =>
          call(url, "POST", `/api/rounds/${id}/pki/key`, cardBody(card, set.sha256, id, keys[i]))
        ),
      );
      const won = answers.filter((res) => res.status === 201);
      const lost = answers.filter((res) => res.status !== 201);
      assert.equal(won.length, 1, JSON.stringify(answers.map((r) => r.body)));
      assert.equal(lost[0].status, 409);
      assert.equal(lost[0].body.error.code, "card_used");
      stored.push(won[0].body.key);
    }
    const page = await call(a.url, "GET", `/api/rounds/${id}/pki/key/offset/0/limit/100`);
    assert.deepEqual(page.body.keys.map((k: { key: string }) => k.key).sort(), stored.sort());
    const report = await auditLedger(
      withGroupRule(createApiClient({ fetch, baseUrl: b.url, ledger: { round: id } }), id),
    );
    assert.equal(report.ok, true, JSON.stringify(report.failures));
    assert.deepEqual(report.cards, { set: set.set, count: 16, keys: 16, distinct: 16 });
  } finally {
    await a.stop();
    await b.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
