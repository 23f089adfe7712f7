// Join cards over HTTP (protocol §2.11, §4.9), over the whole app and real in-memory Deno KV: a
// set posted once (1,000 cards in one request, stored in chunks), read back, named by a round
// whose genesis commits to it; registration in a carded round with every refusal in its order,
// the card bound with the key, and the attacks of the attack model each refused.
import assert from "node:assert/strict";
import { bytesToBase64url } from "../../../lib/protocol/bytes.ts";
import { genesisBlock } from "../../../lib/protocol/chain.ts";
import { CardSet, RoundCards } from "../../../lib/protocol/card_schemas.ts";
import { KeyPage, KeyRecord, RoundList } from "../../../lib/protocol/schemas.ts";
import { hostilePoints } from "../../helpers/ledger_fixtures.ts";
import { hexToBytes } from "../../../lib/protocol/bytes.ts";
import { CARD_CHUNK, cardKeys } from "../../../server/store/cards.ts";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { createStore } from "../../../server/store/mod.ts";
import { type Answer, call } from "../../helpers/ledger_fixtures.ts";
import { cardBody, makeCards, setOf, voterKey } from "../../helpers/cards.ts";

type App = Awaited<ReturnType<typeof fullApp>>["app"];

async function asPresenter(app: App, method: string, path: string, body?: unknown) {
  const res = await app.request(path, {
    method,
    headers: { authorization: `Bearer ${PRESENTER_TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() } as Answer;
}

function assertError(res: Answer, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code, JSON.stringify(res.body));
}

/** The app over a fresh KV, a set of `n` cards posted, and a carded round started with it. */
async function cardedRound(n = 12, extra: Record<string, unknown> = {}) {
  const kv = await Deno.openKv(":memory:");
  const parts = await fullApp(kv, { currentTtlMs: 0 });
  const cards = makeCards(n);
  const set = setOf(cards);
  const posted = await asPresenter(parts.app, "POST", "/api/cards", {
    keys: cards.map((c) => c.key),
  });
  assert.equal(posted.status, 201, JSON.stringify(posted.body));
  const started = await asPresenter(parts.app, "POST", "/api/rounds", {
    question: "Members only?",
    choices: ["Yes", "No"],
    cards: set.set,
    ...extra,
  });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  const round: number = started.body.id;
  const register = (body: unknown) => call(parts.app, "POST", `/api/rounds/${round}/pki/key`, body);
  return { kv, ...parts, cards, set, round, register };
}

Deno.test("POST /api/cards: 201 with {set, count, sha256}, 200 again, read back in card order", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { app } = await fullApp(kv);
    const cards = makeCards(40);
    const keys = cards.map((c) => c.key);
    const expected = setOf(cards);
    const unauthorized = await call(app, "POST", "/api/cards", { keys });
    assertError(unauthorized, 401, "unauthorized");
    const first = await asPresenter(app, "POST", "/api/cards", { keys });
    assert.equal(first.status, 201);
    assert.deepEqual(first.body, expected);
    const again = await asPresenter(app, "POST", "/api/cards", { keys });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, expected);
    const read = await call(app, "GET", `/api/cards/${expected.set}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, { ...expected, keys });
    assert.ok(CardSet.safeParse(read.body).success);
    // Another process on the same database reads it from KV, not from memory.
    const other = await fullApp(kv);
    assert.deepEqual((await call(other.app, "GET", `/api/cards/${expected.set}`)).body, read.body);
    for (const set of ["0000000000000000", "nothex", expected.set.toUpperCase()]) {
      assertError(await call(app, "GET", `/api/cards/${set}`), 404, "unknown_cards");
    }
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/cards refuses counts outside 8–1,000, duplicates and keys that are not card keys", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { app } = await fullApp(kv);
    const keys = makeCards(9).map((c) => c.key);
    const hostile = Object.values(hostilePoints()).map((hex) =>
      bytesToBase64url(hexToBytes(hex, 32))
    );
    const bodies: unknown[] = [
      { keys: keys.slice(0, 7) },
      { keys: [...keys.slice(0, 8), keys[0]] },
      { keys: [...keys.slice(0, 8), keys[0].slice(1)] },
      { keys: [...keys.slice(0, 8), `${keys[8].slice(0, 42)}=`] },
      ...hostile.map((key) => ({ keys: [...keys.slice(0, 8), key] })),
      { keys: makeCards(1001, 2).map((c) => c.key) },
      { keys: "many" },
      {},
    ];
    for (const body of bodies) {
      const res = await asPresenter(app, "POST", "/api/cards", body);
      assertError(res, 400, "invalid_request");
      assert.ok(res.body.error.message.length > 10);
    }
    const stored: Deno.KvKey[] = [];
    for await (const entry of kv.list({ prefix: ["cards"] })) stored.push(entry.key);
    assert.deepEqual(stored, [], "a refused set stores nothing");
  } finally {
    kv.close();
  }
});

