/**
 * Browser-safe. The few ways the pages put a value into words: a long hex value shortened for the
 * screen, and the message of anything thrown.
 * @module
 */

/** How {@link shortHex} cuts: the digits kept at the end, and the mark put where digits go. */
export type HexCut = { tail?: number; mark?: string };

/**
 * `hex` shortened for the screen: its first `length` digits, `mark` (default "…") and its last
 * `tail` digits (default none). A value of at most 16 digits is shown whole.
 */
export function shortHex(hex: string, length = 12, { tail = 0, mark = "…" }: HexCut = {}): string {
  if (hex.length <= 16) return hex;
  return `${hex.slice(0, length)}${mark}${tail > 0 ? hex.slice(-tail) : ""}`;
}

/** The message of `error`, or its text when it is not an Error. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
