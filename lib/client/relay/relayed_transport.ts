/**
 * Browser-safe. A transport (lib/client/api_client.ts) that sends each API call through the relay
 * (protocol §7, RFC 9458): the call is encapsulated to the gateway's key configuration, posted to
 * the relay as `message/ohttp-req`, and its answer opened back into a real `Response` with the inner
 * status and body. The key configuration is read through the relay and held to the pinned hash; on
 * a mismatch nothing is ever sent. A relay that is down, refuses or times out is a
 * {@link RelayError}: there is no fallback to a direct call.
 * @module
 */
import type { Transport } from "../api_client.ts";
import { messageOf } from "../text.ts";
import { keyConfigHash, type RelayPin, shortHash } from "./fragment.ts";

/** One API call as the gateway serves it: method, scheme, authority, path and query, body. */
export type InnerRequest = {
  method: string;
  scheme: string;
  authority: string;
  path: string;
  body?: Uint8Array;
  contentType?: string;
};

/** The gateway's answer to an {@link InnerRequest}, opened. */
export type InnerResponse = {
  status: number;
  headers: readonly (readonly [string, string])[];
  body: Uint8Array;
};

/** One encapsulated request and the way to open its answer (the HPKE context stays inside). */
export type Encapsulated = {
  request: Uint8Array;
  open(response: Uint8Array): Promise<InnerResponse>;
};

/** Encapsulates one call (Binary HTTP, padded, then OHTTP) to a fixed key configuration. */
export type Encapsulator = (request: InnerRequest) => Promise<Encapsulated>;

/** Makes an {@link Encapsulator} from the key configurations as served (`application/ohttp-keys`). */
export type EncapsulatorFactory = (keys: Uint8Array) => Encapsulator | Promise<Encapsulator>;

/** Why a relayed call failed before an inner answer was opened. */
export type RelayFailureKind =
  | "key-mismatch"
  | "relay-unreachable"
  | "relay-refused"
  | "gateway-timeout"
  | "timeout"
  | "malformed-answer";

/** The one failure of a relayed call: its kind, the relay's status (0 without one), in words. */
export class RelayError extends Error {
  constructor(readonly kind: RelayFailureKind, message: string, readonly status = 0) {
    super(message);
    this.name = "RelayError";
  }
}

/**
 * The key configuration check: held to the pin, refused, or not read yet (with why). A mismatch
 * says whose configuration differs from the pin: the relay's, or the one the server publishes.
 */
export type KeyCheck =
  | { kind: "ok" }
  | { kind: "mismatch"; expected: string; served: string; by?: "relay" | "server" }
  | { kind: "unavailable"; reason: string };

/** Where the transport sends and how long each call may take. */
export type RelayedTransportOptions = {
  /** The relay and the hash its key configuration must have. */
  pin: RelayPin;
  /** The server's origin (`https://vote.example`): the authority of every inner request. */
  origin: string;
  /** The network: only ever called with the relay's two addresses. */
  fetch: Transport;
  /** Builds the encapsulator once the key configuration is held to the pin. */
  encapsulator: EncapsulatorFactory;
  /** Each call's deadline, the key read and the answer's body included (default 20 s). */
  timeoutMs?: number;
};

/** The transport, and the key check the page runs at join to show a mismatch before any call. */
export type RelayedTransport = { transport: Transport; keyCheck(): Promise<KeyCheck> };

/** Default deadline of one relayed call. */
export const RELAYED_CALL_TIMEOUT_MS = 20_000;

/** Statuses whose Response carries no body (Fetch §2.2.3 null body status). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The relayed transport over `options` (see the module comment). */
export function createRelayedTransport(options: RelayedTransportOptions): RelayedTransport {
  const { pin, fetch, encapsulator, timeoutMs = RELAYED_CALL_TIMEOUT_MS } = options;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new RangeError(`timeoutMs must be a positive number of milliseconds, got ${timeoutMs}`);
  }
  const origin = new URL(options.origin);
  const relayCall = { relay: pin.relay, fetch };
  let refused: RelayError | null = null;
  let servedHash = "";
  let ready: Promise<Encapsulator> | null = null;

  const encapsulatorFor = (signal: AbortSignal): Promise<Encapsulator> => {
    if (refused !== null) return Promise.reject(refused);
    ready ??= readKeys(relayCall, signal).then(async (keys) => {
      const served = keyConfigHash(keys);
      if (served !== pin.ohttp) {
        servedHash = served;
        refused = new RelayError(
          "key-mismatch",
          `The relay ${pin.relay} serves key configuration ${shortHash(served)}, not ${
            shortHash(pin.ohttp)
          } as the presenter's code says: nothing was sent`,
        );
        throw refused;
      }
      return await encapsulator(keys);
    });
    // A key read that failed for want of an answer is tried again by the next call.
    ready.catch(() => {
      if (refused === null) ready = null;
    });
    return ready;
  };

  const transport: Transport = (url, init) =>
    withDeadline(timeoutMs, init.signal ?? null, async (signal) => {
      const inner = innerRequest(url, init, origin);
      const encapsulate = await encapsulatorFor(signal);
      const sealed = await encapsulate(inner);
      const answer = await postToRelay(relayCall, sealed.request, signal);
      let opened: InnerResponse;
      try {
        opened = await sealed.open(answer);
      } catch (error) {
        throw new RelayError(
          "malformed-answer",
          `The relay's answer does not open: ${messageOf(error)}`,
        );
      }
      return responseOf(opened);
    });

  const keyCheck = async (): Promise<KeyCheck> => {
    try {
      await withDeadline(timeoutMs, null, encapsulatorFor);
      return { kind: "ok" };
    } catch (error) {
      if (refused !== null) return { kind: "mismatch", expected: pin.ohttp, served: servedHash };
      return { kind: "unavailable", reason: messageOf(error) };
    }
  };
  return { transport, keyCheck };
}

