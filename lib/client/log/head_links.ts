/**
 * Browser-safe. Whether the chain a server shows now extends the signed heads a page remembers
 * (protocol §4.5): the `prev_hash` links from every new head back to the remembered head below it,
 * and from the remembered head above it down to it, each block's hash recomputed from its fields;
 * at most {@link MAX_LINK_BLOCKS} blocks a check.
 * @module
 */
import { verifyBlockHash } from "../../protocol/chain.ts";
import { type BlockRecord, MAX_PAGE_LIMIT, type SignedHead } from "../../protocol/schemas.ts";
import { ApiCallError, type ApiClient } from "../api_client.ts";

/**
 * Most blocks one check reads. A head whose links need more (one far beyond every remembered
 * head: a height of 2^53 − 1 is a lie no walk can refute) is `unchecked`, decided before any
 * read. An honest chain grows by one block a sealing interval, so only a page away for thousands
 * of intervals meets it.
 */
export const MAX_LINK_BLOCKS = 5_000;

/** Most `GET /api/blocks` requests one check makes (the blocks needed may come in short runs). */
export const MAX_LINK_REQUESTS = 60;

/**
 * Why a shown chain does not provably extend the remembered heads: its links lead elsewhere
 * (`not-extended`), a block needed for the check was not served (`withheld`), a served block
 * contradicts itself (`inconsistent`: another height than asked for, or a hash that is not its
 * fields' hash), or the links could not be followed in one check (`unchecked`: more blocks or
 * requests than its bounds, or a read with no answer by its deadline).
 */
export type LinkProblem =
  | { kind: "not-extended"; height: number; expected: string; found: string }
  | { kind: "withheld"; from: number; to: number; reason: string }
  | { kind: "inconsistent"; height: number; reason: string }
  | { kind: "unchecked"; from: number; to: number; reason: string };

/** What {@link checkExtension} found, and the block records it read or was given. */
export type ExtensionCheck = { problems: LinkProblem[]; blocks: BlockRecord[] };

/** A head as a page is shown it; a full block record when it carries `prev_hash`. */
type Shown = SignedHead & Partial<BlockRecord>;

/**
 * Checks that every head of `shown` (validly signed, not already remembered) is linked by
 * `prev_hash` to the highest of `anchors` below it, and that the lowest of `anchors` above it is
 * linked down to it. Block records among `shown` are used as they are; the other blocks needed
 * are read through `api`, at most {@link MAX_PAGE_LIMIT} a request, {@link MAX_LINK_BLOCKS} and
 * {@link MAX_LINK_REQUESTS} a check. Never throws, and fails closed: a read that fails is a
 * `withheld` problem; a read that times out, or links beyond the bounds, `unchecked`.
 */
export async function checkExtension(
  api: ApiClient,
  { anchors, shown }: { anchors: readonly SignedHead[]; shown: readonly Shown[] },
): Promise<ExtensionCheck> {
  const anchorAt = new Map(anchors.map((a) => [a.height, a]));
  const heights = [...anchorAt.keys()].sort((a, b) => a - b);
  const fresh = shown.filter((s) => !anchorAt.has(s.height));
  const ranges = mergeRanges(fresh.flatMap((head) => rangesAround(heights, head.height)));
  const known = new Map<number, BlockRecord>();
  for (const s of shown) if (isRecord(s) && !known.has(s.height)) known.set(s.height, s);
  const needed = ranges.reduce((n, [lo, hi]) => n + missingIn(known, lo, hi), 0);
  if (needed > MAX_LINK_BLOCKS) {
    const [from, to] = [ranges[0][0], ranges.at(-1)![1]];
    const reason = `linking blocks ${from} to ${to} means reading ${needed} blocks, more than ` +
      `the ${MAX_LINK_BLOCKS} one check reads`;
    return { problems: [{ kind: "unchecked", from, to, reason }], blocks: [] };
  }
  const problems: LinkProblem[] = [];
  const budget = { requests: MAX_LINK_REQUESTS };
  for (const [lo, hi] of ranges) {
    const problem = await readMissing(api, { known, lo, hi, budget });
    if (problem) problems.push(problem);
    // Without an answer in time, or past the budget, more reads would only wait longer.
    if (problem?.kind === "unchecked") break;
  }
  for (const block of known.values()) {
    const reason = selfContradiction(block);
    if (reason) problems.push({ kind: "inconsistent", height: block.height, reason });
  }
  for (const [lo, hi] of ranges) {
    for (let h = lo + 1; h <= hi; h++) {
      const [below, above] = [known.get(h - 1), known.get(h)];
      if (below && above && above.prev_hash !== below.hash) {
        problems.push({
          kind: "not-extended",
          height: h - 1,
          expected: below.hash,
          found: above.prev_hash,
        });
      }
    }
  }
  for (const head of [...anchors, ...fresh]) {
    const block = known.get(head.height);
    if (block && block.hash !== head.hash) {
      problems.push({
        kind: "not-extended",
        height: head.height,
        expected: head.hash,
        found: block.hash,
      });
    }
  }
  return { problems, blocks: [...known.values()].sort((a, b) => a.height - b.height) };
}

