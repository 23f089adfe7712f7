/**
 * The page's one transport in the browser (protocol §7, page §2): {@link pageFetch}, which every
 * API client of the phone's pages is made with. Without a relay pinned it is `fetch`; with one,
 * the page transport of ./relay_transport.ts, loaded then in a chunk of its own, checks the relay's
 * key configuration before the key registration and from that registration on sends every round
 * call through the relay; a quiet phone's timed reads are answered from its state read instead.
 * @module
 */
import { callKind, roundOfPath, type Transport } from "../../lib/client/api_client.ts";
import { readPagePin, relayRequired } from "./relay_state.ts";

type RelayModule = typeof import("./relay_transport.ts");
let relayModule: Promise<RelayModule> | null = null;
let relayLoaded: RelayModule | null = null;

/**
 * The relay transport's module once loaded, else null: loaded on any page whose reads have gone
 * through the relay (a quiet phone's state read among them).
 */
export function loadedRelay(): RelayModule | null {
  return relayLoaded;
}

/** The relay transport's module, loaded once; a load that failed is tried again. */
export function loadRelay(): Promise<RelayModule> {
  if (relayModule === null) {
    const loading = import("./relay_transport.ts");
    relayModule = loading;
    loading.then((module) => (relayLoaded = module), () => {});
    loading.catch(() => {
      if (relayModule === loading) relayModule = null;
    });
  }
  return relayModule;
}

/** The page transport (see the module comment). */
export const pageFetch: Transport = async (url, init) => {
  if ((await readPagePin()).pin === null) {
    // No downgrade: where relays are declared, a page without one does not send its vote.
    // A round's vote (round 1, the election, is unchanged).
    const path = new URL(url, location.href).pathname;
    const vote = callKind(init.method ?? "GET", path) === "vote" &&
      typeof roundOfPath(path) === "number";
    if (vote && relayRequired.peek() !== null) {
      relayRequired.value = "refused";
      throw new Error(
        "This room's votes go through a relay and this page has none: scan the presenter's code",
      );
    }
    return await fetch(url, init);
  }
  // A quiet phone's timed reads are answered from its round's state read (page §14.8).
  // They load with the relay transport: a static chunk, read from the page's own server.
  const relay = await loadRelay();
  const local = await relay.quietAnswer(url, init.method ?? "GET");
  if (local !== null) return local;
  await relay.afterHold(new URL(url, location.href).pathname);
  return await relay.relayPageTransport(url, init);
};

/** Checks the pinned relay's key configuration once per page; a mismatch raises the alert. */
export async function checkRelayAtLoad(): Promise<void> {
  if ((await readPagePin()).pin === null) return;
  await (await loadRelay()).checkRelayAtLoad();
}