Deno.test("1,000 cards fit one request within the 64 KiB body limit and are stored in chunks", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { app } = await fullApp(kv);
    const cards = makeCards(1000, 3);
    const keys = cards.map((c) => c.key);
    const body = JSON.stringify({ keys });
    assert.ok(body.length < 64 * 1024, `${body.length} bytes`);
    const res = await asPresenter(app, "POST", "/api/cards", { keys });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const { set } = res.body;
    let chunks = 0;
    for await (const entry of kv.list<Uint8Array>({ prefix: ["cards", set, "chunk"] })) {
      assert.ok(entry.value.length <= CARD_CHUNK * 32 && entry.value.length < 65_536);
      chunks++;
    }
    assert.equal(chunks, Math.ceil(1000 / CARD_CHUNK));
    assert.ok((await kv.get(cardKeys.head(set))).value);
    const fresh = await fullApp(kv);
    const read = await call(fresh.app, "GET", `/api/cards/${set}`);
    assert.deepEqual(read.body.keys, keys);
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/rounds with cards: unknown set and minVoters above the count refused; the genesis commits to the set", async () => {
  const { kv, app, set, round, cards } = await cardedRound(9);
  try {
    const unknown = await asPresenter(app, "POST", "/api/rounds", {
      question: "Q?",
      choices: [],
      cards: "0123456789abcdef",
    });
    assertError(unknown, 400, "invalid_request");
    const tooMany = await asPresenter(app, "POST", "/api/rounds", {
      question: "Q?",
      choices: [],
      cards: set.set,
      minVoters: 10,
    });
    assertError(tooMany, 400, "invalid_request");
    assert.match(tooMany.body.error.message, /9 cards/);
    const malformed = await asPresenter(app, "POST", "/api/rounds", {
      question: "Q?",
      choices: [],
      cards: "xyz",
    });
    assertError(malformed, 400, "invalid_request");

    const { head_signature: _, ...genesis } =
      (await call(app, "GET", `/api/rounds/${round}/blocks?from=0&limit=1`)).body.blocks[0];
    assert.equal(genesis.prev_hash, set.sha256);
    assert.deepEqual(genesis, genesisBlock(genesis.timestamp, set.sha256));
    const list = (await call(app, "GET", "/api/rounds")).body;
    assert.ok(RoundList.safeParse(list).success);
    assert.equal(list.rounds.find((r: { id: number }) => r.id === round).cards, set.set);
    assert.equal(list.rounds[0].cards, undefined, "round 1 lists no cards");
    const roundCards = await call(app, "GET", `/api/rounds/${round}/cards`);
    assert.deepEqual(roundCards.body, { ...set, used: 0 });
    assert.ok(RoundCards.safeParse(roundCards.body).success);
    assertError(await call(app, "GET", "/api/rounds/1/cards"), 404, "no_cards");
    assertError(await call(app, "GET", "/api/rounds/99/cards"), 404, "unknown_round");
    // An open round after it: zero prev_hash, no cards, and a card field is refused.
    const open = await asPresenter(app, "POST", "/api/rounds", { question: "Open?", choices: [] });
    const openId = open.body.id;
    const openGenesis =
      (await call(app, "GET", `/api/rounds/${openId}/blocks?from=0&limit=1`)).body.blocks[0];
    assert.equal(openGenesis.prev_hash, "0".repeat(64));
    assertError(await call(app, "GET", `/api/rounds/${openId}/cards`), 404, "no_cards");
    const key = voterKey();
    const withCard = cardBody(cards[0], set.sha256, openId, key);
    assertError(
      await call(app, "POST", `/api/rounds/${openId}/pki/key`, withCard),
      400,
      "invalid_request",
    );
    const plain = await call(app, "POST", `/api/rounds/${openId}/pki/key`, { key });
    assert.equal(plain.status, 201);
    assert.deepEqual(Object.keys(plain.body).sort(), ["id", "key", "total"]);
  } finally {
    kv.close();
  }
});

