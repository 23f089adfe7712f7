/**
 * The board's tally as bars, recounted in the browser from every sealed vote, and the votes behind
 * one count with their signature status.
 * @module
 */
import type { RecountProblem } from "../../lib/client/board/recount.ts";
import SignatureBadge from "./SignatureBadge.tsx";
import TallyBars from "./TallyBars.tsx";
import type { SectionProps } from "./section.ts";
import { useSignatureStatus } from "./signature_status.ts";

const VOTES_LIST_ID = "payload-votes";

/** Why the recount cannot confirm the served counts: a block's listing against its header. */
function troubleText({ height, size, total, counted }: RecountProblem): string {
  return size === null
    ? `Not recounted: block ${height}'s header does not match its hash or the block before, so ` +
      "its votes cannot be counted."
    : `Not recounted: block ${height}'s header commits to ${size} ${
      size === 1 ? "vote" : "votes"
    }, ` +
      `but its listing says ${total} and holds ${counted}.`;
}

/** Heading, the recount's verdict, the bars, and the list of votes for the chosen payload. */
export default function TallySection({ bulletin }: SectionProps) {
  const tally = bulletin.tally.value;
  const recounted = bulletin.recounted.value;
  const trouble = bulletin.recountTrouble.value;
  const rows = bulletin.rows.value;
  const filter = bulletin.filter.value;
  const choose = (payload: string | null) => (bulletin.filter.value = payload);
  return (
    <section class="bulletin-section" aria-labelledby="tally-title">
      <h2 id="tally-title">Tally</h2>
      {tally === null ? <p>Reading the tally…</p> : (
        <>
          <p>
            {tally.total} sealed {tally.total === 1 ? "vote" : "votes"}. {trouble !== null
              ? (
                <span class="summary-bad" data-recount-problem={trouble.height}>
                  {troubleText(trouble)}
                </span>
              )
              : recounted === null
              ? "Counts as served; recounting every sealed vote in this browser…"
              : rows.every((r) => r.ok)
              ? "Recounted in this browser from every sealed vote: the counts agree."
              : "Recounted in this browser: red rows differ from the served counts."}
          </p>
          <TallyBars rows={rows} selected={filter} listId={VOTES_LIST_ID} onSelect={choose} />
        </>
      )}
      {filter !== null && <PayloadVotes bulletin={bulletin} payload={filter} />}
    </section>
  );
}

/**
 * Every held vote carrying `payload` with its signature status, each opening its proof, in chain
 * order. The board holds the votes of the blocks it read last (islands/board/state.ts): when they
 * are not all the sealed votes, a line says which blocks the list covers.
 */
function PayloadVotes({ bulletin, payload }: SectionProps & { payload: string }) {
  const held = [...bulletin.votes.value].sort(([a], [b]) => a - b);
  const listed = held.flatMap(([height, loaded]) =>
    loaded.entries.filter((e) => e.vote.payload === payload).map((e) => ({ height, ...e }))
  );
  const heldVotes = held.reduce((sum, [, loaded]) => sum + loaded.entries.length, 0);
  const sealed = bulletin.tally.value?.total ?? 0;
  const signatureOf = useSignatureStatus(listed);
  return (
    <div id={VOTES_LIST_ID} class="payload-votes">
      <h3>Votes for “{payload}”</h3>
      {heldVotes < sealed && (
        <p class="payload-coverage" data-held-votes={heldVotes}>
          {held.length === 0
            ? `Listed from none of the ${sealed} sealed votes: this page holds no block's votes.`
            : `Listed from ${heldVotes} of the ${sealed} sealed votes: those of ` +
              `${held.length === 1 ? "block" : "blocks"} ${heightRanges(held.map(([h]) => h))}, ` +
              "held in this page."} Selecting a block on the chain lists its votes here too.
        </p>
      )}
      {listed.length === 0 ? <p>None of the loaded votes carries this payload.</p> : (
        <ul>
          {listed.map((e) => (
            <li key={e.voteId}>
              <button type="button" onClick={() => bulletin.openProof(e.height, e.voteId)}>
                Block {e.height}, leaf {e.index}: {e.voteId}
              </button>{" "}
              <SignatureBadge finding={signatureOf(e)} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Ascending heights as ranges: `3, 981–1000`. */
function heightRanges(heights: readonly number[]): string {
  const ranges: string[] = [];
  for (let i = 0; i < heights.length;) {
    let j = i;
    while (j + 1 < heights.length && heights[j + 1] === heights[j] + 1) j++;
    ranges.push(j === i ? `${heights[i]}` : `${heights[i]}–${heights[j]}`);
    i = j + 1;
  }
  return ranges.join(", ");
}
