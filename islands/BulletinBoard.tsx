// The public bulletin board (/board): the chain as a picture, a block's votes, a vote's inclusion
// proof step by step, and the tally, kept live by polling the chain height. Nothing the server
// says is taken on trust: block hashes, links, proofs and (when small enough) the tally are
// recomputed here with lib/, and every disagreement is shown in red.
import { useEffect, useMemo, useRef, useState } from "react";
import ChainStrip from "../components/ChainStrip.tsx";
import Hex from "../components/Hex.tsx";
import Notice from "../components/Notice.tsx";
import ProofSteps from "../components/ProofSteps.tsx";
import TallyBars from "../components/TallyBars.tsx";
import {
  checkBlocks,
  type ProofStep,
  proofSteps,
  tagOfSignature,
  tallyRows,
} from "../lib/app/record_checks.ts";
import type { BlockRecord } from "../lib/protocol/schemas.ts";
import { tallyOf } from "../lib/protocol/tally.ts";
import {
  BlockList,
  BlockStatus,
  BlockVotes,
  ErrorBody,
  MAX_PAGE_LIMIT,
  Tally,
  VoteProof,
  type VoteRecord,
} from "../lib/protocol/schemas.ts";

/** Props the server renders the board with. */
export type BulletinBoardProps = { pollMs: number };

/** The tally is recounted in the browser up to this many sealed votes… */
const RECOUNT_MAX_VOTES = 2000;
/** …in at most this many blocks (one request per block and page of votes). */
const RECOUNT_MAX_BLOCKS = 200;
const VOTES_LIST_ID = "payload-votes";

type Entry = { voteId: string; index: number; vote: VoteRecord };
type BlockVotesLoaded = { entries: Entry[]; total: number };
type OpenVote = {
  height: number;
  voteId: string;
  steps: ProofStep[] | null;
  problem: string | null;
};
type Schema<T> = { safeParse(v: unknown): { success: true; data: T } | { success: false } };

/** GET `path` as JSON validated by `schema`; throws with the server's reason otherwise. */
async function getJson<T>(path: string, schema: Schema<T>): Promise<T> {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON: the status alone explains the failure.
  }
  if (!response.ok) {
    const error = ErrorBody.safeParse(body);
    throw new Error(
      `${path} answered ${response.status}: ${
        error.success ? error.data.error.message : "no reason given"
      }`,
    );
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new Error(`${path} answered an unexpected body`);
  return parsed.data;
}

/** Blocks of heights `from..to` (inclusive), in pages of {@link MAX_PAGE_LIMIT}. */
async function fetchBlocks(from: number, to: number): Promise<BlockRecord[]> {
  const out: BlockRecord[] = [];
  for (let at = from; at <= to;) {
    const limit = Math.min(MAX_PAGE_LIMIT, to - at + 1);
    const page = await getJson(`/api/blocks?from=${at}&limit=${limit}`, BlockList);
    if (page.blocks.length === 0) break;
    out.push(...page.blocks);
    at += page.blocks.length;
  }
  return out;
}

