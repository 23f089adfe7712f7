/**
 * Browser-safe. A phone's key registered with its card in a carded round (page §14.7, protocol
 * §2.11): the key is sent with the card's admission, and a refusal is answered with the server's
 * code, to be said in words. Light: the signing is the caller's (lib/client/cards/card_check.ts makes the signer).
 * @module
 */
import { ApiCallError } from "../api_client.ts";
import { messageOf } from "../text.ts";
import type { CardAdmissionWire } from "../../protocol/card_schemas.ts";
import type { ClientIO } from "./voter_io.ts";
import { readStoredKeys } from "./voter_io.ts";
import { REGISTRATION_NAME, storageKey } from "./voters.ts";
import { decideKeyStatus, type KeyLine, keyStatusLine } from "./status.ts";

/** Signs the card's admission of a voter key (hex). */
export type CardSigner = (voterKey: string) => CardAdmissionWire;

/** A registration with a card: the key line, and the server's refusal when there was one. */
export type CardRegistration = {
  line: KeyLine;
  refusal: { code: string; reason: string } | null;
};

/**
 * Registers the stored public key with the card's admission (`sign`), as `registerKey` does
 * without one (page §7): success stores the key id; a failure clears it and answers the
 * server's code and reason.
 */
export async function registerWithCard(
  io: ClientIO,
  namespace: string,
  sign: CardSigner,
): Promise<CardRegistration> {
  const stored = readStoredKeys(io.storage, namespace);
  if (stored.publicKey === null) return { line: keyStatusLine("unregistered"), refusal: null };
  try {
    const record = await io.api.registerKey({
      key: stored.publicKey,
      name: REGISTRATION_NAME,
      card: sign(stored.publicKey),
    });
    io.storage.setItem(storageKey(namespace, "keyId"), String(record.id));
    return { line: keyStatusLine("registered", record.id), refusal: null };
  } catch (error) {
    io.log(messageOf(error));
    io.storage.removeItem(storageKey(namespace, "keyId"));
    const refusal = error instanceof ApiCallError
      ? { code: error.code, reason: error.reason }
      : { code: "failed", reason: messageOf(error) };
    return { line: decideKeyStatus({ ...stored, keyId: null }, null), refusal };
  }
}
