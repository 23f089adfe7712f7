/**
 * One round on the projector view (page §10.11): its tally, the votes sealed and waiting, the time
 * to the next seal and the verdict of its audit, all read through the round's own API calls and
 * kept live. Mounted afresh for each round, so nothing of one round is shown under another.
 * @module
 */
import { useMemo } from "react";
import ForkAlert from "../../components/ForkAlert.tsx";
import HeadAlerts from "../../components/HeadAlerts.tsx";
import SealCountdown from "../../components/SealCountdown.tsx";
import { PHASE_LABELS } from "../../lib/client/audit/audit.ts";
import { pageApiClient, useHeadWatch } from "../hooks/watch_heads.ts";
import { pageRoundStorage } from "./page_storage.ts";
import { useHeadTally, useNow, useOpenBlock } from "../hooks/polling.ts";
import { type RoomAudit, useRoundAudit } from "./room_audit.ts";
import RoomTally from "./RoomTally.tsx";
import WhoSaw from "./WhoSaw.tsx";
import { ledgerBase } from "../../lib/client/api_client.ts";
import Notice from "../../components/Notice.tsx";
import type { NoteSigner } from "../../lib/protocol/note.ts";
import { blocks } from "../../components/WitnessControl.tsx";
import type { RoundPhase } from "../../lib/client/rounds/phases.ts";
import RoomPhase from "./RoomPhase.tsx";

/**
 * Props: the round, the choices it offers (none: free text), how often it is read, and this
 * browser's witness key while the projector witnesses (page §10.13).
 */
export type RoomRoundProps = {
  round: number;
  choices: string[];
  pollMs: number;
  witness?: NoteSigner | null;
  /** The round's phase when it has phases (page §10.11); null for round 1. */
  phase?: RoundPhase | null;
  /** The relay phones send through (protocol §7): its figures are shown beside the server's. */
  relay?: string | null;
  /** The card set of a carded round (page §14.7), else null. */
  cards?: string | null;
};

/** The round's live figures: the tally beside the seal and audit panel. */
export default function RoomRound(
  { round, choices, pollMs, witness = null, phase = null, relay = null, cards = null }:
    RoomRoundProps,
) {
  const ledger = { round };
  const api = useMemo(() => pageApiClient(ledger), []);
  const storage = useMemo(() => pageRoundStorage(round), []);
  // The room is shown the chain too: it must extend every signed head this browser saw.
  const { fork, alerts, witnessing } = useHeadWatch(pollMs, { ledger, storage, witness });
  const chain = useHeadTally(api, pollMs);
  const open = useOpenBlock(api, pollMs);
  const now = useNow();
  const audit = useRoundAudit(api, { round, height: chain.value?.height ?? null, storage });
  const tally = chain.value?.tally ?? null;
  const votes = tally === null || open.value === null ? null : tally.total + open.value.votes;
  return (
    <div class="room-body" data-ready={chain.value === null ? "false" : "true"}>
      <section class="room-results" aria-labelledby="room-tally-title">
        <h2 id="room-tally-title" class="visually-hidden">Tally</h2>
        {fork && <ForkAlert evidence={fork} />}
        <HeadAlerts alerts={alerts} />
        {chain.problem !== null && <Notice tone="problem" text={chain.problem} />}
        <RoomTally choices={choices} tally={tally} />
        {relay !== null && (
          <WhoSaw
            relay={relay}
            serverVotes={votes}
            serverSource={`${location.origin}${ledgerBase(ledger)}tally and block/open`}
            pollMs={pollMs}
          />
        )}
      </section>
      <section class="room-side" aria-labelledby="room-side-title">
        <h2 id="room-side-title" class="visually-hidden">Sealing and audit</h2>
        {phase !== null && (
          <RoomPhase api={api} phase={phase} votes={votes} pollMs={pollMs} cards={cards} />
        )}
        <p class="room-figure" data-room-sealed={tally?.total ?? ""}>
          <strong>{tally?.total ?? "–"}</strong> {tally?.total === 1 ? "vote" : "votes"} sealed
        </p>
        <p class="room-figure" data-room-waiting={open.value?.votes ?? ""}>
          <strong>{open.value?.votes ?? "–"}</strong> waiting
        </p>
        <p class="room-seal">
          {open.problem === null
            ? <SealCountdown open={open.value} now={now} waiting={false} />
            : <span data-seal-countdown="">Next seal unknown: {open.problem}</span>}
        </p>
        <RoomAuditLine audit={audit} />
        {witness !== null && (
          <p class="room-witness" data-witness-activity={witnessing?.kind ?? "starting"}>
            {witnessing?.kind === "cosigned"
              ? `Witnessed: this screen cosigned ${blocks(witnessing.size)}`
              : witnessing?.kind === "refused"
              ? `Witness refused: ${witnessing.reason}`
              : "Witness: checking the history…"}
          </p>
        )}
      </section>
    </div>
  );
}

/**
 * The audit's verdict in a few words, `data-room-audit` "passed", "failed" or "running" (before
 * the first result); while a new height is audited, the last verdict stays, saying so.
 */
function RoomAuditLine({ audit: { result, running } }: { audit: RoomAudit }) {
  const verdict = result === null ? "running" : result.ok ? "passed" : "failed";
  return (
    <div
      class={`room-audit room-audit-${verdict}`}
      data-room-audit={verdict}
      data-audit-height={result?.height ?? ""}
      data-audit-running={running === null ? "false" : "true"}
    >
      <p class="room-audit-verdict">
        {result === null
          ? "Auditing every vote in this browser…"
          : result.problem !== null
          ? `✗ The audit could not run: ${result.problem}`
          : result.ok
          ? `✓ Audit passed: ${result.votes} ${result.votes === 1 ? "vote" : "votes"} in ` +
            `${result.blocks} ${result.blocks === 1 ? "block" : "blocks"}`
          : `✗ Audit failed: ${result.failures} ${result.failures === 1 ? "failure" : "failures"}`}
      </p>
      <p class="room-audit-detail">
        {running !== null
          ? `Checking again: ${PHASE_LABELS[running.phase].toLowerCase()}…`
          : result !== null
          ? `Checked in this browser, up to block ${result.height}.`
          : ""}
      </p>
    </div>
  );
}
