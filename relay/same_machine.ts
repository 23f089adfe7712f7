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
 * The IPv4 address an IPv4-mapped IPv6 address (`::ffff:7f00:1`, `::ffff:127.0.0.1`) stands for,
 * or `address` as it is.
 */
function unmapped(address: string): string {
  const m = /^(?:0:0:0:0:0:|::)ffff:(?:([0-9a-f]{1,4}):([0-9a-f]{1,4})|([\d.]+))$/.exec(address);
  if (m === null) return address;
  if (m[3] !== undefined) return m[3];
  const [hi, lo] = [parseInt(m[1], 16), parseInt(m[2], 16)];
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
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
  const bare = unmapped(hostname.replace(/^\[|\]$/g, "").toLowerCase());
  if (isLoopback(bare)) return true;
  const mine = new Set(own.map((a) => a.toLowerCase()));
  if (mine.has(bare)) return true;
  if (/^[\d.]+$/.test(bare) || bare.includes(":")) return false;
  const addresses = await resolve(bare).catch(() => [] as string[]);
  return addresses.map((a) => unmapped(a.toLowerCase())).some((a) => isLoopback(a) || mine.has(a));
}

/** Every address `name` resolves to (A and AAAA), none when it does not. */
export async function resolveName(name: string): Promise<string[]> {
  const answers = await Promise.allSettled([
    Deno.resolveDns(name, "A"),
    Deno.resolveDns(name, "AAAA"),
  ]);
  return answers.flatMap((a) => a.status === "fulfilled" ? a.value : []);
}
