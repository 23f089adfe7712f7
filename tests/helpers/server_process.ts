// Starts the real server (main.ts) as a separate deno process on a free port, for tests that
// need real HTTP, several processes on one database, or a browser.
import { createApiClient } from "../../lib/client/api_client.ts";

const ROOT = new URL("../../", import.meta.url);
const MAIN = new URL("main.ts", ROOT);
const CONFIG = new URL("deno.json", ROOT);

/** A running server process. */
export type ServerProcess = {
  /** Base URL with a trailing slash, e.g. `http://127.0.0.1:40123/`. */
  url: string;
  port: number;
  /** Stops the process (SIGTERM) and waits for it and its output to end. */
  stop(): Promise<void>;
  process: Deno.ChildProcess;
  /** Everything the process printed so far, stdout and stderr interleaved. */
  output(): string;
};

/** Options of {@link startServer}. */
export type StartOptions = {
  /**
   * Environment of the server. Defaults: `KV_PATH=:memory:`, `BLOCK_INTERVAL_MS=250`, `PORT` a
   * free port, `LISTEN_HOSTNAME=127.0.0.1` (tests listen on loopback only); PATH, HOME and
   * DENO_DIR are passed through, nothing else is inherited.
   */
  env?: Record<string, string>;
  /** How long to wait for the server to answer, in ms. */
  timeoutMs?: number;
  /** The entry module; main.ts by default (tests/helpers/edge_main.ts runs it without Worker). */
  entry?: URL;
  /** V8 flags for the server, e.g. `--max-old-space-size=512` (the edge profile's memory). */
  v8Flags?: string[];
};

/** A TCP port nothing listens on right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Spawns `deno run -A main.ts` and resolves once the chain's status can be read. */
export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const port = Number(options.env?.PORT ?? freePort());
  const env: Record<string, string> = {
    KV_PATH: ":memory:",
    BLOCK_INTERVAL_MS: "250",
    LISTEN_HOSTNAME: "127.0.0.1",
    ...passThrough(),
    ...options.env,
    PORT: String(port),
  };
  const process = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      CONFIG.pathname,
      ...(options.v8Flags?.length ? [`--v8-flags=${options.v8Flags.join(",")}`] : []),
      (options.entry ?? MAIN).pathname,
    ],
    cwd: ROOT.pathname,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let log = "";
  const decoder = new TextDecoder();
  const drain = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(
      new WritableStream({
        write(chunk) {
          log += decoder.decode(chunk, { stream: true });
        },
      }),
    ).catch(() => {});
  const drained = Promise.all([drain(process.stdout), drain(process.stderr)]);
  let exited = false;
  const status = process.status.then((s) => {
    exited = true;
    return s;
  });

  const url = `http://127.0.0.1:${port}/`;
  const api = createApiClient({ fetch, baseUrl: url });
  const stop = async () => {
    if (!exited) {
      try {
        process.kill("SIGTERM");
      } catch {
        // Already gone.
      }
    }
    await status;
    await drained;
  };

  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (exited) {
      await drained;
      throw new Error(`Server exited before answering:\n${log}`);
    }
    try {
      await api.blockStatus();
      break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Server did not answer within the time limit:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, port, stop, process, output: () => log };
}

function passThrough(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "DENO_DIR", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}
