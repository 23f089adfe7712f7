/**
 * The board's anonymity section: every sealed ballot's effective anonymity (lowest first), a
 * histogram, a chosen ballot's ring picture, decoy use, and what a revealed signer costs.
 * @module
 */
import { useMemo, useState } from "react";
import AnonymityHistogram from "./AnonymityHistogram.tsx";
import DecoyUseTable from "./DecoyUseTable.tsx";
import Notice from "../../components/Notice.tsx";
import RingPicture from "./RingPicture.tsx";
import type {
  AnonymityChange,
  BallotAnonymity,
  ConsistentAnalysis,
  Reveal,
} from "../../lib/client/anonymity/anonymity.ts";
import {
  anonymityHistogram,
  lowestFirst,
  memberStatuses,
  shownAnalysis,
  WEAK_ANONYMITY,
} from "../../lib/client/anonymity/anonymity_view.ts";
import { shortHex } from "../../lib/client/text.ts";
import { voterKeyNames } from "../../lib/client/voter/voters.ts";
import { lensSource } from "../../lib/client/anonymity/sealed_rings.ts";
import { useAnonymityLens } from "../hooks/use_anonymity_lens.ts";
import type { SectionProps } from "./section.ts";
import RoundGroups from "./RoundGroups.tsx";

/** Ballots listed per page of the section's list. */
const PAGE_SIZE = 200;
/** Keys the decoy-use table lists at first… */
const DECOY_FIRST = 8;
/** …and adds with each "Show more keys". */
const DECOY_MORE = 100;

/** The anonymity section of the bulletin board (see the module comment). */
export default function AnonymitySection({ bulletin }: SectionProps) {
  const source = useMemo(() => lensSource(bulletin.api), []);
  const [reveals, setReveals] = useState<Reveal[]>([]);
  const [chosen, setChosen] = useState<string | null>(null);
  const [page, setPage] = useState(0);
  const [decoyShown, setDecoyShown] = useState(DECOY_FIRST);
  // One analysis per chain height the board reaches, and again when the reveals change.
  const lens = useAnonymityLens(source, {
    height: bulletin.height.value,
    reveals,
    decoyUse: true,
  });
  const names = useMemo(
    () => (typeof localStorage === "undefined" ? new Map() : voterKeyNames(bulletin.storage)),
    [lens.height],
  );
  const analysis = lens.result === null ? null : shownAnalysis(lens.result);
  const ordered = useMemo(
    () => (analysis?.consistent ? lowestFirst(analysis.ballots) : []),
    [analysis],
  );
  const changes = useMemo(
    () => new Map((lens.result?.changes ?? []).map((c) => [c.id, c])),
    [lens.result],
  );
  const chosenBallot = chosen === null ? null : ordered.find((b) => b.id === chosen) ?? null;

  function reveal(key: string, ballot: string) {
    setReveals((current) => [
      ...current.filter((r) => r.key !== key && r.ballot !== ballot),
      { key, ballot },
    ]);
  }

  return (
    <section
      class="bulletin-section anonymity"
      data-section="anonymity"
      data-height={lens.height ?? undefined}
      aria-labelledby="anonymity-title"
    >
      <h2 id="anonymity-title">Anonymity: who could have cast each ballot</h2>
      <p class="anonymity-intro">
        A ballot is signed by one of the keys in its ring, and each key can sign only one ballot.
        Taken together, the sealed ballots can rule members out: if 8 ballots use only the same 8
        keys, those 8 keys are used up, and any other ring containing them is left with fewer
        possible signers. The figures below are exact, worked out in this browser from every sealed
        ballot.
      </p>
      {bulletin.round !== null && bulletin.round > 1 && (
        <RoundGroups api={bulletin.api} pollMs={bulletin.pollMs} />
      )}
      {lens.progress !== null && <Notice tone="working" text={lens.progress} />}
      {lens.problem !== null && <Notice tone="problem" text={lens.problem} />}
      {analysis === null
        ? (lens.progress === null && lens.problem === null && <p>Reading the sealed ballots…</p>)
        : !analysis.consistent
        ? (
          <p class="summary-bad anonymity-inconsistent" role="alert">
            No assignment of signers fits{" "}
            {reveals.length > 0 ? "the record and the reveals" : "the record"}: {analysis.problem}.
          </p>
        )
        : (
          <>
            <p class="anonymity-summary">
              {summaryOf(
                ordered.length,
                ordered.filter((b) => b.effectiveAnonymity < WEAK_ANONYMITY).length,
              )}
              {lens.ms !== null &&
                ` Worked out in ${Math.round(lens.ms)} ms in a background worker.`}
            </p>
            <AnonymityHistogram bars={anonymityHistogram(ordered)} />
          </>
        )}

      <RevealList
        reveals={reveals}
        changes={lens.result?.changes ?? []}
        onForget={(r) => setReveals((current) => current.filter((x) => x !== r))}
      />

      {analysis?.consistent && (
        <div class="anonymity-columns">
          <div class="anonymity-list">
            <h3>Sealed ballots, fewest possible signers first</h3>
            <BallotList
              ordered={ordered}
              changes={changes}
              chosen={chosen}
              page={page}
              onChoose={setChosen}
              onPage={setPage}
            />
          </div>
          <div class="anonymity-ring">
            <ChosenRing
              analysis={analysis}
              ballotId={chosenBallot?.id ?? null}
              reveals={reveals}
              names={names}
              onReveal={reveal}
            />
          </div>
        </div>
      )}

      {lens.result?.decoy && (
        <>
          <h3>Decoy use: are ring members chosen fairly?</h3>
          <DecoyUseTable
            use={lens.result.decoy}
            shown={decoyShown}
            onMore={() => setDecoyShown(decoyShown + DECOY_MORE)}
            names={names}
          />
        </>
      )}
    </section>
  );
}

