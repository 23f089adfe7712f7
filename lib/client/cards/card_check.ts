/**
 * Browser-safe. Before a phone joins a carded round with its card (page §14.7, protocol §2.11),
 * with nothing sent but reads: the round's committed set (`GET /api/rounds/{r}/cards`,
 * `GET /api/cards/{set}`, block 0 of the round) must hash to the genesis `prev_hash`, be the set
 * the round lists, and hold the card's key. Then the card signs the key's admission.
 * @module
 */
import { ApiCallError, type ApiClient } from "../api_client.ts";
import { messageOf } from "../text.ts";
import { verifyBlockHash } from "../../protocol/chain.ts";
import { cardNumber, cardRegistrationBody, checkRoundCardSet } from "./cards.ts";
import type { CardAdmissionWire } from "../../protocol/card_schemas.ts";

/** Signs the card's admission of a voter key (hex). */
export type CardSigner = (voterKey: string) => CardAdmissionWire;

/** The round's set as checked against its genesis, and the card's place in it. */
export type CheckedCard =
  | { ok: true; set: string; sha256: string; number: number; count: number }
  | { ok: false; reason: string };

/**
 * Checks that the card of `bytes` may join round `round`, listed with card set `listed`: the
 * round's set is the listed one, its keys hash to the round's genesis `prev_hash`, and the card's
 * key is one of them. Nothing is sent but these reads. Never throws.
 */
export async function checkCardForRound(
  { api, round, listed, bytes }: {
    api: Pick<ApiClient, "roundCards" | "cardSet" | "blocks">;
    round: number;
    listed: string;
    bytes: Uint8Array;
  },
): Promise<CheckedCard> {
  try {
    const cards = await api.roundCards();
    if (cards.set !== listed) {
      return {
        ok: false,
        reason: `round ${round} is listed with card set ${listed} but names set ${cards.set}`,
      };
    }
    const served = await api.cardSet(cards.set);
    const { items } = await api.blocks(0, 1);
    const genesis = items[0];
    if (genesis === undefined || genesis.height !== 0 || !verifyBlockHash(genesis)) {
      return { ok: false, reason: "the round's first block could not be checked" };
    }
    const checked = checkRoundCardSet(genesis, served);
    if (!checked.ok) return { ok: false, reason: checked.reason };
    if (checked.set !== listed) {
      return { ok: false, reason: "the card set served is not the one the round lists" };
    }
    const number = cardNumber(checked, bytes);
    if (number === null) {
      return {
        ok: false,
        reason: "this card is not one of the cards this round committed to: it belongs to " +
          "another meeting, or the round uses other cards",
      };
    }
    return {
      ok: true,
      set: checked.set,
      sha256: checked.sha256,
      number,
      count: checked.keys.length,
    };
  } catch (error) {
    const reason = error instanceof ApiCallError ? error.reason : messageOf(error);
    return { ok: false, reason: `the round's cards could not be read: ${reason}` };
  }
}

/** The signer of the card of `bytes` for round `round` of the set whose hash is `setSha256`. */
export function cardSigner(
  { bytes, setSha256, round }: { bytes: Uint8Array; setSha256: string; round: number },
): CardSigner {
  return (voterKey) =>
    cardRegistrationBody({ voterKey, cardBytes: bytes, setSha256, roundId: round }).card!;
}
