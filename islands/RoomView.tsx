/**
 * The board's projector view (/board?view=room, page §10.11): the current round's question, its
 * tally in large bars, the votes sealed and waiting, the time to the next seal and the verdict of
 * an audit run in this browser, readable from the back of a room; it moves to a new round by
 * itself unless the address names one, and shows the voting page's QR code on demand. At
 * /print/cards it is the print view of a card set instead (page §14.7).
 * @module
 */
import { useEffect, useState } from "react";
import PrintSheets from "./print/PrintSheets.tsx";
import AddressQr from "../components/AddressQr.tsx";
import { roundName, roundQuestion } from "../lib/client/board/rounds.ts";
import { useRounds } from "./hooks/use_rounds.ts";
import RoomRound from "./board/RoomRound.tsx";
import { useWitnessKey, witnessVkey } from "./hooks/witness_key.ts";
import { witnessAddress } from "../components/WitnessControl.tsx";
import { votesByGroup } from "../lib/client/rounds/phases.ts";
import { addressWithPin } from "../lib/client/relay/fragment.ts";
import { useQrState } from "./hooks/presenter_relay.ts";
import { relayHost } from "../lib/client/relay/round_pins.ts";
import { shortHash } from "../lib/client/relay/fragment.ts";

/**
 * Props the server renders the view with: the polling interval, the round the address names (null:
 * follow the current round) and the voting page's address phones must use.
 */
export type RoomViewProps = {
  pollMs: number;
  round: number | null;
  address: string;
  /** The card set the print view at /print/cards draws (page §14.7), instead of the room. */
  print?: string;
};

const QR_ID = "room-qr";
/** A question longer than this many characters is set smaller, to stay on two or three lines. */
const LONG_QUESTION = 60;

/**
 * The projector view (see the module comment), or the print view of a card set (`print`): the
 * room's other paper, drawn with the same QR code and pins.
 */
export default function RoomView(props: RoomViewProps) {
  return props.print === undefined
    ? <RoomScreen {...props} />
    : <PrintView set={props.print} address={props.address} />;
}

/** The print view: nothing on the server; the sheets once this browser's codes can be read. */
function PrintView({ set, address }: { set: string; address: string }) {
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  if (!mounted) return <p class="notice notice-working">Reading the codes kept in this browser…</p>;
  return <PrintSheets set={set} address={address} />;
}

/** The projector view. */
function RoomScreen({ pollMs, round, address }: RoomViewProps) {
  const list = useRounds();
  const [qr, setQr] = useState(false);
  // A witnessing projector's code carries its key (page §10.13): phones that scan it require it.
  const witness = useWitnessKey();
  // The code carries the relay the presenter named, or the one this page holds (protocol §7).
  // While the presenter's relay is read, or could not be, there is no code: never the plain one.
  const qrState = useQrState();
  const pin = qrState.kind === "code" ? qrState.pin : null;
  const scanned = addressWithPin(
    witness.witness ? witnessAddress(address, witnessVkey(witness.witness)) : address,
    pin,
  );
  const shown = round ?? list?.current ?? null;
  const info = list?.rounds.find((r) => r.id === shown) ?? null;
  const question = info !== null
    ? roundQuestion(info)
    : list === null
    ? "Reading the question…"
    : `${roundName(shown ?? 1)} is not a round of this server`;
  return (
    <div
      class="room"
      data-round={shown ?? ""}
      data-following={round === null ? "true" : "false"}
      data-qr={qr ? "shown" : "hidden"}
    >
      <header class="room-head">
        <p class="room-round">
          {shown === null ? "Ringvote" : `${roundName(shown)} · live results · Ringvote`}
        </p>
        <h1
          class="room-question"
          data-room-question={info?.question ?? ""}
          data-size={question.length > LONG_QUESTION ? "long" : undefined}
        >
          {question}
        </h1>
        <div class="room-controls">
          <button
            type="button"
            class="room-qr-toggle"
            data-action="show-qr"
            aria-expanded={qr ? "true" : "false"}
            aria-controls={QR_ID}
            onClick={() => setQr(!qr)}
          >
            {qr ? "Hide the QR code" : "Show the QR code"}
          </button>
          <button
            type="button"
            class="room-qr-toggle room-witness-toggle"
            data-action="witness"
            aria-pressed={witness.witness ? "true" : "false"}
            onClick={witness.witness ? witness.stop : witness.start}
          >
            {witness.witness ? "Stop witnessing" : "Witness from this screen"}
          </button>
        </div>
      </header>
      {shown !== null && (
        <RoomRound
          key={shown}
          round={shown}
          choices={info?.choices ?? []}
          pollMs={pollMs}
          witness={witness.witness}
          phase={info !== null && votesByGroup(info) ? info.phase ?? null : null}
          relay={pin?.relay ?? null}
          cards={info?.cards ?? null}
        />
      )}
      <div
        id={QR_ID}
        class="room-qr"
        hidden={!qr}
        data-witness-qr={witness.witness ? scanned : undefined}
      >
        {qr && qrState.kind === "code" && <AddressQr address={scanned} size="present" />}
        {qr && qrState.kind !== "code" && (
          <p
            class={`room-no-qr${qrState.kind === "failed" ? " status-red" : ""}`}
            data-relay-qr-state={qrState.kind}
          >
            {qrState.kind === "failed"
              ? qrState.text
              : `Reading the key configuration from ${qrState.relay}…`}
          </p>
        )}
        {qr && pin !== null && (
          <p class="room-relay" data-relay-host={relayHost(pin.relay)}>
            Relay: {relayHost(pin.relay)} (key {shortHash(pin.ohttp)})
          </p>
        )}
      </div>
    </div>
  );
}
