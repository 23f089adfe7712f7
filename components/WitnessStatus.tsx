// Where a page stands with the witnesses of its policy (page §10.13): witnessed, waiting or
// unwitnessed, with the size of the largest history a quorum cosigned, and the sentence said when
// the address's fragment changed the policy. Nothing at all without a policy, and no status beside
// a fork alert: no line is green next to proof that the server showed two histories.
import type { WitnessView } from "../lib/client/log/log_witness.ts";

const TEXTS: Record<WitnessView["status"], string> = {
  witnessed: "Witnessed: the witnesses this page trusts cosigned the history it shows.",
  waiting: "Waiting for the witnesses this page trusts to cosign the newest history.",
  unwitnessed: "Unwitnessed: no quorum of the witnesses this page trusts cosigned the history " +
    "it shows in time.",
};

/** The witness line of a page with a policy, unless `forked`; the policy notice, if any, above it. */
export default function WitnessStatus(
  { view, notice, forked = false }: {
    view: WitnessView | null;
    notice: string | null;
    forked?: boolean;
  },
) {
  return (
    <>
      {notice !== null && <p class="witness-notice" data-witness-notice="">{notice}</p>}
      {view !== null && !forked && (
        <p
          class={`witness-status witness-${view.status}`}
          data-witness-status={view.status}
          data-witnessed-size={view.size}
        >
          {TEXTS[view.status]}{" "}
          <span class="witness-detail">
            {view.size > 0
              ? `Cosigned history: ${view.size} block${view.size === 1 ? "" : "s"}; `
              : ""}
            quorum {view.quorum}
            {view.cosigners.length > 0 ? `; latest cosigners: ${view.cosigners.join(", ")}` : ""}.
          </span>
        </p>
      )}
    </>
  );
}
