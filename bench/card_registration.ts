// Registration with and without join cards (protocol §2.11), in one run on one database: 1,000
// keys into an open round, then 1,000 keys, each with its card's admission, into a carded round
// of 1,000 cards, 32 requests in flight, through the whole app (body checks, the card check, the
// key's checks and precomputation on this thread, the KV commits; no HTTP). Keys, cards and
// signatures are made before the clock starts. Also the card check alone: the server's (Web
// Crypto inside the strict rules) and the strict check in JavaScript it stands in for.
//
// `deno run -A bench/card_registration.ts [--pool]` prints the rates and the carded/open ratio;
// with `--pool` the key's checks and precomputation run on the server's pool of workers instead.
import { createCardVerifier } from "../server/card_verify.ts";
import { createApp } from "../server/app.ts";
import { createStore } from "../server/store/mod.ts";
import { createRounds } from "../server/store/rounds.ts";
import { createInProcessVerifier } from "../server/verifier/in_process.ts";
import { createVerifier } from "../server/verifier/mod.ts";
import { cardBody, makeCards, setOf, voterKey } from "../tests/helpers/cards.ts";

const TOKEN = "presenter-token-0123456789";
const KEYS = 1000;
const IN_FLIGHT = 32;

const kv = await Deno.openKv(":memory:");
const store = await createStore(kv);
const rounds = await createRounds(kv, {
  election: store,
  electionIntervalMs: 60_000,
  adminToken: TOKEN,
});
// `--pool`: the server's own verifier, a pool of worker threads (main.ts); else this thread.
const pool = Deno.args.includes("--pool");
const verifier = pool ? await createVerifier() : createInProcessVerifier();
await verifier.ready;
const app = createApp({ store, rounds, verifier });
const presenter = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** Keys/s of posting `bodies` to round `id`, `IN_FLIGHT` at a time. */
async function rate(id: number, bodies: unknown[]): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < bodies.length) await post(`/api/rounds/${id}/pki/key`, bodies[next++]);
  }));
  return bodies.length / ((performance.now() - started) / 1000);
}

const cards = makeCards(KEYS, 42);
const set = setOf(cards);
await post("/api/cards", { keys: cards.map((c) => c.key) }, presenter);

// A warm-up round, so that neither measured round pays for the first calls.
const warm = await post("/api/rounds", { question: "Warm?", choices: [] }, presenter);
await rate(warm.id, Array.from({ length: 200 }, () => ({ key: voterKey() })));

const open = await post("/api/rounds", { question: "Open?", choices: [] }, presenter);
const openBodies = Array.from({ length: KEYS }, () => ({ key: voterKey() }));
const openRate = await rate(open.id, openBodies);

const carded = await post(
  "/api/rounds",
  { question: "Carded?", choices: [], cards: set.set },
  presenter,
);
const cardedBodies = cards.map((card) => cardBody(card, set.sha256, carded.id, voterKey()));
const cardedRate = await rate(carded.id, cardedBodies);

/** Card checks per second of `verifier` over the carded bodies. */
async function checks(verifier: ReturnType<typeof createCardVerifier>): Promise<number> {
  const started = performance.now();
  for (const { key, card } of cardedBodies) {
    const ok = await verifier({
      cardKey: card.key,
      sig: card.sig,
      setHash: set.sha256,
      roundId: carded.id,
      voterKey: key,
    });
    if (!ok) throw new Error("a card check failed");
  }
  return cardedBodies.length / ((performance.now() - started) / 1000);
}
const fast = await checks(createCardVerifier());
const strict = await checks(createCardVerifier({ webCrypto: false }));

console.log(
  [
    `verifier: ${pool ? "a pool of worker threads (--pool)" : "this thread"}`,
    `registration, open round:   ${
      openRate.toFixed(0)
    } keys/s (${KEYS} keys, ${IN_FLIGHT} in flight)`,
    `registration, carded round: ${cardedRate.toFixed(0)} keys/s (${KEYS} keys with cards)`,
    `carded / open:              ${(cardedRate / openRate).toFixed(2)}`,
    `card check alone: ${fast.toFixed(0)} checks/s (Web Crypto in the strict rules), ` +
    `${strict.toFixed(0)} checks/s (strict check in JavaScript)`,
  ].join("\n"),
);
kv.close();
Deno.exit(0);
