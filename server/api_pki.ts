// The key directory calls of protocol §4: `/api/pki/key...`.
import { Hono } from "hono";
import { hexToBytes } from "../lib/protocol/bytes.ts";
import { checkPublicKey } from "../lib/protocol/keys.ts";
import { describeIssues, KeyRegistration } from "../lib/protocol/schemas.ts";
import { integerParam, pageLimit, readJson } from "./api_common.ts";
import { invalidRequest, quote, refusal } from "./errors.ts";
import type { Store } from "./store.ts";

/** Routes under `/api/pki`; `onRegistered` hears each key once it is stored. */
export function createPkiApp(store: Store, onRegistered?: (key: string) => void): Hono {
  const app = new Hono();

  app.get("/key/offset/:offset/limit/:limit", async (c) => {
    const offset = integerParam(c.req.param("offset"), "offset");
    const limit = pageLimit(integerParam(c.req.param("limit"), "limit"));
    return c.json(await store.keyPage(offset, limit));
  });

  app.get("/key/id/:id", async (c) => {
    const id = integerParam(c.req.param("id"), "id");
    return c.json(await store.keyById(id));
  });

  app.post("/key", async (c) => {
    const parsed = await readJson(c, KeyRegistration);
    if (!parsed.ok) {
      // A key that is not 64 lowercase hex characters is an invalid key, not a malformed body.
      const keyIssues = parsed.error.issues.every((issue) => issue.path[0] === "key");
      if (keyIssues) throw refusal("invalid_key", describeIssues(parsed.error));
      throw invalidRequest(`Invalid body: ${describeIssues(parsed.error)}`);
    }
    const { key } = parsed.data;
    const reason = checkPublicKey(hexToBytes(key, 32, "key"));
    if (reason !== null) throw refusal("invalid_key", `Key "${quote(key)}" is refused: ${reason}`);
    const record = await store.registerKey(key);
    onRegistered?.(key);
    return c.json(record, 201);
  });

  return app;
}
