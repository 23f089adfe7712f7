/**
 * The address the presenter's codes carry (page §14.3, §14.6, §10.13): the voting page's address
 * with the presenter's pins — the witness this browser runs, if it witnesses (`witness=`,
 * `quorum=`), and the relay named in the presenter's bar with its key's hash (`relay=`, `ohttp=`).
 * The room's QR code and every printed card (page §14.7) are drawn from it.
 * @module
 */
import { useState } from "react";
import { witnessAddress } from "../../components/WitnessControl.tsx";
import { addressWithPin } from "../../lib/client/relay/fragment.ts";
import type { NoteSigner } from "../../lib/protocol/note.ts";
import { presenterRelay, type QrState, useQrState } from "./presenter_relay.ts";
import { storedWitnessKey, WITNESSING_KEY, witnessVkey } from "./witness_key.ts";

/**
 * The scanned address of `address`, the witness key it names (null: none), whether the
 * presenter's relay is still being read (its pin then not yet in the address) and the state of
 * the presenter's code (no code while the relay is read or could not be). `prefill` is the
 * server's OHTTP_RELAY, read when the presenter named none.
 */
export function useScannedAddress(
  address: string,
  prefill?: string,
): { scanned: string; witness: NoteSigner | null; reading: boolean; qr: QrState } {
  // When this browser also witnesses (the board's or projector view's switch), the code carries
  // its key, so phones that scan it require its cosignature (page §10.13).
  const [witness] = useState(() =>
    localStorage.getItem(WITNESSING_KEY) === "on" ? storedWitnessKey(localStorage) : null
  );
  // The code carries the relay named in the presenter's bar, with its key's hash (protocol §7).
  const qr = useQrState(prefill);
  const pin = qr.kind === "code" ? qr.pin : null;
  const scanned = addressWithPin(
    witness === null ? address : witnessAddress(address, witnessVkey(witness)),
    pin,
  );
  return { scanned, witness, reading: presenterRelay.value.kind === "reading", qr };
}
