/**
 * Browser-safe. The linkable ring signature (LSAG) of protocol §2: hash to point, tag, Hs,
 * transcript, sign and verify. Verification refuses, before any ring arithmetic, rings outside
 * 2..64, repeated members, points that are non-canonical (RFC 8032 §5.1.3), the identity or
 * torsioned (the 2017 CryptoNote key-image flaw), and scalars c0, r_i >= L.
 * @module
 */
import { ed25519, ed25519_hasher } from "@noble/curves/ed25519.js";
import { mulAddUnsafe, normalizeZ } from "@noble/curves/abstract/curve.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { sha512 as nobleSha512 } from "@noble/hashes/sha2.js";
import {
  assertBytes,
  bytesToHex,
  concatBytes,
  equalBytes,
  u32be,
  utf8,
  utf8WellFormed,
} from "./bytes.ts";
import { decodePoint, G, keyPairFromSeed, L, type Point } from "./keys.ts";
import {
  type CombTable,
  combTable,
  multiplyByComb,
  multiplyByCombs,
  TEETH,
  teethOf,
} from "./comb_table.ts";
import { multiplyByTable, type PointTable, pointTable } from "./point_table.ts";

/** RFC 9380 domain separation tag of Hp (protocol §2 "Hash to point"). */
export const KEY_IMAGE_DST = "ringvote/v1/key-image";
/** Domain label opening every transcript (protocol §2 "Transcript"). */
export const TRANSCRIPT_LABEL = "ringvote/v1/lsag";
/** Smallest and largest ring a verifier accepts. */
export const MIN_RING = 2;
export const MAX_RING = 64;

/** A ring signature with its fields decoded to bytes; `tag` is the wire field `I`. */
export type RingSignature = {
  c0: Uint8Array;
  r: Uint8Array[];
  tag: Uint8Array;
  ring: Uint8Array[];
};

/** Source of uniform random bytes; injected by tests for reproducible signatures. */
export type RandomBytes = (length: number) => Uint8Array;

const defaultRandom: RandomBytes = (length) => crypto.getRandomValues(new Uint8Array(length));
const labelBytes = utf8(TRANSCRIPT_LABEL);

/** Hp(P): RFC 9380 edwards25519_XMD:SHA-512_ELL2_RO_ with DST ringvote/v1/key-image. */
export function hashToPoint(publicKey: Uint8Array): Point {
  assertBytes(publicKey, 32, "publicKey");
  return ed25519_hasher.hashToCurve(publicKey, { DST: KEY_IMAGE_DST }) as Point;
}

/** A SHA-512 state, for example one that has absorbed a transcript shared by many hashes. */
export type Sha512State = ReturnType<typeof nobleSha512.create>;

/**
 * Hs(b) of protocol §2: SHA-512(b) read as a 64-byte little-endian integer, mod L. `b` is the
 * concatenation of `parts`, after whatever `absorbed` holds already (a clone is extended, so one
 * state serves every challenge of a signature). Throws TypeError for a part that is not bytes.
 */
export function hashToScalar(parts: Uint8Array[], absorbed?: Sha512State): bigint {
  const state = absorbed ? absorbed.clone() : nobleSha512.create();
  parts.forEach((part, i) => state.update(assertBytes(part, undefined, `parts[${i}]`)));
  return bytesToNumberLE(state.digest()) % L;
}

/** The tag (key image) I = x·Hp(P) of the key with this seed; the same whatever it signs. */
export function tagOf(seed: Uint8Array): Uint8Array {
  const { secret, publicKey } = keyPairFromSeed(seed);
  return hashToPoint(publicKey).multiply(secret).toBytes();
}

/**
 * T = label ‖ u32be(n) ‖ P_0 ‖ … ‖ P_{n-1} ‖ I ‖ u32be(len(m)) ‖ m, m the UTF-8 message. Throws
 * RangeError for a message that is not well-formed Unicode, whose UTF-8 would not be its own.
 */
export function transcript(ring: Uint8Array[], tag: Uint8Array, message: string): Uint8Array {
  const m = utf8WellFormed(message, "message");
  return concatBytes(labelBytes, u32be(ring.length), ...ring, tag, u32be(m.length), m);
}

