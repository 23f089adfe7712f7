/**
 * One vote's ring signature verified step by step in this browser (protocol §2 "Verify"), from
 * traceRing, the verifier's own steps: each link, the closing comparison, every check in words.
 * @module
 */
import { useEffect, useRef, useState } from "react";
import Hex from "./Hex.tsx";
import type { CheckOutcome, RingTrace } from "../../lib/protocol/ring_trace.ts";
import type { VoteRecord } from "../../lib/protocol/schemas.ts";
import { boardHref } from "../../lib/client/board/rounds.ts";
import { type SectionProps, sharedRound } from "./section.ts";

/** The vote as the block's listing served it, and where it is. */
type ListedVote = { voteId: string; height: number; index: number; vote: VoteRecord };

type Traced = { trace: RingTrace; problem: null } | { trace: null; problem: string };

/**
 * The trace of `vote`'s signature. The verifier's code is loaded on demand: the curve arithmetic
 * stays out of the board's first load, which does not need it.
 */
async function traceOf(vote: VoteRecord): Promise<Traced> {
  const [{ decodeSignature }, { traceRing }] = await Promise.all([
    import("../../lib/protocol/signature_wire.ts"),
    import("../../lib/protocol/ring_trace.ts"),
  ]);
  try {
    return { trace: traceRing(decodeSignature(vote.signature), vote.payload), problem: null };
  } catch (error) {
    return { trace: null, problem: `The signature cannot be read: ${(error as Error).message}` };
  }
}

/**
 * Nothing until a vote is opened and its block's listing read; then its ring walkthrough. The
 * page's address becomes the vote's shareable link, `/board#vote={voteId}` (with `?round={id}`
 * on a round's board).
 */
export default function WalkthroughSection({ bulletin }: SectionProps) {
  const open = bulletin.openVote.value;
  const voteId = open?.voteId;
  useEffect(() => {
    if (voteId === undefined) return;
    const address = boardHref({ round: sharedRound(bulletin.round), vote: voteId }, {
      queryOnly: true,
    });
    if (location.search + location.hash !== address) history.replaceState(null, "", address);
  }, [voteId]);
  if (open === null) return null;
  const index =
    bulletin.votes.value.get(open.height)?.entries.findIndex((e) => e.voteId === open.voteId) ?? -1;
  if (index < 0) return null;
  const { vote } = bulletin.votes.value.get(open.height)!.entries[index];
  return <RingWalkthrough key={open.voteId} {...open} index={index} vote={vote} />;
}

/** The walkthrough of one vote's ring signature. */
function RingWalkthrough({ voteId, height, index, vote }: ListedVote) {
  const [traced, setTraced] = useState<Traced | null>(null);
  const section = useRef<HTMLElement>(null);
  useEffect(() => {
    let live = true;
    traceOf(vote).then((t) => live && setTraced(t));
    return () => {
      live = false;
    };
  }, [vote]);
  // Opened by a link or a click: bring the walkthrough into view once it is computed.
  useEffect(() => {
    if (traced !== null) section.current?.scrollIntoView({ block: "start" });
  }, [traced !== null]);
  if (traced === null) {
    return (
      <section class="bulletin-section walkthrough" aria-labelledby="walk-title">
        <h2 id="walk-title">Checking the signature of vote {voteId}…</h2>
      </section>
    );
  }
  const { trace, problem } = traced;
  const closes = trace?.verdict.ok === true;
  return (
    <section
      ref={section}
      class={`bulletin-section walkthrough ${closes ? "walk-ok" : "walk-bad"}`}
      aria-labelledby="walk-title"
      data-walkthrough={voteId}
      data-ring-closes={String(closes)}
    >
      <h2 id="walk-title">How the signature of vote {voteId} is checked</h2>
      <p class="walk-where">
        Block {height}, leaf {index}. Payload: <strong>“{vote.payload}”</strong>
      </p>
      <p class="walk-plain">
        The voter signed with one of the ring's keys without saying which. Checking the signature
        walks once around the ring: starting from the number c₀ in the signature, each member's step
        mixes in that member's public key and a response r taken from the signature, and yields the
        next number. Only the holder of one of the ring's private keys could choose the responses so
        that the walk lands exactly back on c₀. If it does, the ring closes and the signature is
        valid; a changed payload, response or key breaks the circle.
      </p>
      {trace === null ? <p class="walk-verdict walk-verdict-bad">✗ {problem}</p> : (
        <>
          <Verdict trace={trace} />
          <RingSteps trace={trace} />
          <ChecksTable trace={trace} />
        </>
      )}
    </section>
  );
}