/** The height ranges that link `height` to the nearest anchor heights below and above it. */
function rangesAround(anchorHeights: readonly number[], height: number): [number, number][] {
  const below = anchorHeights.filter((h) => h < height).at(-1);
  const above = anchorHeights.find((h) => h > height);
  const ranges: [number, number][] = [];
  if (below !== undefined) ranges.push([below, height]);
  if (above !== undefined) ranges.push([height, above]);
  return ranges;
}

/** How many heights of `lo..hi` are not in `known`, without visiting them one by one. */
function missingIn(known: ReadonlyMap<number, BlockRecord>, lo: number, hi: number): number {
  let have = 0;
  for (const h of known.keys()) if (h >= lo && h <= hi) have++;
  return hi - lo + 1 - have;
}

/** `ranges` sorted and merged where they overlap or touch. */
function mergeRanges(ranges: [number, number][]): [number, number][] {
  const merged: [number, number][] = [];
  for (const [lo, hi] of ranges.sort((a, b) => a[0] - b[0])) {
    const last = merged.at(-1);
    if (last && lo <= last[1]) last[1] = Math.max(last[1], hi);
    else merged.push([lo, hi]);
  }
  return merged;
}

/**
 * Reads into `known` every block of `lo..hi` it lacks, in runs of consecutive heights, each
 * request taken from `budget`; answers the first block that was not served, or not at its height,
 * or not read in time or within the budget, as a problem.
 */
async function readMissing(
  api: ApiClient,
  { known, lo, hi, budget }: {
    known: Map<number, BlockRecord>;
    lo: number;
    hi: number;
    budget: { requests: number };
  },
): Promise<LinkProblem | null> {
  let from = lo;
  while (from <= hi) {
    if (known.has(from)) {
      from++;
      continue;
    }
    let to = from;
    while (to < hi && !known.has(to + 1) && to + 1 - from < MAX_PAGE_LIMIT) to++;
    if (budget.requests-- <= 0) {
      const reason = `reading blocks ${from} to ${hi} takes more than the ${MAX_LINK_REQUESTS} ` +
        "requests one check makes";
      return { kind: "unchecked", from, to: hi, reason };
    }
    let items: BlockRecord[];
    try {
      items = (await api.blocks(from, to - from + 1)).items;
    } catch (error) {
      const reason = (error as Error).message;
      const timedOut = error instanceof ApiCallError && error.code === "timeout";
      return { kind: timedOut ? "unchecked" : "withheld", from, to, reason };
    }
    const wanted = items.slice(0, to - from + 1);
    for (const [i, block] of wanted.entries()) {
      if (block.height > from + i) {
        return { kind: "withheld", from: from + i, to, reason: "the server skipped it" };
      }
      if (block.height !== from + i) {
        return {
          kind: "inconsistent",
          height: from + i,
          reason: `asked for block ${from + i}, the server answered block ${block.height}`,
        };
      }
      known.set(block.height, block);
    }
    if (wanted.length < to - from + 1) {
      const missing = from + wanted.length;
      return { kind: "withheld", from: missing, to, reason: "the server did not list it" };
    }
    from = to + 1;
  }
  return null;
}

function isRecord(head: Shown): head is SignedHead & BlockRecord {
  return typeof head.prev_hash === "string" && typeof head.merkle_root === "string" &&
    typeof head.timestamp === "number" && typeof head.size === "number";
}

/** Why a served block contradicts itself, or null when its hash is its fields' hash. */
function selfContradiction(block: BlockRecord): string | null {
  try {
    return verifyBlockHash(block) ? null : "its hash is not the hash of its own fields";
  } catch (error) {
    return `it is malformed: ${(error as Error).message}`;
  }
}