/**
 * c_{i+1} = Hs(T ‖ L_i ‖ R_i), hashing T once and cloning its state per challenge. L_i and R_i
 * are brought to affine form together, sharing one field inversion.
 */
function challenger(t: Uint8Array): (li: Point, ri: Point) => bigint {
  const transcriptState = nobleSha512.create().update(t);
  return (li, ri) => {
    const [la, ra] = normalizeZ(ed25519.Point, [li, ri]);
    return hashToScalar([la.toBytes(), ra.toBytes()], transcriptState);
  };
}

function uniformScalar(random: RandomBytes, min: bigint): bigint {
  const wide = assertBytes(random(64), 64, "random bytes");
  return min + (bytesToNumberLE(wide) % (L - min));
}

function scalarBytes(s: bigint): Uint8Array {
  return numberToBytesLE(s, 32);
}

/**
 * Signs `message` over `ring` with the key of `seed`, which must be a member exactly once.
 * Throws RangeError when it is not, or when a ring member is not a valid group element.
 */
export function signRing(
  opts: { ring: Uint8Array[]; seed: Uint8Array; message: string; maxRing?: number },
  random: RandomBytes = defaultRandom,
): RingSignature {
  const { ring, seed, message, maxRing = MAX_RING } = opts;
  const n = ring.length;
  if (n < MIN_RING || n > maxRing) {
    throw new RangeError(`ring size must be 2..${maxRing}, got ${n}`);
  }
  // Members are decoded canonically; the torsion check (a scalar multiplication per member) is
  // left to the verifier, whose checks alone decide whether the signature is accepted.
  const points = ring.map((p, i) => {
    assertBytes(p, 32, `ring[${i}]`);
    try {
      return ed25519.Point.fromBytes(p, false);
    } catch {
      throw new RangeError(`ring[${i}] is not a canonical curve point`);
    }
  });
  const { secret: x, publicKey } = keyPairFromSeed(seed);
  const positions = ring.flatMap((p, i) => (equalBytes(p, publicKey) ? [i] : []));
  if (positions.length !== 1) {
    throw new RangeError("the signer's key must be in the ring exactly once");
  }
  const pi = positions[0];
  const hp = ring.map(hashToPoint);
  const tagPoint = hp[pi].multiply(x);
  const tag = tagPoint.toBytes();
  const challenge = challenger(transcript(ring, tag, message));

  const c = new Array<bigint>(n);
  const r = new Array<bigint>(n);
  const alpha = uniformScalar(random, 1n);
  c[(pi + 1) % n] = challenge(G.multiply(alpha), hp[pi].multiply(alpha));
  for (let k = 1; k < n; k++) {
    const i = (pi + k) % n;
    r[i] = uniformScalar(random, 0n);
    // G's precomputed table makes r_i·G a table walk; c_i·P_i then needs its own doublings.
    const li = G.multiplyUnsafe(r[i]).add(points[i].multiplyUnsafe(c[i]));
    const ri = mulAddUnsafe(ed25519.Point, [hp[i], tagPoint], [r[i], c[i]]);
    c[(i + 1) % n] = challenge(li, ri);
  }
  r[pi] = (((alpha - c[pi] * x) % L) + L) % L;
  return { c0: scalarBytes(c[0]), r: r.map(scalarBytes), tag, ring: ring.map((p) => p.slice()) };
}

/**
 * A ring member that passed the point checks: its point, Hp(point) and, for a registered key,
 * the combs of both: the wide ones the server stored at registration
 * (lib/protocol/key_precomputation.ts), or narrow ones an audit built (both combs of a member have
 * the same rows).
 */
export type Member = { point: Point; hp: Point; combs?: { point: CombTable; hp: CombTable } };

/**
 * Decodes a ring member with every point check of protocol §2 (canonical, not the identity,
 * torsion-free) and computes Hp; the reason for refusal otherwise.
 */
export function checkMember(bytes: Uint8Array, name = "ring member"): Member | string {
  const decoded = decodePoint(bytes, name);
  return decoded.point ? { point: decoded.point, hp: hashToPoint(bytes) } : decoded.reason;
}

/**
 * Members checked before, by hex public key: the server's registered keys (checked at
 * registration), or a cache that `set` fills with members checkRing itself checked. A hit skips
 * decoding, the torsion check and Hp; a member it does not know is checked here.
 */
