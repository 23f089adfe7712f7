/**
 * The presenter's controls on the voting page (page §14), shown only to the browser signed in with
 * the admin token: "Show the QR code to the room", which fills the screen with the voting page's
 * QR code, its address in large text and a live count of voters and votes; and the form that
 * starts a round with a question and its choices.
 * @module
 */
import { useEffect, useState } from "react";
import AddressQr from "../../components/AddressQr.tsx";
import { presenterRelay } from "../hooks/presenter_relay.ts";
import { useScannedAddress } from "../hooks/scanned_address.ts";
import { relayHost } from "../../lib/client/relay/round_pins.ts";
import { shortHash } from "../../lib/client/relay/fragment.ts";
import RelaySetting from "./RelaySetting.tsx";
import { pinWitness, witnessVkey } from "../hooks/witness_key.ts";
import { ApiCallError, createApiClient } from "../../lib/client/api_client.ts";
import { messageOf } from "../../lib/client/text.ts";
import { RoundStart } from "../../lib/protocol/schemas.ts";
import { describeIssues } from "../../lib/protocol/schemas.ts";
import { type PhasedRoundInfo, votesByGroup } from "../../lib/client/rounds/phases.ts";
import OpenVoting from "./OpenVoting.tsx";
import { useRoomCounts } from "./room_counts.ts";
import { phaseFormFields, PhaseInputs, type PhaseInputValues } from "./PhaseInputs.tsx";
import { knownSets, loadKnownSets } from "./known_sets.ts";
import CardMaker from "./CardMaker.tsx";

/** Props of {@link PresenterControls}. */
export type PresenterControlsProps = {
  token: string;
  address: string;
  round: PhasedRoundInfo;
  /** Forgets the token in this browser. */
  onSignOut(): void;
  /** The relay the server's `OHTTP_RELAY` suggests, filling the relay field while none is kept. */
  relayPrefill?: string;
};

/** The presenter's bar: the QR code for the room and the round form. */
export default function PresenterControls(
  { token, address, round, onSignOut, relayPrefill }: PresenterControlsProps,
) {
  const [presenting, setPresenting] = useState(false);
  // A round held while the presenter's relay is read declares itself relayed (no address).
  const relay = presenterRelay.value;
  useEffect(() => {
    if (relay.kind !== "pinned" || round.id === 1 || round.relayed) return;
    createApiClient({ fetch, ledger: { round: round.id } }).declareRelayed(token)
      .catch((error) => console.error(error));
  }, [relay.kind, round.id, round.relayed]);
  return (
    <section class="presenter" data-section="presenter" aria-label="Presenter">
      <h2 class="presenter-title">Presenter</h2>
      <button
        type="button"
        class="present-button"
        data-action="present"
        aria-pressed={presenting}
        onClick={() => setPresenting(!presenting)}
      >
        {presenting ? "Hide the QR code" : "Show the QR code to the room"}
      </button>
      {presenting && (
        <PresentView
          token={token}
          address={address}
          round={round}
          relayPrefill={relayPrefill}
          onClose={() => setPresenting(false)}
        />
      )}
      {votesByGroup(round) && <OpenVoting key={round.id} token={token} round={round} />}
      <RelaySetting prefill={relayPrefill} round={round} />
      <CardMaker token={token} round={round} />
      <RoundForm token={token} current={round} />
      <button type="button" class="presenter-sign-out" data-action="sign-out" onClick={onSignOut}>
        Sign out of presenting in this browser
      </button>
    </section>
  );
}

