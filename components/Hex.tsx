/** A hex value shortened to its first 12 characters, the full value in the tooltip. */
export default function Hex({ value }: { value: string }) {
  const short = value.length > 16 ? `${value.slice(0, 12)}…` : value;
  return <code class="hex" title={value} data-full={value}>{short}</code>;
}
