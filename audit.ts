// `deno task audit [URL] [--round ID] [--key HEX] [--witness VKEY …] [--quorum K] [--save FILE]`:
// re-verifies the whole public record of a Ringvote server through its read-only API (protocol §4)
// with the same lib/ the server uses, and exits 0 only when every check holds. Default URL:
// http://localhost:8000. `--round` audits that round's ledger (protocol §4.9, under
// /api/rounds/ID/) instead of round 1's. `--key` pins the server key the auditor trusts: a server
// answering another key is refused before anything else is read. The log's checkpoint (protocol
// §4.10) must be signed by that key and its root made by the audited blocks. `--witness VKEY`
// (repeatable) trusts a witness: at least `--quorum K` of them (all by default) must have cosigned
// the audited checkpoint. `--save FILE` writes the election record (protocol §4.8) of exactly what
// was audited, its checkpoint included, to FILE when the audit passes, else to FILE.failed beside
// it, FILE left as it was. `--resume FILE` takes up such a record: checked without its
// ring signatures, it answers for the blocks it holds once the server's chain is shown to extend it,
// only what the server added since is verified in full, and FILE is written again, byte for byte
// the record `--save` would write now; FILE changes only when every check holds.
// `deno task audit FILE [--key HEX] [--witness VKEY …] [--quorum K]`: the same audit, offline, of
// an election record file. Signatures are checked on one audit worker per core, the board's
// (lib/client/audit/check_pool.ts).
// `deno task audit --evidence FILE [URL] [--round ID] [--key HEX]`: checks a fork-evidence file of
// either form (protocol §4.5: two signed heads, or two checkpoints); two checkpoints of two sizes
// are settled by the consistency proof the server at URL answers between them (a proof carries no
// signature, so the one in the file proves nothing alone). Exits 0 when it proves a fork (by the
// pinned key, when one is given), 1 when not or not settled. Exit 2: usage.
import { createApiClient } from "./lib/client/api_client.ts";
import { recordWriter } from "./lib/client/audit/election_record.ts";
import { auditRecord } from "./lib/client/audit/election_record_source.ts";
import { readRecordFile, replaceRecordFile } from "./record_file.ts";
import {
  checkExtension,
  checkRecordWithoutSignatures,
  extensionText,
  resumeFromRecord,
} from "./lib/client/audit/resume.ts";
import { auditLedger } from "./lib/client/audit/audit.ts";
import { formatReport } from "./lib/client/audit/report_text.ts";
import { withGroupRule } from "./lib/client/audit/groups.ts";
import { JsonBoundsError, parseBoundedJson } from "./lib/client/bounded_json.ts";
import {
  checkEvidence,
  EVIDENCE_BOUNDS,
  type EvidenceVerdict,
  settleEvidence,
} from "./lib/client/audit/evidence.ts";
import type { TrustedWitnesses } from "./lib/client/audit/log_checks.ts";
import { parseCommand, USAGE } from "./audit/cli_args.ts";
import { UsageError } from "./lib/command_line.ts";
import { auditOptions } from "./audit/cli_options.ts";
import { formatEvidence } from "./audit/cli_report.ts";

/** Where `--save FILE` keeps what a failing audit read: beside FILE, under this suffix. */
const FAILED_SUFFIX = ".failed";

/**
 * Audits round `round` (round 1 when null) of the server at `url` against the pinned `key` and
 * the trusted `witnesses`, if any, writing the record of what it read to `save` when given;
 * answers the exit status.
 */
async function runAudit(
  url: string,
  { round, key, witnesses, save }: {
    round: number | null;
    key: string | null;
    witnesses: TrustedWitnesses | null;
    save: string | null;
  },
): Promise<number> {
  const { done, ...opts } = auditOptions({ key, witnesses });
  const ledger = round === null ? "election" : { round };
  const client = createApiClient({ fetch, baseUrl: url, ledger });
  const api = withGroupRule(client, round);
  const audited = round === null ? url : `${url} (round ${round})`;
  if (save === null) {
    const report = await auditLedger(api, opts);
    done();
    console.log(formatReport(audited, report));
    return report.ok ? 0 : 1;
  }
  let sink;
  try {
    sink = await replaceRecordFile(save);
  } catch (error) {
    throw new UsageError(`cannot write "${save}": ${(error as Error).message}`);
  }
  const writer = recordWriter(api, sink);
  const report = await auditLedger(writer.source, opts);
  done();
  console.log(formatReport(audited, report));
  // Only a passing audit writes FILE, so that a record under that name (which --resume takes up
  // without verifying its signatures again) is always one whose every check held; what a failing
  // audit read is kept beside it, to audit offline or to show.
  const to = report.ok ? save : `${save}${FAILED_SUFFIX}`;
  try {
    const { keys, blocks, votes } = await writer.finish();
    await sink.commit(to);
    const counts = `${keys} keys, ${blocks} blocks, ${votes} votes`;
    console.log(
      report.ok
        ? `Election record of what was audited saved to ${save}: ${counts}`
        : `The audit failed, so ${save} was not written; the election record of what was ` +
          `audited is saved to ${to}: ${counts}`,
    );
  } catch (error) {
    await sink.discard();
    console.error(
      `audit: the record could not be written to "${to}": ${(error as Error).message}`,
    );
    return 1;
  }
  return report.ok ? 0 : 1;
}

/**
 * Takes up the audit of round `round` (round 1 when null) of the server at `url` from the record in
 * `resume`: checks the record without its ring signatures, checks that the server's chain extends
 * its head, audits the server with the record answering for what it holds (only the rest is
 * verified in full), and writes the record again in place, through a file beside it renamed over
 * it, only when every check holds. Answers the exit status; the record is left as it was on 1.
 */
