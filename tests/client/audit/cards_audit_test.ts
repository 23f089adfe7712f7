// The audit of a carded round (protocol §2.11, §4.6) against the real app over real KV: an honest
// round passes with "10 keys from 10 distinct cards of 12", online and from its election record;
// a server that lies — a key without a card, a card key not in the set, a bad signature, one card
// for two keys, a set that is not the one the genesis commits to — fails with its typed finding,
// through the command line's client and through the record it writes.
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { auditLedger, type AuditReport } from "../../../lib/client/audit/audit.ts";
import { recordWriter } from "../../../lib/client/audit/election_record.ts";
import { auditRecord } from "../../../lib/client/audit/election_record_source.ts";
import { withGroupRule } from "../../../lib/client/audit/groups.ts";
import { formatReport } from "../../../lib/client/audit/report_text.ts";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { call } from "../../helpers/ledger_fixtures.ts";
import { cardBody, makeCards, setOf, type TestCard, voterKey } from "../../helpers/cards.ts";
import { kindsOf } from "../../helpers/audit_findings.ts";
import { checkCardedGenesis } from "../../../lib/client/audit/cards.ts";
import { describeCardSet } from "../../../lib/protocol/cards.ts";
import { bytesToBase64url } from "../../../lib/protocol/bytes.ts";
import { genesisBlock } from "../../../lib/protocol/chain.ts";

const ROUND = 2;
type App = Awaited<ReturnType<typeof fullApp>>["app"];