/**
 * Reads the relay's key configuration and holds it to `pin`, within `timeoutMs`, with no HPKE
 * code: what a page runs at load and before its key registration. Given the server's `origin`
 * (before the registration, while calls to the server may still name the phone), the
 * configuration the server publishes there is held to the pin too: a code that names a relay and a
 * key of someone else's would let that relay open every call it forwards.
 */
export async function checkPinnedKeys(
  { pin, fetch, origin, timeoutMs = RELAYED_CALL_TIMEOUT_MS }: {
    pin: RelayPin;
    fetch: Transport;
    origin?: string;
    timeoutMs?: number;
  },
): Promise<KeyCheck> {
  try {
    return await withDeadline<KeyCheck>(timeoutMs, null, async (signal) => {
      const published = origin === undefined
        ? null
        : readKeys({ relay: origin, fetch, who: `The server ${origin}` }, signal);
      // The relay is judged first: a server that cannot be read hides no mismatch of the relay.
      published?.catch(() => {});
      const served = keyConfigHash(await readKeys({ relay: pin.relay, fetch }, signal));
      if (served !== pin.ohttp) {
        return { kind: "mismatch", expected: pin.ohttp, served, by: "relay" };
      }
      const own = published === null ? served : keyConfigHash(await published);
      if (own !== pin.ohttp) {
        return { kind: "mismatch", expected: pin.ohttp, served: own, by: "server" };
      }
      return { kind: "ok" };
    });
  } catch (error) {
    return { kind: "unavailable", reason: messageOf(error) };
  }
}

/**
 * The hash of the key configuration `relay` serves, read within `timeoutMs`: what the presenter's
 * page puts in its QR code. It is held to the configuration the server at `origin` publishes
 * itself: a relay that served a key of its own could open every call it forwards and seal it again
 * for the gateway, learning who sent what. Throws a {@link RelayError} when either cannot be read,
 * `key-mismatch` when they differ.
 */
export async function servedKeyHash(
  { relay, origin, fetch, timeoutMs = RELAYED_CALL_TIMEOUT_MS }: {
    relay: string;
    origin: string;
    fetch: Transport;
    timeoutMs?: number;
  },
): Promise<string> {
  const [served, published] = await withDeadline(timeoutMs, null, (signal) =>
    Promise.all([
      readKeys({ relay, fetch }, signal),
      readKeys({ relay: origin, fetch, who: `The server ${origin}` }, signal),
    ]));
  const hash = keyConfigHash(served);
  const own = keyConfigHash(published);
  if (hash !== own) {
    throw new RelayError(
      "key-mismatch",
      `The relay ${relay} serves key configuration ${shortHash(hash)}, not the one the server ` +
        `publishes (${shortHash(own)}): it could read every vote it forwards. No code is shown.`,
    );
  }
  return hash;
}

/** The inner request of one API call: its path and query at `origin`, and a JSON body if any. */
function innerRequest(url: string, init: RequestInit, origin: URL): InnerRequest {
  const target = new URL(url, origin);
  if (target.origin !== origin.origin) {
    throw new TypeError(`A relayed call goes to ${origin.origin} only, not ${target.origin}`);
  }
  const method = (init.method ?? "GET").toUpperCase();
  const inner: InnerRequest = {
    method,
    scheme: origin.protocol.replace(/:$/, ""),
    authority: origin.host,
    path: target.pathname + target.search,
  };
  const body = bodyBytes(init.body);
  if (body !== undefined) inner.body = body;
  // Only a write's content type goes in: any other header could tell one phone from another.
  const type = new Headers(init.headers).get("content-type");
  if (type !== null && (method === "POST" || body !== undefined)) inner.contentType = type;
  return inner;
}

