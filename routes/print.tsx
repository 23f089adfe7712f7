// The print view of a card set at /print/cards?set=S (page §14.7): a shell around the PrintCards
// island, which draws the cards from the codes the presenter's browser keeps; the server only
// names the set and the voting page's address, and never sees a code.
import PrintCards from "../islands/PrintCards.tsx";
import { Island } from "../server/pages/island.ts";
import type { PageAddresses } from "../server/pages/address.ts";

/** What the page is rendered from: the set named (null: none readable) and the voting address. */
export type PrintData = { set: string | null; address: string };

/** The route's data handler: `?set=` (16 hex characters, else none) and the address phones use. */
export function handler(req: Request, { addresses }: { addresses: PageAddresses }): PrintData {
  const set = new URL(req.url).searchParams.get("set");
  return {
    set: set !== null && /^[0-9a-f]{16}$/.test(set) ? set : null,
    address: addresses.address,
  };
}

/** The page: the PrintCards island alone. */
export default function PrintPage({ data }: { data: PrintData }) {
  return (
    <main class="print-page">
      <Island name="PrintCards" component={PrintCards} props={data} />
    </main>
  );
}
