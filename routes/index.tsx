// The voting page at / (page §2): its data is the ring size the server runs with and the page's own
// address, shown as a QR code; everything else lives in the browser, so the page is a heading, the
// QR code and the VotingPage island.
import VotingPage from "../islands/VotingPage.tsx";
import AddressQr from "../components/AddressQr.tsx";
import { Island } from "../server/pages/island.ts";

/** What the page is rendered from. */
export type IndexData = { ringSize: number; address: string };

/** The route's data handler: the configured ring size (protocol §6 `RING_SIZE`), the address. */
export function handler(req: Request, config: { ringSize: number }): IndexData {
  return { ringSize: config.ringSize, address: pageAddress(req) };
}

/** A host as a Host header carries it: a name or IPv4 address, or a bracketed IPv6 one; a port. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The address the browser asked for, query left out: behind a reverse proxy the host and scheme
 * the browser used arrive in `X-Forwarded-Host` and `X-Forwarded-Proto`, else the Host header
 * holds the host. A value that is not a plain host or scheme is ignored.
 */
export function pageAddress(req: Request): string {
  const url = new URL(req.url);
  const first = (name: string) => req.headers.get(name)?.split(",")[0].trim() ?? "";
  const host = [first("x-forwarded-host"), first("host")].find((h) => HOST.test(h)) ?? url.host;
  const proto = first("x-forwarded-proto").toLowerCase();
  const scheme = proto === "http" || proto === "https" ? `${proto}:` : url.protocol;
  return `${scheme}//${host}${url.pathname}`;
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
      <AddressQr address={data.address} />
      <Island name="VotingPage" component={VotingPage} props={{ ringSize: data.ringSize }} />
    </main>
  );
}
