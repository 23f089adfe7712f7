// The whole API over one database for tests: the election, the practice ledger (50 keys, 50 votes)
// and the rounds, with the test verifier; on demand the Oblivious HTTP gateway, and a client's
// view of it (its key configuration and a post of an encapsulated request).
import { type AppOptions, createApp } from "../../server/app.ts";
import { type KeyConfig, KEYS_PATH, parseKeyConfigs } from "../../lib/protocol/ohttp.ts";
import { createLabLedger } from "../../server/store/lab.ts";
import { createGatewayKeys } from "../../server/store/ohttp_key.ts";
import { createStore } from "../../server/store/mod.ts";
import { createRounds } from "../../server/store/rounds.ts";
import type { Verifier } from "../../server/verifier/types.ts";
import { testVerifier } from "./test_verifier.ts";

/** The presenter's token of {@link fullApp}. */
export const PRESENTER_TOKEN = "presenter-token-0123456789";

/**
 * The app with the election, the practice ledger, the rounds and, with `ohttp`, the gateway, over
 * `kv`, verifying on `verifier` (the test verifier by default); and its parts.
 */
export async function fullApp(
  kv: Deno.Kv,
  {
    electionIntervalMs = 60_000,
    currentTtlMs,
    ohttp: withGateway = false,
    verifier = testVerifier,
    bodyDeadlineMs,
    config,
    gatewayNow,
  }: {
    electionIntervalMs?: number;
    currentTtlMs?: number;
    ohttp?: boolean;
    verifier?: Verifier;
    bodyDeadlineMs?: number;
    config?: AppOptions["config"];
    /** The gateway key store's clock (how long it keeps a key read); `performance.now`. */
    gatewayNow?: () => number;
  } = {},
) {
  const store = await createStore(kv);
  const lab = await createLabLedger(kv, { maxKeys: 50, maxVotes: 50 });
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs,
    adminToken: PRESENTER_TOKEN,
    ...(currentTtlMs === undefined ? {} : { currentTtlMs }),
  });
  const ohttp = withGateway ? await createGatewayKeys(kv, { now: gatewayNow }) : undefined;
  const app = createApp({ store, lab, rounds, ohttp, verifier, bodyDeadlineMs, config });
  return { store, lab, rounds, ohttp, app };
}

/** The origin the gateway fixture's requests are made to. */
export const GATEWAY_ORIGIN = "http://localhost";

/**
 * {@link fullApp} with the gateway, and a client's view of its
 * gateway: the key configuration it serves now, and a post of encapsulated bytes.
 */
export async function gatewayApp(
  kv: Deno.Kv,
  options: Omit<Parameters<typeof fullApp>[1] & object, "ohttp"> = {},
) {
  const parts = await fullApp(kv, { ...options, ohttp: true });
  const { app } = parts;
  const config = async (): Promise<KeyConfig> => {
    const res = await app.request(`${GATEWAY_ORIGIN}${KEYS_PATH}`);
    return parseKeyConfigs(new Uint8Array(await res.arrayBuffer()))[0];
  };
  const post = (body: Uint8Array, type = "message/ohttp-req") =>
    app.request(`${GATEWAY_ORIGIN}/api/ohttp`, {
      method: "POST",
      headers: { "content-type": type },
      body: body.slice(),
    });
  return { ...parts, ohttp: parts.ohttp!, config, post };
}
