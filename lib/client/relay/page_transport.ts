/**
 * Browser-safe. The one choice of how a page's API calls travel (protocol §7): with no relay
 * pinned, straight to the server; with one, the key registration goes straight to the server once
 * the relay's key configuration is held to the pin, and every call after it goes through the relay,
 * never straight again. A vote waits for its send window; a call naming a ballot made soon after
 * the page loaded waits a random time, so a page load is not a beacon for the call that follows,
 * and once answered it is kept and never asked again.
 * @module
 */
import { callKind, roundOfPath, type Transport } from "../api_client.ts";
import type { RelayPin } from "./fragment.ts";
import { type KeyCheck, RelayError } from "./relayed_transport.ts";
import { planResume, planVoteSend, type Random, type SendPlan } from "./send_window.ts";

// Which call a path is, and which round it calls, are the API client's to say: it alone writes
// the API's paths (lib/client/api_client.ts).
export { type CallKind, callKind, roundOfPath } from "../api_client.ts";

/** When a round's voting opened and how often it seals (`GET /api/rounds`). */
export type RoundTiming = { openedAt: number; intervalMs: number };

/** A wait the page is in: a vote held for its send window, or a ballot read held after a load. */
export type Wait = { kind: "vote" | "ballot"; until: number };

/** What the page transport needs from the page. */
export type PageTransportDeps = {
  /** The network, straight to the server. */
  direct: Transport;
  /** The relay pin calls of `round` go through, read at each call (protocol §7.4). */
  pin(round: number | "list" | null): RelayPin | null;
  /**
   * True once this browser registered a key with the relay pinned (kept in its storage), or holds
   * a registered key of `round` (made before the pin was held).
   */
  registered(round: number | "list"): boolean;
  /** Records that this browser registered a key of `round`, or voted in it (it has joined). */
  markRegistered(round: number | "list"): void;
  /**
   * Reads the relay's key configuration and holds it to `pin`, the pin of `round` (no HPKE
   * needed), before a registration in `round`.
   */
  keyCheck(pin: RelayPin, round: number | "list"): Promise<KeyCheck>;
  /** The relayed transport for `pin`, its HPKE code loaded on first use. */
  relayed(pin: RelayPin): Promise<Transport>;
  /** The timing of round `round`, read through the relay; null when unknown. */
  timing(round: number): Promise<RoundTiming | null>;
  /** The clock, a sleep and the random source of the send window. */
  now(): number;
  sleep(ms: number, signal?: AbortSignal | null): Promise<void>;
  random: Random;
  /** When the page loaded (ms since the epoch). */
  loadedAt: number;
  /** Hears a mismatch of the relay's key configuration (the page shows `[data-relay-alert]`). */
  onAlert?(check: KeyCheck & { kind: "mismatch" }): void;
  /** Hears a wait beginning and its end (null). */
  onWait?(wait: Wait | null): void;
  /**
   * Answers kept by path: a ballot's tag, proof and the block hash before it, once answered 200,
   * never change (the fork watch guards them from then on), so they are read once.
   */
  kept?: {
    get(path: string): KeptAnswer | null;
    set(path: string, answer: KeptAnswer): void;
  };
};

/** A kept answer: its content type and body. */
export type KeptAnswer = { type: string; body: string };

/** The sealing interval assumed for a round whose timing could not be read (protocol default). */
export const FALLBACK_INTERVAL_MS = 15_000;

