// The projector's "Who saw what" (islands/board/WhoSaw.tsx) rendered to HTML: both sides with
// their sources, the sentence only once both are read, and red when relay and server are one.
import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { SAME_MACHINE_TEXT, whoSawText } from "../../../lib/client/board/who_saw.ts";
import { WhoSawView } from "../../../islands/board/WhoSaw.tsx";

const STATS = { requests: 61, clients: 16, bytes: 123_456, sameMachine: false };

Deno.test("the section shows both sides with their sources, and red when on one machine", () => {
  const view = (stats: typeof STATS | null, problem: string | null = null) =>
    renderToString(
      <WhoSawView
        relay="http://relay.example:8788"
        stats={stats}
        problem={problem}
        serverVotes={16}
        serverSource="http://vote.example/api/rounds/2/tally and its open block"
      />,
    );
  const apart = view(STATS);
  assert.match(apart, /<section data-who-saw /);
  assert.match(apart, /From http:\/\/relay\.example:8788\/stats/);
  assert.match(apart, /From http:\/\/vote\.example\/api\/rounds\/2\/tally/);
  assert.match(apart, /data-who-saw-figure="phones" data-value="16"/);
  assert.match(apart, /data-who-saw-figure="envelopes" data-value="61"/);
  assert.match(apart, /data-who-saw-figure="votes" data-value="16"/);
  assert.ok(apart.includes(whoSawText({ phones: 16, envelopes: 61, votes: 16 })));
  assert.ok(!apart.includes("data-who-saw-same-machine"));
  assert.match(apart, /data-same-machine="false"/);

  const together = view({ ...STATS, sameMachine: true });
  assert.match(together, /<p data-who-saw-same-machine role="alert" class="who-saw-same-machine">/);
  assert.ok(together.includes(SAME_MACHINE_TEXT));

  const unread = view(null, "http://relay.example:8788/stats did not answer in time");
  assert.ok(!unread.includes("data-who-saw-text"), "no claim without the relay's figures");
  assert.match(unread, /could not be read: .*did not answer in time/);

  const none = renderToString(
    <WhoSawView relay={null} stats={null} problem={null} serverVotes={3} serverSource="x" />,
  );
  assert.match(none, /No relay is set in this browser/);
});
