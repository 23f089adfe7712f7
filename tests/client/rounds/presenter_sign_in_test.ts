/**
 * The presenter's sign-in (lib/client/rounds/presenter_sign_in.ts) against the real API: a token
 * in the address replaces the kept one only once the server accepts it, so a link to `/?admin=x`
 * cannot sign the presenter out; a kept token the server refuses is forgotten.
 * @module
 */
import assert from "node:assert/strict";
import { ApiCallError, createApiClient } from "../../../lib/client/api_client.ts";
import {
  ADMIN_TOKEN_KEY,
  signInPresenter,
  type TokenVerdict,
} from "../../../lib/client/rounds/presenter_sign_in.ts";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { MapStorage } from "../../helpers/map_storage.ts";

/** The page's check of a token, over the app's real routes. */
async function checker(kv: Deno.Kv) {
  const { app } = await fullApp(kv);
  const api = createApiClient({ fetch: (url, init) => app.request(url, init) });
  return (token: string): Promise<TokenVerdict> =>
    api.checkPresenter(token).then(
      () => "accepted",
      (error) => error instanceof ApiCallError && error.status === 401 ? "refused" : "unknown",
    );
}

Deno.test("a refused token in the address leaves the presenter signed in", async () => {
  using kv = await Deno.openKv(":memory:");
  const check = await checker(kv);
  const storage = new MapStorage();
  storage.setItem(ADMIN_TOKEN_KEY, PRESENTER_TOKEN);
  const token = await signInPresenter({ given: "x", storage, check });
  assert.equal(token, PRESENTER_TOKEN);
  assert.equal(storage.getItem(ADMIN_TOKEN_KEY), PRESENTER_TOKEN);
});

Deno.test("an accepted token in the address is kept; a refused one is never stored", async () => {
  using kv = await Deno.openKv(":memory:");
  const check = await checker(kv);
  const storage = new MapStorage();
  assert.equal(await signInPresenter({ given: "wrong", storage, check }), null);
  assert.equal(storage.getItem(ADMIN_TOKEN_KEY), null);
  assert.equal(await signInPresenter({ given: PRESENTER_TOKEN, storage, check }), PRESENTER_TOKEN);
  assert.equal(storage.getItem(ADMIN_TOKEN_KEY), PRESENTER_TOKEN);
  // Signed in already: the next visit without a token in the address stays signed in.
  assert.equal(await signInPresenter({ given: null, storage, check }), PRESENTER_TOKEN);
});

Deno.test("a kept token the server refuses is forgotten; one not checked is kept", async () => {
  using kv = await Deno.openKv(":memory:");
  const check = await checker(kv);
  const storage = new MapStorage();
  storage.setItem(ADMIN_TOKEN_KEY, "stale");
  assert.equal(await signInPresenter({ given: null, storage, check }), null);
  assert.equal(storage.getItem(ADMIN_TOKEN_KEY), null);
  storage.setItem(ADMIN_TOKEN_KEY, PRESENTER_TOKEN);
  const offline = () => Promise.resolve<TokenVerdict>("unknown");
  assert.equal(await signInPresenter({ given: null, storage, check: offline }), null);
  assert.equal(storage.getItem(ADMIN_TOKEN_KEY), PRESENTER_TOKEN);
});