/** The whole-screen QR code with the address and the live counts. */
function PresentView(
  { token, address, round, relayPrefill, onClose }: {
    token: string;
    address: string;
    round: PhasedRoundInfo;
    relayPrefill?: string;
    onClose(): void;
  },
) {
  const counts = useRoomCounts(round.id);
  // The code carries the presenter's pins (the witness this browser runs, the relay named in the
  // presenter's bar or the server's OHTTP_RELAY); while that relay is read, or could not be, there
  // is no code at all (protocol §7.4).
  const { scanned, witness, qr } = useScannedAddress(address, relayPrefill);
  const pin = qr.kind === "code" ? qr.pin : null;
  // The code names this witness: pinned as the room's, phones that require it are not let down.
  useEffect(() => {
    if (witness !== null) void pinWitness(witnessVkey(witness), token);
  }, [witness, token]);
  return (
    <div class="present-view" data-present="" role="dialog" aria-label="Scan to vote">
      {qr.kind === "code"
        ? (
          <div
            class="present-qr"
            data-witness-qr={witness === null ? undefined : scanned}
            data-relay-qr={pin === null ? undefined : scanned}
          >
            <AddressQr address={scanned} size="present" />
          </div>
        )
        : (
          <p
            class={`present-qr present-no-qr${qr.kind === "failed" ? " status-red" : ""}`}
            data-relay-qr-state={qr.kind}
            role={qr.kind === "failed" ? "alert" : "status"}
          >
            {qr.kind === "failed" ? qr.text : `Reading the key configuration from ${qr.relay}…`}
          </p>
        )}
      <div class="present-side">
        {round.question !== "" && <p class="present-question">{round.question}</p>}
        {pin !== null && (
          <p class="present-relay" data-relay-host={relayHost(pin.relay)}>
            Relay: {relayHost(pin.relay)} (key {shortHash(pin.ohttp)})
          </p>
        )}
        {round.id === 1 && (
          <p class="present-offer" data-present-offer="">
            Round 1 signs each vote over 8 keys drawn at random, so a room that joins one by one can
            be narrowed down. Start a round first: each vote then hides among everyone who joined.
            {" "}
            <button
              type="button"
              data-action="start-round-first"
              onClick={() => {
                onClose();
                document.querySelector<HTMLInputElement>('[data-section="rounds"] input')?.focus();
              }}
            >
              Start a round first
            </button>
          </p>
        )}
        <p class="present-counts" data-present-counts="">
          <span data-joined-count={counts?.joined ?? ""}>
            {counts === null ? "…" : counts.joined}
          </span>{" "}
          joined ·{" "}
          <span data-vote-count={counts?.votes ?? ""}>{counts === null ? "…" : counts.votes}</span>
          {" "}
          voted
        </p>
        <button type="button" class="present-close" data-action="present-close" onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}

/** The form starting a round: a question, one choice per line (none for free text), a pace. */
function RoundForm({ token, current }: { token: string; current: PhasedRoundInfo }) {
  const [question, setQuestion] = useState("");
  const [choices, setChoices] = useState("");
  const [seconds, setSeconds] = useState("5");
  const [phases, setPhases] = useState<PhaseInputValues>({
    minVoters: "8",
    joinSeconds: "",
    lateJoiners: false,
  });
  const [status, setStatus] = useState<{ text: string; failed: boolean } | null>(null);
  const [sending, setSending] = useState(false);
  // "Members only: use the cards" (page §14.7): the set chosen, newest made by default.
  const [carded, setCarded] = useState(false);
  const [cardSet, setCardSet] = useState<string | null>(null);
  useEffect(loadKnownSets, []);
  const sets = knownSets.value;
  const chosenSet = cardSet ?? sets.at(-1)?.set ?? null;

  async function start(event: Event) {
    event.preventDefault();
    const body = {
      ...(carded && chosenSet !== null ? { cards: chosenSet } : {}),
      question,
      choices: choices.split("\n").map((line) => line.trim()).filter((line) => line !== ""),
      blockIntervalMs: Math.round(Number(seconds) * 1000),
    };
    const checked = RoundStart.safeParse(body);
    if (!checked.success) {
      setStatus({ text: `Not started: ${describeIssues(checked.error)}`, failed: true });
      return;
    }
    const phased = phaseFormFields(phases);
    if (!phased.ok) {
      setStatus({ text: `Not started: ${phased.problem}`, failed: true });
      return;
    }
    const start: RoundStart = { ...checked.data, ...phased.fields };
    setSending(true);
    try {
      const { id } = await createApiClient({ fetch }).startRound(start, token);
      setStatus({ text: `Round ${id} started: every open page moves to it.`, failed: false });
      setQuestion("");
      setChoices("");
    } catch (error) {
      const reason = error instanceof ApiCallError ? error.reason : messageOf(error);
      setStatus({ text: `Not started: ${reason}`, failed: true });
    } finally {
      setSending(false);
    }
  }

  return (
    <form class="round-form" data-section="rounds" onSubmit={start}>
      <h3>
        Start a new round <span class="round-form-current">(now: round {current.id})</span>
      </h3>
      <label>
        Question
        <input
          type="text"
          name="question"
          value={question}
          maxLength={200}
          onInput={(event) => setQuestion((event.target as HTMLInputElement).value)}
        />
      </label>
      <label>
        Choices, one per line (leave empty for free text)
        <textarea
          name="choices"
          rows={4}
          value={choices}
          onInput={(event) => setChoices((event.target as HTMLTextAreaElement).value)}
        />
      </label>
      <label>
        Seal a block every (seconds)
        <input
          type="number"
          name="interval"
          min={1}
          max={3600}
          value={seconds}
          onInput={(event) => setSeconds((event.target as HTMLInputElement).value)}
        />
      </label>
      <PhaseInputs values={phases} onChange={setPhases} />
      {sets.length > 0 && (
        <label class="round-form-check">
          <input
            type="checkbox"
            name="cards"
            checked={carded}
            onChange={(event) => setCarded((event.target as HTMLInputElement).checked)}
          />{" "}
          Members only: use the cards{" "}
          {sets.length === 1 ? `(set ${sets[0].set}, ${sets[0].count} cards)` : (
            <select
              name="cardSet"
              value={chosenSet ?? ""}
              onChange={(event) => setCardSet((event.target as HTMLSelectElement).value)}
            >
              {sets.map(({ set, count }) => (
                <option key={set} value={set}>set {set}, {count} cards</option>
              ))}
            </select>
          )}
        </label>
      )}
      <button type="submit" data-action="start-round" disabled={sending}>Start the round</button>
      {status !== null && (
        <p
          class={`round-form-status${status.failed ? " status-red" : ""}`}
          data-round-status={status.failed ? "failed" : "started"}
          role="status"
        >
          {status.text}
        </p>
      )}
    </form>
  );
}
