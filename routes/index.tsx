// The voting page at / (page §2): its data is the ring size the server runs with and the address
// phones must use (server/pages/address.ts), shown as a QR code; everything else lives in the
// browser, so the page is a heading, the QR code with what the presenter should know about its
// address, and the VotingPage island.
import VotingPage from "../islands/VotingPage.tsx";
import AddressQr from "../components/AddressQr.tsx";
import type { PageAddresses } from "../server/pages/address.ts";
import { Island } from "../server/pages/island.ts";

/**
 * What the page is rendered from: the ring size, the address phones must use (the QR code's), every
 * other address they may try, whether those were worked out from this machine's network, and a
 * sentence for the presenter when phones cannot reach the address.
 */
export type IndexData = {
  ringSize: number;
  address: string;
  addresses: string[];
  fromNetwork: boolean;
  warning: string | null;
  /** `OHTTP_RELAY`: the relay suggested to the presenter, or null (protocol §7). */
  relay: string | null;
};

/**
 * The route's data handler: the configured ring size (protocol §6 `RING_SIZE`), the addresses, and
 * the relay `OHTTP_RELAY` suggests.
 */
export function handler(
  _req: Request,
  { ringSize, addresses, relay = null }: {
    ringSize: number;
    addresses: PageAddresses;
    relay?: string | null;
  },
): IndexData {
  return { ringSize, ...addresses, relay };
}

/** The page: heading and QR code, then the VotingPage island, hydrated in the browser. */
export default function IndexPage({ data }: { data: IndexData }) {
  return (
    <main class="page voting-layout">
      <header class="voting-header">
        <h1 class="voting-title">Ringvote: anonymous voting demo</h1>
        <p class="voting-lead">
          Each panel below is a voter simulated in this browser: it makes its keys, registers them,
          and signs its vote with a ring signature that hides it among other voters.
        </p>
      </header>
      <PhoneAddress data={data} />
      <Island
        name="VotingPage"
        component={VotingPage}
        props={{
          ringSize: data.ringSize,
          address: data.address,
          ...(data.relay === null ? {} : { relay: data.relay }),
        }}
      />
    </main>
  );
}

/**
 * The QR code of the address phones must use, the other addresses written out, and for the
 * presenter where the address came from or why phones cannot reach it. The warning is plain text,
 * not an alert: it is not a voter's error, and the presenter reads it before anyone votes.
 */
function PhoneAddress({ data }: { data: IndexData }) {
  const others = data.addresses.filter((address) => address !== data.address);
  return (
    <div class="address-qr-panel">
      <AddressQr address={data.address} />
      {others.length > 0 && <p class="address-qr-others">Also: {others.join(", ")}</p>}
      {data.fromNetwork && (
        <p class="address-qr-note" data-address-note="">
          Worked out from this machine's network: phones must be on the same network.
        </p>
      )}
      {data.warning !== null && (
        <p class="address-qr-warning" data-address-warning="">{data.warning}</p>
      )}
    </div>
  );
}