/** "40 sealed ballots; 2 of them have fewer than 4 possible signers." */
function summaryOf(total: number, weak: number): string {
  const ballots = `${total} sealed ${total === 1 ? "ballot" : "ballots"}`;
  if (weak === 0) return `${ballots}; every one has at least ${WEAK_ANONYMITY} possible signers.`;
  return `${ballots}; ${weak} of them ${
    weak === 1 ? "has" : "have"
  } fewer than ${WEAK_ANONYMITY} possible signers, in red.`;
}

/** The demonstrator's reveals, each with a button to forget it, and what they cost. */
function RevealList(
  { reveals, changes, onForget }: {
    reveals: readonly Reveal[];
    changes: readonly AnonymityChange[];
    onForget(reveal: Reveal): void;
  },
) {
  if (reveals.length === 0) {
    return (
      <p class="reveal-hint">
        Reveal: choose a ballot and mark one of its members as its signer — as if that voter were
        made to show their ballot — to see which other ballots lose anonymity as a result.
      </p>
    );
  }
  const others = changes.filter((c) => !reveals.some((r) => r.ballot === c.id));
  return (
    <div class="reveals" data-reveals={reveals.length}>
      <h3>Revealed signers</h3>
      <ul>
        {reveals.map((r) => (
          <li key={`${r.key}:${r.ballot}`}>
            Key <code class="hex">{shortHex(r.key)}</code> cast ballot{" "}
            <code class="hex">{r.ballot}</code>{" "}
            <button type="button" onClick={() => onForget(r)}>Forget</button>
          </li>
        ))}
      </ul>
      <p
        class={others.length > 0 ? "summary-bad reveal-cost" : "reveal-cost"}
        data-lost={others.length}
      >
        {costOf(others)}
      </p>
    </div>
  );
}

/** "8 other ballots lose anonymity: 1 now has a single possible signer; 7 go from 8 to 7 …" */
function costOf(changes: readonly AnonymityChange[]): string {
  if (changes.length === 0) return "No other ballot loses anonymity.";
  const groups = new Map<string, number>();
  for (const c of changes) {
    const key = c.after === 1 ? "single" : `${c.before}:${c.after}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  const parts = [...groups].map(([key, n]) => {
    if (key === "single") return `${n} now ${n === 1 ? "has" : "have"} a single possible signer`;
    const [before, after] = key.split(":");
    return `${n} ${n === 1 ? "goes" : "go"} from ${before} to ${after} possible signers`;
  });
  return `${changes.length} other ${changes.length === 1 ? "ballot loses" : "ballots lose"} ` +
    `anonymity: ${parts.join("; ")}. They are marked in the list below.`;
}

/** Props of {@link BallotList}. */
type BallotListProps = {
  ordered: readonly BallotAnonymity[];
  changes: ReadonlyMap<string, AnonymityChange>;
  chosen: string | null;
  page: number;
  onChoose(id: string): void;
  onPage(page: number): void;
};

/** One page of the sealed ballots, fewest possible signers first, each a button that chooses it. */
function BallotList({ ordered, changes, chosen, page, onChoose, onPage }: BallotListProps) {
  const pages = Math.max(1, Math.ceil(ordered.length / PAGE_SIZE));
  const shown = ordered.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
  return (
    <>
      <ol class="anonymity-ballots" start={page * PAGE_SIZE + 1}>
        {shown.map((b) => {
          const change = changes.get(b.id);
          return (
            <li
              key={b.id}
              data-vote-id={b.id}
              data-effective-anonymity={b.effectiveAnonymity}
              class={`anonymity-ballot${
                b.effectiveAnonymity < WEAK_ANONYMITY ? " ballot-weak" : ""
              }${change ? " ballot-changed" : ""}${b.id === chosen ? " ballot-chosen" : ""}`}
            >
              <button type="button" onClick={() => onChoose(b.id)}>
                <code class="hex">{b.id}</code>
              </button>
              <span class="ballot-anonymity">
                {change ? `${change.before} → ` : ""}
                {b.effectiveAnonymity} of {b.ring.length}
              </span>
            </li>
          );
        })}
      </ol>
      {pages > 1 && (
        <p class="anonymity-pages">
          <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
            Previous {PAGE_SIZE}
          </button>{" "}
          Ballots {page * PAGE_SIZE + 1}–{page * PAGE_SIZE + shown.length} of {ordered.length}{" "}
          <button
            type="button"
            disabled={page + 1 >= pages}
            onClick={() => onPage(page + 1)}
          >
            Next {PAGE_SIZE}
          </button>
        </p>
      )}
    </>
  );
}

/** Props of {@link ChosenRing}. */
type ChosenRingProps = {
  analysis: ConsistentAnalysis;
  ballotId: string | null;
  reveals: readonly Reveal[];
  names: ReadonlyMap<string, string>;
  onReveal(key: string, ballot: string): void;
};

/** The chosen ballot's ring: who could have cast it, and why the others could not. */
function ChosenRing({ analysis, ballotId, reveals, names, onReveal }: ChosenRingProps) {
  if (ballotId === null) {
    return (
      <p>Choose a ballot to see its ring: who could have cast it, and why the others could not.</p>
    );
  }
  return (
    <>
      <h3>
        Ring of ballot <code class="hex">{ballotId}</code>
      </h3>
      <RingPicture
        ballotId={ballotId}
        members={memberStatuses(analysis, ballotId, { reveals })}
        names={names}
        revealed={reveals.find((r) => r.ballot === ballotId)?.key ?? null}
        onReveal={(key) => onReveal(key, ballotId)}
      />
    </>
  );
}
