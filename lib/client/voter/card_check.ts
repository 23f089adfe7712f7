/**
 * Browser-safe. Before a phone joins a carded round with its card (page §14.7, protocol §2.11),
 * with nothing sent but reads: the round's committed set (`GET /api/rounds/{r}/cards`,
 * `GET /api/cards/{set}`, block 0 of the round) must hash to the genesis `prev_hash`, be the set
 * the round lists, and hold the card's key. Then the card signs the key's admission. The card
 * code comes in (it loads with the signing code), so this module adds nothing else to a chunk.
 * @module
 */
import type { ApiClient } from "../api_client.ts";
import type { CardAdmissionWire } from "../../protocol/card_schemas.ts";
import type * as CardCode from "./card_code.ts";
import type { GenesisChecks } from "./card_code.ts";

/** The card code, as the signing chunk exports it (loadSigning in panel_actions.ts). */
export type CardCodeModule = Pick<
  typeof CardCode,
  "admitWithCard" | "cardKeyOf" | "checkRoundSet" | "readCardCode"
>;

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
  { api, round, listed, bytes, code, chain }: {
    api: Pick<ApiClient, "roundCards" | "cardSet" | "blocks">;
    round: number;
    listed: string;
    bytes: Uint8Array;
    code: CardCodeModule;
    chain: GenesisChecks;
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
    if (genesis === undefined) {
      return { ok: false, reason: "the round's first block could not be checked" };
    }
    const checked = code.checkRoundSet(genesis, served, chain);
    if (!checked.ok) return { ok: false, reason: checked.reason };
    if (checked.set !== listed) {
      return { ok: false, reason: "the card set served is not the one the round lists" };
    }
    const at = checked.keys.indexOf(code.cardKeyOf(bytes));
    if (at < 0) {
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
      number: at + 1,
      count: checked.keys.length,
    };
  } catch (error) {
    // An ApiCallError's reason, else the error's message (no value import: a chunk of its own).
    const { reason = String(error) } = error as { reason?: string };
    return { ok: false, reason: `the round's cards could not be read: ${reason}` };
  }
}

/** The signer of the card of `bytes` for round `round` of the set whose hash is `setSha256`. */
export function cardSigner(
  { bytes, setSha256, round, code }: {
    bytes: Uint8Array;
    setSha256: string;
    round: number;
    code: CardCodeModule;
  },
): CardSigner {
  return (voterKey) => code.admitWithCard({ bytes, setSha256, round, voterKey });
}
