/**
 * "Who saw what" on the projector (page §10.11, protocol §7): the relay's figures, read from its
 * own `/stats`, beside the server's count of votes, each with where it comes from, the sentence
 * that says what the two could learn together, and in red when they run on one machine.
 * @module
 */
import { usePolled } from "../hooks/polling.ts";
import {
  readRelayStats,
  type RelayStats,
  relayStatsUrl,
  SAME_MACHINE_TEXT,
  whoSawText,
} from "../../lib/client/board/who_saw.ts";

/** Props: the relay phones send through (null: none set), the server's votes, the pace. */
export type WhoSawProps = {
  relay: string | null;
  /** Votes the server holds in the round, sealed and waiting; null before its first read. */
  serverVotes: number | null;
  /** Where the server's figure comes from, in words. */
  serverSource: string;
  pollMs: number;
};

/** The section, reading the relay's `/stats` every `pollMs`. */
export default function WhoSaw({ relay, serverVotes, serverSource, pollMs }: WhoSawProps) {
  const stats = usePolled(
    () => relay === null ? Promise.resolve(null) : readRelayStats(fetch, relay),
    pollMs,
  );
  return (
    <WhoSawView
      relay={relay}
      stats={stats.value}
      problem={stats.problem}
      serverVotes={serverVotes}
      serverSource={serverSource}
    />
  );
}

/** Props of {@link WhoSawView}: the figures as last read and why the relay's last read failed. */
export type WhoSawViewProps = {
  relay: string | null;
  stats: RelayStats | null;
  problem: string | null;
  serverVotes: number | null;
  serverSource: string;
};

/** The section as drawn from the figures given. */
export function WhoSawView(
  { relay, stats, problem, serverVotes, serverSource }: WhoSawViewProps,
) {
  const sameMachine = stats?.sameMachine === true;
  return (
    <section
      class="who-saw"
      data-who-saw=""
      data-same-machine={stats === null ? undefined : String(sameMachine)}
      aria-labelledby="who-saw-title"
    >
      <h2 id="who-saw-title" class="who-saw-title">Who saw what</h2>
      <div class="who-saw-sides">
        <div class="who-saw-side" data-who-saw-side="relay">
          <h3>The relay</h3>
          {relay === null
            ? (
              <p class="who-saw-source">
                No relay is set in this browser: phones send to the server directly.
              </p>
            )
            : (
              <>
                <p class="who-saw-source">From {relayStatsUrl(relay)}</p>
                <Figure value={stats?.clients} label="phones (client addresses)" name="phones" />
                <Figure value={stats?.requests} label="sealed envelopes" name="envelopes" />
                <Figure value={stats?.bytes} label="bytes forwarded" name="bytes" />
                {problem !== null && (
                  <p class="who-saw-problem status-red" role="alert">
                    The relay's figures could not be read: {problem}
                  </p>
                )}
              </>
            )}
        </div>
        <div class="who-saw-side" data-who-saw-side="server">
          <h3>The server</h3>
          <p class="who-saw-source">From {serverSource}</p>
          <Figure value={serverVotes ?? undefined} label="votes" name="votes" />
        </div>
      </div>
      {stats !== null && serverVotes !== null && (
        <p class="who-saw-text" data-who-saw-text="">
          {whoSawText({ phones: stats.clients, envelopes: stats.requests, votes: serverVotes })}
        </p>
      )}
      {sameMachine && (
        <p class="who-saw-same-machine" data-who-saw-same-machine="" role="alert">
          {SAME_MACHINE_TEXT}
        </p>
      )}
    </section>
  );
}

/** One figure, large, with its label; "–" before it is read. */
function Figure({ value, label, name }: { value?: number; label: string; name: string }) {
  return (
    <p class="who-saw-figure" data-who-saw-figure={name} data-value={value ?? ""}>
      <strong>{value ?? "–"}</strong> {label}
    </p>
  );
}
