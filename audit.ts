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
import { stripVTControlCharacters } from "node:util";
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
import { auditLedger, type AuditProgress } from "./lib/client/audit/audit.ts";
import { formatReport } from "./lib/client/audit/report_text.ts";
import { withGroupRule } from "./lib/client/audit/groups.ts";
import { JsonBoundsError, parseBoundedJson } from "./lib/client/bounded_json.ts";
import {
  checkEvidence,
  EVIDENCE_BOUNDS,
  type EvidenceVerdict,
  type ProvenFork,
  settleEvidence,
} from "./lib/client/audit/evidence.ts";
import { createVoteCheckPool } from "./lib/client/audit/check_pool.ts";
import type { TrustedWitnesses } from "./lib/client/audit/log_checks.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatVerifierKey,
  parseVerifierKey,
  type VerifierKey,
} from "./lib/protocol/note.ts";
import { inThreadChecker, type VoteChecker } from "./lib/client/audit/vote_checks.ts";

const BAR_WIDTH = 30;

/** Where `--save FILE` keeps what a failing audit read: beside FILE, under this suffix. */
const FAILED_SUFFIX = ".failed";

const USAGE = `usage: deno task audit [URL] [--round ID] [--key HEX] [--witness VKEY …] [--quorum K]
                       [--save FILE | --resume FILE]
       deno task audit FILE [--key HEX] [--witness VKEY …] [--quorum K]
       deno task audit --evidence FILE [URL] [--round ID] [--key HEX]
A URL starts with http:// or https://; anything else is an election record file.
--round ID      audits round ID of the server (2, 3, …); without it, round 1, the election.
--key HEX       the server's public key, had out of band: another key is refused.
--witness VKEY  a witness trusted to cosign the log's checkpoint: its cosignature/v1 vkey,
                <name>+<key ID>+<base64 key>; repeat it for more witnesses.
--quorum K      how many of the witnesses must have cosigned the audited checkpoint (1 to their
                number; all of them by default).
--save FILE     writes the election record of what was audited: to FILE when every check
                holds, else to FILE.failed (FILE left as it was).
--resume FILE   takes up the election record FILE saved before: verifies only what the server
                added since, and writes FILE again when every check holds.
--evidence FILE checks a fork-evidence file (two signed heads, or two checkpoints); two
                checkpoints of two sizes are settled by the server's own consistency proof
                between them, read from URL (without it: not settled, exit 1).`;

/** What the command line asks for. */
type Command =
  | {
    kind: "audit";
    url: string;
    round: number | null;
    key: string | null;
    witnesses: TrustedWitnesses | null;
    save: string | null;
    resume: string | null;
  }
  | { kind: "record"; file: string; key: string | null; witnesses: TrustedWitnesses | null }
  | { kind: "evidence"; file: string; key: string | null; url: string | null; round: number | null }
  | { kind: "help" };

/** A command line that cannot be run: exit status 2. */
class UsageError extends Error {}

/** The command `args` name; throws {@link UsageError} for anything else. */
function parseCommand(args: readonly string[]): Command {
  let target: string | null = null;
  let key: string | null = null;
  let file: string | null = null;
  let save: string | null = null;
  let resume: string | null = null;
  let round: number | null = null;
  const witnesses: VerifierKey[] = [];
  let quorum: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] = arg.startsWith("--") && arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === "--help" || flag === "-h") return { kind: "help" };
    else if (flag === "--key") key = pinnedKey(value());
    else if (flag === "--evidence") file = value();
    else if (flag === "--save") save = value();
    else if (flag === "--resume") resume = value();
    else if (flag === "--round") round = roundId(value());
    else if (flag === "--witness") witnesses.push(witnessKey(value(), witnesses));
    else if (flag === "--quorum") {
      if (quorum !== null) throw new UsageError("--quorum is given twice");
      quorum = value();
    } else if (arg.startsWith("-")) throw new UsageError(`unknown option "${arg}"`);
    else if (target === null) target = arg;
    else throw new UsageError(`one URL or FILE at most, got "${target}" and "${arg}"`);
  }
  if (file !== null) {
    if (target !== null && !/^https?:\/\//i.test(target)) {
      throw new UsageError("--evidence checks one file: give no other FILE, only the server's URL");
    }
    if (save !== null) throw new UsageError("--save writes the record of a server, not evidence");
    if (resume !== null) {
      throw new UsageError("--resume takes up the record of a server, not evidence");
    }
    if (round !== null && target === null) {
      throw new UsageError("--round names a round of a server: give its URL with --evidence");
    }
    if (witnesses.length > 0 || quorum !== null) {
      throw new UsageError("--witness and --quorum check an audited checkpoint, not evidence");
    }
    return { kind: "evidence", file, key, url: target, round };
  }
  if (save !== null && resume !== null) {
    throw new UsageError("--resume writes its FILE again: give --save or --resume, not both");
  }
  const trusted = trustedWitnesses(witnesses, quorum);
  if (target !== null && !/^https?:\/\//i.test(target)) {
    if (save !== null) throw new UsageError("--save writes the record of a URL: give a URL");
    if (resume !== null) {
      throw new UsageError("--resume takes up the record of a URL: give a URL as well");
    }
    if (round !== null) {
      throw new UsageError("--round names a round of a server: give a URL, not a record file");
    }
    return { kind: "record", file: target, key, witnesses: trusted };
  }
  return {
    kind: "audit",
    url: target ?? "http://localhost:8000",
    round,
    key,
    witnesses: trusted,
    save,
    resume,
  };
}

