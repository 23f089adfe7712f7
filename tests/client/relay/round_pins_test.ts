// Which relay pin a phone uses, round by round (protocol §7.4, page §14.6): an address naming
// another relay or key never replaces the phone's pin, only names a candidate; the candidate is
// taken at a registration only, once checked three ways and, for another relay, confirmed against
// the projector; a candidate that fails leaves the pin in place; each round keeps the pin it was
// joined under.
import assert from "node:assert/strict";
import { keyConfigHash, pinFragment, type RelayPin } from "../../../lib/client/relay/fragment.ts";
import {
  pinForRound,
  readAddressPins,
  registrationPin,
  relayHost,
} from "../../../lib/client/relay/round_pins.ts";
import type { KeyCheck } from "../../../lib/client/relay/relayed_transport.ts";

const REAL: RelayPin = {
  relay: "http://192.168.1.30:8002",
  ohttp: keyConfigHash(new Uint8Array([1])),
};
/** Another relay sealing to a key of its own. */
const OWN_KEY: RelayPin = {
  relay: "http://10.0.0.66:8002",
  ohttp: keyConfigHash(new Uint8Array([2])),
};
/** Another relay forwarding to the real gateway with the real key. */
const SAME_KEY: RelayPin = { relay: "http://10.0.0.66:8002", ohttp: REAL.ohttp };
const REKEYED: RelayPin = { relay: REAL.relay, ohttp: keyConfigHash(new Uint8Array([3])) };

const at = (pin: RelayPin, rest = "") => `#${rest}${pinFragment(pin)}`;

Deno.test("an address naming another relay or key names a candidate, never the phone's pin", () => {
  for (const other of [OWN_KEY, SAME_KEY, REKEYED]) {
    const read = readAddressPins(at(other, "witness=abc&"), REAL);
    assert.deepEqual(read.current, REAL, "the phone's pin stays");
    assert.deepEqual(read.candidate, other);
    assert.equal(read.notice, null);
    assert.match(read.alert!, new RegExp(`names the relay ${relayHost(other.relay)}`));
    assert.match(read.alert!, /Nothing is sent through/);
    assert.match(read.alert!, /this phone goes on with 192\.168\.1\.30:8002/);
  }
});

Deno.test("a first pin is a candidate with a notice; the same pin or none changes nothing", () => {
  const first = readAddressPins(at(REAL), null);
  assert.deepEqual(first, {
    current: null,
    candidate: REAL,
    notice: "This browser now sends everything after joining through the relay " +
      `${REAL.relay} (key ${REAL.ohttp.slice(0, 8)}).`,
    alert: null,
  });
  const same = { current: REAL, candidate: null, notice: null, alert: null };
  assert.deepEqual(readAddressPins(at(REAL), REAL), same);
  assert.deepEqual(readAddressPins("#witness=abc", REAL), same);
  const invalid = readAddressPins("#relay=nothing&ohttp=abc", REAL);
  assert.deepEqual(invalid.current, REAL);
  assert.equal(invalid.candidate, null);
  assert.match(invalid.notice!, /^The relay in this address was not used: /);
});

Deno.test("each round's calls go through the pin it was joined under", () => {
  const frozen = new Map<number, RelayPin>([[2, REAL]]);
  const book = {
    current: REKEYED,
    candidate: null,
    frozen: (id: number) => frozen.get(id) ?? null,
  };
  assert.deepEqual(pinForRound(book, 2), REAL);
  assert.deepEqual(pinForRound(book, 3), REKEYED);
  assert.deepEqual(pinForRound(book, "list"), REKEYED);
  // A phone that never held a pin sends through its candidate (once checked, the page waits).
  const fresh = { current: null, candidate: OWN_KEY, frozen: () => null };
  assert.deepEqual(pinForRound(fresh, 2), OWN_KEY);
  // A phone with a pin never sends through a candidate, however the address names it.
  assert.deepEqual(pinForRound({ ...book, candidate: OWN_KEY }, 3), REKEYED);
});

/** A three-way check answering by pin, and the pins it was asked about. */
function checker(answers: Map<RelayPin, KeyCheck>) {
  const asked: RelayPin[] = [];
  return {
    asked,
    check: (pin: RelayPin) => {
      asked.push(pin);
      return Promise.resolve(answers.get(pin) ?? { kind: "ok" } as KeyCheck);
    },
  };
}

const never = () => Promise.reject(new Error("not asked"));

Deno.test("a candidate failing its check is dropped and the good pin kept: no block", async () => {
  const failures: KeyCheck[] = [
    { kind: "mismatch", expected: OWN_KEY.ohttp, served: REAL.ohttp, by: "server" },
    { kind: "mismatch", expected: OWN_KEY.ohttp, served: REAL.ohttp, by: "relay" },
    { kind: "unavailable", reason: "The relay http://10.0.0.66:8002 could not be reached" },
  ];
  for (const failure of failures) {
    const { asked, check } = checker(new Map([[OWN_KEY, failure]]));
    const chosen = await registrationPin({
      current: REAL,
      candidate: OWN_KEY,
      check,
      confirm: never,
    });
    assert.deepEqual(chosen?.pin, REAL);
    assert.deepEqual(chosen?.check, { kind: "ok" });
    assert.equal(chosen?.take, false);
    assert.equal(chosen?.drop, true);
    assert.match(chosen!.alert!, /was not taken .*nothing was sent through it/);
    assert.deepEqual(asked, [OWN_KEY, REAL], "the good pin is checked again before the join");
  }
});

Deno.test("another relay is taken only once confirmed against the projector", async () => {
  const confirmed: [RelayPin, RelayPin][] = [];
  for (const answer of [true, false]) {
    const { check } = checker(new Map());
    const chosen = await registrationPin({
      current: REAL,
      candidate: SAME_KEY,
      check,
      confirm: (current, candidate) => {
        confirmed.push([current, candidate]);
        return Promise.resolve(answer);
      },
    });
    assert.deepEqual(chosen?.pin, answer ? SAME_KEY : REAL);
    assert.equal(chosen?.take, answer);
    assert.equal(chosen?.drop, !answer);
    assert.equal(chosen?.alert, null);
  }
  assert.deepEqual(confirmed, [[REAL, SAME_KEY], [REAL, SAME_KEY]]);
  // The same relay with a new key (a key replaced between rounds): taken once checked.
  const rekeyed = await registrationPin({
    current: REAL,
    candidate: REKEYED,
    check: checker(new Map()).check,
    confirm: never,
  });
  assert.deepEqual([rekeyed?.pin, rekeyed?.take], [REKEYED, true]);
});

Deno.test("a first pin is taken once checked; one that fails is the phone's failure", async () => {
  const ok = await registrationPin({
    current: null,
    candidate: REAL,
    check: checker(new Map()).check,
    confirm: never,
  });
  assert.deepEqual([ok?.pin, ok?.take], [REAL, true]);
  const bad: KeyCheck = { kind: "mismatch", expected: OWN_KEY.ohttp, served: REAL.ohttp };
  const failed = await registrationPin({
    current: null,
    candidate: OWN_KEY,
    check: checker(new Map([[OWN_KEY, bad]])).check,
    confirm: never,
  });
  assert.deepEqual([failed?.pin, failed?.check, failed?.take], [OWN_KEY, bad, false]);
  const kept = await registrationPin({
    current: REAL,
    candidate: null,
    check: checker(new Map()).check,
    confirm: never,
  });
  assert.deepEqual([kept?.pin, kept?.take, kept?.drop], [REAL, false, false]);
  assert.equal(
    await registrationPin({ current: null, candidate: null, check: never, confirm: never }),
    null,
  );
});