export type MemberCache = {
  get(key: string): Member | undefined;
  set?(key: string, member: Member): void;
};

/**
 * Verifier options: `members`, members checked before; `maxRing` above 64
 * exists only to measure cost growth in benchmarks.
 */
export type CheckOptions = { maxRing?: number; members?: MemberCache };

/**
 * Window of the base point's table, built once per thread the first time a member with combs is
 * met (about 60 ms): at most 27 additions per r_i·G instead of noble's 44, for 13,824 points
 * (about 3 MB).
 */
const BASE_WINDOW = 10;
let baseTable: PointTable | undefined;

/** Result of a verification: accepted, or the first reason for refusal. */
export type RingCheck = { ok: true } | { ok: false; reason: string };

function canonicalScalar(bytes: Uint8Array, name: string): bigint | string {
  assertBytes(bytes, 32, name);
  const s = bytesToNumberLE(bytes);
  return s < L ? s : `${name} is not a canonical scalar`;
}

/**
 * The combs of a signature's tag I: `first`, the one its torsion check built, and one of any other
 * rows, built the first time a member with combs of those rows needs it.
 */
export type TagCombs = { readonly first: CombTable; of(teeth: number): CombTable };

/** The {@link TagCombs} of the tag whose first comb is `first` (entry 1 is I itself). */
export function tagCombs(first: CombTable): TagCombs {
  const built = new Map([[teethOf(first), first]]);
  return {
    first,
    of(teeth) {
      let comb = built.get(teeth);
      if (!comb) built.set(teeth, comb = combTable(first.entries[0], { affine: false, teeth }));
      return comb;
    },
  };
}

/**
 * One member's step of the ring equations (protocol §2 "Verify"): L_i = r_i·G + c_i·P_i and
 * R_i = r_i·Hp(P_i) + c_i·I, `tag` holding the combs of I, built once per signature. A member with
 * combs gets comb walks, the two products of R_i sharing one chain of doublings over the tag's comb
 * of the same rows; otherwise the two products of L_i share one chain of doublings (mulAddUnsafe).
 */
export function ringStep(
  member: Member,
  step: { r: bigint; c: bigint; tag: TagCombs },
): { l: Point; r: Point } {
  const { point, hp, combs } = member;
  const { r, c, tag } = step;
  if (combs) {
    baseTable ??= pointTable(G, BASE_WINDOW);
    return {
      l: multiplyByTable(baseTable, r).add(multiplyByComb(combs.point, c)),
      r: multiplyByCombs(combs.hp, r, tag.of(teethOf(combs.hp)), c),
    };
  }
  return {
    l: mulAddUnsafe(ed25519.Point, [G, point], [r, c]),
    r: hp.multiplyUnsafe(r).add(multiplyByComb(tag.first, c)),
  };
}

/** Why a message holding a lone surrogate is refused. */
const ILL_FORMED_MESSAGE = "message is not well-formed Unicode: it holds a lone surrogate";

/** Why a signature whose every input passed is refused: c_n differs from c_0. */
export const RING_OPEN = "the ring equations do not close";

/** A signature that passed every check before the ring equations, its inputs decoded. */
export type CheckedInputs = {
  ok: true;
  members: Member[];
  /**
   * The comb of the tag I, built by its torsion check and reused by every challenge, with the rows
   * of the combs of the first member that has any (wide when none has).
   */
  tag: CombTable;
  c0: bigint;
  r: bigint[];
};

/**
 * Every verifier check of protocol §2 before the ring equations, in the order they refuse: the
 * message, the ring size, the number of responses, each member (repeated, then its point checks),
 * the tag, c0, then each r_i. The first refusal, or the decoded inputs; throws TypeError or
 * RangeError only when a field has the wrong type or byte length.
 */
