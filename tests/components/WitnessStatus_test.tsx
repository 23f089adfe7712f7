/**
 * The witness line (components/WitnessStatus.tsx) rendered to HTML: its status under a policy,
 * nothing without one, and no status at all beside a fork alert.
 * @module
 */
import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import WitnessStatus from "../../components/WitnessStatus.tsx";
import type { WitnessView } from "../../lib/client/log/log_witness.ts";

const witnessed: WitnessView = {
  status: "witnessed",
  size: 12,
  quorum: 1,
  cosigners: ["ringvote-witness/7d209a95"],
};

Deno.test("a witnessed history reads witnessed, with its size, quorum and cosigners", () => {
  const html = renderToString(<WitnessStatus view={witnessed} notice={null} />);
  assert.ok(html.includes('data-witness-status="witnessed"'), html);
  assert.ok(html.includes('data-witnessed-size="12"'), html);
  assert.ok(html.includes("Cosigned history: 12 blocks; quorum 1"), html);
});

Deno.test("beside a fork alert no status is shown, the policy notice still is", () => {
  const html = renderToString(
    <WitnessStatus view={witnessed} notice="The witness list changed" forked />,
  );
  assert.ok(!html.includes("data-witness-status"), html);
  assert.ok(!html.includes("Witnessed"), html);
  assert.ok(html.includes("data-witness-notice"), html);
});

Deno.test("without a policy there is no line", () => {
  assert.equal(renderToString(<WitnessStatus view={null} notice={null} />), "");
});
