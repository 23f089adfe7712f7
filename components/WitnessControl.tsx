// The control that makes a board a witness of the ledger it shows (page §10.13): the button, what
// the witness did last, its vkey, and the QR code of the voting page's address with that vkey in
// the fragment, drawn in this browser, so phones that scan it require its cosignature.
import AddressQr from "./AddressQr.tsx";
import { policyFragment } from "../lib/client/log/witness_policy.ts";
import { addressWithPin, pinFromFragment } from "../lib/client/relay/fragment.ts";
import type { WitnessActivity } from "../islands/hooks/watch_heads.ts";

/** Props: the witness's vkey (null while it does not witness), its last activity, the switch. */
export type WitnessControlProps = {
  vkey: string | null;
  activity: WitnessActivity | null;
  address: string;
  onStart(): void;
  onStop(): void;
  /** Draws the QR code for the projector: large, at least 60% of the screen's smaller side. */
  present?: boolean;
};

/**
 * The voting page's address with `vkey` as its witness policy, in place of any it named; a relay
 * pin the address holds (protocol §7) is kept beside it.
 */
export function witnessAddress(address: string, vkey: string): string {
  const fragment = address.match(/#.*$/)?.[0] ?? "";
  const read = pinFromFragment(fragment);
  return addressWithPin(
    address.replace(/#.*$/, "") + policyFragment([vkey]),
    read.kind === "pin" ? read.pin : null,
  );
}

/** The witness control (see the file comment). */
export default function WitnessControl(
  { vkey, activity, address, onStart, onStop, present = false }: WitnessControlProps,
) {
  return (
    <section class="witness-control" data-witnessing={vkey === null ? "no" : "yes"}>
      <h2>Witness this ledger</h2>
      <p>
        A witness cosigns the server's signed history only after checking that it extends everything
        it cosigned before. Phones that scan this witness's QR code accept a history only once it
        has cosigned it, so the server cannot show them a history of their own.
      </p>
      <button
        type="button"
        data-action="witness"
        aria-pressed={vkey === null ? "false" : "true"}
        onClick={vkey === null ? onStart : onStop}
      >
        {vkey === null ? "Make this browser a witness" : "Stop witnessing"}
      </button>
      {vkey !== null && (
        <>
          <p class="witness-activity" data-witness-activity={activity?.kind ?? "starting"}>
            {activity === null
              ? "Checking the server's history before cosigning it…"
              : activity.kind === "cosigned"
              ? `Cosigned the history of ${blocks(activity.size)} at ${
                new Date(activity.at).toLocaleTimeString()
              }.`
              : `The server refused the cosignature of ${
                blocks(activity.size)
              }: ${activity.reason}`}
          </p>
          <p class="witness-vkey">
            Witness key: <code class="hex">{vkey}</code>
          </p>
          <div data-witness-qr={witnessAddress(address, vkey)}>
            <AddressQr
              address={witnessAddress(address, vkey)}
              size={present ? "present" : "normal"}
            />
          </div>
        </>
      )}
    </section>
  );
}

/** `n` blocks, in words. */
export function blocks(n: number): string {
  return `${n} block${n === 1 ? "" : "s"}`;
}
