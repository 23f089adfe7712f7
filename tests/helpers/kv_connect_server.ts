/**
 * A KV Connect server for tests: denokv's own data path (`snapshotRead`, `atomicWrite` of
 * `npm:@deno/kv-linux-x64-gnu`, pinned: its limits, its conversion and its SQLite backend, the
 * code behind `denokv serve`), run by a process of its own, behind `Deno.serve`, with the metadata
 * exchange in front. It counts and delays round trips, drops the reply of a write that landed,
 * and goes down and comes back.
 * @module
 */
import type { KvRequest } from "./kv_requests.ts";

/** The native half of `@deno/kv`, pinned: the version whose data path these tests speak. */
export const DENOKV_NATIVE = "@deno/kv-linux-x64-gnu@0.14.0";

/** The access token every server of this module accepts: tests set it as DENO_KV_ACCESS_TOKEN. */
export const KV_CONNECT_TOKEN = "ringvote-test-token-0123456789";

/** The database id the metadata exchange names (any UUID). */
const DATABASE_ID = "5f1b1a3e-4c1d-4d2e-9a6b-3c9e7d2f0a11";

/** Where the data path is served, under a database's URL (KV Connect v2 endpoints). */
const DATA_PATH = "/v2";

/** The path of database `name`'s URL: `/` for the first, `/db/<name>` for every other. */
function databasePath(name: string): string {
  return name === "" ? "" : `/db/${encodeURIComponent(name)}`;
}

/**
 * denokv's data path, run by a process of its own (./kv_native_process.ts): its Node-API addon is
 * never loaded into the isolates `deno test --parallel` runs side by side in one process.
 */
type NativeProcess = {
  open(path?: string): Promise<number>;
  /** The data path's answer, or denokv's refusal as an Error. */
  call(kind: "read" | "write", db: number, body: Uint8Array): Promise<Uint8Array<ArrayBuffer>>;
  /** Closes every database and ends the process. */
  close(): Promise<void>;
};

async function startNativeProcess(): Promise<NativeProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./kv_native_process.ts", import.meta.url).pathname],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let first = "";
  while (!first.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) {
      await child.stdin.close();
      throw new Error(`denokv's data path did not start (exit ${(await child.status).code})`);
    }
    first += value;
  }
  await reader.cancel();
  const { port } = JSON.parse(first.split("\n")[0]) as { port: number };
  const base = `http://127.0.0.1:${port}`;
  const post = async (path: string, body: BodyInit) => {
    const res = await fetch(`${base}${path}`, { method: "POST", body });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (!res.ok) throw new Error(new TextDecoder().decode(bytes));
    return bytes;
  };
  return {
    async open(path) {
      const answer = await post("/open", JSON.stringify(path === undefined ? {} : { path }));
      return (JSON.parse(new TextDecoder().decode(answer)) as { db: number }).db;
    },
    call: (kind, db, body) => post(`/${kind}/${db}`, body as Uint8Array<ArrayBuffer>),
    async close() {
      await child.stdin.close();
      await child.status;
    },
  };
}

/** Round trips a server has answered (or dropped) so far, by kind. */
export type RoundTripCounts = {
  /** Data-path requests: snapshot reads plus atomic writes. */
  total: number;
  reads: number;
  writes: number;
  /** Metadata exchanges (`Deno.openKv`, and a client's refresh): not data-path round trips. */
  metadata: number;
};

/** A running KV Connect server. */
export type KvConnectServer = {
  /** The URL `Deno.openKv` takes, `http://127.0.0.1:PORT` (h2c: the client speaks HTTP/2 only). */
  readonly url: string;
  /**
   * The URL of another database on this server, `http://127.0.0.1:PORT/db/<name>`, empty until
   * first used; counted, delayed and taken down with the rest.
   */
  databaseUrl(name: string): string;
  readonly port: number;
  /** Counts so far; read it before and after a call and subtract. */
  counts(): RoundTripCounts;
  /** Data-path round trips so far (`counts().total`). */
  readonly roundTrips: number;
  /**
   * Null at start; set to an array, and every data-path request is recorded in it from then on,
   * with its body (tests/helpers/kv_requests.ts describes each).
   */
  log: KvRequest[] | null;
  /** Milliseconds each data-path round trip is held before it is answered; 0 at start. */
  delayMs: number;
  /**
   * Each of the next `n` atomic writes lands, then its reply is lost: it is answered 503, as a
   * reply lost on the network, and the client sends the write again. The resend (the same bytes)
   * is answered: denokv runs it again, so a write with checks then fails them against itself.
   * Resolves once `n` replies have been dropped.
   */
  dropWriteReplies(n?: number): Promise<void>;
  /**
   * Goes down: `"refuse"` closes the listener and every connection, so connections are refused;
   * `"stall"` keeps them open and holds every request unanswered. Resolves once down.
   */
  down(mode?: "refuse" | "stall"): Promise<void>;
  /** Comes back on the same port with the same data; held requests are then answered. */
  up(): Promise<void>;
  /** True while down. */
  readonly isDown: boolean;
  /** Opens a client on this server's first database, or on database `name` (sets DENO_KV_ACCESS_TOKEN for this process). */
  openKv(name?: string): Promise<Deno.Kv>;
  /** Environment a `main.ts` process needs to use this server as its KV. */
  env(): { KV_PATH: string; DENO_KV_ACCESS_TOKEN: string };
  /** Stops serving and closes every database. */
  close(): Promise<void>;
};

