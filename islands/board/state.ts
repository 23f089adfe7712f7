/**
 * The bulletin board's one state, as signals, with the loaders that fill it through the API client
 * (chain, tally and recount, a block's votes, a proof, a shared vote). It keeps state and a timer,
 * so it lives with the island; its pure parts are in lib/client/board/.
 * @module
 */
import { computed, signal } from "@preact/signals";
import { repeatEvery } from "../hooks/polling.ts";
import { type BlockRecord, MAX_PAGE_LIMIT, type Tally } from "../../lib/protocol/schemas.ts";
import {
  type ApiClient,
  type BlockVoteEntry,
  pagesOf,
  readPages,
} from "../../lib/client/api_client.ts";
import {
  checkBlocks,
  failsCheck,
  type ProofStep,
  proofSteps,
  tallyRows,
} from "../../lib/client/board/record_checks.ts";
import {
  blockProblem,
  type CountedBlock,
  countPayloads,
  isCounted,
  type LoadedVotes,
  recount,
  recountProblem,
} from "../../lib/client/board/recount.ts";
import type { PageStorage } from "../../lib/client/rounds/round_storage.ts";
import { messageOf } from "../../lib/client/text.ts";
import { pageRoundStorage } from "./page_storage.ts";

/** The vote whose proof is shown: its steps once computed, or why they could not be. */
export type OpenVote = {
  height: number;
  voteId: string;
  steps: ProofStep[] | null;
  problem: string | null;
};

/**
 * Votes whose entries the board holds, about 2 KB each as read (signature and ring included): those
 * of the blocks read last, the selected block's and the open vote's always among them. Of every
 * other block the recount keeps only its payloads' counts.
 */
export const HELD_VOTES_BUDGET = 2_000;

/** The bulletin board's state and loaders; see {@link createBulletinState}. */
export type BulletinState = ReturnType<typeof createBulletinState>;

/**
 * Options of {@link createBulletinState}: the polling interval; the round shown (protocol §4.9;
 * null for the attack lab's practice ledger, which is no round); the storage its sections read
 * (this round's entries of the browser's storage by default); and how many votes it holds
 * ({@link HELD_VOTES_BUDGET} by default).
 */
export type BulletinOptions = {
  pollMs: number;
  round?: number | null;
  storage?: PageStorage;
  heldVotes?: number;
};

/**
 * The board's state, empty until {@link BulletinState.follow} reads the chain through `api`, then
 * again every `pollMs`.
 */
