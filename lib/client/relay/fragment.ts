/**
 * Browser-safe. The relay a page sends through (protocol §7, page §2): `#relay=<url>&ohttp=<hash>`
 * in the address's fragment, beside the witness policy, as the presenter's QR code writes it.
 * `hash` is the base64url SHA-256 of the gateway's key configuration as the relay serves it, so a
 * relay cannot hand one phone a key of its own. Which pin a phone keeps, round by round, is
 * ./round_pins.ts's to say: another fragment never replaces a pin a round was joined under.
 * @module
 */
import { sha256 } from "../../protocol/hash.ts";
import { base64ToBytes, bytesToBase64 } from "../../protocol/bytes.ts";

/** The relay's address (no trailing slash) and the key configuration's hash, base64url. */
export type RelayPin = { relay: string; ohttp: string };

/** What a fragment says about the relay: nothing, a pin, or why it is not one. */
export type FragmentPin =
  | { kind: "none" }
  | { kind: "pin"; pin: RelayPin }
  | { kind: "invalid"; reason: string };

/** Base64url without padding (RFC 4648 §5) of `bytes`. */
export function bytesToBase64url(bytes: Uint8Array): string {
  return bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The pin hash of a key configuration as served: base64url of its SHA-256. */
export function keyConfigHash(config: Uint8Array): string {
  return bytesToBase64url(sha256(config));
}

/** True when `text` is the base64url (unpadded) of exactly 32 bytes. */
export function isHash(text: string): boolean {
  if (!/^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/.test(text)) return false;
  return base64ToBytes(text.replace(/-/g, "+").replace(/_/g, "/") + "=").length === 32;
}

/**
 * The relay address `text` made canonical: an http or https URL without credentials, query or
 * fragment, its path without a trailing slash. A RangeError says why `text` is not one.
 */
export function relayAddress(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new RangeError(`"${text}" is not an address`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new RangeError(`"${text}" is not an http or https address`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new RangeError(`"${text}" carries a user name or password`);
  }
  if (url.search !== "" || url.hash !== "") {
    throw new RangeError(`"${text}" carries a query or a fragment`);
  }
  return url.origin + url.pathname.replace(/\/+$/, "");
}

/** The fragment's parameters as [name, raw value], in order. */
function fragmentParams(fragment: string): [string, string][] {
  return fragment.replace(/^#/, "").split("&").filter((p) => p !== "").map((p) => {
    const at = p.indexOf("=");
    return at < 0 ? [p, ""] : [p.slice(0, at), p.slice(at + 1)];
  });
}

/**
 * The pin in a location fragment (`#…&relay=<url>&ohttp=<hash>`, the `#` optional), other
 * parameters (the witness policy, `admin`) ignored. `pageProtocol` is the page's own ("https:"):
 * an https page cannot call an http relay, so such a pin is refused.
 */
export function pinFromFragment(
  fragment: string,
  { pageProtocol }: { pageProtocol?: string } = {},
): FragmentPin {
  const params = fragmentParams(fragment);
  const relays = params.filter(([k]) => k === "relay").map(([, v]) => v);
  const hashes = params.filter(([k]) => k === "ohttp").map(([, v]) => v);
  if (relays.length === 0 && hashes.length === 0) return { kind: "none" };
  if (relays.length !== 1 || hashes.length !== 1) {
    return { kind: "invalid", reason: "it must name one relay and one key configuration hash" };
  }
  let relay: string;
  try {
    relay = relayAddress(decodeURIComponent(relays[0]));
  } catch (error) {
    const reason = error instanceof RangeError ? error.message : `"${relays[0]}" is not encoded`;
    return { kind: "invalid", reason };
  }
  if (pageProtocol === "https:" && relay.startsWith("http:")) {
    return { kind: "invalid", reason: `an https page cannot call the http relay ${relay}` };
  }
  const ohttp = hashes[0];
  if (!isHash(ohttp)) {
    return { kind: "invalid", reason: `"${ohttp}" is not a base64url SHA-256 hash` };
  }
  return { kind: "pin", pin: { relay, ohttp } };
}

/** The fragment parameters naming `pin` (no leading `#`). */
export function pinFragment(pin: RelayPin): string {
  return `relay=${encodeURIComponent(pin.relay)}&ohttp=${pin.ohttp}`;
}

/**
 * `address` with `pin` in its fragment, beside whatever else the fragment holds (a witness
 * policy): a relay pin it held is replaced; with no pin, `address` less any relay pin.
 */
export function addressWithPin(address: string, pin: RelayPin | null): string {
  const at = address.indexOf("#");
  const base = at < 0 ? address : address.slice(0, at);
  const kept = fragmentParams(at < 0 ? "" : address.slice(at))
    .filter(([k]) => k !== "relay" && k !== "ohttp")
    .map(([k, v]) => (v === "" ? k : `${k}=${v}`));
  if (pin !== null) kept.push(pinFragment(pin));
  return kept.length === 0 ? base : `${base}#${kept.join("&")}`;
}

/** The stored form of `pin`. */
export function serializePin(pin: RelayPin): string {
  return JSON.stringify({ relay: pin.relay, ohttp: pin.ohttp });
}

/** The stored pin; null when none is stored or it does not read as one. */
export function parsePin(stored: string | null): RelayPin | null {
  if (stored === null) return null;
  try {
    const { relay, ohttp } = JSON.parse(stored);
    if (typeof relay !== "string" || typeof ohttp !== "string") return null;
    const read = pinFromFragment(pinFragment({ relay, ohttp }));
    return read.kind === "pin" ? read.pin : null;
  } catch {
    return null;
  }
}

/** True when two pins name the same relay and hash. */
export function samePin(a: RelayPin | null, b: RelayPin | null): boolean {
  return a?.relay === b?.relay && a?.ohttp === b?.ohttp;
}

/** The first 8 characters of a pin hash, for people to compare by eye. */
export function shortHash(ohttp: string): string {
  return ohttp.slice(0, 8);
}
