/**
 * The page transport with a relay pinned (protocol §7), loaded by ./page_fetch.ts only on a page
 * that holds a pin: the relay's key configuration checked at load and before the key registration,
 * every round call after the registration sent through the relay, a vote held for its send window,
 * and the HPKE and Binary HTTP code and the anonymity worker loaded at join.
 * @module
 */
import { createApiClient, type Transport } from "../../lib/client/api_client.ts";
import { type RelayPin, samePin, serializePin } from "../../lib/client/relay/fragment.ts";
import {
  createPageTransport,
  mismatchText,
  roundOfPath,
  type RoundTiming,
} from "../../lib/client/relay/page_transport.ts";
import {
  checkPinnedKeys,
  createRelayedTransport,
  type KeyCheck,
  RelayError,
} from "../../lib/client/relay/relayed_transport.ts";
import { confirmText, pinForRound, registrationPin } from "../../lib/client/relay/round_pins.ts";
import { parsePin } from "../../lib/client/relay/fragment.ts";
import type { RoundInfo } from "../../lib/protocol/schemas.ts";
import { loadSigning } from "../../lib/client/voter/panel_actions.ts";
import { startWorker } from "../runtime.ts";
import { holdsRegisteredKey } from "./registered_key.ts";
import { quietTiming } from "./quiet_room.ts";

export { afterHold, ownWindowMs, quietAnswer, startQuietReads, windowLines } from "./quiet_room.ts";
export { readGroupFromState } from "../../lib/client/rounds/state_group.ts";
import { pageBudget } from "./page_budget.ts";
import {
  heldPin,
  pageLoadedAt,
  pagePin,
  RELAY_PIN_KEY,
  RELAY_ROUND_PREFIX,
  relayAlert,
  relayConfirm,
  relayDown,
  relayWait,
} from "./relay_state.ts";

/** The phone's stored pin (null for a phone that never took one). */
function currentPin(): RelayPin | null {
  const { pin, candidate } = pagePin();
  return pin !== null && pin === candidate ? null : pin;
}

/** Takes the page's candidate as the phone's pin, checked: stored, and its calls go through it. */
function takePin(pin: RelayPin, serialized: string): void {
  localStorage.setItem(RELAY_PIN_KEY, serialized);
  heldPin.value = { ...pagePin(), pin, candidate: null };
}

/** Drops the page's candidate: the phone goes on with its pin. */
function dropCandidate(): void {
  const held = pagePin();
  if (held.candidate !== null && held.pin !== held.candidate) {
    heldPin.value = { ...held, candidate: null };
  }
}

/** The pin round `round` was joined under, or null. */
function frozenPin(round: number, parse: (stored: string | null) => RelayPin | null) {
  return parse(localStorage.getItem(RELAY_ROUND_PREFIX + round));
}

/** Records that round `round` was joined under `pin` (serialized). */
function freezeRound(round: number, serialized: string): void {
  localStorage.setItem(RELAY_ROUND_PREFIX + round, serialized);
}

/** True once this browser joined any round with a relay pinned. */
function joinedAnyRound(): boolean {
  for (let i = 0; i < localStorage.length; i++) {
    if (localStorage.key(i)?.startsWith(RELAY_ROUND_PREFIX)) return true;
  }
  return false;
}

let loadCheck: Promise<{ pin: RelayPin; check: KeyCheck } | null> | null = null;

/**
 * Checks the page's pin once per page load, three ways: the pin, the configuration the relay
 * serves, and the one the server publishes (read directly, as a page load is). A mismatch raises
 * the alert; a phone's first pin is stored once it passed. Relayed calls wait for this check.
 */
export function checkRelayAtLoad(): Promise<void> {
  return loadChecked().then(() => {});
}

function loadChecked(): Promise<{ pin: RelayPin; check: KeyCheck } | null> {
  loadCheck ??= (async () => {
    const { pin, candidate } = pagePin();
    if (pin === null) return null;
    const check = await checkPinnedKeys({ pin, fetch, origin: location.origin });
    if (check.kind === "mismatch") relayAlert.value = mismatchText(pin, check);
    if (check.kind === "ok" && pin === candidate) takePin(pin, serializePin(pin));
    // A phone reloaded after it joined fetches what its vote needs with the page, not with the vote.
    if (check.kind === "ok") loadVotingCode(pin);
    return { pin, check };
  })();
  return loadCheck;
}

