// The pages' card helpers (lib/client/cards/cards.ts, protocol §2.11) against the real app over
// real KV: a served set checked against the keys a browser made (a server that adds a card of its
// own is caught) and against the round's genesis; a card's number; a registration body a carded
// round accepts.
import assert from "node:assert/strict";
import {
  cardKeyText,
  cardNumber,
  cardRegistrationBody,
  checkRoundCardSet,
  checkServedCardSet,
} from "../../../lib/client/cards/cards.ts";
import { genesisBlock } from "../../../lib/protocol/chain.ts";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { call } from "../../helpers/ledger_fixtures.ts";
import { makeCards, setOf, voterKey } from "../../helpers/cards.ts";

Deno.test("a served card set is checked against the browser's keys and the round's genesis", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app } = await fullApp(kv, { currentTtlMs: 0 });
  const cards = makeCards(12);
  const keys = cards.map((c) => c.key);
  const set = setOf(cards);
  const post = (path: string, body: unknown) =>
    app.request(path, {
      method: "POST",
      headers: { authorization: `Bearer ${PRESENTER_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  await post("/api/cards", { keys });
  const served = (await call(app, "GET", `/api/cards/${set.set}`)).body;
  const checked = checkServedCardSet(served, keys);
  assert.ok(checked.ok);
  assert.equal(checked.sha256, set.sha256);
  // A server that adds a card of its own, rehashing honestly: not the browser's set.
  const extra = makeCards(1, 9)[0];
  const added = [...keys, extra.key];
  const padded = { ...setOf([...cards, extra]), keys: added };
  const caught = checkServedCardSet(padded, keys);
  assert.ok(!caught.ok && /1 card key this browser did not make/.test(caught.reason));
  // One that adds it without rehashing: the set does not hash to what it names.
  const lying = checkServedCardSet({ ...served, keys: added, count: 13 });
  assert.ok(!lying.ok && /does not hash/.test(lying.reason));
  assert.equal(checkServedCardSet({ nonsense: true }).ok, false);

  await post("/api/rounds", { question: "Q?", choices: [], cards: set.set });
  const { head_signature: _, ...genesis } =
    (await call(app, "GET", "/api/rounds/2/blocks?from=0&limit=1")).body.blocks[0];
  const round = checkRoundCardSet(genesis, served);
  assert.ok(round.ok);
  assert.equal(checkRoundCardSet(genesisBlock(1), served).ok, false, "a zero prev_hash");
  assert.equal(cardNumber(round, cards[6].bytes), 7);
  assert.equal(cardNumber(round, extra.bytes), null);
  assert.equal(cardKeyText(cards[6].bytes), cards[6].key);
  const body = cardRegistrationBody({
    voterKey: voterKey(),
    cardBytes: cards[6].bytes,
    setSha256: round.sha256,
    roundId: 2,
  });
  const res = await call(app, "POST", "/api/rounds/2/pki/key", body);
  assert.equal(res.status, 201);
});
