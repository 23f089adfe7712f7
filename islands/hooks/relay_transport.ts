/**
 * The page transport with a relay pinned (protocol §7), loaded by ./page_fetch.ts only on a page
 * that holds a pin: the relay's key configuration checked at load and before the key registration,
 * every round call after the registration sent through the relay, a vote held for its send window,
 * and the HPKE and Binary HTTP code and the anonymity worker loaded at join.
 * @module
 */
import { createApiClient, type Transport } from "../../lib/client/api_client.ts";
import type { RelayPin } from "../../lib/client/relay/fragment.ts";
import {
  createPageTransport,
  mismatchText,
  roundOfPath,
  type RoundTiming,
} from "../../lib/client/relay/page_transport.ts";
import {
  checkPinnedKeys,
  createRelayedTransport,
  RelayError,
} from "../../lib/client/relay/relayed_transport.ts";
import type { RoundInfo } from "../../lib/protocol/schemas.ts";
import { loadSigning } from "../../lib/client/voter/panel_actions.ts";
import { startWorker } from "../runtime.ts";
import { holdsRegisteredKey } from "./registered_key.ts";
import { quietTiming } from "./quiet_room.ts";
import { pageBudget } from "./page_budget.ts";
import {
  pageLoadedAt,
  pagePin,
  RELAY_REGISTERED_KEY,
  relayAlert,
  relayDown,
  relayWait,
} from "./relay_state.ts";

let loadCheck: Promise<void> | null = null;

/** Checks the pinned relay's key configuration once per page; a mismatch raises the alert. */
export function checkRelayAtLoad(): Promise<void> {
  loadCheck ??= (async () => {
    const { pin } = pagePin();
    if (pin === null) return;
    const check = await checkPinnedKeys({ pin, fetch });
    if (check.kind === "mismatch") relayAlert.value = mismatchText(pin, check);
    // A phone reloaded after it joined fetches what its vote needs with the page, not with the vote.
    if (check.kind === "ok") loadVotingCode(pin);
  })();
  return loadCheck;
}

/**
 * Fetches the code a vote and a verified vote run (the sealing, the signing, the lens and its
 * worker), so that no fetch of the page's files comes near the vote: at join, and with the page.
 */
function loadVotingCode(pin: RelayPin): void {
  relayedFor(pin).catch(() => {});
  warmWorker("anonymity");
  loadSigning().catch(() => {});
  import("../../lib/client/anonymity/anonymity_lens.ts").catch(() => {});
}

/** Rounds as last read through the page's transport, by id. */
const rounds = new Map<number, RoundInfo>();

/** Round `id` as listed by `GET /api/rounds`, read again until its voting has opened. */
async function roundInfo(id: number): Promise<RoundInfo | null> {
  const known = rounds.get(id);
  if (known !== undefined && known.openedAt !== null) return known;
  const list = await createApiClient({ fetch: relayPageTransport }).rounds();
  for (const round of list.rounds) rounds.set(round.id, round);
  return rounds.get(id) ?? null;
}

async function timing(id: number): Promise<RoundTiming | null> {
  // A quiet phone's round: from its state read, with the phone's own W (page §14.7).
  const quiet = quietTiming(id);
  if (quiet !== null) return quiet;
  const info = await roundInfo(id).catch(() => null);
  if (info === null || info.openedAt === null) return null;
  return { openedAt: info.openedAt, intervalMs: info.blockIntervalMs };
}

async function choicesOf(path: string): Promise<readonly string[]> {
  const id = roundOfPath(path);
  const info = typeof id === "number" ? await roundInfo(id) : null;
  if (info === null) throw new Error(`The round of ${path} is not listed`);
  return info.choices;
}

let relayed: { key: string; transport: Promise<Transport> } | null = null;