/** `value` as a witness's cosignature/v1 vkey, not one of `given` already. */
function witnessKey(value: string, given: readonly VerifierKey[]): VerifierKey {
  let key: VerifierKey;
  try {
    key = parseVerifierKey(value);
  } catch (error) {
    throw new UsageError(
      `--witness must be a vkey; "${value}" is not: ${(error as Error).message}`,
    );
  }
  if (key.type !== COSIGNATURE_V1_TYPE) {
    throw new UsageError(
      `--witness must be a witness's cosignature/v1 (type 0x04) vkey; "${value}" is of type ` +
        `0x0${key.type}`,
    );
  }
  const vkey = formatVerifierKey(key);
  if (given.some((k) => formatVerifierKey(k) === vkey)) {
    throw new UsageError(`--witness "${value}" is given twice`);
  }
  return key;
}

/** The witnesses given and the quorum (`value`, all of them when null): 1 ≤ quorum ≤ count. */
function trustedWitnesses(keys: VerifierKey[], value: string | null): TrustedWitnesses | null {
  if (keys.length === 0) {
    if (value !== null) throw new UsageError("--quorum counts witnesses: give --witness VKEY");
    return null;
  }
  const quorum = value === null ? keys.length : Number(value);
  if (value !== null && (!/^[1-9][0-9]{0,8}$/.test(value) || quorum > keys.length)) {
    throw new UsageError(
      `--quorum must be a whole number from 1 to ${keys.length}, the witnesses given; got ` +
        `"${value}"`,
    );
  }
  return { keys, quorum };
}

/** `value` as a round id (protocol §4.9): a whole number from 1, as the server's paths take it. */
function roundId(value: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(value)) {
    throw new UsageError(`--round must be a round id, a whole number from 1; got "${value}"`);
  }
  return Number(value);
}

/** `value` as a server key: 64 hex characters, lowercased. */
function pinnedKey(value: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(value)) {
    throw new UsageError(
      `--key must be the server's public key, 64 hex characters; got "${value}"`,
    );
  }
  return value.toLowerCase();
}

function progressLine({ phase, done, total }: AuditProgress): string {
  const filled = total > 0 ? Math.round((done / total) * BAR_WIDTH) : BAR_WIDTH;
  const bar = "#".repeat(Math.min(filled, BAR_WIDTH)).padEnd(BAR_WIDTH, ".");
  return `\r${phase.padEnd(10)} [${bar}] ${done}/${total}`;
}

/** The audit worker the board runs too; the command line starts it from its module. */
const CHECK_WORKER = new URL("./lib/client/audit/check_worker.ts", import.meta.url);

/**
 * The checker of the votes' signatures: one audit worker per core, as on the board, where this
 * runtime has workers and may read the modules they load (this checkout); this thread's checker
 * otherwise, and for any chunk the workers could not check (a worker that failed to start or
 * stopped): the same checks, only slower. `close` stops the workers.
 */
function voteChecker(): { checker?: VoteChecker; parallel?: number; close(): void } {
  const root = new URL("./", import.meta.url);
  const readable = root.protocol !== "file:" ||
    Deno.permissions.querySync({ name: "read", path: root }).state === "granted";
  if (typeof globalThis.Worker !== "function" || !readable) return { close() {} };
  const pool = createVoteCheckPool(
    navigator.hardwareConcurrency || 2,
    () => new Worker(CHECK_WORKER, { type: "module" }),
  );
  const here = inThreadChecker();
  let warned = false;
  const warn = (reason: string) => {
    if (warned) return;
    warned = true;
    console.error(
      `audit: ${stripVTControlCharacters(reason)}; checking in this thread instead`,
    );
  };
  const checker: VoteChecker = async (votes, context) => {
    if (pool.size === 0) warn("the audit workers could not start");
    else {
      try {
        return await pool.check(votes, context);
      } catch (error) {
        warn((error as Error).message);
      }
    }
    return await here(votes);
  };
  // Pages in flight: enough to keep every worker busy, as on the board.
  return { checker, parallel: pool.size * 2, close: () => pool.close() };
}

