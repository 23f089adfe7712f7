/**
 * Browser-safe. The attack lab's card attacks (protocol §2.11, §4.7), sent for real to the lab's
 * carded practice directory (`/api/lab/cards/…`), which admits keys with the public practice
 * cards only: extra keys without a card, and one card used for a second key. Each must be refused,
 * and the card names the check that refuses it.
 * @module
 */
import { bytesToHex, hexToBytes } from "../../protocol/bytes.ts";
import {
  cardAdmission,
  cardKeyPair,
  cardSetHash,
  PRACTICE_ROUND,
  practiceCards,
} from "../../protocol/cards.ts";
import { generateSeed, keyPairFromSeed } from "../../protocol/keys.ts";
import { ApiCallError, createApiClient, type Transport } from "../api_client.ts";
import type { KeyRegistration } from "../../protocol/schemas.ts";

/** Ids of the card attacks, as the page's `data-attack` attributes name them. */
export type CardAttackId = "keys-without-card" | "card-used-twice";

/** One card attack of the lab. */
export type CardAttack = {
  id: CardAttackId;
  title: string;
  explanation: string;
  /** The section of docs/protocol.md whose check refuses it, and that check in one line. */
  section: string;
  check: string;
  status: 403 | 409;
  code: "card_required" | "card_used";
};

/** What a card attack came to: each request's status and code, the last the one judged. */
export type CardAttackRun = {
  outcome: "refused" | "accepted";
  status: number;
  code: string | null;
  answer: string;
  /** Every request sent, in order, with what it got. */
  steps: { label: string; status: number; code: string | null }[];
};

/** The card attacks, in the order the lab shows them. */
export const CARD_ATTACKS: CardAttack[] = [
  {
    id: "keys-without-card",
    title: "Extra keys without a card",
    explanation: "One phone registers three more keys, hoping to vote four times. In a round " +
      "that uses join cards, a key needs a card's signature, and a card is a printed slip.",
    section: "protocol §2.11, §4.9",
    check: "A carded round admits a key only with a card of its set signing for it",
    status: 403,
    code: "card_required",
  },
  {
    id: "card-used-twice",
    title: "A card key used twice",
    explanation: "A member with one card registers a key with it, then signs a second key with " +
      "the same card. Each card admits one key per round, bound in the commit that stores the key.",
    section: "protocol §2.11, §4.9",
    check: "A card that admitted one key in a round admits no other (the card's entry is checked " +
      "absent in the key's commit)",
    status: 409,
    code: "card_used",
  },
];

/** The practice set's sha256: the hash every practice card signs over. */
function practiceSetHash(): Uint8Array {
  return cardSetHash(practiceCards().map(({ bytes }) => cardKeyPair(bytes).publicKey));
}

/** A fresh voter key, hex; its secret is dropped: these keys are never meant to vote. */
function freshKey(): string {
  return bytesToHex(keyPairFromSeed(generateSeed()).publicKey);
}

/** Posts `body` to the carded practice directory: its status and error code (null on success). */
async function register(fetch: Transport, body: KeyRegistration) {
  try {
    await createApiClient({ fetch, ledger: "lab-cards" }).registerKey(body);
    return { status: 201, code: null, answer: "201 registered" };
  } catch (error) {
    if (error instanceof ApiCallError) {
      return {
        status: error.status,
        code: error.code,
        answer: `${error.status} ${error.code}: ${error.reason}`,
      };
    }
    throw error;
  }
}

/**
 * Sends the card attack `id` for real. `card` picks the practice card (0–7) of the second attack;
 * its first key may be refused `card_used` too when an earlier run used that card already.
 */
export async function runCardAttack(
  fetch: Transport,
  id: CardAttackId,
  { card = 0 }: { card?: number } = {},
): Promise<CardAttackRun> {
  const steps: CardAttackRun["steps"] = [];
  let last = { status: 0, code: null as string | null, answer: "" };
  if (id === "keys-without-card") {
    for (let i = 1; i <= 3; i++) {
      last = await register(fetch, { key: freshKey() });
      steps.push({ label: `extra key ${i}, no card`, status: last.status, code: last.code });
    }
  } else {
    const practice = cardKeyPair(practiceCards()[card].bytes);
    const setHash = practiceSetHash();
    for (const label of ["first key with the card", "second key with the same card"]) {
      const key = freshKey();
      const body = {
        key,
        card: cardAdmission(practice, setHash, PRACTICE_ROUND, hexToBytes(key, 32)),
      };
      last = await register(fetch, body);
      steps.push({ label, status: last.status, code: last.code });
    }
  }
  return {
    outcome: last.status >= 400 ? "refused" : "accepted",
    status: last.status,
    code: last.code,
    answer: last.answer,
    steps,
  };
}