/** The pin calls of `round` go through: the one the round was joined under, else the phone's. */
function roundPin(round: number | "list" | null): RelayPin | null {
  const { pin, candidate } = pagePin();
  return pinForRound({
    current: currentPin(),
    candidate: pin === candidate ? candidate : null,
    frozen: (id) => frozenPin(id, parsePin),
  }, round);
}

/**
 * Fetches the code a vote and a verified vote run (the sealing, the signing, the lens and its
 * worker), so that no fetch of the page's files comes near the vote: at join, and with the page.
 */
function loadVotingCode(pin: RelayPin): void {
  relayedTransport(pin).catch(() => {});
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
  // A quiet phone's round: from its state read, with the phone's own W (page §14.8).
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

/**
 * The relayed transport of `pin`, its sealing code loaded on first use (a chunk of its own). A pin
 * the page load checked is sent through only once that check passed: nothing goes through a relay
 * whose pin failed it.
 */
async function relayedFor(pin: RelayPin): Promise<Transport> {
  const loaded = await loadChecked();
  if (loaded !== null && samePin(loaded.pin, pin) && loaded.check.kind === "mismatch") {
    throw new RelayError("key-mismatch", mismatchText(pin, loaded.check));
  }
  return await relayedTransport(pin);
}

function relayedTransport(pin: RelayPin): Promise<Transport> {
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

/**
 * Records that this browser joined round `round` under the pin its calls now go through: from then
 * on that round's calls go through that pin whatever address the page is opened with. A pin not
 * yet checked (a first pin, before its load check) is not recorded.
 */
function markRegistered(round: number | "list"): void {
  if (typeof round !== "number" || frozenPin(round, parsePin) !== null) return;
  const pin = currentPin();
  if (pin !== null) freezeRound(round, serializePin(pin));
}

let confirming: Promise<boolean> | null = null;

/** Asks the holder to confirm a new round's relay against the projector; one question at a time. */
function askConfirm(current: RelayPin, candidate: RelayPin): Promise<boolean> {
  confirming ??= new Promise<boolean>((resolve) => {
    relayConfirm.value = {
      text: confirmText(current, candidate),
      answer: (take) => {
        relayConfirm.value = null;
        confirming = null;
        resolve(take);
      },
    };
  });
  return confirming;
}

/**
 * The key check of a registration (before it, the server's configuration may be read directly):
 * the candidate of the page's address, checked three ways and confirmed when it names another
 * relay, is taken; else the phone's pin is checked and kept.
 */
async function registrationCheck(pin: RelayPin, round: number | "list"): Promise<KeyCheck> {
  // A round joined already (another voter of this phone joins it) keeps the pin it was joined under.
  const frozen = typeof round === "number" && frozenPin(round, parsePin) !== null;
  const chosen = await registrationPin({
    current: frozen ? pin : currentPin(),
    candidate: frozen ? null : pagePin().candidate,
    check: (p) => checkPinnedKeys({ pin: p, fetch, origin: location.origin }),
    confirm: askConfirm,
  });
  if (chosen === null) return { kind: "unavailable", reason: "this page holds no relay pin" };
  if (chosen.alert !== null) relayAlert.value = chosen.alert;
  if (chosen.take) {
    takePin(chosen.pin, serializePin(chosen.pin));
    // The alert said another relay was named: it is now the phone's, confirmed.
    relayAlert.value = null;
  }
  if (chosen.drop) dropCandidate();
  // The phone joins: its sealing code and the anonymity worker load now, never when it votes.
  if (chosen.check.kind === "ok") loadVotingCode(chosen.pin);
  return chosen.check;
}

/** The page transport with the page's pins (see the module comment), made on first use. */
export const relayPageTransport: Transport = (url, init) => {
  transport ??= createPageTransport({
    direct: fetch,
    pin: roundPin,
    registered: (round) => {
      if (round === "list") return joinedAnyRound();
      if (frozenPin(round, parsePin) !== null) return true;
      // A key of the round registered before the pin was held: the relay is on from now on.
      const storage = { getItem: (key: string) => localStorage.getItem(key) };
      if (!holdsRegisteredKey(storage, round)) return false;
      markRegistered(round);
      return true;
    },
    markRegistered,
    keyCheck: registrationCheck,
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
