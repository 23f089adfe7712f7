/**
 * Browser-safe. `JSON.parse` behind two bounds checked first, in one linear scan that stops at the
 * first excess: the text's length, and how deep its arrays and objects nest. A file chosen on a
 * page is anyone's: V8 parses a 20 MB line of `[` into twenty million nested arrays, freezing the
 * page for seconds, where the scan refuses it after its first few characters.
 * @module
 */

/** Text that exceeds a bound of {@link parseBoundedJson}, refused before it was parsed. */
export class JsonBoundsError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = "JsonBoundsError";
  }
}

/** The bounds: at most `maxChars` UTF-16 code units, arrays and objects at most `maxDepth` deep. */
export type JsonBounds = { maxChars: number; maxDepth: number };

const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Throws {@link JsonBoundsError} when `text` is longer than `maxChars`, or when its brackets outside
 * strings nest deeper than `maxDepth` (a top-level array or object is depth 1). Does not check that
 * `text` is JSON: `JSON.parse` does, once it is known to be cheap.
 */
export function checkJsonBounds(text: string, { maxChars, maxDepth }: JsonBounds): void {
  if (text.length > maxChars) {
    throw new JsonBoundsError(`longer than ${maxChars} characters (${text.length})`);
  }
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) {
        throw new JsonBoundsError(
          `nested deeper than ${maxDepth} levels of arrays and objects (at character ${i + 1})`,
        );
      }
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
}

/**
 * `JSON.parse(text)` once {@link checkJsonBounds} holds: throws {@link JsonBoundsError} for text
 * beyond the bounds, and `JSON.parse`'s SyntaxError for text that is not JSON.
 */
export function parseBoundedJson(text: string, bounds: JsonBounds): unknown {
  checkJsonBounds(text, bounds);
  return JSON.parse(text);
}
