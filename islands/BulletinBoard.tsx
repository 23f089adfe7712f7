// The public bulletin board (/board): the chain as a picture, the tally, a block's votes and a
// vote's inclusion proof step by step, kept live by polling the chain height. Nothing the server
// says is taken on trust: block hashes, links, proofs and (when small enough) the tally are
// recomputed in the browser, and every disagreement is shown in red. The state lives once, in
// islands/bulletin_board/state.ts; each section is a file of islands/bulletin_board/ (files in that
// folder are parts of this island, not islands of their own).
import type { ComponentType } from "preact";
import { useEffect, useMemo } from "react";
import { createApiClient } from "../lib/app/api_client.ts";
import { createBulletinState } from "./bulletin_board/state.ts";
import AnonymitySection from "./bulletin_board/AnonymitySection.tsx";
import BlockSection from "./bulletin_board/BlockSection.tsx";
import ChainSection from "./bulletin_board/ChainSection.tsx";
import LiveStatus from "./bulletin_board/LiveStatus.tsx";
import ProofSection from "./bulletin_board/ProofSection.tsx";
import type { SectionProps } from "./bulletin_board/section.ts";
import TallySection from "./bulletin_board/TallySection.tsx";

/** Props the server renders the board with. */
export type BulletinBoardProps = { pollMs: number };

/** The board's sections, top to bottom. */
const SECTIONS: ComponentType<SectionProps>[] = [
  LiveStatus,
  ChainSection,
  TallySection,
  BlockSection,
  ProofSection,
  AnonymitySection,
];

/** The board: every section over one state, which follows the chain while the page is open. */
export default function BulletinBoard({ pollMs }: BulletinBoardProps) {
  const bulletin = useMemo(() => createBulletinState(createApiClient({ fetch }), { pollMs }), []);
  useEffect(() => bulletin.follow(() => performance.mark("ringvote:board-ready")), []);
  return (
    <div class="bulletin" data-ready={bulletin.ready.value ? "true" : "false"}>
      {SECTIONS.map((Section, i) => <Section key={i} bulletin={bulletin} />)}
    </div>
  );
}
