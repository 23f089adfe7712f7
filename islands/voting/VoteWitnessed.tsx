/**
 * Whether a verified vote's block is witnessed, under its panel (page §10.13).
 * @module
 */
import { blockName, type ShownBlock } from "../../lib/client/log/log_view.ts";
import type { LogView } from "../hooks/watch_heads.ts";

/**
 * Whether a verified vote's block is witnessed (page §10.13): proven included in a checkpoint this
 * page accepted, and inside the largest one the policy's quorum cosigned.
 */
export default function VoteWitnessed(
  { view, block }: { view: LogView; block: ShownBlock | null },
) {
  const proven = block !== null && view.proven.has(blockName(block));
  const witnessed = proven && view.witness !== null && block.height < view.witness.size;
  return (
    <p
      class={`vote-witnessed ${witnessed ? "is-yes" : "is-no"}`}
      data-vote-witnessed={witnessed ? "yes" : "no"}
    >
      {witnessed
        ? `✓ Witnessed: block ${block.height} is in the history the witnesses cosigned.`
        : proven
        ? `Block ${
          block!.height
        } is in the server's signed history; waiting for the witnesses to cosign it.`
        : "Checking that this vote's block is in the server's signed history…"}
    </p>
  );
}