async function runResume(
  url: string,
  { round, key, witnesses, resume: file }: {
    round: number | null;
    key: string | null;
    witnesses: TrustedWitnesses | null;
    resume: string;
  },
): Promise<number> {
  const open = async () => {
    try {
      return await readRecordFile(file);
    } catch (error) {
      throw new UsageError(`cannot read "${file}": ${(error as Error).message}`);
    }
  };
  const unchanged = `${file} was left as it was`;
  const checked = await checkRecordWithoutSignatures(await open(), {
    trusted: key === null ? {} : { key },
  });
  if (!checked.report.ok || checked.head === null) {
    console.log(
      formatReport(`${file} (election record, without its ring signatures)`, checked.report),
    );
    console.error(
      `audit: the record ${file} does not check, so the audit cannot resume from it; ${unchanged}`,
    );
    return 1;
  }
  const head = checked.head;
  const ledger = round === null ? "election" : { round };
  const api = withGroupRule(createApiClient({ fetch, baseUrl: url, ledger }), round);
  const audited = round === null ? url : `${url} (round ${round})`;
  const extension = await checkExtension(api, head);
  if (extension.kind !== "extends") {
    console.log(`Ringvote audit of ${audited}, resumed from ${file} (height ${head.height})`);
    console.log(`VERDICT: INCONSISTENT: ${extensionText(head, extension)}`);
    console.error(`audit: the server's chain does not extend the record; ${unchanged}`);
    return 1;
  }
  let sink;
  try {
    sink = await replaceRecordFile(file);
  } catch (error) {
    throw new UsageError(`cannot write beside "${file}": ${(error as Error).message}`);
  }
  const { done, ...opts } = auditOptions({ key, witnesses });
  let finish = () => Promise.resolve({ keys: 0, blocks: 0, votes: 0 });
  const { report, counts } = await resumeFromRecord(api, {
    ...opts,
    head,
    open,
    tee(source) {
      const writer = recordWriter(source, sink);
      finish = writer.finish;
      return writer.source;
    },
  }).finally(done);
  console.log(formatReport(audited, report));
  console.log(
    `Resumed from ${file} at height ${head.height}: ${counts.verified} votes verified now, ` +
      `${counts.remembered} from the record (checked there without their ring signatures)`,
  );
  if (!report.ok) {
    await sink.discard();
    console.log(unchanged);
    return 1;
  }
  try {
    const { keys, blocks, votes } = await finish();
    await sink.commit();
    console.log(
      `Election record of what was audited saved to ${file}: ${keys} keys, ${blocks} blocks, ` +
        `${votes} votes`,
    );
  } catch (error) {
    await sink.discard();
    console.error(
      `audit: the record could not be written to "${file}": ${(error as Error).message}; ` +
        unchanged,
    );
    return 1;
  }
  return 0;
}

/**
 * Audits the election record in `file`, offline, against the pinned `key` and the trusted
 * `witnesses`, as a round's record when `round` is 2 or more; answers the exit status.
 */
async function runRecord(
  file: string,
  { key, witnesses, round }: {
    key: string | null;
    witnesses: TrustedWitnesses | null;
    round: number | null;
  },
): Promise<number> {
  let input;
  try {
    input = await readRecordFile(file);
  } catch (error) {
    throw new UsageError(`cannot read "${file}": ${(error as Error).message}`);
  }
  const { done, ...opts } = auditOptions({ key, witnesses });
  const report = await auditRecord(input, opts);
  done();
  // A round's record whose group rule was taken out would pass under the election's ring rule.
  // (An audit stopped before the votes never read the rule: its failures say why already.)
  if (round !== null && round >= 2 && report.groupRule === null) {
    report.failures.push({ kind: "record-no-groups" });
    report.ok = false;
  }
  console.log(formatReport(`${file} (election record, offline)`, report));
  return report.ok ? 0 : 1;
}

/** Checks the evidence in `file` against the pinned `key`, if any; answers the exit status. */
async function runEvidence(
  { file, key, url, round }: {
    file: string;
    key: string | null;
    url: string | null;
    round: number | null;
  },
): Promise<number> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    throw new UsageError(`cannot read "${file}": ${(error as Error).message}`);
  }
  let evidence: unknown;
  let unread: string | null = null;
  try {
    evidence = parseBoundedJson(text, EVIDENCE_BOUNDS);
  } catch (error) {
    unread = error instanceof JsonBoundsError
      ? `The file is not fork evidence: ${error.message}`
      : "The file is not JSON";
  }
  const checked: EvidenceVerdict = unread !== null
    ? { kind: "no-fork", reason: unread }
    : checkEvidence(evidence, key);
  const api = url === null ? null : createApiClient({
    fetch,
    baseUrl: url,
    ledger: round === null ? "election" : { round },
    timeoutMs: 30_000,
  });
  const verdict = await settleEvidence(
    checked,
    evidence,
    api,
  );
  const { text: out, code } = formatEvidence(file, { verdict, key });
  console.log(out);
  return code;
}

if (import.meta.main) {
  let code: number;
  try {
    const command = parseCommand(Deno.args);
    if (command.kind === "help") {
      console.log(USAGE);
      code = 0;
    } else if (command.kind === "evidence") code = await runEvidence(command);
    else if (command.kind === "record") code = await runRecord(command.file, command);
    else if (command.resume !== null) {
      code = await runResume(command.url, { ...command, resume: command.resume });
    } else code = await runAudit(command.url, command);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`audit: ${error.message}\n${USAGE}`);
    code = 2;
  }
  Deno.exit(code);
}