export function checkInputs(
  sig: RingSignature,
  message: string,
  opts: CheckOptions = {},
): CheckedInputs | { ok: false; reason: string } {
  const { ring, r, tag } = sig;
  const maxRing = opts.maxRing ?? MAX_RING;
  if (!Array.isArray(ring) || !Array.isArray(r)) throw new TypeError("ring and r must be arrays");
  if (typeof message !== "string") throw new TypeError("message must be a string");
  // A lone surrogate encodes as U+FFFD: the signature would also cover the replaced text.
  if (!message.isWellFormed()) return { ok: false, reason: ILL_FORMED_MESSAGE };
  const n = ring.length;
  if (n < MIN_RING || n > maxRing) {
    return { ok: false, reason: `ring size must be 2..${maxRing}, got ${n}` };
  }
  if (r.length !== n) return { ok: false, reason: `expected ${n} responses, got ${r.length}` };
  const seen = new Set<string>();
  const members: Member[] = [];
  for (let i = 0; i < n; i++) {
    const hex = bytesToHex(assertBytes(ring[i], 32, `ring member ${i}`));
    if (seen.has(hex)) return { ok: false, reason: `ring member ${i} is repeated` };
    seen.add(hex);
    let member = opts.members?.get(hex);
    if (!member) {
      const checked = checkMember(ring[i], `ring member ${i}`);
      if (typeof checked === "string") return { ok: false, reason: checked };
      member = checked;
      opts.members?.set?.(hex, member);
    }
    members.push(member);
  }
  // The tag multiplies every challenge, so it gets a comb as soon as it decodes, of the rows the
  // members' combs will walk with it; the same comb answers the torsion check L·I = identity with
  // one walk instead of a separate multiplication.
  const firstCombs = members.find((member) => member.combs)?.combs;
  const teeth = firstCombs ? teethOf(firstCombs.hp) : TEETH;
  let tagComb: CombTable | undefined;
  const decodedTag = decodePoint(tag, "tag", {
    isTorsionFree(point) {
      tagComb = combTable(point, { affine: false, teeth });
      return multiplyByComb(tagComb, L).is0();
    },
  });
  if (!decodedTag.point) return { ok: false, reason: decodedTag.reason };
  const c0 = canonicalScalar(sig.c0, "c0");
  if (typeof c0 === "string") return { ok: false, reason: c0 };
  const rs: bigint[] = [];
  for (let i = 0; i < n; i++) {
    const ri = canonicalScalar(r[i], `r[${i}]`);
    if (typeof ri === "string") return { ok: false, reason: ri };
    rs.push(ri);
  }
  return { ok: true, members, tag: tagComb!, c0, r: rs }; // tagComb: built by the torsion check
}

/** One link of the ring equations: c_i and r_i in, L_i, R_i and c_{i+1} out. */
export type RingLink = { i: number; c: bigint; r: bigint; l: Point; rPoint: Point; next: bigint };

/**
 * The ring equations of protocol §2 "Verify" over checked inputs, from c_0 through every member:
 * answers c_n, which equals c_0 exactly when the signature verifies. `onLink` sees each link.
 */
export function closeRing(
  sig: RingSignature,
  message: string,
  { inputs, onLink }: { inputs: CheckedInputs; onLink?: (link: RingLink) => void },
): bigint {
  const challenge = challenger(transcript(sig.ring, sig.tag, message));
  const tag = tagCombs(inputs.tag);
  let c = inputs.c0;
  for (let i = 0; i < inputs.members.length; i++) {
    const r = inputs.r[i];
    const step = ringStep(inputs.members[i], { r, c, tag });
    const next = challenge(step.l, step.r);
    onLink?.({ i, c, r, l: step.l, rPoint: step.r, next });
    c = next;
  }
  return c;
}

/**
 * Runs every verifier check of protocol §2 and the ring equations. Returns {ok: false, reason} for
 * a well-formed signature that does not verify; throws TypeError/RangeError only when a field
 * has the wrong type or byte length.
 */
export function checkRing(sig: RingSignature, message: string, opts: CheckOptions = {}): RingCheck {
  const inputs = checkInputs(sig, message, opts);
  if (!inputs.ok) return inputs;
  return closeRing(sig, message, { inputs }) === inputs.c0
    ? { ok: true }
    : { ok: false, reason: RING_OPEN };
}

/** True when `sig` is a valid ring signature on `message`; see checkRing for what throws. */
export function verifyRing(sig: RingSignature, message: string, opts: CheckOptions = {}): boolean {
  return checkRing(sig, message, opts).ok;
}
