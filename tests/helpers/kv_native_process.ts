/**
 * denokv's data path in a process of its own: `snapshotRead` and `atomicWrite` of
 * `npm:@deno/kv-linux-x64-gnu` (a Node-API addon) behind a loopback HTTP server that only
 * {@link ./kv_connect_server.ts} calls. The addon is loaded once, in a plain `deno run`, never in
 * the isolates `deno test --parallel` runs side by side in one process.
 *
 * Prints `{"port":N}` on its first line once it serves; exits when its stdin closes, so it never
 * outlives the test process that started it.
 *
 * Calls: `POST /open` with `{"path": FILE}` or `{}` for memory answers `{"db": N}`;
 * `POST /read/N` and `POST /write/N` take and answer the protobuf bodies of the data path, or
 * 400 with denokv's refusal on one line; `POST /close/N` closes database N.
 * @module
 */
import { createRequire } from "node:module";
import { DENOKV_NATIVE } from "./kv_connect_server.ts";

/** The exports of the native module called here (npm/napi/index.d.ts of denoland/denokv). */
type DenoKvNative = {
  open(path: string, inMemory: boolean | null, debug: boolean): number;
  close(db: number, debug: boolean): void;
  snapshotRead(db: number, request: Uint8Array, debug: boolean): Promise<Uint8Array<ArrayBuffer>>;
  atomicWrite(db: number, request: Uint8Array, debug: boolean): Promise<Uint8Array<ArrayBuffer>>;
};

/**
 * Loads the native module from Deno's npm cache, fetching it there first if it is missing. A
 * `.node` addon loads only through `require`, and `require` resolves no `npm:` specifier without a
 * node_modules directory, so the file is found through `deno info --json`.
 */
async function loadNative(): Promise<DenoKvNative> {
  const at = DENOKV_NATIVE.lastIndexOf("@");
  const [name, version] = [DENOKV_NATIVE.slice(0, at), DENOKV_NATIVE.slice(at + 1)];
  const info = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  const { npmCache } = JSON.parse(new TextDecoder().decode(info.stdout)) as { npmCache: string };
  const file = `${npmCache}/registry.npmjs.org/${name}/${version}/deno-kv-napi.linux-x64-gnu.node`;
  if (!(await exists(file))) {
    const cached = await new Deno.Command(Deno.execPath(), {
      args: ["cache", "--no-lock", `npm:${DENOKV_NATIVE}`],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!cached.success) {
      throw new Error(
        `Could not fetch npm:${DENOKV_NATIVE}: ${new TextDecoder().decode(cached.stderr)}`,
      );
    }
  }
  return createRequire(import.meta.url)(file) as DenoKvNative;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split("\n")[0];
}

async function serve(): Promise<void> {
  const napi = await loadNative();
  const open = new Set<number>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const [, call, id] =
      /^\/(open|read|write|close)(?:\/(\d+))?$/.exec(new URL(req.url).pathname) ??
        [];
    if (req.method !== "POST" || call === undefined) return new Response(null, { status: 404 });
    if (call === "open") {
      const { path } = await req.json() as { path?: string };
      const db = path === undefined
        ? napi.open(":memory:", true, false)
        : napi.open(path, false, false);
      open.add(db);
      return Response.json({ db });
    }
    const db = Number(id);
    if (!open.has(db)) return new Response(`No database ${id}`, { status: 404 });
    if (call === "close") {
      open.delete(db);
      napi.close(db, false);
      return new Response(null, { status: 204 });
    }
    const body = new Uint8Array(await req.arrayBuffer());
    try {
      const output = await (call === "read"
        ? napi.snapshotRead(db, body, false)
        : napi.atomicWrite(db, body, false));
      return new Response(output);
    } catch (error) {
      // denokv's own refusals (TooManyChecks, KeyTooLong, …).
      return new Response(firstLine(error), { status: 400 });
    }
  });
  console.log(JSON.stringify({ port: server.addr.port }));
  // The test process holds the other end of stdin: when it goes, so does this process.
  for await (const _ of Deno.stdin.readable) { /* nothing is sent */ }
  for (const db of open) napi.close(db, false);
  Deno.exit(0);
}

if (import.meta.main) await serve();