/** The relayed transport of `pin`, its sealing code loaded on first use (a chunk of its own). */
function relayedFor(pin: RelayPin): Promise<Transport> {
  const key = `${pin.relay} ${pin.ohttp}`;
  if (relayed?.key !== key) {
    const transport = import("../../lib/client/relay/sealing.ts").then(
      ({ sealingEncapsulator }) => {
        const origin = location.origin;
        const made = createRelayedTransport({
          pin,
          origin,
          fetch,
          encapsulator: sealingEncapsulator({ ohttp: pin.ohttp, origin, choicesOf }),
        });
        return alerting(pin, made.transport);
      },
    );
    relayed = { key, transport };
    // A chunk that failed to load is loaded again by the next call.
    transport.catch(() => {
      if (relayed?.transport === transport) relayed = null;
    });
  }
  return relayed.transport;
}

/**
 * `transport`, raising the alert when the relay's key configuration is not the pinned one, and
 * saying while the relay does not answer (the page's calls are retried, never sent directly).
 */
function alerting(pin: RelayPin, transport: Transport): Transport {
  return async (url, init) => {
    try {
      const response = await transport(url, init);
      relayDown.value = null;
      return response;
    } catch (error) {
      if (error instanceof RelayError && error.kind === "key-mismatch") {
        relayAlert.value = error.message;
      }
      if (error instanceof RelayError && error.kind === "relay-unreachable") {
        relayDown.value = pin.relay;
      }
      throw error;
    }
  };
}

/** How long a worker started only to load its code is kept. */
const WARM_WORKER_MS = 15_000;

/** The workers started once already by this page. */
const warmed = new Set<string>();

/**
 * Starts worker `name` and stops it a little later, once per page: its code is then in the
 * browser's cache, so the lens started once the vote is verified asks the server for nothing.
 */
function warmWorker(name: string): void {
  if (warmed.has(name)) return;
  warmed.add(name);
  try {
    const worker = startWorker(name);
    setTimeout(() => worker.terminate(), WARM_WORKER_MS);
  } catch {
    // A build without the worker: the lens says so when it runs.
  }
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/** Browser-storage prefix of the ballot answers kept, by API path. */
const KEPT_PREFIX = "ringvote/relay-kept/";

let transport: Transport | null = null;

/** Records that this browser's phone has joined with a relay pinned. */
function markRegistered(): void {
  localStorage.setItem(RELAY_REGISTERED_KEY, String(Date.now()));
}

/** The page transport with the page's pin (see the module comment), made on first use. */
export const relayPageTransport: Transport = (url, init) => {
  transport ??= createPageTransport({
    direct: fetch,
    pin: () => pagePin().pin,
    registered: (round) => {
      if (localStorage.getItem(RELAY_REGISTERED_KEY) !== null) return true;
      // A key of the round registered before the pin was held: the relay is on from now on.
      if (typeof round !== "number" || !holdsRegisteredKey(localStorage, round)) return false;
      markRegistered();
      return true;
    },
    markRegistered,
    keyCheck: async (pin) => {
      // Before the registration: the server's own configuration may be read directly.
      const check = await checkPinnedKeys({ pin, fetch, origin: location.origin });
      // The phone joins: its sealing code and the anonymity worker load now, never when it votes.
      if (check.kind === "ok") loadVotingCode(pin);
      return check;
    },
    relayed: relayedFor,
    timing,
    now: Date.now,
    sleep,
    random: () => crypto.getRandomValues(new Uint32Array(1))[0] / 2 ** 32,
    loadedAt: pageLoadedAt,
    onAlert: (check) => (relayAlert.value = mismatchText(pagePin().pin!, check)),
    onWait: (wait) => (relayWait.value = wait),
    budget: pageBudget(),
    kept: {
      get: (path) => {
        const kept = localStorage.getItem(KEPT_PREFIX + path);
        return kept === null ? null : JSON.parse(kept);
      },
      set: (path, answer) => localStorage.setItem(KEPT_PREFIX + path, JSON.stringify(answer)),
    },
  });
  return transport(url, init);
};
