/**
 * Browser-safe. The reads a hall of phones shares (protocol §4.9, §7.4): the fixed lengths of a
 * group's read and of a block's ballots per group, and the send window every phone computes from
 * values fixed when voting opens.
 * @module
 */

/** The JSON length of every answer of `GET /api/rounds/{id}/groups/{g}`, any group of 8 to 64. */
export const GROUP_READ_BYTES = 5_120;

/** The JSON length of every answer of `GET /api/rounds/{id}/block/id/{height}/groups`. */
export const BLOCK_GROUPS_BYTES = 2_048;

/** Votes a second the verifier is taken to check when `VERIFY_RATE` is unset (protocol §6). */
export const DEFAULT_VERIFY_RATE = 25;

/** The send window's bounds, ms: never shorter than 30 s, never longer than 2 minutes. */
export const SEND_WINDOW_BOUNDS_MS = { min: 30_000, max: 120_000 };

/** How many sealing intervals the send window lasts at least. */
export const WINDOW_INTERVALS = 2;

/**
 * W, the send window's length in ms (protocol §7.4): two sealing intervals, or the time the
 * verifier takes for every key at the opening at `verifyRate` votes a second, whichever is longer,
 * clamped to 30–120 s.
 */
export function sendWindowMs(
  { keysAtOpen, intervalMs, verifyRate }: {
    keysAtOpen: number;
    intervalMs: number;
    verifyRate: number;
  },
): number {
  if (!(Number.isFinite(intervalMs) && intervalMs > 0)) {
    throw new RangeError(`the sealing interval must be a positive number of ms, got ${intervalMs}`);
  }
  if (!(Number.isFinite(verifyRate) && verifyRate > 0)) {
    throw new RangeError(`the verification rate must be a positive number, got ${verifyRate}`);
  }
  if (!(Number.isInteger(keysAtOpen) && keysAtOpen >= 0)) {
    throw new RangeError(`keysAtOpen must be a non-negative integer, got ${keysAtOpen}`);
  }
  const ms = Math.max(WINDOW_INTERVALS * intervalMs, Math.ceil(keysAtOpen / verifyRate * 1000));
  return Math.min(SEND_WINDOW_BOUNDS_MS.max, Math.max(SEND_WINDOW_BOUNDS_MS.min, ms));
}

/**
 * `value` as JSON with a `pad` field of spaces making it exactly `length` bytes (its other fields
 * ASCII). Throws when it does not fit: a longer answer would tell itself apart.
 */
export function paddedJson(value: Record<string, unknown>, length: number): string {
  const bare = JSON.stringify({ ...value, pad: "" });
  const missing = length - new TextEncoder().encode(bare).length;
  if (missing < 0) {
    throw new RangeError(`the answer takes ${length - missing} bytes, over ${length}`);
  }
  return JSON.stringify({ ...value, pad: " ".repeat(missing) });
}