Deno.test("carded registration: each refusal in its order, the card shown in the directory, a retry answered the same", async () => {
  const { kv, app, set, round, cards, register } = await cardedRound(12);
  try {
    const key = voterKey();
    assertError(await register({ key }), 403, "card_required");
    const stranger = makeCards(1, 99)[0];
    assertError(await register(cardBody(stranger, set.sha256, round, key)), 403, "card_unknown");
    const forSomeoneElse = cardBody(cards[0], set.sha256, round, voterKey());
    assertError(
      await register({ key, card: forSomeoneElse.card }),
      400,
      "card_signature",
    );
    const good = cardBody(cards[0], set.sha256, round, key).card;
    assertError(
      await register({ key, card: { ...good, sig: good.sig.slice(1) } }),
      400,
      "card_signature",
    );
    assertError(await register({ key, card: { ...good, key: "x" } }), 403, "card_unknown");
    assertError(await register({ key, card: "a card" }), 400, "invalid_request");
    const otherRound = cardBody(cards[0], set.sha256, round + 1, key);
    assertError(await register(otherRound), 400, "card_signature");
    const otherSet = cardBody(cards[0], "ab".repeat(32), round, key);
    assertError(await register(otherSet), 400, "card_signature");
    const body = cardBody(cards[0], set.sha256, round, key);
    const first = await register(body);
    assert.equal(first.status, 201);
    assert.deepEqual(first.body, { id: 1, key, total: 1 });
    // The answer was lost: the same card and key again get the first answer again.
    const second = await register(body);
    assert.equal(second.status, 201);
    assert.deepEqual(second.body, first.body);
    // The same key with another card: the key is registered already.
    const sameKeyOtherCard = await register(cardBody(cards[1], set.sha256, round, key));
    assertError(sameKeyOtherCard, 409, "duplicate_key");
    // The same card with another key: used.
    assertError(
      await register(cardBody(cards[0], set.sha256, round, voterKey())),
      409,
      "card_used",
    );
    const page = (await call(app, "GET", `/api/rounds/${round}/pki/key/offset/0/limit/10`)).body;
    assert.ok(KeyPage.safeParse(page).success);
    assert.deepEqual(page.keys, [{ id: 1, key, card: body.card }]);
    const byId = (await call(app, "GET", `/api/rounds/${round}/pki/key/id/1`)).body;
    assert.ok(KeyRecord.safeParse(byId).success);
    assert.deepEqual(byId, { id: 1, key, total: 1, card: body.card });
    assert.equal((await call(app, "GET", `/api/rounds/${round}/cards`)).body.used, 1);
  } finally {
    kv.close();
  }
});

Deno.test("attack: 20 keys without a card are all refused 403 card_required, none stored", async () => {
  const { kv, app, round, register } = await cardedRound();
  try {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => register({ key: voterKey() })),
    );
    for (const res of answers) assertError(res, 403, "card_required");
    const page = (await call(app, "GET", `/api/rounds/${round}/pki/key/offset/0/limit/10`)).body;
    assert.equal(page.total, 0);
  } finally {
    kv.close();
  }
});

Deno.test("attack: one card posted with 20 keys at once stores one key; 19 are 409 card_used", async () => {
  const { kv, app, set, round, cards, register } = await cardedRound();
  try {
    const keys = Array.from({ length: 20 }, () => voterKey());
    const answers = await Promise.all(
      keys.map((key) => register(cardBody(cards[3], set.sha256, round, key))),
    );
    const stored = answers.filter((res) => res.status === 201);
    assert.equal(stored.length, 1);
    const refused = answers.filter((res) => res.status !== 201);
    assert.equal(refused.length, 19);
    for (const res of refused) assertError(res, 409, "card_used");
    const page = (await call(app, "GET", `/api/rounds/${round}/pki/key/offset/0/limit/30`)).body;
    assert.deepEqual(page.keys.map((k: { key: string }) => k.key), [stored[0].body.key]);
  } finally {
    kv.close();
  }
});