async function presenter(app: App, path: string, body: unknown) {
  const res = await app.request(path, {
    method: "POST",
    headers: { authorization: `Bearer ${PRESENTER_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.ok(res.status < 300, `${path}: ${res.status} ${await res.clone().text()}`);
  return await res.json();
}

/** A carded round 2 of 12 cards, 10 of which admitted a key through the API. */
async function cardedRound(kv: Deno.Kv) {
  const { app } = await fullApp(kv, { currentTtlMs: 0 });
  const cards = makeCards(12);
  const set = setOf(cards);
  await presenter(app, "/api/cards", { keys: cards.map((c) => c.key) });
  await presenter(app, "/api/rounds", {
    question: "Members?",
    choices: ["Yes", "No"],
    cards: set.set,
  });
  for (const card of cards.slice(0, 10)) {
    const res = await call(
      app,
      "POST",
      `/api/rounds/${ROUND}/pki/key`,
      cardBody(card, set.sha256, ROUND, voterKey()),
    );
    assert.equal(res.status, 201);
  }
  return { app, cards, set };
}

/** The lying server writes key `id` straight into its database, past every check of its own. */
async function forceKey(kv: Deno.Kv, id: number, key: string, card?: { key: string; sig: string }) {
  const at = (...parts: Deno.KvKeyPart[]) => ["round", ROUND, ...parts];
  await kv.atomic()
    .set(at("key", id), card ? { key, card } : { key })
    .set(at("keyid", key), { id })
    .set(at("cfg", "keys"), { total: id })
    .commit();
}

/** The audit the command line runs (`deno task audit URL --round 2`), and of the record it saves. */
async function auditBoth(app: App, lie: (api: Api) => Api = (api) => api) {
  const client = lie(createApiClient({ fetch: app.request, ledger: { round: ROUND } }));
  const online = await auditLedger(withGroupRule(client, ROUND));
  const parts: string[] = [];
  const writer = recordWriter(withGroupRule(client, ROUND), {
    write: (text) => void parts.push(text),
    restart: () => void (parts.length = 0),
  });
  await auditLedger(writer.source);
  await writer.finish();
  const text = parts.join("");
  const bytes = new TextEncoder().encode(text);
  const offline = await auditRecord(new Blob([bytes]).stream());
  return { online, offline, text };
}

type Api = ReturnType<typeof createApiClient>;

function assertOnly(report: AuditReport, kind: string) {
  assert.equal(report.ok, false);
  assert.deepEqual([...new Set(kindsOf(report))], [kind], formatReport("test", report));
}

Deno.test("an honest carded round passes: 10 keys from 10 distinct cards of 12, online and offline", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app, set } = await cardedRound(kv);
  const { online, offline, text } = await auditBoth(app);
  for (const report of [online, offline]) {
    assert.equal(report.ok, true, formatReport("test", report));
    assert.deepEqual(report.cards, { set: set.set, count: 12, keys: 10, distinct: 10 });
    assert.match(formatReport("test", report), /cards +10 keys from 10 distinct cards of 12/);
  }
  const header = JSON.parse(text.split("\n")[0]);
  assert.equal(header.cards.sha256, set.sha256);
  assert.equal(header.cards.round, ROUND);
  assert.equal(header.cards.keys.length, 12);
  const keyLine = JSON.parse(text.split("\n").find((line) => line.includes('"kind":"key"'))!);
  assert.match(keyLine.card.sig, /^[A-Za-z0-9_-]{86}$/);
});

Deno.test("a key without a card fails the audit with card_missing", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app } = await cardedRound(kv);
  await forceKey(kv, 11, voterKey());
  const { online, offline } = await auditBoth(app);
  assertOnly(online, "card_missing");
  assertOnly(offline, "card_missing");
  assert.match(formatReport("t", online), /key 11 \([0-9a-f]{64}\) carries no card/);
});

Deno.test("a card key the server minted, not in the set, fails the audit with card_not_in_set", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app, set } = await cardedRound(kv);
  const key = voterKey();
  const minted = makeCards(1, 77)[0];
  await forceKey(kv, 11, key, cardBody(minted, set.sha256, ROUND, key).card);
  const { online, offline } = await auditBoth(app);
  assertOnly(online, "card_not_in_set");
  assertOnly(offline, "card_not_in_set");
});

Deno.test("a card signature that does not admit its key fails the audit with card_signature", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app, set, cards } = await cardedRound(kv);
  const key = voterKey();
  // Card 11 is unused: the server takes its key and a signature it made for another voter key.
  const card = cardBody(cards[10], set.sha256, ROUND, voterKey()).card;
  await forceKey(kv, 11, key, card);
  const { online, offline } = await auditBoth(app);
  assertOnly(online, "card_signature");
  assertOnly(offline, "card_signature");
});

Deno.test("one card admitting two keys fails the audit with card_reused", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app, set, cards } = await cardedRound(kv);
  const key = voterKey();
  // The holder of card 1 signs a second key, and the server takes it.
  await forceKey(kv, 11, key, cardBody(cards[0], set.sha256, ROUND, key).card);
  const { online, offline } = await auditBoth(app);
  assertOnly(online, "card_reused");
  assertOnly(offline, "card_reused");
  assert.match(formatReport("t", online), /admitted key 1 and key 11 too/);
  assert.deepEqual(online.cards, { set: set.set, count: 12, keys: 11, distinct: 10 });
});

Deno.test("a set served with a card added, or another set named, fails the audit with cards_changed", async (t) => {
  using kv = await Deno.openKv(":memory:");
  const { app, set, cards } = await cardedRound(kv);
  const extra: TestCard = makeCards(1, 88)[0];
  await t.step("the set served with a card of the server's own in place of card 12", async () => {
    const lie = (api: Api): Api => ({
      ...api,
      cardSet: async (id) => {
        const served = await api.cardSet(id);
        return { ...served, keys: [...served.keys.slice(0, 11), extra.key] };
      },
    });
    const { online, offline } = await auditBoth(app, lie);
    assertOnly(online, "cards_changed");
    assertOnly(offline, "cards_changed");
    assert.match(formatReport("t", online), /does not hash to the sha256 it names/);
  });
  await t.step(
    "the round listing another set, consistent in itself, holding one more card",
    async () => {
      const other = [...cards, extra];
      const posted = await presenter(app, "/api/cards", { keys: other.map((c) => c.key) });
      assert.notEqual(posted.set, set.set);
      const lie = (api: Api): Api => ({
        ...api,
        rounds: async () => {
          const list = await api.rounds();
          return {
            ...list,
            rounds: list.rounds.map((r) => r.id === ROUND ? { ...r, cards: posted.set } : r),
          };
        },
      });
      const { online, offline } = await auditBoth(app, lie);
      assertOnly(online, "cards_changed");
      assertOnly(offline, "cards_changed");
      assert.match(formatReport("t", online), /genesis does not commit to card set/);
    },
  );
  await t.step("the round listed as open: its genesis is no open round's", async () => {
    const lie = (api: Api): Api => ({
      ...api,
      rounds: async () => {
        const list = await api.rounds();
        return {
          ...list,
          rounds: list.rounds.map(({ cards: _, ...r }) => r),
        };
      },
    });
    const { online, offline } = await auditBoth(app, lie);
    assertOnly(online, "genesis");
    assertOnly(offline, "genesis");
  });
});

Deno.test("a record whose card lines were taken out fails offline", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app } = await cardedRound(kv);
  const { text } = await auditBoth(app);
  const stripped = text.split("\n").map((line) => {
    if (!line.includes('"kind":"key"')) return line;
    const { card: _, ...rest } = JSON.parse(line);
    return JSON.stringify(rest);
  }).join("\n");
  const report = await auditRecord(new Blob([stripped]).stream());
  assertOnly(report, "card_missing");
});

Deno.test("a genesis committing to a set no presenter makes fails with cards_changed", () => {
  const cards = makeCards(12, 7);
  const sets = {
    "a card repeated to pad the count": [...cards.slice(0, 11), cards[10]],
    "fewer than 8 cards": cards.slice(0, 7),
    "a key that is no card key (the identity)": [
      ...cards.slice(0, 11).map((c) => c.pair.publicKey),
      Uint8Array.of(1, ...new Uint8Array(31)),
    ],
  };
  for (const [name, members] of Object.entries(sets)) {
    const keys = members.map((m) => m instanceof Uint8Array ? m : m.pair.publicKey);
    const described = describeCardSet(keys);
    const set = { ...described, keys: keys.map((key) => bytesToBase64url(key)) };
    const found: string[] = [];
    checkCardedGenesis(
      genesisBlock(1767225600000, described.sha256),
      { round: ROUND, set },
      (finding) => found.push(finding.kind),
    );
    assert.deepEqual(found, ["cards_changed"], name);
  }
  const honest = setOf(cards);
  const found: string[] = [];
  checkCardedGenesis(
    genesisBlock(1767225600000, honest.sha256),
    { round: ROUND, set: { ...honest, keys: cards.map((c) => c.key) } },
    (finding) => found.push(finding.kind),
  );
  assert.deepEqual(found, []);
});
