/**
 * Browser-safe. The attack lab's catalogue: every attack on `POST /api/vote` in plain words, the
 * check of docs/protocol.md that refuses it, the answer it must get, and a builder of its body.
 * @module
 */
import { bytesToHex, hexToBytes } from "../../protocol/bytes.ts";
import { type RandomBytes, type RingSignature, signRing } from "../../protocol/ring_signature.ts";
import { encodeSignature } from "../../protocol/signature_wire.ts";
import type { VoteRecord, VoteSubmission } from "../../protocol/schemas.ts";
import { shortHex } from "../text.ts";
import { randomIndexFrom, sampleRing } from "../voter/voters.ts";
import { scalarPlusL, signLoose, signWithTorsionedTag } from "./forged_signatures.ts";

/** A key the lab holds: its seed (never sent) and hex public key. */
export type LabKey = { seed: Uint8Array; key: string };

/** Ids of the attacks, as the page's `data-attack` attributes name them. */
export type AttackId =
  | "double-vote"
  | "replay"
  | "unregistered-member"
  | "torsion-tag"
  | "payload-swap"
  | "noncanonical-scalar"
  | "duplicate-member"
  | "ring-too-small"
  | "forged-signature";

/**
 * What the builders work from: `voter` has cast `honest` (which the server accepted); `spare` is
 * registered and has not voted; `members` are registered keys (including both); `stranger` was
 * never registered; `boardVote` is a vote the bulletin board published (for the replay).
 */
export type AttackInput = {
  voter: LabKey;
  spare: LabKey;
  members: LabKey[];
  stranger: LabKey;
  honest: VoteSubmission;
  boardVote: VoteRecord | null;
  ringSize: number;
  random?: RandomBytes;
};

/** A fact worth showing next to the request, e.g. the two equal tags of a double vote. */
export type AttackFact = { label: string; value: string };

/** A built attack: the body to POST to /api/vote and the facts that make it readable. */
export type AttackRequest = { body: VoteSubmission; facts: AttackFact[] };

/** One attack of the catalogue. */
export type Attack = {
  id: AttackId;
  /** A short plain-words name. */
  title: string;
  /** What the attacker tries, for someone who is not a cryptographer. */
  explanation: string;
  /** The section of docs/protocol.md whose check refuses it. */
  section: string;
  /** That check, in one line. */
  check: string;
  /** The HTTP status and error code the server must answer. */
  status: 400 | 403 | 409;
  code: "invalid_signature" | "unregistered_key" | "duplicate_tag";
  build(input: AttackInput): AttackRequest;
};

/** The payload every attack vote carries, so a vote that got through would be easy to spot. */
export const ATTACK_PAYLOAD = "Lab attack";

/** The 32-byte public keys of `ring`. */
function ringBytes(ring: LabKey[]): Uint8Array[] {
  return ring.map((m) => hexToBytes(m.key, 32, "ring key"));
}

/** The submission carrying `sig` over `payload`: its ring, wire form and tag. */
function bodyOf(sig: RingSignature, payload = ATTACK_PAYLOAD): VoteSubmission {
  return {
    publicKeys: sig.ring.map(bytesToHex),
    signature: encodeSignature(sig),
    tag: bytesToHex(sig.tag),
    payload,
  };
}

/** `signer` signs `payload` honestly over `ring`: the starting point most attacks then break. */
function honestBody(signer: LabKey, ring: LabKey[], input: AttackInput, payload = ATTACK_PAYLOAD) {
  const sig = signRing(
    { ring: ringBytes(ring), seed: signer.seed, message: payload },
    input.random,
  );
  return { sig, body: bodyOf(sig, payload) };
}

const webRandom: RandomBytes = (length) => crypto.getRandomValues(new Uint8Array(length));

/**
 * A ring of `size` members from `members`: `signer` plus others drawn without bias as an honest
 * voter draws them (voter/voters.ts `sampleRing`), in key order. When `avoid` is given, rings with
 * exactly its members are drawn again, so the ring is a fresh one.
 */
export function randomRing(
  signer: LabKey,
  { members, size, avoid, random = webRandom }: {
    members: LabKey[];
    size: number;
    avoid?: string[];
    random?: RandomBytes;
  },
): LabKey[] {
  const candidates = [signer, ...members.filter((m) => m.key !== signer.key)];
  const ringSize = Math.min(size, candidates.length);
  const randomIndex = randomIndexFrom(random);
  const avoided = avoid ? [...avoid].sort().join() : null;
  for (let attempt = 0;; attempt++) {
    // sampleRing draws rings of two or more; a ring of one is the signer alone.
    const ids = ringSize < 2
      ? [1]
      : sampleRing({ total: candidates.length, ringSize, ownId: 1 }, randomIndex);
    const ring = ids.map((id) => candidates[id - 1]);
    ring.sort((a, b) => (a.key < b.key ? -1 : 1));
    if (ring.map((m) => m.key).join() !== avoided || attempt >= 50) return ring;
  }
}

