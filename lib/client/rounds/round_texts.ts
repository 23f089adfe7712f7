/**
 * Browser-safe. The words a phone and the projector say about a round's phases (page §14): what a
 * phone waits for, a late joiner's lines, the anonymity line of a group, the group's fingerprint,
 * and the projector's headcount and vote count. The one place these words are made.
 * @module
 */

/** A late joiner's line when the round takes none (page §14.2). */
export const LATE_OFF_TEXT = "You joined after voting opened: you can vote in the next round.";

/** Why a late group is weaker than the opening group (page §14.2). */
export const LATE_WEAKER_TEXT = "That is weaker than hiding among everyone who joined in time: " +
  "a late group is the cheapest to fill with extra keys.";

/** `n` {word}s, with the plural when `n` is not 1. */
function count(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}

/** "14:05:30" for the local time of `ms`. */
export function clockTime(ms: number): string {
  const at = new Date(ms);
  return [at.getHours(), at.getMinutes(), at.getSeconds()]
    .map((n) => String(n).padStart(2, "0")).join(":");
}

/**
 * What a phone waits for in the join phase: the presenter, and with a join deadline, voting
 * opening by itself then if at least `minVoters` keys have joined.
 */
export function waitingToOpenText(
  { joinDeadline, minVoters }: { joinDeadline: number | null; minVoters: number },
): string {
  const base = "Voting opens when the presenter starts it";
  if (joinDeadline === null) return `${base}.`;
  return `${base}, or by itself at ${clockTime(joinDeadline)} if at least ` +
    `${count(minVoters, "key")} have joined by then.`;
}

/** What a chosen answer does while the phone waits: it is kept and sent by itself. */
export function keptChoiceText(choice: string): string {
  return `Your choice "${choice}" is kept on this phone and sent by itself then.`;
}

/**
 * A late joiner's line with late joiners on: how many more late keys its group waits for, and why
 * a late group hides it less well.
 */
export function lateWaitingText({ missing, minVoters }: { missing: number; minVoters: number }) {
  const more = missing === 1 ? "1 more late joiner" : `${missing} more late joiners`;
  return `You joined after voting opened: your vote waits for ${more} to make a late group of ` +
    `${minVoters}, and is then hidden among the late joiners only. ${LATE_WEAKER_TEXT}`;
}

/** Why a key of an earlier round never voted: its late group never filled (page §14.2). */
export function shortLateText(round: number): string {
  return `In round ${round}, your key joined after voting opened and the round ended before ` +
    "enough late joiners came to fill its late group, so it never voted.";
}

/** The line of a phone whose served groups failed the group rule's check. */
export function refusedGroupText(reason: string): string {
  return `Your vote is not sent: ${reason}.`;
}

/**
 * The anonymity line of a ballot in a round (page §14.2): the group's `n` keys, `k` of them still
 * possible signers once the reveals are taken out; a late group says so.
 */
export function roundAnonymityText(
  { n, k, late }: { n: number; k: number; late: boolean },
): string {
  return late
    ? `Hidden among the ${n} late joiners of this round: effective anonymity ${k} of ${n}`
    : `Hidden among all ${n} keys of this round: effective anonymity ${k} of ${n}`;
}

/**
 * A ballot's possible signers in a round: its group of `groupSize` keys less those revealed as
 * the signers of other ballots of the group; 1 once its own signer is revealed. Needs no block.
 */
export function groupAnonymity(
  { groupSize, revealedOthers, ownRevealed }: {
    groupSize: number;
    revealedOthers: number;
    ownRevealed: boolean;
  },
): number {
  return ownRevealed ? 1 : Math.max(1, groupSize - revealedOthers);
}

/** The fingerprint line of a phone's group, to compare with the projector's. */
export function groupFingerprintText(fingerprint: string): string {
  return `Your group's fingerprint: ${fingerprint}. The projector shows the same one.`;
}

/** The projector's headcount hint under the key count (page §10.11). */
export function headcountText(keys: number): string {
  return `${count(keys, "key")} joined. Count the hands: more keys than people means someone ` +
    "made extra keys";
}

/** The projector's vote count while voting is open (page §10.11). */
export function votedText({ voted, keys }: { voted: number; keys: number }): string {
  return `Voting: ${voted} of ${keys} voted`;
}

/** The name of a phase on the projector (page §10.11). */
export function phaseName(phase: "join" | "voting" | "closed"): string {
  return { join: "Joining", voting: "Voting is open", closed: "Closed" }[phase];
}
