// A witness a page trusts (its policy from `#witness=`), cosigning a log's checkpoint through the
// log's own API (protocol §4.10), for the page's log-view tests.
import type { ApiClient } from "../../lib/client/api_client.ts";
import { policyFromFragment } from "../../lib/client/log/witness_policy.ts";
import { parseCheckpoint } from "../../lib/protocol/checkpoint.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatNote,
  formatVerifierKey,
  parseNote,
  signCosignature,
  signerKey,
} from "../../lib/protocol/note.ts";

/** The witness "witness.example/1" (seed of ones). */
export const POLICY_WITNESS = { name: "witness.example/1", seed: new Uint8Array(32).fill(1) };

/**
 * The witness's vkey, the page's check options under a policy naming it alone (bound 20 s), and
 * `cosign(at)`: the witness cosigns the checkpoint `api` serves now, timestamped `at` (ms).
 */
export function policyWitness(api: Pick<ApiClient, "checkpoint" | "submitCosignature">) {
  const vkey = formatVerifierKey(signerKey(POLICY_WITNESS, COSIGNATURE_V1_TYPE));
  const read = policyFromFragment(`#witness=${encodeURIComponent(vkey)}`);
  if (read.kind !== "policy") throw new Error(`the fragment of ${vkey} gives no policy`);
  const options = { policy: read.policy, boundMs: 20_000 };
  const cosign = async (at: number) => {
    const text = parseNote(await api.checkpoint()).text;
    const line = signCosignature(text, POLICY_WITNESS, Math.floor(at / 1000));
    const cosignature = formatNote({ text, signatures: [line] }).slice(text.length + 1, -1);
    await api.submitCosignature({ vkey, size: parseCheckpoint(text).size, cosignature });
  };
  return { vkey, options, cosign };
}
