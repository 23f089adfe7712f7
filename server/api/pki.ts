/**
 * The key directory calls of protocol §4, `/api/pki/key…`: registration, with the key's checks
 * and precomputation run on the verifier, and the directory reads.
 * @module
 */
import { Hono } from "hono";
import { describeIssues, KeyRegistration } from "../../lib/protocol/schemas.ts";
import { growingJson } from "./caching.ts";
import { bodyDeadline } from "./body_deadline.ts";
import { integerParam, pageLimit, readJson } from "./common.ts";
import { duplicateKey, invalidRequest, quote, refusal } from "../errors.ts";
import type { Store } from "../store/mod.ts";
import type { Verifier } from "../verifier/types.ts";
import { type CardVerifier, createCardVerifier } from "../card_verify.ts";

/**
 * Routes under `/api/pki`. Registration runs the key's checks and precomputation on `verifier`
 * (protocol §2 group checks, Hp and the combs its votes use) and stores them with the key; its
 * body must arrive within `bodyDeadlineMs` (./body_deadline.ts).
 */
export function createPkiApp(
  store: Store,
  verifier: Verifier,
  { bodyDeadlineMs, verifyCard = createCardVerifier() }: {
    bodyDeadlineMs?: number;
    verifyCard?: CardVerifier;
  } = {},
): Hono {
  const app = new Hono();
  const cards = store.cards();

  app.get("/key/offset/:offset/limit/:limit", async (c) => {
    const offset = integerParam(c.req.param("offset"), "offset");
    const limit = pageLimit(integerParam(c.req.param("limit"), "limit"));
    // Its `total` grows with the directory: revalidated by its ETag, a 304 while nothing changed.
    return growingJson(c, await store.keyPage(offset, limit));
  });

  app.get("/key/id/:id", async (c) => {
    const id = integerParam(c.req.param("id"), "id");
    return c.json(await store.keyById(id));
  });

  app.post("/key", bodyDeadline(bodyDeadlineMs), async (c) => {
    const parsed = await readJson(c, KeyRegistration);
    if (!parsed.ok) {
      // A key that is not 64 lowercase hex characters is an invalid key, not a malformed body.
      const keyIssues = parsed.error.issues.every((issue) => issue.path[0] === "key");
      if (keyIssues) throw refusal("invalid_key", describeIssues(parsed.error));
      // In a carded round a malformed card key is no card of the set, a malformed signature a bad one.
      const cardIssue = (field: string) =>
        cards !== null &&
        parsed.error.issues.every((i) => i.path[0] === "card" && i.path[1] === field);
      if (cardIssue("key")) throw refusal("card_unknown", describeIssues(parsed.error));
      if (cardIssue("sig")) throw refusal("card_signature", describeIssues(parsed.error));
      throw invalidRequest(`Invalid body: ${describeIssues(parsed.error)}`);
    }
    const { key, card } = parsed.data;
    if (cards === null && card !== undefined) {
      throw invalidRequest("This round admits any key: it takes no card");
    }
    if (cards !== null) {
      // Protocol §2.11: a card of the round's set, its signature, then the key and the card unused.
      if (card === undefined) {
        throw refusal(
          "card_required",
          "This round admits card holders only: send the key with its card's signature",
        );
      }
      if (!cards.members.has(card.key)) {
        throw refusal("card_unknown", `Card "${quote(card.key)}" is not one of this round's cards`);
      }
      const signed = await verifyCard({
        cardKey: card.key,
        sig: card.sig,
        setHash: cards.sha256,
        roundId: cards.round,
        voterKey: key,
      });
      if (!signed) {
        throw refusal(
          "card_signature",
          "The card's signature does not admit this key to this round",
        );
      }
    }
    // A key registered already costs one read, not a precomputation, before its 409.
    const [existing] = await store.lookupKeys([key]);
    if (existing) {
      const first = card && await store.cardUse(card.key);
      // The same card with the same key: a retry whose answer was lost, answered the same again.
      if (first && first.key === key) return c.json(first, 201);
      throw duplicateKey(key, existing.id);
    }
    const pre = await verifier.precompute(key);
    if (typeof pre === "string") {
      throw refusal("invalid_key", `Key "${quote(key)}" is refused: ${pre}`);
    }
    return c.json(await store.registerKey(key, pre, card), 201);
  });

  return app;
}