/** Options of {@link startKvConnectServer}. */
export type KvConnectServerOptions = {
  /** An SQLite file for the data; in memory by default (kept across `down`/`up`). */
  path?: string;
  /** The port; a free one by default. */
  port?: number;
};

/** Starts a KV Connect server on loopback over a fresh database. */
export async function startKvConnectServer(
  options: KvConnectServerOptions = {},
): Promise<KvConnectServer> {
  const native = await startNativeProcess();
  const databases = new Map<string, Promise<number>>([["", native.open(options.path)]]);
  const database = (name: string) => {
    let db = databases.get(name);
    if (db === undefined) {
      db = native.open();
      databases.set(name, db);
    }
    return db;
  };
  const counts: RoundTripCounts = { total: 0, reads: 0, writes: 0, metadata: 0 };
  let toDrop = 0;
  let dropped = Promise.withResolvers<void>();
  let lastDropped: Uint8Array | null = null;
  let stalled: PromiseWithResolvers<void> | null = null;
  let server: Deno.HttpServer<Deno.NetAddr> | null = null;
  let port = options.port ?? 0;
  let closed = false;

  const answer = async (req: Request): Promise<Response> => {
    if (stalled) await stalled.promise;
    if (req.headers.get("authorization") !== `Bearer ${KV_CONNECT_TOKEN}`) {
      return new Response("Invalid access token", { status: 401 });
    }
    if (req.method !== "POST") return new Response("Method not allowed", { status: 405 });
    const route = /^(?:\/db\/([^/]+))?(\/?|\/v2\/snapshot_read|\/v2\/atomic_write)$/.exec(
      new URL(req.url).pathname,
    );
    if (route === null) {
      return new Response(`No route ${new URL(req.url).pathname}`, { status: 404 });
    }
    const name = route[1] === undefined ? "" : decodeURIComponent(route[1]);
    const db = await database(name);
    if (!route[2].startsWith("/v2/")) return metadata(name);
    const read = route[2].endsWith("/snapshot_read");
    const write = !read;
    const body = new Uint8Array(await req.arrayBuffer());
    counts.total++;
    self.log?.push({ kind: read ? "read" : "write", at: performance.now(), body });
    if (read) counts.reads++;
    else counts.writes++;
    if (self.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, self.delayMs));
    let output: Uint8Array<ArrayBuffer>;
    try {
      output = await native.call(read ? "read" : "write", db, body);
    } catch (error) {
      // denokv's own refusals (TooManyChecks, KeyTooLong, …): a 4xx the client reports, unretried.
      // The native process answers denokv's refusal on one line already.
      return new Response((error as Error).message, { status: 400 });
    }
    if (write && toDrop > 0 && !sameBytes(body, lastDropped)) {
      lastDropped = body;
      if (--toDrop === 0) dropped.resolve();
      return new Response("Reply lost after the write landed", { status: 503 });
    }
    return new Response(output, { headers: { "content-type": "application/x-protobuf" } });
  };

  const metadata = (name: string) => {
    counts.metadata++;
    return Response.json({
      version: 2,
      databaseId: DATABASE_ID,
      endpoints: [{ url: `${databasePath(name)}${DATA_PATH}`, consistency: "strong" }],
      token: KV_CONNECT_TOKEN,
      expiresAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
    });
  };

  const listen = () => {
    server = Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, answer);
    port = server.addr.port;
  };

  const self: KvConnectServer = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    databaseUrl: (name) => `${self.url}${databasePath(name)}`,
    counts: () => ({ ...counts }),
    get roundTrips() {
      return counts.total;
    },
    log: null,
    delayMs: 0,
    dropWriteReplies(n = 1) {
      toDrop = n;
      lastDropped = null;
      dropped = Promise.withResolvers();
      return dropped.promise;
    },
    async down(mode = "refuse") {
      if (self.isDown) return;
      if (mode === "stall") {
        stalled = Promise.withResolvers();
        return;
      }
      const running = server;
      server = null;
      await running?.shutdown();
    },
    up() {
      if (closed) throw new Error("The KV Connect server is closed");
      if (stalled) {
        stalled.resolve();
        stalled = null;
      }
      if (!server) listen();
      return Promise.resolve();
    },
    get isDown() {
      return server === null || stalled !== null;
    },
    async openKv(name = "") {
      Deno.env.set("DENO_KV_ACCESS_TOKEN", KV_CONNECT_TOKEN);
      return await openKv(self.databaseUrl(name));
    },
    env: () => ({ KV_PATH: self.url, DENO_KV_ACCESS_TOKEN: KV_CONNECT_TOKEN }),
    async close() {
      if (closed) return;
      closed = true;
      stalled?.resolve();
      stalled = null;
      const running = server;
      server = null;
      await running?.shutdown();
      await native.close();
    },
  };
  listen();
  return self;
}

/** `Deno.openKv` as the runtime has it, whatever a test later puts in its place. */
const openKv = Deno.openKv.bind(Deno);

function sameBytes(a: Uint8Array, b: Uint8Array | null): boolean {
  return b !== null && a.length === b.length && a.every((byte, i) => byte === b[i]);
}
