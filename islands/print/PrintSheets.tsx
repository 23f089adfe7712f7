/**
 * The sheets of the print view (page §14.7): the paper choice, then 8 cards a page, each with
 * the QR code of its address, its code, its number and its name: the RoomView island's print mode
 * (/print/cards).
 * @module
 */
import { useEffect, useState } from "react";
import { encode } from "uqr";
import { qrPath } from "../../components/AddressQr.tsx";
import {
  cardAddress,
  cardOfText,
  PRINT_NAMES,
  PRINT_READY,
  readKeptCodes,
} from "../../lib/client/cards/card_keep.ts";
import { useScannedAddress } from "../hooks/scanned_address.ts";

/** Cards on one printed page. */
export const CARDS_PER_PAGE = 8;
/** Modules of light margin around each code (ISO/IEC 18004). */
const QUIET_ZONE = 4;

/** The paper sizes offered. */
type Paper = "a4" | "letter";

/** The paper choice and the sheets. */
export default function PrintSheets({ set, address }: { set: string; address: string }) {
  const [codes] = useState(() => readKeptCodes(localStorage, set));
  const [paper, setPaper] = useState<Paper>("a4");
  // Names come only from the page that opened this one, in memory; without it there are none.
  const [names, setNames] = useState<string[] | null>(() => opener === null ? [] : null);
  const { scanned, reading } = useScannedAddress(address);
  useEffect(() => {
    if (opener === null) return;
    const listen = (event: MessageEvent) => {
      if (event.origin !== location.origin || event.source !== opener) return;
      const data = event.data as { kind?: unknown; set?: unknown; names?: unknown } | null;
      if (data?.kind !== PRINT_NAMES || data.set !== set || !Array.isArray(data.names)) return;
      setNames(data.names.map((name) => typeof name === "string" ? name : ""));
    };
    addEventListener("message", listen);
    (opener as Window).postMessage({ kind: PRINT_READY, set }, location.origin);
    // An opener that never answers (another page) leaves the cards without names.
    const timer = setTimeout(() => setNames((known) => known ?? []), 3000);
    return () => {
      removeEventListener("message", listen);
      clearTimeout(timer);
    };
  }, []);
  if (codes === null) {
    return (
      <p class="notice notice-problem" data-print-ready="none">
        This browser keeps no codes of set{" "}
        {set}: they were forgotten, or made in another browser. Make new cards to print some.
      </p>
    );
  }
  const ready = names !== null && !reading;
  const pages: string[][] = [];
  for (let i = 0; i < codes.length; i += CARDS_PER_PAGE) {
    pages.push(codes.slice(i, i + CARDS_PER_PAGE));
  }
  return (
    <div class={`print-cards print-${paper}`} data-print-ready={ready ? "true" : "false"}>
      <div class="print-controls">
        <h1>Join cards: set {set}</h1>
        <p>
          {codes.length}{" "}
          cards. Hand one to each member. Each card joins one key per round; whoever holds a card's
          code can use it, so keep them as you would ballot papers.
        </p>
        <label>
          Paper{" "}
          <select
            data-paper=""
            value={paper}
            onChange={(event) => setPaper((event.target as HTMLSelectElement).value as Paper)}
          >
            <option value="a4">A4</option>
            <option value="letter">Letter</option>
          </select>
        </label>{" "}
        <button type="button" data-action="print" onClick={() => print()} disabled={!ready}>
          Print
        </button>
      </div>
      {ready &&
        pages.map((page, p) => (
          <section class="print-sheet" key={p} aria-label={`Page ${p + 1}`}>
            {page.map((code, i) => {
              const number = p * CARDS_PER_PAGE + i + 1;
              return (
                <PrintedCard
                  key={code}
                  code={code}
                  address={cardAddress(scanned, code)}
                  line={cardOfText(number, codes.length)}
                  name={names?.[number - 1] ?? ""}
                />
              );
            })}
          </section>
        ))}
    </div>
  );
}

/** One card: its QR code, its code in large type, its number and its name. */
function PrintedCard(
  { code, address, line, name }: { code: string; address: string; line: string; name: string },
) {
  const { data, size } = encode(address, { ecc: "M", border: 0 });
  const side = size + 2 * QUIET_ZONE;
  return (
    <article class="print-card" data-card={address}>
      <svg
        class="print-card-qr"
        viewBox={`${-QUIET_ZONE} ${-QUIET_ZONE} ${side} ${side}`}
        role="img"
        aria-label={`QR code of card ${code}`}
        shape-rendering="crispEdges"
      >
        <rect x={-QUIET_ZONE} y={-QUIET_ZONE} width={side} height={side} fill="#fff" />
        <path d={qrPath(data)} fill="#000" />
      </svg>
      <div class="print-card-text">
        <p class="print-card-number">{line}</p>
        {name !== "" && <p class="print-card-name" data-card-name="">{name}</p>}
        <p class="print-card-how">Scan to join the vote, or type the code on the voting page.</p>
      </div>
      <p class="print-card-code" data-card-code-printed="">{code}</p>
    </article>
  );
}