Deno.test("attack: a card key not in the set, and a forged signature, are refused and store nothing", async () => {
  const { kv, app, set, round, cards, register } = await cardedRound();
  try {
    const key = voterKey();
    // A key the server might mint: valid, signing correctly, but not in the committed set.
    const minted = makeCards(1, 7)[0];
    assertError(await register(cardBody(minted, set.sha256, round, key)), 403, "card_unknown");
    // A listed card key with a signature made by another key.
    const forged = cardBody(minted, set.sha256, round, key).card;
    assertError(
      await register({ key, card: { key: cards[2].key, sig: forged.sig } }),
      400,
      "card_signature",
    );
    // A listed card key with s + L: the same signature in another form.
    const honest = cardBody(cards[2], set.sha256, round, key).card;
    const sig = hexToBytes(
      Array.from(
        atob(honest.sig.replace(/-/g, "+").replace(/_/g, "/")),
        (c) => c.charCodeAt(0).toString(16).padStart(2, "0"),
      ).join(""),
      64,
    );
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i]);
    s += 2n ** 252n + 27742317777372353535851937790883648493n;
    for (let i = 32; i < 64; i++, s >>= 8n) sig[i] = Number(s & 0xffn);
    assertError(
      await register({ key, card: { key: cards[2].key, sig: bytesToBase64url(sig) } }),
      400,
      "card_signature",
    );
    const page = (await call(app, "GET", `/api/rounds/${round}/pki/key/offset/0/limit/10`)).body;
    assert.equal(page.total, 0);
    // The honest admission still goes through.
    assert.equal((await register({ key, card: honest })).status, 201);
  } finally {
    kv.close();
  }
});

Deno.test("attack: a dozen registrations from one address with mistyped or unknown cards, none locked out", async () => {
  const { kv, set, round, cards, register } = await cardedRound();
  try {
    const strangers = makeCards(12, 55);
    for (const [i, stranger] of strangers.entries()) {
      const key = voterKey();
      const res = await register(cardBody(stranger, set.sha256, round, key));
      assertError(res, 403, "card_unknown");
      if (i % 3 === 0) assertError(await register({ key }), 403, "card_required");
    }
    const key = voterKey();
    const res = await register(cardBody(cards[5], set.sha256, round, key));
    assert.equal(res.status, 201, "the same address then joins with a listed card");
  } finally {
    kv.close();
  }
});

Deno.test("cards admitted all at once, then a second carded round of the same set admits them again", async () => {
  const { kv, app, set, round, cards, register } = await cardedRound(8);
  try {
    // All at once: a process commits them four keys and their cards at a time.
    const first = await Promise.all(
      cards.map((card) => register(cardBody(card, set.sha256, round, voterKey()))),
    );
    assert.deepEqual(first.map((res) => res.status), cards.map(() => 201));
    assert.deepEqual(first.map((res) => res.body.id).sort((a, b) => a - b), [
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8,
    ]);
    const next = await asPresenter(app, "POST", "/api/rounds", {
      question: "Again?",
      choices: [],
      cards: set.set,
    });
    const id = next.body.id;
    // A signature for the round before does not carry over.
    const key = voterKey();
    const old = cardBody(cards[0], set.sha256, round, key);
    assertError(await call(app, "POST", `/api/rounds/${id}/pki/key`, old), 400, "card_signature");
    for (const card of cards) {
      const res = await call(
        app,
        "POST",
        `/api/rounds/${id}/pki/key`,
        cardBody(card, set.sha256, id, voterKey()),
      );
      assert.equal(res.status, 201);
    }
    assert.equal((await call(app, "GET", `/api/rounds/${id}/cards`)).body.used, 8);
  } finally {
    kv.close();
  }
});

Deno.test("a carded start racing an open start for one id leaves the id to the genesis made first", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { app } = await fullApp(kv, { currentTtlMs: 0 });
    const cards = makeCards(8);
    const set = setOf(cards);
    await asPresenter(app, "POST", "/api/cards", { keys: cards.map((c) => c.key) });
    // An open start of round 2 has made its genesis and not yet committed its record.
    await createStore(kv, { prefix: ["round", 2] });
    const carded = asPresenter(app, "POST", "/api/rounds", {
      question: "Carded?",
      choices: [],
      cards: set.set,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const open = await asPresenter(app, "POST", "/api/rounds", { question: "Open?", choices: [] });
    assert.deepEqual(open.body, { id: 2 });
    assert.deepEqual((await carded).body, { id: 3 });
    const genesisOf = async (id: number) =>
      (await call(app, "GET", `/api/rounds/${id}/blocks?from=0&limit=1`)).body.blocks[0].prev_hash;
    assert.equal(await genesisOf(2), "0".repeat(64));
    assert.equal(await genesisOf(3), set.sha256);
  } finally {
    kv.close();
  }
});
