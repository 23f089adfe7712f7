/**
 * Whether the relay and its gateway run on one machine (then the relay protects nothing): the
 * gateway's host is a loopback address or name, or resolves to one of this machine's addresses.
 * @module
 */

/** True for 127.0.0.0/8, ::1 and `localhost` (and names under it). */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare.endsWith(".localhost") || bare === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || bare === "0.0.0.0" || bare === "::";
}

/**
 * True when `hostname` is loopback, one of `own` (this machine's interface addresses), or a name
 * that `resolve` maps to one of them. A name that does not resolve counts as another machine.
 */
export async function isSameMachine(
  hostname: string,
  own: readonly string[],
  resolve: (name: string) => Promise<string[]>,
): Promise<boolean> {
  const bare = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (isLoopback(bare)) return true;
  const mine = new Set(own.map((a) => a.toLowerCase()));
  if (mine.has(bare)) return true;
  if (/^[\d.]+$/.test(bare) || bare.includes(":")) return false;
  const addresses = await resolve(bare).catch(() => [] as string[]);
  return addresses.some((a) => isLoopback(a) || mine.has(a.toLowerCase()));
}

/** Every address `name` resolves to (A and AAAA), none when it does not. */
export async function resolveName(name: string): Promise<string[]> {
  const answers = await Promise.allSettled([
    Deno.resolveDns(name, "A"),
    Deno.resolveDns(name, "AAAA"),
  ]);
  return answers.flatMap((a) => a.status === "fulfilled" ? a.value : []);
}
