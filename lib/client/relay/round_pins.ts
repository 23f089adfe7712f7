/**
 * Browser-safe. Which relay pin a phone uses, round by round (protocol §7.4, page §14.6). A phone
 * keeps, for each round it joined, the pin it joined that round under: a later address (a link, a
 * second QR code on a poster) naming another relay or key configuration never replaces it. Such an
 * address only names a **candidate**, kept in the page and never stored before it is checked, and
 * taken at a registration only (the next round's join), after the three-way check (the pin, the
 * configuration the relay serves, the one the server publishes) and, when it names another relay
 * than the last one, once the holder confirmed it against the projector. A candidate that fails
 * leaves the good pin in place, so a poster can neither swap nor block a phone.
 * @module
 */
import { pinFromFragment, type RelayPin, samePin, shortHash } from "./fragment.ts";
import type { KeyCheck } from "./relayed_transport.ts";

/** The pins a page holds after reading its address: the phone's last pin and a candidate. */
export type AddressPins = {
  /** The pin last taken (stored), or null for a phone that never held one. */
  current: RelayPin | null;
  /** A pin of this page's address that differs from `current`: not stored, not yet checked. */
  candidate: RelayPin | null;
  /** A sentence for `[data-relay-notice]` (a first pin, or an address that was not used). */
  notice: string | null;
  /** A sentence for `[data-relay-alert]`: the address names another pin than the phone's. */
  alert: string | null;
};

/** The host of a relay address, as people compare it with the projector. */
export function relayHost(relay: string): string {
  try {
    return new URL(relay).host;
  } catch {
    return relay;
  }
}

/** How a pin is said: its relay's host and the first 8 characters of its key hash. */
function named(pin: RelayPin): string {
  return `${relayHost(pin.relay)} (key ${shortHash(pin.ohttp)})`;
}

/**
 * What a page makes of its address's fragment and its stored pin. A fragment without a pin, with an
 * invalid one, or with the stored one changes nothing. A first pin is the candidate, with a notice:
 * it is stored once checked. Another pin than the stored one is a candidate too, with an alert:
 * the phone goes on with its pin and sends nothing through the other relay.
 */
export function readAddressPins(
  fragment: string,
  stored: RelayPin | null,
  options: { pageProtocol?: string } = {},
): AddressPins {
  const read = pinFromFragment(fragment, options);
  const kept: AddressPins = { current: stored, candidate: null, notice: null, alert: null };
  if (read.kind === "none") return kept;
  if (read.kind === "invalid") {
    return { ...kept, notice: `The relay in this address was not used: ${read.reason}.` };
  }
  if (samePin(stored, read.pin)) return kept;
  const { relay, ohttp } = read.pin;
  if (stored === null) {
    return {
      ...kept,
      candidate: read.pin,
      notice: `This browser now sends everything after joining through the relay ${relay} (key ${
        shortHash(ohttp)
      }).`,
    };
  }
  return { ...kept, candidate: read.pin, alert: candidateText(stored, read.pin) };
}

/** The alert of an address naming `candidate` while the phone holds `current`. */
export function candidateText(current: RelayPin, candidate: RelayPin): string {
  return `This address names the relay ${named(candidate)}, not ${
    named(current)
  } that this phone joined through. Nothing is sent through ${
    relayHost(candidate.relay)
  }: this phone goes on with ${
    relayHost(current.relay)
  }. A new relay is taken only when you join a new round, once you confirm it against the ` +
    "presenter's screen.";
}

/** The alert asking the holder to confirm a new round's relay against the projector. */
export function confirmText(current: RelayPin, candidate: RelayPin): string {
  return `This round's code names the relay ${relayHost(candidate.relay)}, not ${
    named(current)
  } as before. Check that the presenter's screen shows ${relayHost(candidate.relay)} (key ${
    shortHash(candidate.ohttp)
  }) before you join through it.`;
}

/** The alert of a candidate that failed its check: the phone keeps its pin. */
export function refusedCandidateText(
  current: RelayPin,
  candidate: RelayPin,
  check: KeyCheck,
): string {
  const why = check.kind === "mismatch"
    ? check.by === "server"
      ? `the server publishes key ${shortHash(check.served)}, not ${shortHash(candidate.ohttp)}`
      : `it serves key ${shortHash(check.served)}, not ${shortHash(candidate.ohttp)}`
    : check.kind === "unavailable"
    ? check.reason
    : "";
  return `The relay ${named(candidate)} in this address was not taken (${why}): nothing was sent ` +
    `through it, and this phone goes on with ${named(current)}.`;
}

/** The pins a page holds for its calls: its current one, its candidate and the rounds' pins. */
export type PinBook = {
  current: RelayPin | null;
  candidate: RelayPin | null;
  /** The pin round `round` was joined under, or null. */
  frozen(round: number): RelayPin | null;
};

/**
 * The pin calls of `round` go through: the one the round was joined under, else the phone's
 * current pin, else (a phone that never held one) its candidate, which is sent through only once
 * checked (the page waits for its check).
 */
export function pinForRound(book: PinBook, round: number | "list" | null): RelayPin | null {
  if (typeof round === "number") {
    const frozen = book.frozen(round);
    if (frozen !== null) return frozen;
  }
  return book.current ?? book.candidate;
}

/** What a registration goes on with: the pin it checked, the check, and what the page does. */
export type RegistrationPin = {
  pin: RelayPin;
  check: KeyCheck;
  /** True when `pin` is the candidate, now to be stored as the phone's pin. */
  take: boolean;
  /** True when the candidate is dropped (it failed, or the holder kept the last relay). */
  drop: boolean;
  /** A sentence for `[data-relay-alert]` (a candidate refused), or null. */
  alert: string | null;
};

/**
 * The pin a registration is made under. Without a candidate: the current pin, checked. With one:
 * the candidate, checked three ways; when it names another relay than the current pin's, taken
 * only once `confirm` answers true. A candidate that fails, or is not confirmed, is dropped and
 * the current pin checked and used instead; a phone with no pin keeps its candidate's failure.
 */
export async function registrationPin(
  { current, candidate, check, confirm }: {
    current: RelayPin | null;
    candidate: RelayPin | null;
    check(pin: RelayPin): Promise<KeyCheck>;
    confirm(current: RelayPin, candidate: RelayPin): Promise<boolean>;
  },
): Promise<RegistrationPin | null> {
  if (candidate === null) {
    if (current === null) return null;
    return { pin: current, check: await check(current), take: false, drop: false, alert: null };
  }
  const checked = await check(candidate);
  if (current === null) {
    return {
      pin: candidate,
      check: checked,
      take: checked.kind === "ok",
      drop: false,
      alert: null,
    };
  }
  let alert: string | null = null;
  if (checked.kind !== "ok") {
    alert = refusedCandidateText(current, candidate, checked);
  } else if (candidate.relay === current.relay || await confirm(current, candidate)) {
    return { pin: candidate, check: checked, take: true, drop: false, alert: null };
  }
  return { pin: current, check: await check(current), take: false, drop: true, alert };
}
