// The Hono application: the API of the election's ledger under /api and, served by the same
// sub-apps, the attack lab's practice ledger under /api/lab (protocol §4.7); the 64 KiB body limit,
// the JSON content type of every write call, JSON 404s and the one error handler that maps typed
// errors to `{"error": {"code", "message"}}` (protocol §4), and the security headers on every
// answer. A 500 names no cause: the error is logged, never answered.
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { MAX_BODY_BYTES } from "../lib/protocol/schemas.ts";
import { derivedOrigin } from "../lib/protocol/block_log.ts";
import { createBlockApp } from "./api/block.ts";
import { createLogApp } from "./api/log.ts";
import { createPkiApp } from "./api/pki.ts";
import { createVoteApp } from "./api/vote.ts";
import { compressAnswers } from "./compression.ts";
import { type Config, DEFAULT_RING_SIZE } from "./config.ts";
import { kvUnavailable, notFound, refusal, toApiError } from "./errors.ts";
import { createHeadSigner, lensSeed } from "./head_signer.ts";
import { createLensApp } from "./api/lying_lens.ts";
import { createGatewayApp } from "./api/ohttp.ts";
import type { LabLedger } from "./store/lab.ts";
import { electionWrites, mountRounds } from "./api/rounds.ts";
import type { Rounds } from "./store/rounds.ts";
import { createPageApp } from "./pages/pages.ts";
import { hostGuard, jsonWrites, securityHeaders } from "./security.ts";
import { createBlockLog } from "./store/block_log.ts";
import { kvSilentForMs } from "./store/kv_calls.ts";
import type { Store } from "./store/mod.ts";
import type { GatewayKeys } from "./store/ohttp_key.ts";
import { createInProcessVerifier } from "./verifier/in_process.ts";
import type { Verifier } from "./verifier/types.ts";
import type { PolicyWitness } from "./witness_policy.ts";

/** Where the attack lab's practice ledger is served: the API of protocol §4 under this prefix. */
export const LAB_API = "/api/lab";

/**
 * The most an API request waits on the database before it is answered 503 `kv_unavailable`, ms
 * (protocol §5.5). Over KV Connect the Deno client retries an unanswered call for ever.
 */
export const KV_DEADLINE_MS = 5_000;
/**
 * How long the database must have answered nothing for a request past {@link KV_DEADLINE_MS} to
 * be refused, ms: no answer waits on a database that is down for more than the two together.
 */
export const KV_SILENCE_MS = 1_000;
/**
 * How late the deadline's timer may fire before the thread counts as busy rather than the
 * database as silent, ms.
 */
const LATE_TIMER_MS = 100;
/** The `Retry-After` of a 503 `kv_unavailable`, s. */
export const KV_RETRY_AFTER_SECONDS = 5;

/**
 * What the application needs: the store; optionally the attack lab's practice ledger (without
 * it, `/api/lab/…` is 404), the configuration the page uses (default ring size otherwise), where
 * the page bundles were built, and the verifier of votes and new keys (this thread's by default;
 * main.ts passes the worker pool where workers exist).
 */
export type AppOptions = {
  store: Store;
  lab?: LabLedger;
  /** The rounds of protocol §4.9 (round 1 is `store`); without them `/api/rounds` is 404. */
  rounds?: Rounds;
  config?: Partial<
    Pick<
      Config,
      | "ringSize"
      | "publicUrl"
      | "trustProxy"
      | "logOrigin"
      | "witnessPolicy"
      | "ohttpRelay"
      | "verifyRate"
    >
  >;
  /** The machine's network interfaces, for the page's LAN address; `Deno.networkInterfaces`. */
  interfaces?: () => Deno.NetworkInterfaceInfo[];
  buildDir?: URL;
  verifier?: Verifier;
  /** The Oblivious HTTP gateway's key (protocol §4.11); without it there is no gateway. */
  ohttp?: GatewayKeys;
  /** {@link KV_DEADLINE_MS} unless a test shortens it. */
  kvDeadlineMs?: number;
  /** How long a key's or a vote's body may take to arrive: `BODY_DEADLINE_MS` unless a test shortens it. */
  bodyDeadlineMs?: number;
};

