/**
 * Browser-safe. "Make cards" in the presenter's browser (page §14.7, protocol §2.11): draw the
 * codes, derive their card keys, post only the keys, then read the set back and check that it
 * lists exactly those keys in order and hashes to what it names. A server that added a card of
 * its own, dropped one or reordered them is caught here, before anything is printed.
 * @module
 */
import { bytesToBase64url } from "../../protocol/bytes.ts";
import { CARD_BYTES, cardFromRandom, cardKeyPair } from "../../protocol/cards.ts";
import { CARD_SET_SIZE } from "../../protocol/card_schemas.ts";
import { ApiCallError, type ApiClient } from "../api_client.ts";
import { messageOf } from "../text.ts";
import { checkServedCardSet } from "./cards.ts";

/** The outcome: the set with its codes in card order, or why no set can be printed. */
export type MadeCards =
  | { ok: true; set: string; sha256: string; codes: string[] }
  | { ok: false; alert: boolean; reason: string };

/** The count typed, checked: an integer 8 to 1,000, or what is wrong. */
export function cardCount(
  text: string,
): { ok: true; count: number } | { ok: false; reason: string } {
  const count = Number(text);
  if (!Number.isInteger(count) || count < CARD_SET_SIZE.min || count > CARD_SET_SIZE.max) {
    return {
      ok: false,
      reason: `the number of cards must be a whole number from ${CARD_SET_SIZE.min} to 1,000`,
    };
  }
  return { ok: true, count };
}

/**
 * Draws `count` distinct cards with `random` (the page: `crypto.getRandomValues`), posts their
 * keys with the presenter's `token`, and checks the set as served (`alert` true: the server's set
 * is not the one made).
 */
export async function makeCards(
  { api, token, count, random }: {
    api: Pick<ApiClient, "postCards" | "cardSet">;
    token: string;
    count: number;
    random(bytes: Uint8Array<ArrayBuffer>): Uint8Array;
  },
): Promise<MadeCards> {
  const codes: string[] = [];
  const keys: string[] = [];
  const seen = new Set<string>();
  while (codes.length < count) {
    const card = cardFromRandom(random(new Uint8Array(CARD_BYTES)));
    if (seen.has(card.code)) continue;
    seen.add(card.code);
    codes.push(card.code);
    keys.push(bytesToBase64url(cardKeyPair(card.bytes).publicKey));
  }
  let created;
  try {
    created = await api.postCards(keys, token);
  } catch (error) {
    const reason = error instanceof ApiCallError ? error.reason : messageOf(error);
    return { ok: false, alert: false, reason: `the server did not take the cards: ${reason}` };
  }
  let served;
  try {
    served = await api.cardSet(created.set);
  } catch (error) {
    const reason = error instanceof ApiCallError ? error.reason : messageOf(error);
    return { ok: false, alert: true, reason: `the set could not be read back: ${reason}` };
  }
  const checked = checkServedCardSet(served, keys);
  if (!checked.ok) return { ok: false, alert: true, reason: checked.reason };
  if (checked.set !== created.set || checked.sha256 !== created.sha256) {
    return {
      ok: false,
      alert: true,
      reason: "The server named one set when the cards were posted and serves another",
    };
  }
  return { ok: true, set: checked.set, sha256: checked.sha256, codes };
}
