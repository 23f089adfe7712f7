/**
 * The presenter's "Open voting" (page §14.3) in a round with phases: the keys joined so far, and
 * the button that opens voting with `POST /api/rounds/{id}/voting`; a refusal is shown with the
 * server's reason (too few voters: how many more must join).
 * @module
 */
import { useState } from "react";
import { ApiCallError, createApiClient } from "../../lib/client/api_client.ts";
import { type PhasedRoundInfo, phaseFields } from "../../lib/client/rounds/phases.ts";
import { clockTime } from "../../lib/client/rounds/round_texts.ts";
import { messageOf } from "../../lib/client/text.ts";
import { useRoomCounts } from "./room_counts.ts";

/** The open-voting control of round `round`, for the presenter holding `token`. */
export default function OpenVoting({ token, round }: { token: string; round: PhasedRoundInfo }) {
  const counts = useRoomCounts(round.id);
  const { phase, minVoters, joinDeadline } = phaseFields(round);
  const [status, setStatus] = useState<{ text: string; failed: boolean } | null>(null);
  const [sending, setSending] = useState(false);
  const [opened, setOpened] = useState(false);
  const open = opened || phase !== "join";
  const joined = counts?.joined ?? null;

  async function openVoting() {
    setSending(true);
    try {
      const answer = await createApiClient({ fetch, ledger: { round: round.id } }).openVoting(
        token,
      );
      setOpened(true);
      const groups = answer.groups.length;
      setStatus({
        text: `Voting is open: ${groups} ${groups === 1 ? "group" : "groups"}.`,
        failed: false,
      });
    } catch (error) {
      const reason = error instanceof ApiCallError ? error.reason : messageOf(error);
      setStatus({ text: `Voting not opened: ${reason}`, failed: true });
    } finally {
      setSending(false);
    }
  }

  return (
    <div class="open-voting" data-section="open-voting" data-phase={open ? "voting" : phase}>
      <p class="open-voting-count">
        <span data-open-joined={joined ?? ""}>{joined ?? "…"}</span> {joined === 1 ? "key" : "keys"}
        {" "}
        joined; voting needs at least {minVoters}.
        {joinDeadline !== null && phase === "join" &&
          ` It opens by itself at ${clockTime(joinDeadline)} if ${minVoters} have joined.`}
      </p>
      <button
        type="button"
        data-action="open-voting"
        onClick={openVoting}
        disabled={sending || open}
      >
        {open ? "Voting is open" : `Open voting (${joined ?? "…"} joined)`}
      </button>
      {status !== null && (
        <p
          class={`open-voting-status${status.failed ? " status-red" : ""}`}
          data-open-status={status.failed ? "failed" : "opened"}
          role="status"
        >
          {status.text}
        </p>
      )}
    </div>
  );
}
