/**
 * Browser-safe. The anonymity lens in words and numbers for the pages: the panel's ring line and
 * warning, each member's reason, the histogram, the lowest-first order and the ring picture.
 * @module
 */
import type {
  AnonymityAnalysis,
  BallotAnonymity,
  ConsistentAnalysis,
  Reveal,
} from "./anonymity.ts";
import type { LensResult } from "./anonymity_lens.ts";

/** Below this effective anonymity a ballot is shown in red with a warning. */
export const WEAK_ANONYMITY = 4;

/** The voting panel's ring line: who the ballot hides among, and how many remain possible. */
export type RingLine = {
  /** "Hidden among 8 keys: you, … and N keys of voters not on this page". */
  hiddenAmong: string;
  /** "Effective anonymity: n of 8 …", null while the analysis is not known. */
  anonymity: string | null;
  /** A plain-words warning when the effective anonymity is below {@link WEAK_ANONYMITY}. */
  warning: string | null;
};

/**
 * The ring line of a voter whose key is `ownKey`: `ring` is the ballot's ring, `pageVoters` maps
 * the keys of the voters on this page to their names, `effectiveAnonymity` is null until known.
 */
export function ringLine(
  { ring, ownKey, pageVoters, effectiveAnonymity }: {
    ring: readonly string[];
    ownKey: string;
    pageVoters: ReadonlyMap<string, string>;
    effectiveAnonymity: number | null;
  },
): RingLine {
  const members = [...new Set(ring)];
  const names = members.filter((k) => k !== ownKey && pageVoters.has(k))
    .map((k) => pageVoters.get(k)!);
  const others = members.length - names.length - (members.includes(ownKey) ? 1 : 0);
  const parts = [members.includes(ownKey) ? "you" : null, ...names].filter((p) => p !== null);
  if (others === 1) parts.push("1 key of a voter not on this page");
  if (others > 1) parts.push(`${others} keys of voters not on this page`);
  const hiddenAmong = `Hidden among ${members.length} keys: ${listInWords(parts)}`;
  if (effectiveAnonymity === null) return { hiddenAmong, anonymity: null, warning: null };
  const anonymity = `Effective anonymity: ${effectiveAnonymity} of ${members.length}` +
    (effectiveAnonymity === members.length
      ? " — the public record rules none of them out"
      : ` — the other sealed ballots rule out ${members.length - effectiveAnonymity}`);
  return { hiddenAmong, anonymity, warning: anonymityWarning(effectiveAnonymity) };
}

/** The warning for a ballot that only `n` keys can have cast; null from {@link WEAK_ANONYMITY}. */
export function anonymityWarning(n: number): string | null {
  if (n >= WEAK_ANONYMITY) return null;
  if (n <= 1) {
    return "Not anonymous: the public record shows that only one key can have cast this ballot.";
  }
  return `Weak anonymity: anyone reading the public record can narrow this ballot down to ${n} ` +
    `voters, so it is guessed right ${n === 2 ? "half the time" : `one time in ${n}`}.`;
}

/** "a", "a and b", "a, b and c". */
export function listInWords(parts: readonly string[]): string {
  if (parts.length <= 1) return parts.join("");
  return `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}

/** How many ballots have each effective anonymity, from 1 to the largest seen (no gaps). */
export function anonymityHistogram(
  ballots: readonly Pick<BallotAnonymity, "effectiveAnonymity">[],
): { anonymity: number; ballots: number }[] {
  const counts: number[] = [];
  for (const b of ballots) counts[b.effectiveAnonymity] = (counts[b.effectiveAnonymity] ?? 0) + 1;
  const bars = [];
  for (let n = 1; n < counts.length; n++) bars.push({ anonymity: n, ballots: counts[n] ?? 0 });
  return bars;
}

/** The ballots, lowest effective anonymity first, then by vote id; a new array. */
export function lowestFirst<B extends Pick<BallotAnonymity, "id" | "effectiveAnonymity">>(
  ballots: readonly B[],
): B[] {
  return [...ballots].sort((a, b) =>
    a.effectiveAnonymity - b.effectiveAnonymity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** Where `count` members sit on a circle of `radius` around (0, 0), the first at the top. */
export function circlePositions(count: number, radius: number): { x: number; y: number }[] {
  return Array.from({ length: count }, (_, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(1, count);
    return { x: radius * Math.cos(angle), y: radius * Math.sin(angle) };
  });
}

/** Vote id → effective anonymity of every ballot of a consistent analysis; empty otherwise. */
export function anonymityByBallot(analysis: AnonymityAnalysis | null): Map<string, number> {
  if (!analysis?.consistent) return new Map();
  return new Map(analysis.ballots.map((b) => [b.id, b.effectiveAnonymity]));
}

/**
 * Why a ring member is, or is not, a possible signer of a ballot, in plain words; `ballots` are
 * the other ballots a ruled-out member certainly cast one of (empty otherwise).
 */
export type MemberStatus = { key: string; possible: boolean; reason: string; ballots: string[] };

/**
 * Each member of ballot `id`'s ring with the reason it is or is not a possible signer, given the
 * `reveals` the analysis was made with. Throws RangeError when `id` is not in the analysis.
 */
export function memberStatuses(
  analysis: ConsistentAnalysis,
  id: string,
  { reveals = [] }: { reveals?: readonly Reveal[] } = {},
): MemberStatus[] {
  const ballot = analysis.ballots.find((b) => b.id === id);
  if (!ballot) throw new RangeError(`Ballot "${id}" is not in the analysis`);
  const possible = new Set(ballot.possibleSigners);
  const certain = new Map(analysis.certainSigners.map((s) => [s.key, s.ballots]));
  const revealedFor = new Map(reveals.map((r) => [r.key, r.ballot]));
  const ownReveal = reveals.find((r) => r.ballot === id);
  return ballot.ring.map((key) => {
    if (possible.has(key)) {
      return {
        key,
        possible: true,
        reason: ownReveal
          ? "revealed as this ballot's signer"
          : ballot.effectiveAnonymity === 1
          ? "the only member that can have cast it"
          : "could have cast it",
        ballots: [],
      };
    }
    const elsewhere = revealedFor.get(key);
    if (elsewhere !== undefined) {
      return {
        key,
        possible: false,
        reason: `revealed as the signer of ballot ${elsewhere}`,
        ballots: [elsewhere],
      };
    }
    if (ownReveal) {
      return { key, possible: false, reason: "this ballot's signer was revealed", ballots: [] };
    }
    const ballots = certain.get(key) ?? [];
    return {
      key,
      possible: false,
      reason: ballots.length === 1
        ? `certainly cast ballot ${ballots[0]}`
        : `certainly cast one of ${ballots.length} other ballots`,
      ballots,
    };
  });
}

/** The analysis the page shows: with the reveals when there are any. */
export function shownAnalysis(result: LensResult): AnonymityAnalysis {
  return result.revealed ?? result.base;
}
