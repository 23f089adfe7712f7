/**
 * The server's check of a card's admission signature (protocol §2.11), as strict as
 * lib/protocol/head.ts `verifyStrict` and about ten times faster: Web Crypto's Ed25519 verifies
 * `[s]B = R + [k]A` cofactorless and compares R's bytes with the encoding of the point it
 * computes (so a non-canonical R fails); around it, this refuses s ≥ L and R = the identity, and
 * takes only card keys of a stored set, each checked canonical, torsion-free and not the identity
 * when the set was posted. With A of prime order, a torsioned R cannot satisfy the cofactorless
 * equation. tests/server/card_verify_test.ts holds it to `verifyStrict` on hostile signatures.
 * Where Web Crypto has no Ed25519, `verifyStrict` itself runs.
 * @module
 */
import { base64urlToBytes, hexToBytes } from "../lib/protocol/bytes.ts";
import { cardAdmitMessage, verifyCardAdmission } from "../lib/protocol/cards.ts";

/** L, the order of the prime subgroup, as 32 little-endian bytes are compared against it. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
/** The identity's one canonical encoding. */
const IDENTITY = (() => {
  const bytes = new Uint8Array(32);
  bytes[0] = 1;
  return bytes;
})();
/** Imported card keys kept; past this many, the memory is cleared and refilled. */
const KEPT_KEYS = 20_000;

/** Checks a card admission: `cardKey` must be a key of a stored (so checked) card set. */
export type CardVerifier = (input: {
  cardKey: string;
  sig: string;
  setHash: string;
  roundId: number;
  voterKey: string;
}) => Promise<boolean>;

/** A {@link CardVerifier}; `webCrypto` false runs `verifyStrict` alone (the bench's baseline). */
export function createCardVerifier(
  { webCrypto = true }: { webCrypto?: boolean } = {},
): CardVerifier {
  const imported = new Map<string, Promise<CryptoKey | null>>();
  const importKey = (cardKey: string, bytes: Uint8Array) => {
    let key = imported.get(cardKey);
    if (!key) {
      if (imported.size >= KEPT_KEYS) imported.clear();
      key = crypto.subtle.importKey("raw", bytes.slice(), "Ed25519", false, ["verify"])
        .catch(() => null);
      imported.set(cardKey, key);
    }
    return key;
  };
  return async ({ cardKey, sig, setHash, roundId, voterKey }) => {
    let key: Uint8Array, signature: Uint8Array, hash: Uint8Array, voter: Uint8Array;
    try {
      key = base64urlToBytes(cardKey, 32, "card key");
      signature = base64urlToBytes(sig, 64, "card signature");
      hash = hexToBytes(setHash, 32, "set hash");
      voter = hexToBytes(voterKey, 32, "key");
    } catch {
      return false;
    }
    if (!webCrypto) return verifyCardAdmission(key, signature, hash, roundId, voter);
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i]);
    if (s >= L) return false;
    if (signature.subarray(0, 32).every((b, i) => b === IDENTITY[i])) return false;
    const imported = await importKey(cardKey, key);
    const message = cardAdmitMessage(hash, roundId, voter);
    if (imported === null) return verifyCardAdmission(key, signature, hash, roundId, voter);
    return await crypto.subtle.verify("Ed25519", imported, signature.slice(), message.slice());
  };
}