function ringOf(signer: LabKey, input: AttackInput, avoid?: string[]): LabKey[] {
  return randomRing(signer, {
    members: input.members,
    size: input.ringSize,
    avoid,
    random: input.random,
  });
}

/** A key or other long hex value as the lab shows it: its first 8 and last 4 digits. */
function shortKey(hex: string): string {
  return shortHex(hex, 8, { tail: 4 });
}

/** The request as the page shows it: every long hex value shortened, the structure kept. */
export function shortenRequest(body: VoteSubmission): string {
  const shorten = (value: unknown): unknown => {
    if (typeof value === "string") return /^[0-9a-f]{17,}$/.test(value) ? shortKey(value) : value;
    if (Array.isArray(value)) return value.map(shorten);
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v)]));
    }
    return value;
  };
  let signature: unknown = body.signature;
  try {
    signature = JSON.parse(body.signature);
  } catch {
    // Not JSON: shown as sent.
  }
  return JSON.stringify(shorten({ ...body, signature }), null, 2);
}

const keysOf = (ring: LabKey[]) => ring.map((m) => shortKey(m.key)).join(", ");

/** Every attack, in the order the lab shows them. */
export const ATTACKS: readonly Attack[] = [
  {
    id: "double-vote",
    title: "Vote twice with the same key",
    explanation: "A voter who already voted signs a second vote, hiding among a different, " +
      "freshly drawn group of voters. Different group, same key: the vote's tag — a fingerprint " +
      "of the key that reveals nothing else — comes out identical, so the server sees a repeat.",
    section: "protocol §2.3, §5.3",
    check: "One key has one tag whatever it signs; a tag is accepted once",
    status: 409,
    code: "duplicate_tag",
    build(input) {
      const ring = ringOf(input.voter, input, input.honest.publicKeys);
      const { body } = honestBody(input.voter, ring, input, "A second choice");
      return {
        body,
        facts: [
          {
            label: "Ring of the first vote",
            value: input.honest.publicKeys.map(shortKey).join(", "),
          },
          { label: "Ring of this vote", value: keysOf(ring) },
          { label: "Tag of the first vote", value: input.honest.tag },
          { label: "Tag of this vote", value: body.tag },
          { label: "Tags equal", value: body.tag === input.honest.tag ? "yes" : "no" },
        ],
      };
    },
  },
  {
    id: "replay",
    title: "Send a published vote again",
    explanation: "Anyone can copy a vote from the public bulletin board and send it again, " +
      "byte for byte, hoping it counts twice. Its signature is perfectly valid — but its tag " +
      "is already used.",
    section: "protocol §5.3",
    check: "A tag is accepted once: the copy carries the tag of the original",
    status: 409,
    code: "duplicate_tag",
    build(input) {
      const vote = input.boardVote;
      if (!vote) throw new Error("The replay needs a vote from the bulletin board");
      const tag = (JSON.parse(vote.signature) as { I: string }).I;
      return {
        body: {
          publicKeys: vote.publicKeys,
          signature: vote.signature,
          tag,
          payload: vote.payload,
        },
        facts: [{ label: "Copied from the board", value: `"${vote.payload}", tag ${tag}` }],
      };
    },
  },
  {
    id: "unregistered-member",
    title: "Hide an outsider among registered voters",
    explanation: "Someone who never registered a key signs a vote with their own key and hides " +
      "it among registered voters. The signature itself is valid; but one member of the group " +
      "is not in the key directory.",
    section: "protocol §4.2",
    check: "Every ring member must be in the key directory",
    status: 403,
    code: "unregistered_key",
    build(input) {
      const ring = randomRing(input.stranger, {
        members: [input.stranger, ...input.members],
        size: input.ringSize,
        random: input.random,
      });
      const { body } = honestBody(input.stranger, ring, input);
      return { body, facts: [{ label: "Unregistered member", value: input.stranger.key }] };
    },
  },
  {
    id: "torsion-tag",
    title: "Disguise the tag (the 2017 CryptoNote flaw)",
    explanation: "A voter who already voted adds a tiny 'torsion' point to the tag, which makes " +
      "it look new, and signs again until the math closes (about 1 try in 8). This flaw once " +
      "let people spend the same coins several times. The server refuses any tag that carries " +
      "such a small component.",
    section: "protocol §2.7 check 5",
    check: "The tag must be torsion-free (L·I = identity)",
    status: 400,
    code: "invalid_signature",
    build(input) {
      const ring = ringOf(input.voter, input);
      const { signature, tries } = signWithTorsionedTag(
        { ring: ringBytes(ring), seed: input.voter.seed, message: ATTACK_PAYLOAD },
        input.random,
      );
      const tag = bytesToHex(signature.tag);
      return {
        body: bodyOf(signature),
        facts: [
          { label: "Real tag (already voted)", value: input.honest.tag },
          { label: "Disguised tag", value: tag },
          { label: "Signing tries until the ring closed", value: String(tries) },
        ],
      };
    },
  },
  {
    id: "payload-swap",
    title: "Change the choice after signing",
    explanation: "A valid signed vote is intercepted and its choice replaced. The signature " +
      "covers the choice, so the changed vote no longer matches its signature.",
    section: "protocol §2.5, §2.7 check 7",
    check: "The ring equations run over the payload; changed payload, no closing ring",
    status: 400,
    code: "invalid_signature",
    build(input) {
      const { body } = honestBody(input.spare, ringOf(input.spare, input), input, "Choice A");
      return {
        body: { ...body, payload: "Choice B" },
        facts: [
          { label: "Signed payload", value: "Choice A" },
          { label: "Sent payload", value: "Choice B" },
        ],
      };
    },
  },
  {
    id: "noncanonical-scalar",
    title: "Same signature, different bytes",
    explanation: "One number of a valid signature is rewritten as itself plus the group order " +
      "L. The math gives the same result, but the bytes — and so the vote's fingerprint on " +
      "the chain — differ. Only one way of writing each number is allowed.",
    section: "protocol §2.7 check 6",
    check: "c0 and every r_i must be canonical scalars (< L)",
    status: 400,
    code: "invalid_signature",
    build(input) {
      const { sig, body } = honestBody(input.spare, ringOf(input.spare, input), input);
      const r0 = scalarPlusL(sig.r[0]);
      const signature = encodeSignature({ ...sig, r: [r0, ...sig.r.slice(1)] });
      return {
        body: { ...body, signature },
        facts: [
          { label: "r_0 as signed", value: bytesToHex(sig.r[0]) },
          { label: "r_0 + L as sent", value: bytesToHex(r0) },
        ],
      };
    },
  },
  {
    id: "duplicate-member",
    title: "Put the same voter twice in the group",
    explanation: "The group a vote hides in lists one voter twice, so it looks larger than it " +
      "is and the signer hides among fewer people than claimed.",
    section: "protocol §2.7 check 2",
    check: "Ring members must be pairwise distinct",
    status: 400,
    code: "invalid_signature",
    build(input) {
      // One member fewer, so that with the repeat the ring has the usual size.
      const ring = randomRing(input.spare, {
        members: input.members,
        size: Math.max(2, input.ringSize - 1),
        random: input.random,
      });
      const other = ring.find((m) => m.key !== input.spare.key)!;
      const doubled = [...ring, other].sort((a, b) => (a.key < b.key ? -1 : 1));
      const { signature } = signLoose(
        { ring: ringBytes(doubled), seed: input.spare.seed, message: ATTACK_PAYLOAD },
        input.random,
      );
      return { body: bodyOf(signature), facts: [{ label: "Listed twice", value: other.key }] };
    },
  },
  {
    id: "ring-too-small",
    title: "A group of one",
    explanation: "A vote 'hidden' in a group of one voter hides nobody: it names its signer. " +
      "The server requires at least two members, so a vote never gives its voter away.",
    section: "protocol §2.7 check 1",
    check: "The ring size n must satisfy 2 ≤ n ≤ 64",
    status: 400,
    code: "invalid_signature",
    build(input) {
      const { signature } = signLoose(
        { ring: ringBytes([input.spare]), seed: input.spare.seed, message: ATTACK_PAYLOAD },
        input.random,
      );
      return {
        body: bodyOf(signature),
        facts: [{ label: "The only member", value: input.spare.key }],
      };
    },
  },
  {
    id: "forged-signature",
    title: "Sign for a group you are not in",
    explanation: "An outsider signs with their own key, then swaps it for a registered voter's " +
      "key, so the group holds only registered voters. Without the secret key of a member the " +
      "signature's chain of checks cannot close.",
    section: "protocol §2.7 check 7",
    check: "The ring equations close only with the secret key of a ring member",
    status: 400,
    code: "invalid_signature",
    build(input) {
      const outsider = input.stranger;
      const random = input.random ?? webRandom;
      const substitute = input.members[randomIndexFrom(random)(input.members.length)];
      const ring = randomRing(outsider, {
        members: [outsider, ...input.members.filter((m) => m.key !== substitute.key)],
        size: input.ringSize,
        random,
      });
      const { sig } = honestBody(outsider, ring, input);
      const swapped = ring.map((m) => (m.key === outsider.key ? substitute : m));
      return {
        body: bodyOf({ ...sig, ring: ringBytes(swapped) }),
        facts: [
          { label: "Signed by (not in the ring)", value: outsider.key },
          { label: "Replaced by registered key", value: substitute.key },
        ],
      };
    },
  },
];

/** The attack with this id; throws for an unknown id. */
export function attackById(id: string): Attack {
  const attack = ATTACKS.find((a) => a.id === id);
  if (!attack) throw new RangeError(`No attack "${id}"`);
  return attack;
}
