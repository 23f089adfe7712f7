// The relay pin a page reads from its address's fragment (page §2, protocol §7): the relay and the
// key configuration's hash beside the witness policy, refusals with reasons, its stored form; and
// every QR address carrying the pin the page holds.
import assert from "node:assert/strict";
import {
  addressWithPin,
  isHash,
  keyConfigHash,
  parsePin,
  pinFragment,
  pinFromFragment,
  relayAddress,
  serializePin,
} from "../../../lib/client/relay/fragment.ts";
import { policyFromFragment } from "../../../lib/client/log/witness_policy.ts";
import { witnessAddress } from "../../../components/WitnessControl.tsx";
import { formatVerifierKey, signerKey } from "../../../lib/protocol/note.ts";

const HASH = keyConfigHash(new Uint8Array([1, 2, 3]));
const OTHER = keyConfigHash(new Uint8Array([4]));
const PIN = { relay: "http://192.168.1.20:8788", ohttp: HASH };

Deno.test("the pin hash is the base64url SHA-256 of the configuration, 43 characters", () => {
  // SHA-256("abc"), FIPS 180-2 example B.1, in base64url.
  assert.equal(
    keyConfigHash(new TextEncoder().encode("abc")),
    "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0",
  );
  assert.ok(isHash(HASH));
  assert.ok(!isHash(HASH.slice(1)), "42 characters");
  assert.ok(!isHash(HASH + "A"), "44 characters");
  assert.ok(!isHash(HASH.slice(0, 42) + "B"), "a last character with stray bits");
  assert.ok(!isHash(HASH.replace(/.$/, "=")), "padding");
});

Deno.test("a fragment names a relay and a hash beside a witness policy and the admin token", () => {
  const vkey = formatVerifierKey(
    signerKey({ name: "w.example/x", seed: new Uint8Array(32).fill(7) }, 4),
  );
  const address = addressWithPin(witnessAddress("http://vote.example/", vkey), PIN);
  const fragment = new URL(address).hash;
  const read = pinFromFragment(fragment + "&admin=abc");
  assert.deepEqual(read, { kind: "pin", pin: PIN });
  // The witness policy is still read from the same fragment.
  assert.equal(policyFromFragment(fragment).kind, "policy");
  assert.deepEqual(pinFromFragment("#witness=x"), { kind: "none" });
  assert.deepEqual(pinFromFragment(""), { kind: "none" });
});

Deno.test("a relay address is canonical: no trailing slash, credentials, query or fragment", () => {
  assert.equal(relayAddress("http://relay.example:8788/"), "http://relay.example:8788");
  assert.equal(relayAddress(" https://relay.example/ohttp/ "), "https://relay.example/ohttp");
  for (
    const bad of [
      "relay.example",
      "ftp://relay.example",
      "http://u:p@relay.example",
      "http://relay.example/?x=1",
      "http://relay.example/#x",
    ]
  ) {
    assert.throws(() => relayAddress(bad), RangeError, bad);
  }
});

Deno.test("fragments that are not a pin are refused with the reason", () => {
  const cases: { desc: string; fragment: string; reason: RegExp; protocol?: string }[] = [
    { desc: "a relay without a hash", fragment: "#relay=http%3A%2F%2Fr", reason: /one relay/ },
    { desc: "a hash without a relay", fragment: `#ohttp=${HASH}`, reason: /one relay/ },
    {
      desc: "two relays",
      fragment: `#${pinFragment(PIN)}&relay=http%3A%2F%2Fr2`,
      reason: /one relay/,
    },
    { desc: "not an address", fragment: `#relay=nothing&ohttp=${HASH}`, reason: /not an address/ },
    { desc: "bad percent-encoding", fragment: `#relay=%E0%A4&ohttp=${HASH}`, reason: /encoded/ },
    { desc: "a short hash", fragment: `#relay=http%3A%2F%2Fr&ohttp=abc`, reason: /base64url/ },
    {
      desc: "an http relay for an https page",
      fragment: `#${pinFragment(PIN)}`,
      protocol: "https:",
      reason: /https page cannot call the http relay/,
    },
  ];
  for (const { desc, fragment, reason, protocol } of cases) {
    const read = pinFromFragment(fragment, { pageProtocol: protocol });
    assert.equal(read.kind, "invalid", desc);
    if (read.kind === "invalid") assert.match(read.reason, reason, desc);
  }
  const https = { relay: "https://relay.example", ohttp: HASH };
  assert.equal(pinFromFragment(pinFragment(https), { pageProtocol: "https:" }).kind, "pin");
});

Deno.test("a QR address carries the pin the page holds, replacing any pin it had", () => {
  assert.equal(
    addressWithPin("http://vote.example/", PIN),
    `http://vote.example/#relay=${encodeURIComponent(PIN.relay)}&ohttp=${HASH}`,
  );
  const other = { relay: "http://r2.example", ohttp: OTHER };
  const twice = addressWithPin(addressWithPin("http://vote.example/#witness=abc", PIN), other);
  assert.equal(
    twice,
    `http://vote.example/#witness=abc&relay=${encodeURIComponent(other.relay)}&ohttp=${OTHER}`,
  );
  assert.equal(addressWithPin(twice, null), "http://vote.example/#witness=abc");
  assert.equal(addressWithPin(addressWithPin("http://v/", PIN), null), "http://v/");
  // A witness code drawn from an address that holds a pin keeps the pin.
  const vkey = formatVerifierKey(
    signerKey({ name: "w.example/x", seed: new Uint8Array(32).fill(3) }, 4),
  );
  const witnessed = witnessAddress(addressWithPin("http://v/#witness=old", PIN), vkey);
  assert.deepEqual(pinFromFragment(new URL(witnessed).hash), { kind: "pin", pin: PIN });
  const policy = policyFromFragment(new URL(witnessed).hash);
  assert.equal(policy.kind === "policy" && formatVerifierKey(policy.policy.witnesses[0]), vkey);
});

Deno.test("a stored pin reads back; anything else stored reads as none", () => {
  assert.deepEqual(parsePin(serializePin(PIN)), PIN);
  assert.equal(parsePin(null), null);
  assert.equal(parsePin("{"), null);
  assert.equal(parsePin(JSON.stringify({ relay: "x", ohttp: HASH })), null);
  assert.equal(parsePin(JSON.stringify({ relay: PIN.relay })), null);
});
