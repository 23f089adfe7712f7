// The voting page's QR code of the address phones must use (page §2), so that people in the room
// can open the page on their phones: beside the heading, or filling the screen for the presenter.
// uqr encodes; this file only draws its modules as one SVG path. No Deno API: islands render it.
import { encode } from "uqr";

/** Modules of light margin around the code: the quiet zone ISO/IEC 18004 asks for. */
const QUIET_ZONE = 4;

/** SVG path data drawing the dark modules of `modules`, one rectangle per horizontal run. */
export function qrPath(modules: boolean[][]): string {
  let d = "";
  modules.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) {
      if (!row[x]) continue;
      const start = x;
      while (x + 1 < row.length && row[x + 1]) x++;
      const run = x - start + 1;
      d += `M${start} ${y}h${run}v1h-${run}z`;
    }
  });
  return d;
}

/**
 * How big the code is drawn: beside the page's heading, or for the presenter, at least 60% of the
 * screen's smaller side with the address in large text, to be read from the back of the room.
 */
export type AddressQrSize = "normal" | "present";

/** A QR code of `address` with a caption for the audience and the address written out. */
export default function AddressQr(
  { address, size: drawn = "normal" }: { address: string; size?: AddressQrSize },
) {
  const { data, size } = encode(address, { ecc: "M", border: 0 });
  const side = size + 2 * QUIET_ZONE;
  return (
    <figure class={drawn === "present" ? "address-qr address-qr-present" : "address-qr"}>
      <figcaption>
        <strong class="address-qr-title">Scan to vote from your phone</strong>
        <span class="address-qr-url">{address}</span>
      </figcaption>
      <svg
        data-qr=""
        class="address-qr-code"
        viewBox={`${-QUIET_ZONE} ${-QUIET_ZONE} ${side} ${side}`}
        role="img"
        aria-label={`QR code of ${address}`}
        shape-rendering="crispEdges"
      >
        <rect x={-QUIET_ZONE} y={-QUIET_ZONE} width={side} height={side} fill="#fff" />
        <path d={qrPath(data)} fill="#000" />
      </svg>
    </figure>
  );
}