/** Every vote of block `height`, or only its first page, in leaf order. */
async function fetchVotes(
  height: number,
  { from = [] as Entry[], all }: { from?: Entry[]; all: boolean },
): Promise<BlockVotesLoaded> {
  const entries = [...from];
  let total = Infinity;
  do {
    const page = await getJson(
      `/api/block/id/${height}/votes?offset=${entries.length}&limit=${MAX_PAGE_LIMIT}`,
      BlockVotes,
    );
    total = page.total;
    entries.push(...page.votes);
    if (page.votes.length === 0) break;
  } while (all && entries.length < total);
  return { entries, total };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The board: chain, tally, the open block's votes and the open vote's proof. */
export default function BulletinBoard({ pollMs }: BulletinBoardProps) {
  const [blocks, setBlocks] = useState<BlockRecord[]>([]);
  const [height, setHeight] = useState<number | null>(null);
  const [tally, setTally] = useState<Tally | null>(null);
  const [votes, setVotes] = useState<ReadonlyMap<number, BlockVotesLoaded>>(new Map());
  const [selected, setSelected] = useState<number | null>(null);
  const [openVote, setOpenVote] = useState<OpenVote | null>(null);
  const [filter, setFilter] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [ready, setReady] = useState(false);
  // The latest state for the poller and the loaders, which outlive a render.
  const state = useRef({ blocks, height, votes });
  state.current = { blocks, height, votes };

  function rememberVotes(height: number, loaded: BlockVotesLoaded) {
    const next = new Map(state.current.votes).set(height, loaded);
    state.current.votes = next;
    setVotes(next);
  }

  /** Loads every vote of blocks 1..head when the tally is small enough to recount here. */
  async function recount(head: number, served: Tally) {
    if (served.total > RECOUNT_MAX_VOTES || head > RECOUNT_MAX_BLOCKS) return;
    for (let h = 1; h <= head; h++) {
      const known = state.current.votes.get(h);
      if (known && known.entries.length >= known.total) continue;
      rememberVotes(h, await fetchVotes(h, { from: known?.entries, all: true }));
    }
  }

  /** Brings the page up to the chain's head: new blocks, the tally, the recount. */
  async function refresh(head: number) {
    const { blocks: have } = state.current;
    const last = have.length > 0 ? have[have.length - 1].height : -1;
    const first = Math.max(0, head - MAX_PAGE_LIMIT + 1);
    const fresh = await fetchBlocks(Math.max(first, last + 1), head);
    const merged = [...(last >= first ? have : []), ...fresh];
    state.current.blocks = merged;
    setBlocks(merged);
    state.current.height = head;
    setHeight(head);
    const served = await getJson("/api/tally", Tally);
    setTally(served);
    await recount(head, served);
  }

  useEffect(() => {
    let live = true;
    let busy = false;
    async function poll(initial: boolean) {
      if (busy) return;
      busy = true;
      try {
        const status = await getJson("/api/block/status", BlockStatus);
        if (live && (initial || status.height !== state.current.height)) {
          await refresh(status.height);
        }
        if (live) setProblem(null);
      } catch (error) {
        if (live) setProblem(messageOf(error));
      } finally {
        busy = false;
        if (initial && live) {
          setReady(true);
          performance.mark("ringvote:board-ready");
        }
      }
    }
    poll(true);
    const timer = setInterval(() => poll(false), pollMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);

  async function loadEarlier() {
    const first = blocks[0]?.height ?? 0;
    if (first === 0) return;
    try {
      const earlier = await fetchBlocks(Math.max(0, first - MAX_PAGE_LIMIT), first - 1);
      const merged = [...earlier, ...state.current.blocks];
      state.current.blocks = merged;
      setBlocks(merged);
    } catch (error) {
      setProblem(messageOf(error));
    }
  }

  async function selectBlock(h: number) {
    setSelected(h);
    setOpenVote(null);
    if (h === 0 || state.current.votes.has(h)) return;
    try {
      rememberVotes(h, await fetchVotes(h, { all: false }));
    } catch (error) {
      setProblem(messageOf(error));
    }
  }

  async function moreVotes(h: number) {
    const known = state.current.votes.get(h);
    try {
      const page = await fetchVotes(h, { from: known?.entries, all: false });
      rememberVotes(h, page);
    } catch (error) {
      setProblem(messageOf(error));
    }
  }

  async function openProof(h: number, voteId: string) {
    setSelected(h);
    setOpenVote({ height: h, voteId, steps: null, problem: null });
    try {
      const known = state.current.votes.get(h);
      const loaded = known && known.entries.length >= known.total
        ? known
        : await fetchVotes(h, { from: known?.entries, all: true });
      rememberVotes(h, loaded);
      const index = loaded.entries.findIndex((e) => e.voteId === voteId);
      if (index < 0) throw new Error(`Vote ${voteId} is not listed in block ${h}`);
      const byHeight = (n: number) => state.current.blocks.find((b) => b.height === n);
      const block = byHeight(h) ?? (await fetchBlocks(h, h))[0];
      if (!block) throw new Error(`Block ${h} could not be read`);
      const previous = byHeight(h - 1) ?? (await fetchBlocks(h - 1, h - 1))[0] ?? null;
      let served = null;
      let servedProblem: string | null = null;
      try {
        served = await getJson(
          `/api/block/id/${h}/vote/${encodeURIComponent(voteId)}`,
          VoteProof,
        );
      } catch (error) {
        servedProblem = `The server's proof could not be read: ${messageOf(error)}`;
      }
      const steps = proofSteps({
        block,
        previous,
        votes: loaded.entries.map((e) => e.vote),
        index,
        served,
      });
      setOpenVote({ height: h, voteId, steps, problem: servedProblem });
    } catch (error) {
      setOpenVote({ height: h, voteId, steps: null, problem: messageOf(error) });
    }
  }

  const checks = useMemo(() => new Map(checkBlocks(blocks).map((c) => [c.height, c])), [blocks]);
  const recounted = useMemo(() => {
    if (height === null || height === 0 || tally === null) return height === 0 ? [] : null;
    const payloads: string[] = [];
    for (let h = 1; h <= height; h++) {
      const loaded = votes.get(h);
      if (!loaded || loaded.entries.length < loaded.total) return null;
      for (const e of loaded.entries) payloads.push(e.vote.payload);
    }
    return tallyOf(payloads);
  }, [votes, height, tally]);
  const rows = tally === null ? [] : tallyRows(tally.results, recounted);
  const brokenLinks = [...checks.values()].filter((c) => c.link === "broken" || !c.hashOk);
  const block = selected === null ? null : blocks.find((b) => b.height === selected) ?? null;
  const blockVotes = selected === null ? undefined : votes.get(selected);
  const filtered = filter === null
    ? []
    : [...votes].flatMap(([h, loaded]) =>
      loaded.entries.filter((e) => e.vote.payload === filter).map((e) => ({ height: h, ...e }))
    );

  return (
    <div class="bulletin" data-ready={ready ? "true" : "false"}>
      <p class="bulletin-live" role="status" aria-live="polite">
        {height === null
          ? "Reading the chain…"
          : `Height ${height}: ${blocks.length} blocks shown, checked in this browser; ` +
            `refreshed every ${pollMs / 1000} s`}
      </p>
      {problem !== null && <Notice tone="problem" text={problem} />}

      <section class="bulletin-section" aria-labelledby="chain-title">
        <h2 id="chain-title">Chain</h2>
        <p class={brokenLinks.length === 0 ? "summary-ok" : "summary-bad"}>
          {brokenLinks.length === 0
            ? "Every block's hash matches its fields and every link matches the block before."
            : `${brokenLinks.length} block(s) fail a check: ` +
              brokenLinks.map((c) => `#${c.height}`).join(", ")}
        </p>
        {(blocks[0]?.height ?? 0) > 0 && (
          <button type="button" onClick={loadEarlier}>Earlier blocks</button>
        )}
        <ChainStrip blocks={blocks} checks={checks} selected={selected} onSelect={selectBlock} />
      </section>

      <section class="bulletin-section" aria-labelledby="tally-title">
        <h2 id="tally-title">Tally</h2>
        {tally === null ? <p>Reading the tally…</p> : (
          <>
            <p>
              {tally.total} sealed {tally.total === 1 ? "vote" : "votes"}. {recounted === null
                ? "Counts as served (too many votes to recount here)."
                : rows.every((r) => r.ok)
                ? "Recounted in this browser from every sealed vote: the counts agree."
                : "Recounted in this browser: red rows differ from the served counts."}
            </p>
            <TallyBars
              rows={rows}
              selected={filter}
              listId={VOTES_LIST_ID}
              onSelect={setFilter}
            />
          </>
        )}
        {filter !== null && (
          <div id={VOTES_LIST_ID} class="payload-votes">
            <h3>Votes for “{filter}”</h3>
            {filtered.length === 0 ? <p>None of the loaded votes carries this payload.</p> : (
              <ul>
                {filtered.map((e) => (
                  <li key={e.voteId}>
                    <button type="button" onClick={() => openProof(e.height, e.voteId)}>
                      Block {e.height}, leaf {e.index}: {e.voteId}
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
      </section>

      {block !== null && (
        <section class="bulletin-section" aria-labelledby="block-title" data-block={block.height}>
          <h2 id="block-title">Block {block.height}</h2>
          <dl class="block-fields">
            <dt>Closed</dt>
            <dd>{new Date(block.timestamp).toISOString()}</dd>
            <dt>Size</dt>
            <dd>{block.size}</dd>
            <dt>Merkle root</dt>
            <dd>
              <Hex value={block.merkle_root} />
            </dd>
            <dt>Previous hash</dt>
            <dd>
              <Hex value={block.prev_hash} />
            </dd>
            <dt>Hash</dt>
            <dd>
              <Hex value={block.hash} /> {checks.get(block.height)?.hashOk
                ? <span class="summary-ok">matches its fields</span>
                : <span class="summary-bad">does not match its fields</span>}
            </dd>
          </dl>
          {block.height === 0 ? <p>The genesis block holds no votes.</p> : (
            <>
              <table class="votes">
                <thead>
                  <tr>
                    <th>Leaf</th>
                    <th>Payload</th>
                    <th>Tag</th>
                    <th>Ring</th>
                    <th>Proof</th>
                  </tr>
                </thead>
                <tbody>
                  {(blockVotes?.entries ?? []).map((e, position) => (
                    <tr
                      key={e.voteId}
                      data-vote={e.voteId}
                      class={openVote?.voteId === e.voteId ? "vote-open" : undefined}
                    >
                      <td>{position}</td>
                      <td class="vote-payload">{e.vote.payload}</td>
                      <td>
                        <Hex value={tagOfSignature(e.vote.signature) ?? "(malformed)"} />
                      </td>
                      <td class="vote-ring">
                        {e.vote.publicKeys.map((key) => <Hex key={key} value={key} />)}
                      </td>
                      <td>
                        <button
                          type="button"
                          onClick={() => openProof(block.height, e.voteId)}
                        >
                          Check proof
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {blockVotes !== undefined && blockVotes.entries.length < blockVotes.total && (
                <button
                  type="button"
                  onClick={() => moreVotes(block.height)}
                >
                  More votes ({blockVotes.entries.length} of {blockVotes.total})
                </button>
              )}
            </>
          )}
        </section>
      )}

      {openVote !== null && (
        <section
          class="bulletin-section"
          aria-labelledby="proof-title"
          data-proof={openVote.voteId}
        >
          <h2 id="proof-title">Inclusion proof of vote {openVote.voteId}</h2>
          {openVote.problem !== null && <Notice tone="problem" text={openVote.problem} />}
          {openVote.steps === null
            ? (openVote.problem === null && <p>Computing the proof…</p>)
            : <ProofSteps steps={openVote.steps} />}
        </section>
      )}
    </div>
  );
}
