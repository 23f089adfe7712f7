/**
 * Browser-safe. A page's witness policy (page §10.13, protocol §4.10): the witnesses whose
 * cosignatures make a checkpoint witnessed, and how many of them must cosign. It comes in the
 * address's fragment, `#witness=<vkey>` (repeatable) and `&quorum=<k>`, as the projector's
 * witness QR code writes it, and is kept in the browser's storage until another fragment
 * replaces it.
 * @module
 */
import {
  COSIGNATURE_V1_TYPE,
  formatVerifierKey,
  parseVerifierKey,
  type VerifierKey,
} from "../../protocol/note.ts";
import { messageOf } from "../text.ts";

/** Browser-storage key of the policy: one JSON value `{witnesses: [vkey…], quorum}`. */
export const WITNESS_POLICY_KEY = "ringvote/witness-policy";

/** Most witnesses one policy names. */
export const MAX_POLICY_WITNESSES = 8;

/** The witnesses (cosignature/v1 vkeys, parsed) and how many must cosign (1 ≤ quorum ≤ count). */
export type WitnessPolicy = { witnesses: VerifierKey[]; quorum: number };

/** What a fragment says about the policy: nothing, a policy, or why it is not one. */
export type FragmentPolicy =
  | { kind: "none" }
  | { kind: "policy"; policy: WitnessPolicy }
  | { kind: "invalid"; reason: string };

/**
 * The policy in a location fragment (`#witness=…&witness=…&quorum=k`, the `#` optional), other
 * parameters (such as `admin`) ignored. Each value is percent-decoded as it is, never with
 * `URLSearchParams`, which would read the `+` of a vkey as a space. The quorum defaults to every
 * witness listed; a vkey listed twice counts once.
 */
export function policyFromFragment(fragment: string): FragmentPolicy {
  const params = fragment.replace(/^#/, "").split("&").filter((p) => p !== "").map((p) => {
    const at = p.indexOf("=");
    return at < 0 ? [p, ""] : [p.slice(0, at), p.slice(at + 1)];
  });
  const values = (name: string) => params.filter(([k]) => k === name).map(([, v]) => v);
  const listed = values("witness");
  const quorums = values("quorum");
  if (listed.length === 0) {
    return quorums.length > 0
      ? { kind: "invalid", reason: "a quorum was given without any witness" }
      : { kind: "none" };
  }
  const witnesses: VerifierKey[] = [];
  for (const raw of listed) {
    let text: string;
    try {
      text = decodeURIComponent(raw);
    } catch {
      return { kind: "invalid", reason: `"${raw}" is not percent-encoded text` };
    }
    let key: VerifierKey;
    try {
      key = parseVerifierKey(text);
    } catch (error) {
      return { kind: "invalid", reason: `"${text}" is not a witness key: ${messageOf(error)}` };
    }
    if (key.type !== COSIGNATURE_V1_TYPE) {
      return { kind: "invalid", reason: `"${text}" is not a cosignature/v1 witness key` };
    }
    // A cosignature does not sign its name: one key listed under two names counts once.
    const same = (w: VerifierKey) => w.publicKey.every((byte, i) => byte === key.publicKey[i]);
    if (!witnesses.some(same)) witnesses.push(key);
  }
  if (witnesses.length > MAX_POLICY_WITNESSES) {
    return { kind: "invalid", reason: `at most ${MAX_POLICY_WITNESSES} witnesses can be named` };
  }
  if (quorums.length > 1) return { kind: "invalid", reason: "the quorum is given twice" };
  const quorum = quorums.length === 0 ? witnesses.length : Number(quorums[0]);
  if (!/^[1-9][0-9]*$/.test(quorums[0] ?? "1") || quorum > witnesses.length) {
    return {
      kind: "invalid",
      reason: `the quorum must be a whole number from 1 to ${witnesses.length}`,
    };
  }
  return { kind: "policy", policy: { witnesses, quorum } };
}

/** The stored form of `policy`. */
export function serializePolicy(policy: WitnessPolicy): string {
  return JSON.stringify({
    witnesses: policy.witnesses.map(formatVerifierKey),
    quorum: policy.quorum,
  });
}

/** The stored policy; null when none is stored or it does not read as one. */
export function parsePolicy(stored: string | null): WitnessPolicy | null {
  if (stored === null) return null;
  try {
    const { witnesses, quorum } = JSON.parse(stored);
    const fragment = [
      ...(witnesses as string[]).map((w) => `witness=${encodeURIComponent(w)}`),
      `quorum=${quorum}`,
    ].join("&");
    const read = policyFromFragment(fragment);
    return read.kind === "policy" ? read.policy : null;
  } catch {
    return null;
  }
}

/** The fragment that names `witnesses` (vkeys) and, when not all of them, the `quorum`. */
export function policyFragment(witnesses: readonly string[], quorum?: number): string {
  const listed = witnesses.map((w) => `witness=${encodeURIComponent(w)}`);
  if (quorum !== undefined && quorum !== witnesses.length) listed.push(`quorum=${quorum}`);
  return `#${listed.join("&")}`;
}

/** True when two policies name the same witnesses and quorum. */
export function samePolicy(a: WitnessPolicy | null, b: WitnessPolicy | null): boolean {
  return (a === null ? null : serializePolicy(a)) === (b === null ? null : serializePolicy(b));
}

/**
 * What a page does with its address's fragment and its stored policy: the policy in force and, when
 * the fragment changed it, a sentence that says so. A fragment without witnesses keeps the stored
 * policy; an invalid one keeps it too, and says why the fragment was not taken.
 */
export function adoptPolicy(
  fragment: string,
  stored: string | null,
): { policy: WitnessPolicy | null; store: string | null; notice: string | null } {
  const before = parsePolicy(stored);
  const read = policyFromFragment(fragment);
  if (read.kind === "none") return { policy: before, store: null, notice: null };
  if (read.kind === "invalid") {
    return {
      policy: before,
      store: null,
      notice: `The witness list in this address was not used: ${read.reason}.`,
    };
  }
  if (samePolicy(before, read.policy)) return { policy: before, store: null, notice: null };
  const { witnesses, quorum } = read.policy;
  const names = witnesses.map((w) => w.name).join(", ");
  const notice = before === null
    ? `This browser now requires ${quorum} of ${witnesses.length} witness${
      witnesses.length === 1 ? "" : "es"
    } (${names}) to cosign what the server shows.`
    : `The witness list changed: this browser now requires ${quorum} of ${witnesses.length} (${names}) instead of the list it kept before.`;
  return { policy: read.policy, store: serializePolicy(read.policy), notice };
}
