// A relayed phone's own traffic through the relay (page §14.9), as the relay room test counts it:
// every POST a phone's page sends the relay, timed on the test's clock, and the figures the room's
// budget is held to: relayed reads at the opening before its vote is signed, relayed requests a
// minute over its time in the room after its registration, and its busiest 60 s.
import type { Page } from "playwright-core";

/** What one phone sent the relay, and when it began to sign (ms since the epoch). */
export type PhoneTraffic = {
  name: string;
  /** When each relayed request left the page. */
  relayed: number[];
  /** When its registration was answered; null before. */
  registeredAt: number | null;
  /** When it showed "Signing vote…" first; null before. */
  signingAt: number | null;
  /** When it first showed its send window, which it does once a state read shows voting open. */
  learnedAt?: number | null;
  /** When each relayed request left, on the page's own clock (since its last load). */
  inPage?: number[];
};

/** The figures of one phone. */
export type TrafficFigures = {
  name: string;
  /**
   * Relayed requests at the opening: from the state read that showed voting open (the last request
   * sent before the page showed its send window) until it began to sign.
   */
  openingReads: number;
  /** Relayed requests from the presenter's press until it began to sign (a stale poll included). */
  sincePress: number;
  /** Relayed requests a minute, from its registration to `until`. */
  perMinute: number;
  /** The most relayed requests in any 60 s from its registration to `until`. */
  busiestMinute: number;
  /** Minutes from its registration to `until`. */
  minutes: number;
  count: number;
};

/** A sliding window of 60 s. */
const MINUTE_MS = 60_000;

/** The largest count of `times` (sorted) in any window of `spanMs`. */
export function busiest(times: readonly number[], spanMs = MINUTE_MS): number {
  let most = 0;
  let first = 0;
  for (let last = 0; last < times.length; last++) {
    while (times[last] - times[first] >= spanMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * Counts `page`'s posts to `relay` into `traffic` and its registration's answer; call before the
 * page loads.
 */
export async function countRelayed(
  page: Page,
  relay: string,
  traffic: PhoneTraffic,
): Promise<void> {
  // The page notes each post to the relay itself, on the clock its other marks use.
  await page.addInitScript((relay: string) => {
    const times: number[] = [];
    const scope = globalThis as unknown as { relayedAt: number[]; fetch: typeof fetch };
    scope.relayedAt = times;
    const original = scope.fetch;
    scope.fetch = function (input: RequestInfo | URL, init?: RequestInit) {
      const url = input instanceof Request ? input.url : String(input);
      const method = init?.method ?? (input instanceof Request ? input.method : "GET");
      if (method === "POST" && url === relay) times.push(Date.now());
      return original.call(this, input, init);
    };
  }, relay);
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url() === relay) traffic.relayed.push(Date.now());
  });
  page.on("response", (response) => {
    const request = response.request();
    if (
      request.method() === "POST" && /\/api\/rounds\/\d+\/pki\/key$/.test(request.url()) &&
      response.status() < 300 && traffic.registeredAt === null
    ) traffic.registeredAt = Date.now();
  });
}

/**
 * Notes in the page when it first shows its send window and "Signing vote…"; read with
 * {@link signingAt}.
 */
export async function watchSigning(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen = globalThis as unknown as { signingAt?: number; learnedAt?: number };
    const observer = new MutationObserver(() => {
      if (seen.learnedAt === undefined && document.querySelector("[data-send-window]")) {
        seen.learnedAt = Date.now();
      }
      for (const notice of document.querySelectorAll(".notice-working")) {
        if (notice.textContent === "Signing vote…") {
          seen.signingAt = Date.now();
          observer.disconnect();
        }
      }
    });
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

/**
 * When `page` first showed its send window and "Signing vote…" (null: not yet), and its posts to
 * the relay since it loaded, all on its own clock.
 */
export async function signingAt(
  page: Page,
): Promise<{ signingAt: number | null; learnedAt: number | null; inPage: number[] }> {
  return await page.evaluate(() => {
    const seen = globalThis as unknown as {
      signingAt?: number;
      learnedAt?: number;
      relayedAt?: number[];
    };
    return {
      signingAt: seen.signingAt ?? null,
      learnedAt: seen.learnedAt ?? null,
      inPage: [...(seen.relayedAt ?? [])],
    };
  });
}

/** The figures of `traffic` for a round opened at `openedAt`, counted until `until`. */
export function figures(traffic: PhoneTraffic, openedAt: number, until: number): TrafficFigures {
  const from = traffic.registeredAt ?? openedAt;
  const signing = traffic.signingAt ?? until;
  const after = traffic.relayed.filter((at) => at > from && at <= until).sort((a, b) => a - b);
  const minutes = (until - from) / MINUTE_MS;
  const learned = traffic.learnedAt ?? openedAt;
  // The page's own times for the opening (the test's clock hears of a request a little late).
  const inPage = traffic.inPage ?? traffic.relayed;
  const before = inPage.filter((at) => at <= learned);
  const revealing = before.length > 0 ? Math.max(...before) : openedAt;
  return {
    name: traffic.name,
    openingReads: inPage.filter((at) => at >= revealing && at <= signing).length,
    sincePress: traffic.relayed.filter((at) => at >= openedAt && at <= signing).length,
    perMinute: after.length / minutes,
    busiestMinute: busiest(after),
    minutes,
    count: after.length,
  };
}

/** One line of the figures of a room's phones: the worst phone and the room's mean. */
export function summary(all: readonly TrafficFigures[]): string {
  const max = (pick: (f: TrafficFigures) => number) => Math.max(...all.map(pick));
  const count = all.reduce((n, f) => n + f.count, 0);
  const minutes = all.reduce((n, f) => n + f.minutes, 0);
  return `relayed per phone (${all.length} phones): opening reads before signing max ` +
    `${max((f) => f.openingReads)} (from the presenter's press: ${max((f) => f.sincePress)}); ` +
    `per minute mean ${(count / minutes).toFixed(1)} ` +
    `(${count} over ${minutes.toFixed(1)} phone-minutes), max ${
      max((f) => f.perMinute).toFixed(1)
    }; busiest 60 s max ${max((f) => f.busiestMinute)}\n` +
    all.map((f) =>
      `  ${f.name}: ${f.openingReads} at the opening (${f.sincePress} from the press), ${f.count} in ${
        f.minutes.toFixed(2)
      } min ` +
      `(${f.perMinute.toFixed(1)}/min), busiest ${f.busiestMinute}`
    ).join("\n");
}