/** The whole HTTP application over `store`. */
export function createApp(options: AppOptions): Hono {
  const { store } = options;
  const verifier = options.verifier ?? createInProcessVerifier();
  const ringSize = options.config?.ringSize ?? DEFAULT_RING_SIZE;
  // The election's log origin; round 1 is the election, so it is served under it too.
  const logOrigin = options.config?.logOrigin ?? null;
  // The election's witnesses (WITNESS_POLICY): main.ts pushes to them, its log shows them.
  const witnesses = options.config?.witnessPolicy?.witnesses ?? [];
  const app = new Hono();

  app.use("*", securityHeaders());
  app.use("/api/*", compressAnswers());
  app.use("*", hostGuard());
  // Before the body limit, which reads the body, and the deadline: a 415 reads neither the body
  // nor the database.
  app.use("/api/*", jsonWrites());
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw refusal(
          "body_too_large",
          `Request body is larger than ${MAX_BODY_BYTES} bytes`,
        );
      },
    }),
  );

  app.use("/api/*", kvDeadline(options.kvDeadlineMs ?? KV_DEADLINE_MS));

  if (options.lab) mountLab(app, { lab: options.lab, verifier });
  // The presenter's pin of the room's witness (protocol §4.10) goes through the one presenter
  // check, `GET /api/presenter`, and its count of wrong tokens per address: the client's, so with
  // TRUST_PROXY the address the proxy appended goes along.
  const presenter: MiddlewareHandler | undefined = options.rounds && (async (c, next) => {
    const headers = new Headers({ authorization: c.req.header("authorization") ?? "" });
    const forwarded = c.req.header("x-forwarded-for");
    if (forwarded !== undefined) headers.set("x-forwarded-for", forwarded);
    const check = await app.request("/api/presenter", { headers }, c.env);
    if (check.status !== 204) return check;
    await next();
  });
  if (options.ohttp) {
    app.route(
      "/",
      createGatewayApp({
        keys: options.ohttp,
        serve: (request) => app.fetch(request),
        presenter,
        publicUrl: options.config?.publicUrl,
        bodyDeadlineMs: options.bodyDeadlineMs,
      }),
    );
  }
  // The room's pinned witnesses are kept with the election's cosignatures, for every round.
  const room = store.cosignatures;
  if (options.rounds) {
    const rounds = options.rounds;
    mountRounds(app, {
      rounds,
      ledgerApi: (roundStore, { base, choices }) =>
        createLedgerApi(roundStore, {
          base,
          verifier,
          bodyDeadlineMs: options.bodyDeadlineMs,
          choices,
          logOrigin: roundStore === store ? logOrigin : null,
          witnesses: roundStore === store ? witnesses : [],
          presenter,
          room,
        }),
      trustProxy: options.config?.trustProxy ?? false,
      verifyRate: options.config?.verifyRate,
    });
    app.use("/api/vote", electionWrites(rounds));
    app.use("/api/pki/key", electionWrites(rounds));
  }
  const bodyDeadlineMs = options.bodyDeadlineMs;
  app.route(
    "/",
    createLedgerApi(store, {
      base: "/api",
      verifier,
      logOrigin,
      witnesses,
      presenter,
      room,
      bodyDeadlineMs,
    }),
  );

  app.notFound((c) => {
    throw notFound(c.req.method, c.req.path);
  });
  app.onError(answerError);

  app.route(
    "/",
    createPageApp({
      ringSize,
      buildDir: options.buildDir,
      publicUrl: options.config?.publicUrl ?? null,
      trustProxy: options.config?.trustProxy ?? false,
      interfaces: options.interfaces,
      ohttpRelay: options.config?.ohttpRelay ?? null,
    }),
  );
  return app;
}

/**
 * The API of one ledger under `base` (protocol §4): key directory, votes, block reads, signed
 * heads, its log's checkpoints, proofs and witness cosignatures (protocol §4.10) under `logOrigin`
 * (derived from the ledger's key when null) with the `witnesses` it is pushed to, and the
 * lying-server lens over this ledger's own reads (protocol §4.7): read-only, only for requests
 * that opt in by path, and signing with a key of its own derived from this ledger's seed, so the
 * ledger's key never signs a lie. With `presenter`, the presenter may pin the room's witness,
 * kept in `room` (protocol §4.10).
 */
export function createLedgerApi(
  store: Store,
  { base, verifier, choices, logOrigin = null, witnesses = [], presenter, room, bodyDeadlineMs }: {
    base: string;
    verifier: Verifier;
    bodyDeadlineMs?: number;
    choices?: readonly string[];
    logOrigin?: string | null;
    witnesses?: readonly PolicyWitness[];
    presenter?: MiddlewareHandler;
    room?: Store["cosignatures"];
  },
): Hono {
  const api = new Hono().basePath(base);
  api.route("/pki", createPkiApp(store, verifier, { bodyDeadlineMs }));
  api.route("/vote", createVoteApp(store, verifier, { choices, bodyDeadlineMs }));
  const seed = store.serverSeed();
  api.route(
    "/lens",
    createLensApp((path) => Promise.resolve(api.request(path)), lensSeed(seed), { base }),
  );
  const headSigner = createHeadSigner(seed);
  api.route("/", createBlockApp(store, headSigner));
  const origin = logOrigin ?? derivedOrigin(headSigner.key);
  api.route(
    "/",
    createLogApp(createBlockLog(store), { origin, seed }, {
      cosignatures: store.cosignatures,
      witnesses,
      presenter,
      room,
    }),
  );
  api.notFound((c) => notFound(c.req.method, c.req.path).getResponse());
  api.onError(answerError);
  return api;
}