function Verdict({ trace }: { trace: RingTrace }) {
  return trace.verdict.ok
    ? (
      <p class="walk-verdict walk-verdict-ok">
        ✓ The ring closes: c{sub(trace.n)} equals c₀, the signature is valid.
      </p>
    )
    : (
      <p class="walk-verdict walk-verdict-bad">
        ✗ The signature is invalid: {trace.verdict.reason}.
      </p>
    );
}

/** The circle and the step being shown; the last step is the closing comparison. */
function RingSteps({ trace }: { trace: RingTrace }) {
  const [at, setAt] = useState(0);
  if (trace.steps.length === 0) {
    return (
      <p class="walk-skipped">
        The walk around the ring was not computed: a check below failed first, and a verifier stops
        there.
      </p>
    );
  }
  const last = trace.steps.length; // index of the closing step
  return (
    <div class="walk-ring">
      <RingCircle trace={trace} at={at} />
      <div class="walk-step-panel">
        <div class="walk-controls">
          <button type="button" onClick={() => setAt(Math.max(0, at - 1))} disabled={at === 0}>
            ◀ Previous
          </button>
          <span class="walk-counter" data-walk-step={at}>
            Step {at + 1} of {last + 1}
          </span>
          <button
            type="button"
            data-action="next-step"
            onClick={() => setAt(Math.min(last, at + 1))}
            disabled={at === last}
          >
            Next ▶
          </button>
          <button type="button" data-action="last-step" onClick={() => setAt(last)}>
            Last step
          </button>
        </div>
        {at < last ? <LinkStep trace={trace} i={at} /> : <ClosingStep trace={trace} />}
      </div>
    </div>
  );
}

function LinkStep({ trace, i }: { trace: RingTrace; i: number }) {
  const step = trace.steps[i];
  const ok = trace.verdict.ok;
  const j = i + 1;
  return (
    <ol class={`walk-values ${ok ? "walk-values-ok" : "walk-values-bad"}`} data-walk-link={i}>
      <li>
        <span class="walk-math">c{sub(i)}</span> = <Value hex={step.c} />
        <span class="walk-note">
          {i === 0
            ? "the starting number, read from the signature"
            : `the number handed on by member ${i - 1}`}
        </span>
      </li>
      <li>
        <span class="walk-math">r{sub(i)}</span> = <Value hex={step.r} />
        <span class="walk-note">member {i}'s response, read from the signature</span>
      </li>
      <li>
        <span class="walk-math">L{sub(i)} = r{sub(i)}·G + c{sub(i)}·P{sub(i)}</span> ={" "}
        <Value hex={step.L} />
        <span class="walk-note">a curve point from the response and member {i}'s public key</span>
      </li>
      <li>
        <span class="walk-math">R{sub(i)} = r{sub(i)}·Hp(P{sub(i)}) + c{sub(i)}·I</span> ={" "}
        <Value hex={step.R} />
        <span class="walk-note">
          the same with the key's hash point and the tag I, which ties the vote to one key
        </span>
      </li>
      <li>
        <span class="walk-math">c{sub(j)} = Hs(T ‖ L{sub(i)} ‖ R{sub(i)})</span> ={" "}
        <Value hex={step.next} />
        <span class="walk-note">
          hashing the ring, tag and payload (T) with both points gives the next number
        </span>
      </li>
    </ol>
  );
}

/** A value in full (the walkthrough compares whole numbers, so nothing is cut). */
function Value({ hex }: { hex: string }) {
  return <code class="hex walk-hex">{hex}</code>;
}

function ClosingStep({ trace }: { trace: RingTrace }) {
  const closing = trace.closing!;
  const n = trace.n;
  return (
    <div
      class={`walk-closing ${closing.closes ? "walk-values-ok" : "walk-values-bad"}`}
      data-walk-closing={String(closing.closes)}
    >
      <p>
        <span class="walk-math">c{sub(n)}</span> = <Value hex={closing.cn} />
      </p>
      <p>
        <span class="walk-math">c₀</span> = <Value hex={closing.c0} />
      </p>
      <p class="walk-closing-verdict">
        {closing.closes
          ? `✓ Equal: after ${n} steps the walk is back where it started. The ring closes.`
          : `✗ Different: after ${n} steps the walk does not come back to c₀. The ring does not close.`}
      </p>
    </div>
  );
}

const RADIUS = 120;
const CENTRE = 160;

