/**
 * Join cards over HTTP (protocol §2.11, §4.9): the presenter's `POST /api/cards`, anyone's
 * `GET /api/cards/{set}` and `GET /api/rounds/{id}/cards`.
 * @module
 */
import type { Hono, MiddlewareHandler } from "hono";
import { base64urlToBytes } from "../../lib/protocol/bytes.ts";
import { checkCardKey } from "../../lib/protocol/cards.ts";
import { CardSetPost } from "../../lib/protocol/card_schemas.ts";
import { invalidRequest, quote, refusal } from "../errors.ts";
import type { Rounds } from "../store/rounds.ts";
import { liveJson } from "./caching.ts";
import { parseJson } from "./common.ts";

/** A set id in a path: 16 lowercase hex characters. */
const SET_ID = /^[0-9a-f]{16}$/;
/** A round id in a path, as ./rounds.ts reads it. */
const ROUND_ID = /^[1-9][0-9]{0,8}$/;

/** Mounts the card calls on `app`; `presenter` guards the posting of a set. */
export function mountCards(
  app: Hono,
  { rounds, presenter }: { rounds: Rounds; presenter: MiddlewareHandler },
): void {
  app.post("/api/cards", presenter, async (c) => {
    const { keys } = await parseJson(c, CardSetPost);
    keys.forEach((key, i) => {
      let reason: string | null;
      try {
        reason = checkCardKey(base64urlToBytes(key, 32, "card key"));
      } catch (error) {
        reason = (error as Error).message;
      }
      if (reason !== null) {
        throw invalidRequest(`Invalid body: keys.${i} "${quote(key)}" is refused: ${reason}`);
      }
    });
    const { created, answer } = await rounds.cardSets.put(keys);
    return c.json(answer, created ? 201 : 200);
  });

  app.get("/api/cards/:set", async (c) => {
    const param = c.req.param("set");
    const set = SET_ID.test(param) ? await rounds.cardSets.get(param) : null;
    if (set === null) throw refusal("unknown_cards", `No card set "${quote(param)}"`);
    const { members: _, ...answer } = set;
    return c.json(answer);
  });

  app.get("/api/rounds/:id/cards", async (c) => {
    const param = c.req.param("id");
    const record = ROUND_ID.test(param) ? await rounds.round(Number(param)) : null;
    if (!record) throw refusal("unknown_round", `No round "${quote(param)}"`);
    if (!record.cards) {
      throw refusal("no_cards", `Round ${record.id} admits any key: it has no cards`);
    }
    const store = await rounds.storeOf(record.id);
    // Every key of a carded round was admitted by a card of its own: the cards used are the keys.
    const used = (await store.keyPage(0, 0)).total;
    return liveJson(c, { ...record.cards, used });
  });
}
