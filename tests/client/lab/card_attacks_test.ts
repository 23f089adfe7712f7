// The attack lab's card attacks (protocol §4.7, §2.11) sent for real to the carded practice
// directory of the whole app over real KV: extra keys without a card are 403 card_required, a
// practice card's second key is 409 card_used; the practice directory's genesis commits to the
// practice set, and a reset of the practice ledger starts it afresh.
import assert from "node:assert/strict";
import { CARD_ATTACKS, runCardAttack } from "../../../lib/client/lab/card_attacks.ts";
import { bytesToBase64url, bytesToHex } from "../../../lib/protocol/bytes.ts";
import { cardKeyPair, cardSetHash, practiceCards } from "../../../lib/protocol/cards.ts";
import { fullApp } from "../../helpers/app_fixture.ts";
import { call } from "../../helpers/ledger_fixtures.ts";

Deno.test("each card attack is refused with the answer its card expects, and stores no extra key", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app } = await fullApp(kv);
  const fetch = (url: string, init: RequestInit) => app.request(url, init);
  for (const attack of CARD_ATTACKS) {
    const run = await runCardAttack(fetch, attack.id);
    assert.equal(run.outcome, "refused", JSON.stringify(run));
    assert.equal(run.status, attack.status);
    assert.equal(run.code, attack.code);
  }
  const page = await call(app, "GET", "/api/lab/cards/pki/key/offset/0/limit/100");
  assert.equal(page.body.total, 1, "the card's first key only");
  const practice = practiceCards().map(({ bytes }) => cardKeyPair(bytes).publicKey);
  assert.equal(page.body.keys[0].card.key, bytesToBase64url(practice[0]));
  // Sent again, the first key on card 1 is refused too: the card is used.
  const again = await runCardAttack(fetch, "card-used-twice");
  assert.deepEqual(again.steps.map((s) => s.code), ["card_used", "card_used"]);
  // Another practice card admits one key.
  const other = await runCardAttack(fetch, "card-used-twice", { card: 3 });
  assert.deepEqual(other.steps.map((s) => s.status), [201, 409]);
  const blocks = await call(app, "GET", "/api/lab/cards/blocks?from=0&limit=1");
  assert.equal(blocks.body.blocks[0].prev_hash, bytesToHex(cardSetHash(practice)));
  // The election's directory and the practice ledger's are untouched.
  assert.equal((await call(app, "GET", "/api/pki/key/offset/0/limit/1")).body.total, 0);
  assert.equal((await call(app, "GET", "/api/lab/pki/key/offset/0/limit/1")).body.total, 0);
});
