// Starts the relay (relay.ts) as its own deno process on a free loopback port, for tests.
const ROOT = new URL("../../", import.meta.url);

/** A running relay process. */
export type RelayProcess = {
  /** Its address, with a trailing slash. */
  url: string;
  /** The SHA-256 (base64url) of the key configuration it pinned, as it printed it. */
  sha256: string;
  /** Everything it printed so far. */
  output(): string;
  /** Its process id (the hall bench reads its CPU time). */
  pid: number;
  /** Stops it (SIGTERM) and waits for it to end. */
  stop(): Promise<void>;
};

/** Spawns `deno run relay.ts --gateway <gateway> …` and resolves once it prints its address. */
export async function startRelay(gateway: string, args: string[] = []): Promise<RelayProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-sys=networkInterfaces",
      "--config",
      new URL("deno.json", ROOT).pathname,
      new URL("relay.ts", ROOT).pathname,
      "--gateway",
      gateway,
      "--port",
      "0",
      "--hostname",
      "127.0.0.1",
      ...args,
    ],
    cwd: ROOT.pathname,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let log = "";
  const decoder = new TextDecoder();
  const listening = Promise.withResolvers<RegExpExecArray>();
  const drain = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(
      new WritableStream({
        write(chunk) {
          log += decoder.decode(chunk, { stream: true });
          const line = /relay listening on (\S+) .*sha256 ([A-Za-z0-9_-]{43})/.exec(log);
          if (line) listening.resolve(line);
        },
      }),
    ).catch(() => {});
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const status = child.status;
  let exited = false;
  void status.then(() => {
    exited = true;
    listening.reject(new Error(`relay exited before listening:\n${log}`));
  });
  const stop = async () => {
    if (!exited) {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
    }
    await status;
    await drained;
  };
  const timer = setTimeout(
    () => listening.reject(new Error(`relay did not start:\n${log}`)),
    60_000,
  );
  try {
    const [, url, sha256] = await listening.promise;
    return { url, sha256, output: () => log, pid: child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
