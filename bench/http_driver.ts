// What the HTTP benches share: posting many bodies with a fixed number of requests in flight,
// percentiles of the latencies, and rings drawn uniformly from a directory (protocol §2 "Ring").
import type { TestVoter } from "../tests/helpers/ledger_fixtures.ts";

/** The p-th percentile of ascending `sorted`. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Posts every body to `path` with `inFlight` clients, throwing on any answer but `status`;
 * returns each request's latency in ms, in completion order.
 */
export async function postAll(
  url: string,
  bodies: unknown[],
  opts: { path: string; inFlight: number; status: number },
): Promise<number[]> {
  const { path } = opts;
  const latencies: number[] = [];
  let at = 0;
  const client = async () => {
    while (at < bodies.length) {
      const body = JSON.stringify(bodies[at++]);
      const started = performance.now();
      const res = await fetch(new URL(path, url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const text = await res.text();
      latencies.push(performance.now() - started);
      if (res.status !== opts.status) throw new Error(`${path} answered ${res.status}: ${text}`);
    }
  };
  await Promise.all(Array.from({ length: opts.inFlight }, client));
  return latencies;
}

/** The signer and `size - 1` other voters drawn uniformly from `directory`, ordered by key. */
export function sampledRing(signer: TestVoter, directory: TestVoter[], size: number): TestVoter[] {
  const ring = new Set([signer]);
  while (ring.size < size) ring.add(directory[Math.floor(Math.random() * directory.length)]);
  return [...ring].sort((a, b) => (a.key < b.key ? -1 : 1));
}