/** The page's transport (see the module comment). */
export function createPageTransport(deps: PageTransportDeps): Transport {
  // Called on its own, never as a method of `deps`: `fetch` refuses any `this` but the window.
  const { direct } = deps;
  /** Straight calls under way, and registrations under way. */
  const underway = new Set<Promise<Response>>();
  let registering = 0;
  let quietAt: number | null = null;
  const ballotQuietAt = async (round: number) => {
    if (quietAt === null) {
      // Without its timing, the round is taken as opened long ago: a draw from the load on.
      const { openedAt, intervalMs } = await deps.timing(round) ??
        { openedAt: 0, intervalMs: FALLBACK_INTERVAL_MS };
      quietAt = planResume({ openedAt, loadedAt: deps.loadedAt, intervalMs }, deps.random).at;
    }
    return quietAt;
  };

  const hold = async (wait: Wait, signal: AbortSignal | null) => {
    const ms = wait.until - deps.now();
    if (ms <= 0) return;
    deps.onWait?.(wait);
    try {
      await deps.sleep(ms, signal);
    } finally {
      deps.onWait?.(null);
    }
  };

  return async (url, init) => {
    const path = new URL(url, "http://page.invalid").pathname;
    const round = roundOfPath(path);
    const pin = deps.pin(round);
    // The election (round 1) and the lab keep their specified calls, straight to the server; so
    // does the presenter's, which names its sender by its token anyway.
    const presenter = new Headers(init.headers).has("authorization");
    if (pin === null || round === null || presenter) return await direct(url, init);
    const kind = callKind(init.method ?? "GET", path);
    if (kind === "registration") {
      const check = await deps.keyCheck(pin, round);
      if (check.kind === "mismatch") {
        deps.onAlert?.(check);
        throw new RelayError("key-mismatch", mismatchText(pin, check));
      }
      if (check.kind === "unavailable") {
        throw new RelayError("relay-unreachable", `Nothing was sent: ${check.reason}`);
      }
      // From here on every other call goes through the relay, and the registration waits for the
      // straight calls already under way: none reaches the server after it.
      registering++;
      try {
        await Promise.allSettled(underway);
        const response = await direct(url, init);
        if (response.ok || await registeredAlready(response)) deps.markRegistered(round);
        return response;
      } finally {
        registering--;
      }
    }
    // A vote says the phone has joined, whether or not this browser saw its registration (made
    // before the pin was held, or refused as made already): it and everything after it go through
    // the relay. A read naming a ballot never goes straight.
    if (kind === "vote") deps.markRegistered(round);
    if (registering === 0 && !deps.registered(round) && kind !== "ballot") {
      const call = Promise.resolve(direct(url, init));
      underway.add(call);
      try {
        return await call;
      } finally {
        underway.delete(call);
      }
    }
    const signal = init.signal ?? null;
    if (kind === "vote" && round !== "list") {
      const plan = votePlan(await deps.timing(round), deps);
      await hold({ kind: "vote", until: plan.at }, signal);
    } else if (kind === "ballot" && round !== "list") {
      // A sealed ballot's answer, once read, is never asked again: a reload names nothing.
      const kept = deps.kept?.get(path);
      if (kept) return new Response(kept.body, { headers: { "content-type": kept.type } });
      // Only the first few seconds after a load are held: later, the draw has passed.
      await hold({ kind: "ballot", until: await ballotQuietAt(round) }, signal);
      const answer = await (await deps.relayed(pin))(url, init);
      if (answer.status === 200 && deps.kept) {
        const type = answer.headers.get("content-type") ?? "application/json";
        deps.kept.set(path, { type, body: await answer.clone().text() });
      }
      return answer;
    }
    const transport = await deps.relayed(pin);
    return await transport(url, init);
  };
}

/** True for a registration refused 409 `duplicate_key`: the key is registered all the same. */
async function registeredAlready(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  try {
    return (await response.clone().json())?.error?.code === "duplicate_key";
  } catch {
    return false;
  }
}

/** The send plan of a vote asked for now: its round's window, or U[0, W] from now without one. */
function votePlan(
  timing: RoundTiming | null,
  { now, random }: Pick<PageTransportDeps, "now" | "random">,
): SendPlan {
  const at = now();
  const { openedAt, intervalMs } = timing ?? { openedAt: at, intervalMs: FALLBACK_INTERVAL_MS };
  return planVoteSend({ openedAt, pressedAt: at, intervalMs }, random);
}

/**
 * The words of a key configuration mismatch: what the relay served (or the server publishes), what
 * the code said.
 */
export function mismatchText(
  pin: RelayPin,
  check: { served: string; expected: string; by?: "relay" | "server" },
): string {
  const served = check.served.slice(0, 8);
  const expected = check.expected.slice(0, 8);
  if (check.by === "server") {
    return `The server publishes key configuration ${served}, not ${expected} as the presenter's ` +
      `code says: the relay ${pin.relay} could read every call it forwards. Nothing was sent. ` +
      "Scan the presenter's code again.";
  }
  return `The relay ${pin.relay} serves key configuration ${served}, not ${expected} as the ` +
    "presenter's code says: nothing was sent. Scan the presenter's code again.";
}
