/**
 * Browser-safe. "Who saw what" on the projector (page §10.11, protocol §7): the relay's counts,
 * read from its own `GET /stats`, beside the server's count of votes, and the sentences that say
 * what each party could learn and when the two are one.
 * @module
 */
import type { Transport } from "../api_client.ts";
import { messageOf } from "../text.ts";

/** The relay's counts (`GET <relay>/stats`): never a body, an address or a time. */
export type RelayStats = {
  /** Encapsulated requests forwarded: sealed envelopes the relay cannot open. */
  requests: number;
  /** Distinct client addresses: the phones the relay saw. */
  clients: number;
  /** Bytes forwarded. */
  bytes: number;
  /** True when the relay runs on the server's machine. */
  sameMachine: boolean;
};

/** What the server saw of a round: the votes it holds, sealed and waiting. */
export type ServerSaw = { votes: number };

/** The sentence shown in red when relay and server are one machine. */
export const SAME_MACHINE_TEXT =
  "This relay runs on the server's machine: a demonstration, no protection.";

/** The sentence putting the relay's figures beside the server's (protocol §7). */
export function whoSawText(
  { phones, envelopes, votes }: { phones: number; envelopes: number; votes: number },
): string {
  return `The relay saw ${phones} phones and ${envelopes} sealed envelopes it cannot open. ` +
    `The server saw ${votes} votes, all from the relay. ` +
    "If the two compare their logs they can pair every vote with a phone: " +
    "this protects you only if different people run them.";
}

function count(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`the relay's ${name} is not a count: ${JSON.stringify(value)}`);
  }
  return value;
}

/** The relay's stats in `json`; a RangeError says what is wrong with them. */
export function parseRelayStats(json: unknown): RelayStats {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new RangeError("the relay's stats are not an object");
  }
  const { requests, clients, bytes, sameMachine } = json as Record<string, unknown>;
  if (typeof sameMachine !== "boolean") {
    throw new RangeError("the relay's stats do not say whether it runs on the server's machine");
  }
  return {
    requests: count(requests, "request count"),
    clients: count(clients, "client count"),
    bytes: count(bytes, "byte count"),
    sameMachine,
  };
}

/** The address of the relay's stats. */
export function relayStatsUrl(relay: string): string {
  return `${relay.replace(/\/+$/, "")}/stats`;
}

/** Reads the relay's stats with `fetch`, within `timeoutMs`; any failure is thrown in words. */
export async function readRelayStats(
  fetch: Transport,
  relay: string,
  { timeoutMs = 8_000 }: { timeoutMs?: number } = {},
): Promise<RelayStats> {
  const url = relayStatsUrl(relay);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, {
      method: "GET",
      credentials: "omit",
      cache: "no-store",
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    return parseRelayStats(await response.json());
  } catch (error) {
    if (controller.signal.aborted) throw new Error(`${url} did not answer in time`);
    throw new Error(`${url}: ${messageOf(error)}`);
  } finally {
    clearTimeout(timer);
  }
}