/**
 * The API's bound on waiting for the database (protocol §5.5). A request still unanswered after
 * `boundMs` is answered 503 `kv_unavailable` as soon as the database has answered nothing for
 * {@link KV_SILENCE_MS}; one that is only slow while the database answers (verification under
 * load) goes on. Its work goes on unseen after a 503, so a write may still land. Once the database
 * has been silent for `boundMs`, requests are refused at once instead of queueing behind it,
 * except a block status, which answers from what the process last read.
 */
function kvDeadline(boundMs: number): MiddlewareHandler {
  return async (c, next) => {
    if (kvSilentForMs() >= boundMs && !c.req.path.endsWith("/block/status")) {
      throw kvUnavailable(boundMs, KV_RETRY_AFTER_SECONDS);
    }
    const work = next().then(() => "done" as const);
    for (let waitMs = boundMs, lookedAgain = false;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const due = Date.now() + waitMs;
      const tick = new Promise<"tick">((resolve) =>
        timer = setTimeout(() => resolve("tick"), waitMs)
      );
      try {
        // Promise.race also handles a rejection of the work that comes after a 503.
        if (await Promise.race([work, tick]) === "done") return;
      } finally {
        clearTimeout(timer);
      }
      // A timer this late means the thread was busy (verifying, say): answers the database sent
      // meanwhile may wait unread behind it, so look again once they have been read (once: the
      // thread has read them by the next tick, however late that is).
      if (Date.now() - due > LATE_TIMER_MS && !lookedAgain) {
        [waitMs, lookedAgain] = [LATE_TIMER_MS, true];
        continue;
      }
      lookedAgain = false;
      const silent = kvSilentForMs();
      if (silent >= KV_SILENCE_MS) throw kvUnavailable(boundMs, KV_RETRY_AFTER_SECONDS);
      waitMs = Math.max(50, KV_SILENCE_MS - silent);
    }
  };
}

/**
 * Serves the practice ledger under {@link LAB_API}: each request goes to the API of the current
 * generation (built again only when a reset moved it), and `POST /api/lab/reset` starts a fresh
 * one (or finds the ledger empty, or joins a concurrent reset) and answers its block status; 429
 * `reset_too_soon` within the reset interval. A request during which a reset moved the practice
 * ledger to a new generation is answered 409 `lab_reset`: never a 500, a stale answer or a lost
 * write.
 */
function mountLab(app: Hono, { lab, verifier }: { lab: LabLedger; verifier: Verifier }): void {
  let served: { store: Store; api: Hono } | null = null;
  const currentApi = async () => {
    const { generation, store } = await lab.open();
    if (served?.store !== store) {
      served = { store, api: createLedgerApi(store, { base: LAB_API, verifier }) };
    }
    return { generation, api: served.api };
  };
  app.post(`${LAB_API}/reset`, async () => {
    await lab.reset();
    return await (await currentApi()).api.request(`${LAB_API}/block/status`);
  });
  // The carded practice directory (protocol §4.7): the lab's card attacks are sent there.
  let carded: { store: Store; api: Hono } | null = null;
  app.all(`${LAB_API}/cards/*`, async (c) => {
    const { generation, store } = await lab.carded();
    if (carded?.store !== store) {
      carded = { store, api: createLedgerApi(store, { base: `${LAB_API}/cards`, verifier }) };
    }
    const answer = await carded.api.fetch(c.req.raw);
    if (await lab.generation() !== generation) throw labReset();
    return answer;
  });
  app.all(`${LAB_API}/*`, async (c) => {
    const { generation, api } = await currentApi();
    const answer = await api.fetch(c.req.raw);
    // A reset moved on while this request ran on the generation it deletes: whatever it read or
    // wrote there (a refusal, a partial listing, a vote) belongs to a ledger that is gone.
    if (await lab.generation() !== generation) throw labReset();
    return answer;
  });
}

/** A lab request that failed because the practice ledger was reset under it: 409 `lab_reset`. */
function labReset(): Error {
  return refusal(
    "lab_reset",
    "The practice ledger was started afresh while this request ran, and what it held is gone. " +
      "Send the request again: it goes to the fresh practice ledger",
  );
}

/** The one place an error becomes an answer: JSON, or plain text for a browser asking a page. */
function answerError(error: Error, c: Context): Response {
  const answer = toApiError(error);
  if (answer.code === "internal_error") {
    console.error(`${c.req.method} ${c.req.path} failed:`, error);
  }
  return asksForPage(c.req.path, c.req.header("Accept"))
    ? answer.getTextResponse()
    : answer.getResponse();
}

/** True for a request outside the API from a client that takes HTML: a browser loading a page. */
function asksForPage(path: string, accept: string | undefined): boolean {
  return !path.startsWith("/api/") && (accept ?? "").includes("text/html");
}