/** The audit's options for the pinned `key` and `witnesses`, with its progress on stderr. */
function auditOptions(
  { key, witnesses }: { key: string | null; witnesses: TrustedWitnesses | null },
) {
  const encoder = new TextEncoder();
  const tty = Deno.stderr.isTerminal();
  const workers = voteChecker();
  let last = 0;
  return {
    trusted: {
      ...(key === null ? {} : { key }),
      ...(witnesses === null ? {} : { witnesses }),
    },
    ...(workers.checker ? { checker: workers.checker, parallel: workers.parallel } : {}),
    onProgress: (p: AuditProgress) => {
      const now = Date.now();
      if (!tty && now - last < 1000 && p.done !== p.total) return;
      last = now;
      Deno.stderr.writeSync(encoder.encode(progressLine(p) + (tty ? "" : "\n")));
    },
    /** Ends the progress line on a terminal, and stops the workers. */
    done: () => {
      workers.close();
      if (tty) Deno.stderr.writeSync(encoder.encode("\n"));
    },
  };
}

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
  const api = round === null || round === 1 ? client : withGroupRule(client, fetch, url, round);
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
  const api = createApiClient({ fetch, baseUrl: url, ledger });
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
 * `witnesses`; answers the exit status.
 */
async function runRecord(
  file: string,
  { key, witnesses }: { key: string | null; witnesses: TrustedWitnesses | null },
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
  console.log(formatReport(`${file} (election record, offline)`, report));
  return report.ok ? 0 : 1;
}

/** The printed verdict on an evidence file, and the exit status: 0 only for a proven fork. */
function formatEvidence(
  file: string,
  { verdict, key }: { verdict: EvidenceVerdict; key: string | null },
): { text: string; code: number } {
  const lines = [`Ringvote fork evidence in ${file}`];
  if (verdict.kind === "no-fork") {
    lines.push(`VERDICT: NO FORK PROVEN: ${verdict.reason}`);
    return { text: lines.join("\n"), code: 1 };
  }
  if (verdict.kind === "unsettled") {
    lines.push(
      `  form              ${FORMS["failed-proof"]}`,
      `  origin            ${verdict.origin}`,
      `  sizes             ${verdict.sizes[0]} and ${verdict.sizes[1]}`,
      `  evidence key      ${verdict.key}`,
      `VERDICT: NOT SETTLED: ${verdict.reason}`,
    );
    return { text: lines.join("\n"), code: 1 };
  }
  const trust = key === null ? "(not pinned: compare it out of band)" : "(pinned)";
  lines.push(`  form              ${FORMS[verdict.form]}`);
  if (verdict.form !== "heads") {
    lines.push(
      `  origin            ${verdict.origin}`,
      `  sizes             ${verdict.sizes[0]} and ${verdict.sizes[1]}`,
    );
  }
  lines.push(`  evidence key      ${verdict.key}`, `  server key        ${key ?? "none"} ${trust}`);
  const signed = verdict.form === "heads" ? "heads" : "checkpoints";
  if (verdict.keyMatches === false) {
    lines.push(
      `VERDICT: NO FORK PROVEN for this server: the ${signed} are signed by ${verdict.key}, ` +
        `not by the pinned key ${key}`,
    );
    return { text: lines.join("\n"), code: 1 };
  }
  lines.push(`VERDICT: FORK PROVEN: ${provenText(verdict)}`);
  return { text: lines.join("\n"), code: 0 };
}

/** Each form of evidence, in words. */
const FORMS: Record<ProvenFork["form"], string> = {
  "heads": "two signed heads at one height",
  "same-size": "two checkpoints of one size with two roots",
  "failed-proof": "two checkpoints of two sizes and a consistency proof between them that fails",
};

/** What a proven fork shows, in one sentence. */
function provenText(verdict: ProvenFork & { key: string }): string {
  if (verdict.form === "heads") {
    return `key ${verdict.key} signed two different blocks at height ${verdict.height}`;
  }
  const [a, b] = verdict.sizes;
  return verdict.form === "same-size"
    ? `key ${verdict.key} signed two different roots of log ${verdict.origin} at size ${a}`
    : `key ${verdict.key} signed checkpoints of log ${verdict.origin} at sizes ${a} and ${b}, ` +
      "and the enclosed consistency proof does not join them; a proof that joins them " +
      `(GET {base}/log/consistency/${Math.min(a, b)}/${Math.max(a, b)}) would refute this`;
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