export function createBulletinState(
  api: ApiClient,
  {
    pollMs,
    round = 1,
    storage = pageRoundStorage(round ?? 1),
    heldVotes = HELD_VOTES_BUDGET,
  }: BulletinOptions,
) {
  const blocks = signal<BlockRecord[]>([]);
  const height = signal<number | null>(null);
  const tally = signal<Tally | null>(null);
  /**
   * The blocks whose votes are held, read longest ago first: `heldVotes` votes at most, beside
   * those of the selected block and the open vote's.
   */
  const votes = signal<ReadonlyMap<number, LoadedVotes>>(new Map());
  /** Every block the recount has read, as its payloads' counts. */
  const counted = signal<ReadonlyMap<number, CountedBlock>>(new Map());
  const selected = signal<number | null>(null);
  const openVote = signal<OpenVote | null>(null);
  const filter = signal<string | null>(null);
  const problem = signal<string | null>(null);
  const ready = signal(false);

  const checks = computed(() => new Map(checkBlocks(blocks.value).map((c) => [c.height, c])));
  const recounted = computed(() => recount(height.value, tally.value, counted.value));
  /** The first block whose listing is not what its header commits to, once counted. */
  const recountTrouble = computed(() => recountProblem(height.value, counted.value));
  const rows = computed(() =>
    tally.value === null ? [] : tallyRows(tally.value.results, recounted.value)
  );

  async function fetchBlocks(from: number, to: number): Promise<BlockRecord[]> {
    return (await readPages(api.blocks, { offset: from, count: to - from + 1 })).items;
  }

  /**
   * Holds `loaded` as block `h`'s votes, read last; then lets go of the blocks read longest ago,
   * never the selected one nor the open vote's, until the votes held fit `heldVotes`.
   */
  function hold(h: number, loaded: LoadedVotes) {
    const next = new Map(votes.value);
    next.delete(h);
    next.set(h, loaded);
    let held = 0;
    for (const { entries } of next.values()) held += entries.length;
    for (const [k, { entries }] of next) {
      if (held <= heldVotes) break;
      if (k === selected.value || k === openVote.value?.height) continue;
      next.delete(k);
      held -= entries.length;
    }
    votes.value = next;
  }

  /** The votes of block `h` after those held: its next page, or all of them. */
  async function fetchVotes(h: number, all: boolean): Promise<LoadedVotes> {
    const known = votes.value.get(h)?.entries ?? [];
    const range = { offset: known.length, count: all ? Infinity : MAX_PAGE_LIMIT };
    const page = await readPages(api.blockVotes(h), range);
    const loaded = { entries: [...known, ...page.items], total: page.total };
    hold(h, loaded);
    return loaded;
  }

  /**
   * Block `h`'s votes counted for the recount: those held, then the rest read page by page, until
   * the listing ends or holds one vote more than `size`, the votes its header commits to (null: a
   * header that does not check, whose listing is not read). The block's votes are held when they
   * fit `heldVotes`; a larger block is only counted.
   */
  async function countVotes(h: number, size: number | null): Promise<CountedBlock> {
    // A header that does not check commits to nothing: its listing is not read.
    if (size === null) return { size, total: 0, counted: 0, payloads: new Map() };
    const known = votes.value.get(h);
    const payloads = countPayloads(known?.entries ?? []);
    let read = known?.entries.length ?? 0;
    let total = known?.total ?? 0;
    if (known !== undefined && read >= known.total) return { size, total, counted: read, payloads };
    let entries: BlockVoteEntry[] | null = known?.entries ?? [];
    for await (const page of pagesOf(api.blockVotes(h), { offset: read })) {
      countPayloads(page.items, payloads);
      read += page.items.length;
      total = page.total;
      entries = entries !== null && entries.length + page.items.length <= heldVotes
        ? [...entries, ...page.items]
        : null;
      if (read > size) break;
    }
    if (entries !== null) hold(h, { entries, total });
    return { size, total, counted: read, payloads };
  }

  /**
   * The headers the recount may count: the blocks shown, and the blocks below them read when the
   * recount lacks one of them, all checked together from genesis (hash and link, as the chain
   * section checks them). Only headers served are walked, never a range of heights the server
   * claims: a height of 2^53 − 1 costs the blocks really served, not a loop to it.
   */
  async function servedHeaders(counted: ReadonlyMap<number, CountedBlock>) {
    const shown = blocks.value;
    const lowest = shown[0]?.height ?? 0;
    let countedBelow = 0;
    for (const h of counted.keys()) if (h >= 1 && h < lowest) countedBelow++;
    // The lowest block shown is checked against the one below it too.
    const below = lowest > 0 && countedBelow < lowest ? await fetchBlocks(0, lowest - 1) : [];
    const chain = [...below.filter((b) => b.height < lowest), ...shown];
    const checked = new Map(checkBlocks(chain).map((c) => [c.height, c]));
    return chain.map((b) => {
      const check = checked.get(b.height);
      return { height: b.height, size: check === undefined || failsCheck(check) ? null : b.size };
    });
  }

  /** Every vote of block `h`, read only when some are missing. */
  async function allVotes(h: number): Promise<LoadedVotes> {
    const known = votes.value.get(h);
    return known && known.entries.length >= known.total ? known : await fetchVotes(h, true);
  }

  /** Brings the board up to the chain's head: new blocks, the tally, the votes to recount. */
  async function refresh(head: number) {
    const have = blocks.value;
    const last = have.length > 0 ? have[have.length - 1].height : -1;
    const first = Math.max(0, head - MAX_PAGE_LIMIT + 1);
    const fresh = await fetchBlocks(Math.max(first, last + 1), head);
    blocks.value = [...(last >= first ? have : []), ...fresh];
    height.value = head;
    const served = await api.tally();
    tally.value = served;
    // Counted into a copy, published once (a map copied per block would grow with the chain), and
    // at the first block whose listing is not what its header commits to, shown at once.
    const next = new Map(counted.value);
    if (recount(head, served, next) !== null) return;
    const uncounted = (await servedHeaders(next)).filter(({ height: h }) =>
      h >= 1 && h <= head && !isCounted(next.get(h))
    );
    let shownTrouble = recountProblem(head, next) !== null;
    try {
      for (const { height: h, size } of uncounted) {
        next.set(h, await countVotes(h, size));
        if (!shownTrouble && blockProblem(h, next.get(h)!) !== null) {
          shownTrouble = true;
          counted.value = new Map(next);
        }
      }
    } finally {
      counted.value = next;
    }
  }

  /** Runs `load`, showing its failure as the board's problem. */
  async function reporting(load: () => Promise<unknown>) {
    try {
      await load();
    } catch (error) {
      problem.value = messageOf(error);
    }
  }

  /**
   * Reads the chain now and then every `pollMs`, refreshing when the height changes; answers the
   * function that stops. `onReady` runs once the first read has ended, well or not.
   */
  function follow(onReady: () => void = () => {}): () => void {
    let initial = true;
    return repeatEvery(pollMs, async ({ live }) => {
      const first = initial;
      initial = false;
      try {
        const status = await api.blockStatus();
        if (live() && (first || status.height !== height.value)) await refresh(status.height);
        if (live()) problem.value = null;
      } catch (error) {
        if (live()) problem.value = messageOf(error);
      } finally {
        if (first && live()) {
          ready.value = true;
          onReady();
        }
      }
    });
  }

  /** The earlier blocks being read, while they are: a second click waits for the same read. */
  let loadingEarlier: Promise<void> | null = null;

  /** Loads up to a page of blocks before the first one shown, once at a time. */
  function loadEarlier() {
    const first = blocks.value[0]?.height ?? 0;
    if (first === 0) return Promise.resolve();
    loadingEarlier ??= reporting(async () => {
      const earlier = await fetchBlocks(Math.max(0, first - MAX_PAGE_LIMIT), first - 1);
      // Shown only below the block they were read for: a chain read again meanwhile (grown by more
      // than the blocks shown) starts higher, and they would not join it.
      if (blocks.value[0]?.height === first) blocks.value = [...earlier, ...blocks.value];
    }).finally(() => (loadingEarlier = null));
    return loadingEarlier;
  }

  /** Selects block `h` and reads its first page of votes. */
  function selectBlock(h: number) {
    selected.value = h;
    openVote.value = null;
    if (h === 0 || votes.value.has(h)) return Promise.resolve();
    return reporting(() => fetchVotes(h, false));
  }

  /** Reads the next page of block `h`'s votes. */
  function moreVotes(h: number) {
    return reporting(() => fetchVotes(h, false));
  }

  /**
   * Opens vote `voteId` of block `h` and computes its proof steps from every vote of the block,
   * the block, the block before it and the server's own proof answer. The steps are shown only
   * while this vote is still the one asked for in the selected block: a slow answer never
   * overwrites a later vote's proof, nor reopens one after another block was selected.
   */
  async function openProof(h: number, voteId: string) {
    selected.value = h;
    const asked: OpenVote = { height: h, voteId, steps: null, problem: null };
    openVote.value = asked;
    const show = (steps: ProofStep[] | null, problem: string | null) => {
      if (openVote.value === asked && selected.value === h) {
        openVote.value = { height: h, voteId, steps, problem };
      }
    };
    try {
      const loaded = await allVotes(h);
      const index = loaded.entries.findIndex((e) => e.voteId === voteId);
      if (index < 0) throw new Error(`Vote ${voteId} is not listed in block ${h}`);
      const block = await blockAt(h);
      if (!block) throw new Error(`Block ${h} could not be read`);
      const previous = (await blockAt(h - 1)) ?? null;
      const served = await api.voteProof(h, voteId).then(
        (proof) => ({ proof, problem: null }),
        (error) => ({
          proof: null,
          problem: `The server's proof could not be read: ${messageOf(error)}`,
        }),
      );
      const steps = proofSteps({
        block,
        previous,
        votes: loaded.entries.map((e) => e.vote),
        index,
        served: served.proof,
      });
      show(steps, served.problem);
    } catch (error) {
      show(null, messageOf(error));
    }
  }

  /**
   * Opens vote `voteId` wherever it is: the block holding it is searched from the head down, a
   * few blocks at a time, by asking each for the vote's proof (a 404 means "not here").
   */
  async function openShared(voteId: string) {
    // Searched among the blocks served, never down from a height the server only claims.
    const head = Math.min(height.value ?? 0, blocks.value.at(-1)?.height ?? 0);
    openVote.value = { height: 0, voteId, steps: null, problem: null };
    for (let top = head; top >= 1; top -= LOCATE_WIDTH) {
      const heights = Array.from({ length: Math.min(LOCATE_WIDTH, top) }, (_, k) => top - k);
      const found = await Promise.all(
        heights.map((h) => api.voteProof(h, voteId).then(() => h, () => null)),
      );
      const hit = found.find((h) => h !== null);
      if (hit != null) return await openProof(hit, voteId);
    }
    const problem = `Vote ${voteId} is in none of the ${head} sealed blocks`;
    openVote.value = { height: 0, voteId, steps: null, problem };
  }

  /** Block `h`, from those shown or else read. */
  async function blockAt(h: number): Promise<BlockRecord | undefined> {
    return blocks.value.find((b) => b.height === h) ?? (await fetchBlocks(h, h))[0];
  }

  return {
    api,
    pollMs,
    round,
    storage,
    blocks,
    height,
    tally,
    votes,
    counted,
    selected,
    openVote,
    filter,
    problem,
    ready,
    checks,
    recounted,
    recountTrouble,
    rows,
    follow,
    loadEarlier,
    selectBlock,
    moreVotes,
    openProof,
    openShared,
  };
}

/** Blocks asked at once when searching for a shared vote. */
const LOCATE_WIDTH = 4;
