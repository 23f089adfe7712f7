// The hall bench's processes: the relay (`deno task relay`'s program) on loopback, and the CPU
// time any process has used so far, read from /proc (Linux).

const ROOT = new URL("../../", import.meta.url);

/** The clock ticks a second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) process `pid` has used so far, its threads included. */
export function cpuSeconds(pid: number | "self"): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** A running relay: its address without a trailing slash, its pinned hash and its pid. */
export type Relay = { url: string; sha256: string; pid: number; stop(): Promise<void> };

/** Spawns the relay (relay.ts, as `deno task relay` runs it) for `gateway` on a loopback port. */
export async function startRelay(gateway: string): Promise<Relay> {
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
          if (log.length > 100_000) log = log.slice(-50_000);
          const line = /relay listening on (\S+) .*sha256 ([A-Za-z0-9_-]{43})/.exec(log);
          if (line) listening.resolve(line);
        },
      }),
    ).catch(() => {});
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const timer = setTimeout(
    () => listening.reject(new Error(`relay did not start:\n${log}`)),
    60_000,
  );
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await child.status;
    await drained;
  };
  try {
    const [, url, sha256] = await listening.promise;
    return { url: url.replace(/\/+$/, ""), sha256, pid: child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
