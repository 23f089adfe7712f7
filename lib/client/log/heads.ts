/**
 * Browser-safe. The signed heads a page remembers (protocol §4.5), each new one checked against the
 * server key and the heads seen before: two signed heads at one height are fork evidence. The words
 * a page shows are in head_alerts.ts, the whole check of a chain shown in chain_check.ts.
 * @module
 */
import * as z from "zod/mini";
import { forkEvidence, verifyHead } from "../../protocol/head.ts";
import { type ForkEvidence, SignedHead } from "../../protocol/schemas.ts";
import type { ApiClient } from "../api_client.ts";
import { checkExtension, type LinkProblem } from "./head_links.ts";

/**
 * Browser-storage key of the voting page's and the board's remembered heads: one JSON value,
 * apart from the per-voter entries of page §3 (those are prefixed by a voter's namespace).
 */
export const SEEN_HEADS_KEY = "ringvote/seen-heads";

/** Most heads remembered; the highest are kept, since a fork below them changes them too. */
export const MAX_SEEN_HEADS = 256;

/** What a page remembers: the server key it trusts and the heads it has seen, by height. */
export type SeenHeads = { key: string | null; heads: SignedHead[] };

const Stored = z.object({ key: z.nullable(z.string()), heads: z.array(SignedHead) });

/** The remembered heads from storage; an empty memory when absent or unreadable. */
export function parseSeenHeads(stored: string | null): SeenHeads {
  if (stored === null) return { key: null, heads: [] };
  try {
    const parsed = Stored.safeParse(JSON.parse(stored));
    return parsed.success ? parsed.data : { key: null, heads: [] };
  } catch {
    return { key: null, heads: [] };
  }
}

/** The stored form of `seen`. */
export function serializeSeenHeads(seen: SeenHeads): string {
  return JSON.stringify(seen);
}

/**
 * A head as shown: a block status, or a block record (its other fields then let the links be
 * checked without reading it again), with its signature if it carries one.
 */
export type ShownHead = { height: number; hash: string; head_signature?: string };

/**
 * The outcome of showing heads to the memory: the updated memory, the first fork found (evidence
 * against the key), the heads whose signature is missing or wrong, whether the server key changed
 * (then the memory is kept as it was: the old key's heads are never overwritten), and a rollback —
 * a chain height below the highest head remembered.
 */
export type HeadObservation = {
  /** The server key the shown heads were checked against. */
  key: string;
  seen: SeenHeads;
  fork: ForkEvidence | null;
  unsigned: ShownHead[];
  keyChanged: boolean;
  rollback: Rollback | null;
  /** Where the shown chain does not provably extend the remembered heads (head_links.ts). */
  links: LinkProblem[];
};

/** The chain's height as the server now claims it, below the highest signed head remembered. */
export type Rollback = { height: number; remembered: number };

/**
 * Checks `shown` heads, signed by `key`, against `seen`: a validly signed head at a remembered
 * height with another hash is a fork; a new validly signed head is remembered; a head without a
 * valid signature proves nothing and is listed; a claimed chain `height` below the highest
 * remembered head is a rollback. Under a key other than the remembered one nothing is remembered:
 * the memory stays the old key's. Pure: `seen` is not modified.
 */
export function observeHeads(
  seen: SeenHeads,
  { key, shown, height }: { key: string; shown: readonly ShownHead[]; height?: number },
): HeadObservation {
  const keyChanged = seen.key !== null && seen.key !== key;
  const byHeight = new Map<number, SignedHead>();
  if (!keyChanged) { for (const head of seen.heads) byHeight.set(head.height, head); }
  let fork: ForkEvidence | null = null;
  const unsigned: ShownHead[] = [];
  for (const head of shown) {
    const signed = validlySigned(key, head);
    if (signed === null) {
      unsigned.push(head);
      continue;
    }
    const known = byHeight.get(head.height);
    if (known === undefined) byHeight.set(head.height, signed);
    else if (known.hash !== head.hash) fork ??= forkEvidence(key, [known, signed]);
  }
  const highest = seen.heads.at(-1)?.height;
  const rollback = height !== undefined && highest !== undefined && height < highest
    ? { height, remembered: highest }
    : null;
  const heads = [...byHeight.values()].sort((a, b) => a.height - b.height).slice(-MAX_SEEN_HEADS);
  return {
    key,
    seen: keyChanged ? seen : { key, heads },
    fork,
    unsigned,
    keyChanged,
    rollback,
    links: [],
  };
}

function validlySigned(key: string, head: ShownHead): SignedHead | null {
  const { height, hash, head_signature } = head;
  if (head_signature === undefined) return null;
  try {
    return verifyHead(key, { height, hash, head_signature })
      ? { height, hash, head_signature }
      : null;
  } catch {
    return null;
  }
}

/** The remembered heads at heights up to `height`, highest first: the ones a chain must extend. */
export function headsBelow(seen: SeenHeads, height: number): SignedHead[] {
  return seen.heads.filter((h) => h.height <= height).reverse();
}
/** Where a page keeps its remembered heads. */
export type HeadStorage = Pick<Storage, "getItem" | "setItem">;

/**
 * Observes the chain `api` shows — its `status` and `shown` heads — against `seen` under `key`:
 * the head and every validly signed head shown must extend the remembered heads (the blocks in
 * between are read: {@link checkExtension}); a first visit anchors on the signed head of the chain,
 * so everything else shown must lead to it. Pure but for the reads; `seen` is not modified.
 */
export async function observeChain(
  api: ApiClient,
  { key, seen, status, shown = [] }: {
    key: string;
    seen: SeenHeads;
    status: ShownHead;
    shown?: readonly ShownHead[];
  },
): Promise<HeadObservation> {
  const all = [status, ...shown];
  const signed = all.filter((head) => validlySigned(key, head) !== null) as SignedHead[];
  const keyChanged = seen.key !== null && seen.key !== key;
  const anchors = keyChanged ? [] : seen.heads.length > 0 ? seen.heads : signed.slice(0, 1);
  const { problems, blocks } = keyChanged
    ? { problems: [], blocks: [] }
    : await checkExtension(api, { anchors, shown: signed });
  return {
    ...observeHeads(seen, { key, shown: [...all, ...blocks], height: status.height }),
    links: problems,
  };
}

/** True when `observed` may be remembered: no fork, the same key, every link checked. */
export function mayRemember(observed: HeadObservation): boolean {
  return !observed.fork && !observed.keyChanged && observed.links.length === 0;
}
