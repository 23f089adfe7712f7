// The voting page at / (page §2): its data is the ring size the server runs with; everything
// else lives in the browser, so the page is a shell around the VotingPage island.
import VotingPage from "../islands/VotingPage.tsx";
import { Island } from "../components/Island.ts";

/** What the page is rendered from. */
export type IndexData = { ringSize: number };

/** The route's data handler: the configured ring size (protocol §6 `RING_SIZE`). */
export function handler(_req: Request, config: { ringSize: number }): IndexData {
  return { ringSize: config.ringSize };
}

/** The page: the VotingPage island, hydrated in the browser. */
export default function IndexPage({ data }: { data: IndexData }) {
  return (
    <main class="page">
      <Island name="VotingPage" component={VotingPage} props={{ ringSize: data.ringSize }} />
    </main>
  );
}
