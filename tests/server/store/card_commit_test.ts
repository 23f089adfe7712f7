// A carded registration whose commit landed but whose answer was lost (the lock error SQLite
// gives several processes on one file): the store reads back and answers the key's id once; the
// same card and key sent again get the first answer again; another key on that card is card_used.
import assert from "node:assert/strict";
import { createStore } from "../../../server/store/mod.ts";
import { cardBody, makeCards, setOf, voterKey } from "../../helpers/cards.ts";

/** `kv` whose next commit lands and then reports a lock error; every other call is the real one. */
function lostAnswerKv(kv: Deno.Kv): Deno.Kv {
  let lose = 1;
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const proxy: Deno.AtomicOperation = new Proxy(op, {
            get(inner, name) {
              if (name === "commit") {
                return async () => {
                  const res = await inner.commit();
                  if (lose-- > 0) throw new TypeError("database is locked");
                  return res;
                };
              }
              const value = Reflect.get(inner, name);
              if (typeof value !== "function") return value;
              return (...args: unknown[]) => {
                const result = value.apply(inner, args);
                return result === inner ? proxy : result;
              };
            },
          });
          return proxy;
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

Deno.test("a carded registration whose answer was lost answers once, then the same again", async () => {
  using kv = await Deno.openKv(":memory:");
  const cards = makeCards(8);
  const set = setOf(cards);
  const members = new Set(cards.map((c) => c.key));
  const options = { prefix: ["round", 2], cards: { round: 2, ...set, members } };
  // Genesis and key first, through the real KV; then the registration loses its answer.
  await createStore(kv, options);
  const store = await createStore(lostAnswerKv(kv), options);
  const key = voterKey();
  const { card } = cardBody(cards[0], set.sha256, 2, key);
  const first = await store.registerKey(key, undefined, card);
  assert.deepEqual(first, { id: 1, key, total: 1 });
  const again = await store.registerKey(key, undefined, card);
  assert.deepEqual(again, first);
  const other = voterKey();
  await assert.rejects(
    store.registerKey(other, undefined, cardBody(cards[0], set.sha256, 2, other).card),
    (error: Error & { code?: string }) => error.code === "card_used",
  );
  assert.deepEqual(await store.keyPage(0, 10), { keys: [{ id: 1, key, card }], total: 1 });
  assert.deepEqual(await store.cardUse(card.key), { id: 1, key, total: 1 });
});
