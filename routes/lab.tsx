// The attack lab at /lab: a shell around the AttackLab island, which holds its own voters in this
// browser and throws every attack at the running server's practice ledger (protocol §4.7), apart
// from the election's. Linked from and to both other pages, and to the practice ledger's board.
import AttackLab from "../islands/AttackLab.tsx";
import { Island } from "../server/pages/island.ts";

/** What the page is rendered from. */
export type LabData = { ringSize: number };

/** The route's data handler: the configured ring size (protocol §6 `RING_SIZE`). */
export function handler(_req: Request, config: { ringSize: number }): LabData {
  return { ringSize: config.ringSize };
}

/** The page: heading, links, a plain-words introduction, and the lab island. */
export default function LabPage({ data }: { data: LabData }) {
  return (
    <main class="page lab-page">
      <nav class="page-link">
        <a href="/">Voting page</a> · <a href="/board">Public bulletin board</a>
      </nav>
      <h1 class="lab-title">Attack lab</h1>
      <p class="lab-practice">
        The lab runs on a practice ledger of its own: its own keys, votes, blocks and tally, kept
        apart from the election's. Nothing done here touches the real election.{" "}
        <a href="/board?ledger=lab">See the practice ledger's chain</a>
      </p>
      <p class="lab-lead">
        Try to cheat. Every attack below is a real request to this server, and every check that
        stops it is written down in docs/protocol.md. The lab uses its own voters, kept in this
        browser and apart from the voting page's.
      </p>
      <Island name="AttackLab" component={AttackLab} props={{ ringSize: data.ringSize }} />
    </main>
  );
}
