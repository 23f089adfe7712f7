/**
 * The board's check of a fork-evidence file (protocol §4.5, §4.10: two signed heads, or two
 * checkpoints), with the command line's own check (lib/client/audit/evidence.ts `checkEvidence`)
 * and its key compared with the trusted server key.
 * @module
 */
import { useState } from "react";
import {
  checkEvidence,
  EVIDENCE_BOUNDS,
  type EvidenceVerdict,
  type ProvenFork,
  settleEvidence,
} from "../../lib/client/audit/evidence.ts";
import type { ApiClient } from "../../lib/client/api_client.ts";
import { JsonBoundsError, parseBoundedJson } from "../../lib/client/bounded_json.ts";
import { parseSeenHeads, SEEN_HEADS_KEY } from "../../lib/client/log/heads.ts";
import type { PageStorage } from "../../lib/client/rounds/round_storage.ts";
import type { SectionProps } from "./section.ts";

/** The server key this browser trusts, and where it comes from; null when none could be had. */
type Trusted = { key: string; source: "remembered" | "served" } | null;

type Checked = { file: string; verdict: EvidenceVerdict; trusted: Trusted };

/** The server key remembered in `storage`, else the one the server answers now. */
async function trustedKey(api: ApiClient, storage: PageStorage): Promise<Trusted> {
  const remembered = parseSeenHeads(storage.getItem(SEEN_HEADS_KEY)).key;
  if (remembered !== null) return { key: remembered, source: "remembered" };
  try {
    return { key: (await api.serverKey()).key, source: "served" };
  } catch {
    return null;
  }
}

/**
 * The verdict on the text of an evidence file, against `trusted`; two checkpoints of two sizes are
 * settled by the consistency proof this board's server answers between them.
 */
async function verdictOf(text: string, trusted: Trusted, api: ApiClient): Promise<EvidenceVerdict> {
  let evidence: unknown;
  try {
    evidence = parseBoundedJson(text, EVIDENCE_BOUNDS);
  } catch (error) {
    // Bounded first: a hostile file is refused in one scan, before the parser builds it.
    const reason = error instanceof JsonBoundsError
      ? `The file is not fork evidence: ${error.message}`
      : "The file is not JSON";
    return { kind: "no-fork", reason };
  }
  const verdict = checkEvidence(evidence, trusted?.key ?? null);
  return await settleEvidence(verdict, evidence, api);
}

/** The evidence control and its verdict. */
export default function EvidenceSection({ bulletin }: SectionProps) {
  const [checked, setChecked] = useState<Checked | null>(null);

  async function check(input: HTMLInputElement) {
    const file = input.files?.[0];
    if (!file) return;
    const trusted = await trustedKey(bulletin.api, bulletin.storage);
    const verdict = await verdictOf(await file.text(), trusted, bulletin.api);
    setChecked({ file: file.name, verdict, trusted });
  }

  return (
    <section class="bulletin-section evidence" aria-labelledby="evidence-title">
      <h2 id="evidence-title">Check fork evidence</h2>
      <p class="evidence-intro">
        When a server shows two different versions of its history, the pages offer a small file as
        proof; choose such a file here and this browser checks it itself, without trusting the
        server or whoever gave you the file.
      </p>
      <label class="evidence-pick">
        Evidence file (JSON){" "}
        <input
          type="file"
          accept=".json,application/json"
          data-action="check-evidence"
          onChange={(event) => check(event.currentTarget)}
        />
      </label>
      {checked !== null && <EvidenceResult {...checked} />}
    </section>
  );
}

function EvidenceResult({ file, verdict, trusted }: Checked) {
  if (verdict.kind === "unsettled") {
    return (
      <div class="evidence-result evidence-no-fork" data-evidence-verdict="unsettled">
        <p class="evidence-verdict">? {file} is not settled: {verdict.reason}.</p>
      </div>
    );
  }
  if (verdict.kind === "no-fork") {
    return (
      <div class="evidence-result evidence-no-fork" data-evidence-verdict="no-fork">
        <p class="evidence-verdict">✗ {file} proves no fork.</p>
        <p>{verdict.reason}.</p>
      </div>
    );
  }
  const against = verdict.keyMatches === null
    ? "unknown"
    : verdict.keyMatches
    ? "this-server"
    : "other-key";
  return (
    <div
      class="evidence-result evidence-fork"
      data-evidence-verdict="fork"
      data-evidence-form={verdict.form}
      data-evidence-against={against}
    >
      <p class="evidence-verdict">✓ {file} proves a fork: {forkText(verdict)}</p>
      <p>
        {against === "this-server"
          ? `It is proof against this server: it is signed with the key this browser trusts for it (${
            trusted?.source === "remembered" ? "the key it remembers" : "the key the server answers"
          }).`
          : against === "other-key"
          ? "It is not proof against this server: it is signed with another key than the one " +
            "this browser trusts for this server."
          : "This browser could not read this server's key, so it cannot say whether the proof " +
            "is against this server."}
      </p>
      <dl class="evidence-keys">
        <dt>Key that signed both {verdict.form === "heads" ? "blocks" : "checkpoints"}</dt>
        <dd class="hex">{verdict.key}</dd>
        <dt>Key this browser trusts for this server</dt>
        <dd class="hex">{trusted?.key ?? "(none)"}</dd>
      </dl>
    </div>
  );
}

/** What a proven fork shows, in words: the two heads, or the two checkpoints of a log. */
function forkText(fork: ProvenFork): string {
  if (fork.form === "heads") {
    return `block ${fork.height} was signed twice by the same key, with two different contents.`;
  }
  const [a, b] = fork.sizes;
  return fork.form === "same-size"
    ? `the log ${fork.origin} was signed by the same key at size ${a} with two different roots.`
    : `the log ${fork.origin} was signed by the same key at sizes ${a} and ${b}, and the ` +
      "enclosed consistency proof does not join them (a proof that joins them would refute it).";
}
