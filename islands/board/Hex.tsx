/**
 * A hex value on the board, shortened to its first 12 digits, the full value in its tooltip and
 * `data-full`.
 * @module
 */
import { shortHex } from "../../lib/client/text.ts";

/** A hex value shortened to its first 12 characters, the full value in the tooltip. */
export default function Hex({ value }: { value: string }) {
  return <code class="hex" title={value} data-full={value}>{shortHex(value)}</code>;
}