function bodyBytes(body: RequestInit["body"]): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError("A relayed call's body must be text or bytes");
}

/** The Response of an opened inner answer: its status, headers and body. */
function responseOf({ status, headers, body }: InnerResponse): Response {
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    throw new RelayError("malformed-answer", `The gateway's inner answer has status ${status}`);
  }
  const kept = new Headers();
  for (const [name, value] of headers) {
    try {
      kept.append(name, value);
    } catch {
      throw new RelayError("malformed-answer", `The gateway's inner answer has header "${name}"`);
    }
  }
  const bytes = new Uint8Array(body);
  return new Response(NULL_BODY.has(status) ? null : bytes, { status, headers: kept });
}

/** Where a key configuration or a sealed call goes, and who that is in a failure's words. */
type RelayCall = { relay: string; fetch: Transport; who?: string };

/** Options of every request to the relay: no cookie, no referrer, nothing cached. */
const TO_RELAY: RequestInit = {
  credentials: "omit",
  referrerPolicy: "no-referrer",
  cache: "no-store",
};

/** The key configurations the relay serves (`GET <relay>/.well-known/ohttp-gateway`). */
async function readKeys(
  { relay, fetch, who = `The relay ${relay}` }: RelayCall,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const url = `${relay}/.well-known/ohttp-gateway`;
  const response = await reach(who, () => fetch(url, { ...TO_RELAY, method: "GET", signal }));
  if (!response.ok) {
    throw new RelayError(
      "relay-refused",
      `${who} answered ${response.status} for its key configuration`,
      response.status,
    );
  }
  const type = response.headers.get("content-type") ?? "";
  if (!type.startsWith("application/ohttp-keys")) {
    throw new RelayError(
      "malformed-answer",
      `${who} served its key configuration as "${type}", not application/ohttp-keys`,
    );
  }
  return await bodyOf(who, response);
}

/** Posts `request` to the relay and answers the encapsulated response's bytes. */
async function postToRelay(
  { relay, fetch }: RelayCall,
  request: Uint8Array,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const response = await reach(`The relay ${relay}`, () =>
    fetch(`${relay}/`, {
      ...TO_RELAY,
      method: "POST",
      headers: { "content-type": "message/ohttp-req" },
      body: request as Uint8Array<ArrayBuffer>,
      signal,
    }));
  if (response.status === 504) {
    throw new RelayError(
      "gateway-timeout",
      `The relay ${relay} got no answer from the server in time (504)`,
      504,
    );
  }
  if (!response.ok) {
    throw new RelayError(
      "relay-refused",
      `The relay ${relay} answered ${response.status}`,
      response.status,
    );
  }
  const type = response.headers.get("content-type") ?? "";
  if (!type.startsWith("message/ohttp-res")) {
    throw new RelayError(
      "malformed-answer",
      `The relay ${relay} answered "${type}", not message/ohttp-res`,
    );
  }
  return await bodyOf(`The relay ${relay}`, response);
}

/** `send()`, with a failure to reach `who` (the relay, or the server) made a {@link RelayError}. */
async function reach(who: string, send: () => Response | Promise<Response>): Promise<Response> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof RelayError) throw error;
    throw new RelayError(
      "relay-unreachable",
      `${who} could not be reached: ${messageOf(error)}`,
    );
  }
}

async function bodyOf(who: string, response: Response): Promise<Uint8Array> {
  try {
    return new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    throw new RelayError(
      "relay-unreachable",
      `${who}'s answer broke off: ${messageOf(error)}`,
    );
  }
}

/**
 * `work(signal)` within `ms`, or aborted with the caller's `outer` signal: the signal aborts then,
 * and the race rejects then, for a network that ignores the signal.
 */
async function withDeadline<T>(
  ms: number,
  outer: AbortSignal | null,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let expire!: (error: Error) => void;
  const expired = new Promise<never>((_, reject) => (expire = reject));
  const stop = (error: Error) => {
    controller.abort(error);
    expire(error);
  };
  const timer = setTimeout(
    () => stop(new RelayError("timeout", `No answer through the relay within ${ms} ms`)),
    ms,
  );
  const onAbort = () => stop(new RelayError("timeout", "The call was abandoned"));
  if (outer?.aborted) onAbort();
  outer?.addEventListener("abort", onAbort);
  const running = work(controller.signal);
  // The race also hears a late failure of the abandoned work, so none goes unhandled.
  running.catch(() => {});
  try {
    return await Promise.race([running, expired]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onAbort);
  }
}
