/**
 * Browser-safe. A ring signature's verification written out step by step for the bulletin board's
 * walkthrough: every point's group checks, the scalars, each link of the ring equations and the
 * closing comparison, with checkRing's own verdict (lib/protocol/ring_signature.ts).
 * @module
 */
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { assertBytes, bytesToHex } from "./bytes.ts";
import { decodePoint, L } from "./keys.ts";
import {
  checkInputs,
  closeRing,
  MAX_RING,
  MIN_RING,
  RING_OPEN,
  type RingCheck,
  type RingSignature,
} from "./ring_signature.ts";

/** Outcome of one group check of a point: passed, failed, or not run because an earlier one failed. */
export type CheckOutcome = "pass" | "fail" | "not run";

/** The group checks of one point (a ring member or the tag), in the order they are made. */
export type PointChecks = {
  /** Hex of the 32 bytes as served. */
  bytes: string;
  canonical: CheckOutcome;
  notIdentity: CheckOutcome;
  torsionFree: CheckOutcome;
  /** Why the point is refused; absent when every check passes. */
  reason?: string;
};

/** A ring member's checks, plus whether it repeats an earlier member. */
export type MemberChecks = PointChecks & { distinct: boolean };

/** One link of the ring as computed, hex: c_i and r_i in, L_i, R_i and c_{i+1} out. */
export type RingTraceStep = { i: number; c: string; r: string; L: string; R: string; next: string };

/**
 * A verification written out step by step (see {@link traceRing}). `verdict` is exactly what
 * checkRing answers for the same input; `steps` and `closing` are present only when every check
 * before the ring arithmetic passed.
 */
export type RingTrace = {
  verdict: RingCheck;
  n: number;
  sizeOk: boolean;
  members: MemberChecks[];
  tag: PointChecks;
  c0: { value: string; canonical: boolean };
  r: { value: string; canonical: boolean }[];
  steps: RingTraceStep[];
  /** c_n recomputed from c_0 through every step, and whether it equals c_0. */
  closing: { cn: string; c0: string; closes: boolean } | null;
};

function pointChecks(bytes: Uint8Array, name: string): PointChecks {
  const decoded = decodePoint(bytes, name);
  const order = ["canonical", "identity", "torsion"] as const;
  const failedAt = decoded.failed ? order.indexOf(decoded.failed) : order.length;
  const outcome = (k: number): CheckOutcome =>
    k < failedAt ? "pass" : k === failedAt ? "fail" : "not run";
  return {
    bytes: bytesToHex(bytes),
    canonical: outcome(0),
    notIdentity: outcome(1),
    torsionFree: outcome(2),
    reason: decoded.reason,
  };
}

/**
 * Verifies like checkRing but keeps every intermediate value, for showing a signature being
 * checked: each member's and the tag's group checks (all of them, not only up to the first
 * failure), the scalars' canonicity, each link c_i, r_i → L_i, R_i → c_{i+1} (computed by the
 * same step as checkRing) and the final comparison of c_n with c_0. Slower than checkRing (no
 * tables): meant for one signature at a time. Throws like checkRing for fields of a wrong type
 * or byte length.
 */
export function traceRing(sig: RingSignature, message: string): RingTrace {
  const { ring, r, tag } = sig;
  if (!Array.isArray(ring) || !Array.isArray(r)) throw new TypeError("ring and r must be arrays");
  if (typeof message !== "string") throw new TypeError("message must be a string");
  const n = ring.length;
  const seen = new Set<string>();
  const members = ring.map((bytes, i) => {
    const checks = pointChecks(assertBytes(bytes, 32, `ring member ${i}`), `ring member ${i}`);
    const distinct = !seen.has(checks.bytes);
    seen.add(checks.bytes);
    return { ...checks, distinct };
  });
  const trace: RingTrace = {
    verdict: { ok: true },
    n,
    sizeOk: n >= MIN_RING && n <= MAX_RING,
    members,
    tag: pointChecks(assertBytes(tag, 32, "tag"), "tag"),
    c0: { value: bytesToHex(sig.c0), canonical: isCanonicalScalar(sig.c0, "c0") },
    r: r.map((ri, i) => ({ value: bytesToHex(ri), canonical: isCanonicalScalar(ri, `r[${i}]`) })),
    steps: [],
    closing: null,
  };

  // The verdict is checkRing's own: the same checks in the same order, then the same equations.
  const inputs = checkInputs(sig, message);
  if (!inputs.ok) {
    trace.verdict = inputs;
    return trace;
  }
  const cn = closeRing(sig, message, {
    inputs,
    onLink: (link) =>
      trace.steps.push({
        i: link.i,
        c: scalarHex(link.c),
        r: trace.r[link.i].value,
        L: bytesToHex(link.l.toBytes()),
        R: bytesToHex(link.rPoint.toBytes()),
        next: scalarHex(link.next),
      }),
  });
  const closes = cn === inputs.c0;
  trace.closing = { cn: scalarHex(cn), c0: trace.c0.value, closes };
  trace.verdict = closes ? { ok: true } : { ok: false, reason: RING_OPEN };
  return trace;
}

/** Whether 32 little-endian bytes are a canonical scalar (< L). */
function isCanonicalScalar(bytes: Uint8Array, name: string): boolean {
  return bytesToNumberLE(assertBytes(bytes, 32, name)) < L;
}

/** A scalar as 32 little-endian bytes, hex. */
function scalarHex(s: bigint): string {
  return bytesToHex(numberToBytesLE(s, 32));
}
