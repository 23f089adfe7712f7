// The print view of a card set at /print/cards?set=S (page §14.7): the RoomView island in its
// print mode, which draws the cards from the codes the presenter's browser keeps, with the QR code
// and pins the room's screens use; the server only names the set and the voting page's address,
// and never sees a code.
import RoomView from "../islands/RoomView.tsx";
import { BULLETIN_POLL_MS } from "./board.tsx";
import { Island } from "../server/pages/island.ts";
import type { PageAddresses } from "../server/pages/address.ts";

/** What the page is rendered from: the set named (null: none readable), the voting address. */
export type PrintData = { set: string | null; address: string };

/** The route's data handler: `?set=` (16 hex characters, else none) and the address phones use. */
export function handler(
  req: Request,
  { addresses }: { addresses: PageAddresses },
): PrintData {
  const set = new URL(req.url).searchParams.get("set");
  return {
    set: set !== null && /^[0-9a-f]{16}$/.test(set) ? set : null,
    address: addresses.address,
  };
}

/** The page: the island in print mode, or, with no set named, a line saying so. */
export default function PrintPage({ data }: { data: PrintData }) {
  return (
    <main class="print-page">
      {data.set === null
        ? <p class="notice notice-problem" data-print-ready="none">No card set is named.</p>
        : (
          <Island
            name="RoomView"
            component={RoomView}
            props={{
              pollMs: BULLETIN_POLL_MS,
              round: null,
              address: data.address,
              print: data.set,
            }}
          />
        )}
    </main>
  );
}
