// The pages' card entries and addresses (page §14.7): a card's printed address carries the card
// first and the presenter's pins after it; a page reads the card back and leaves the rest of its
// fragment as it was; the codes kept per set are forgotten on request while the set stays known.
import assert from "node:assert/strict";
import {
  cardAddress,
  forgetCodes,
  keepCodes,
  keepKnownSet,
  keysFromCardsText,
  readKeptCodes,
  readKnownSets,
} from "../../../lib/client/cards/card_keep.ts";
import { cardInFragment, fragmentWithoutCard } from "../../../lib/client/cards/card_fragment.ts";

/** A Map as the part of Web Storage the pages use. */
function memoryStorage() {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (key: string) => map.get(key) ?? null,
    setItem: (key: string, value: string) => void map.set(key, value),
    removeItem: (key: string) => void map.delete(key),
  };
}

Deno.test("a card's address: the card first, the pins after it, read back as printed", () => {
  const code = "7KQ2-M9XD-4TNB-W3RC-$";
  const pinned = "http://room.test/#witness=w%2Bk&quorum=1&relay=http%3A%2F%2Fr.test&ohttp=abc";
  const address = cardAddress(pinned, code);
  assert.equal(
    address,
    "http://room.test/#card=7KQ2-M9XD-4TNB-W3RC-%24&witness=w%2Bk&quorum=1" +
      "&relay=http%3A%2F%2Fr.test&ohttp=abc",
  );
  const hash = new URL(address).hash;
  assert.equal(cardInFragment(hash), code);
  assert.equal(fragmentWithoutCard(hash), pinned.slice(pinned.indexOf("#")));
  assert.equal(cardAddress("http://room.test/", "A"), "http://room.test/#card=A");
  assert.equal(fragmentWithoutCard("#card=A"), "");
  assert.equal(cardInFragment("#relay=x"), null);
});

Deno.test("codes are kept per set until forgotten; the set stays known", () => {
  const storage = memoryStorage();
  keepCodes(storage, "0123456789abcdef", ["A", "B"]);
  keepKnownSet(storage, { set: "0123456789abcdef", count: 2 });
  keepKnownSet(storage, { set: "0123456789abcdef", count: 2 });
  assert.deepEqual(readKnownSets(storage), [{ set: "0123456789abcdef", count: 2 }]);
  assert.deepEqual(readKeptCodes(storage, "0123456789abcdef"), ["A", "B"]);
  forgetCodes(storage, "0123456789abcdef");
  assert.equal(readKeptCodes(storage, "0123456789abcdef"), null);
  assert.deepEqual(readKnownSets(storage), [{ set: "0123456789abcdef", count: 2 }]);
  assert.deepEqual([...storage.map.keys()], ["ringvote/card-sets"]);
  storage.setItem("ringvote/card-sets", "not json");
  assert.deepEqual(readKnownSets(storage), []);
});

Deno.test("the projector's card line", () => {
  assert.equal(
    keysFromCardsText({ keys: 31, cards: 31, count: 40 }),
    "31 keys from 31 cards of 40",
  );
  assert.equal(keysFromCardsText({ keys: 1, cards: 1, count: 8 }), "1 key from 1 card of 8");
});