/** The ring as a circle of its members, the link being shown highlighted. */
function RingCircle({ trace, at }: { trace: RingTrace; at: number }) {
  const n = trace.n;
  const position = (i: number) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / n;
    return { x: CENTRE + RADIUS * Math.cos(angle), y: CENTRE + RADIUS * Math.sin(angle) };
  };
  const colour = trace.verdict.ok ? "var(--check-ok)" : "var(--check-bad)";
  return (
    <svg
      class="walk-circle"
      viewBox={`0 0 ${2 * CENTRE} ${2 * CENTRE}`}
      role="img"
      aria-label={`A ring of ${n} members; step ${Math.min(at, n - 1) + 1} highlighted`}
    >
      {trace.members.map((_, i) => {
        const a = position(i);
        const b = position((i + 1) % n);
        const current = i === at || at === n && i === n - 1;
        return (
          <line
            key={`l${i}`}
            x1={a.x}
            y1={a.y}
            x2={b.x}
            y2={b.y}
            stroke={i <= at ? colour : "#c8c8d0"}
            stroke-width={current ? 7 : 3}
          />
        );
      })}
      {trace.members.map((m, i) => {
        const { x, y } = position(i);
        const memberOk = m.reason === undefined && m.distinct;
        return (
          <g key={`m${i}`} class="walk-member" data-member={i}>
            <circle
              cx={x}
              cy={y}
              r={i === at ? 24 : 19}
              fill={memberOk ? "var(--check-ok)" : "var(--check-bad)"}
              stroke={i === at ? "#0d47a1" : "#fff"}
              stroke-width={4}
            />
            <text x={x} y={y + 7} text-anchor="middle" fill="#fff" font-size="19" font-weight="700">
              P{sub(i)}
            </text>
          </g>
        );
      })}
      <text x={CENTRE} y={CENTRE - 4} text-anchor="middle" font-size="20" font-weight="700">
        {at === n ? `c${sub(n)} ${trace.closing?.closes ? "= c₀ ✓" : "≠ c₀ ✗"}` : `step ${at + 1}`}
      </text>
      <text x={CENTRE} y={CENTRE + 22} text-anchor="middle" font-size="15" fill="#555">
        {at === n ? "the ring closes?" : `member ${at} → ${(at + 1) % n}`}
      </text>
    </svg>
  );
}

function outcomeCell(outcome: CheckOutcome) {
  const cls = outcome === "pass" ? "check-pass" : outcome === "fail" ? "check-fail" : "check-skip";
  const text = outcome === "pass" ? "✓" : outcome === "fail" ? "✗" : "not run";
  return <td class={cls} data-check={outcome}>{text}</td>;
}

/** Every member and tag check, and the scalars' canonicity, with their results. */
function ChecksTable({ trace }: { trace: RingTrace }) {
  const rows = [
    ...trace.members.map((m, i) => ({ name: `P${sub(i)}`, ...m })),
    { name: "tag I", ...trace.tag, distinct: true },
  ];
  return (
    <div class="walk-checks">
      <h3>Checks on every key and on the tag</h3>
      <p class="walk-note">
        Each point must be a canonical encoding, not the identity, and free of small-order parts, or
        one key could make several tags and vote twice (the 2017 CryptoNote flaw).
      </p>
      <table class="walk-check-table">
        <thead>
          <tr>
            <th>Point</th>
            <th>Value</th>
            <th>Canonical</th>
            <th>Not the identity</th>
            <th>Torsion-free</th>
            <th>Not repeated</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.name} data-point={row.name}>
              <th>{row.name}</th>
              <td>
                <Hex value={row.bytes} />
              </td>
              {outcomeCell(row.canonical)}
              {outcomeCell(row.notIdentity)}
              {outcomeCell(row.torsionFree)}
              {outcomeCell(row.distinct ? "pass" : "fail")}
            </tr>
          ))}
        </tbody>
      </table>
      <ul class="walk-scalars">
        <li class={trace.sizeOk ? "check-pass" : "check-fail"}>
          {trace.sizeOk ? "✓" : "✗"} Ring of {trace.n} members (allowed: 2 to 64)
        </li>
        <li class={trace.c0.canonical ? "check-pass" : "check-fail"}>
          {trace.c0.canonical ? "✓" : "✗"} c₀ is a canonical scalar (less than the group order L)
        </li>
        <li class={trace.r.every((r) => r.canonical) ? "check-pass" : "check-fail"}>
          {trace.r.every((r) => r.canonical) ? "✓" : "✗"} Every response r is a canonical scalar
          {trace.r.length !== trace.n && ` (${trace.r.length} responses for ${trace.n} members)`}
        </li>
      </ul>
    </div>
  );
}

const SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉";

/** `i` as Unicode subscript digits, so formulas read as written on paper. */
function sub(i: number): string {
  return String(i).replace(/[0-9]/g, (d) => SUBSCRIPTS[Number(d)]);
}
