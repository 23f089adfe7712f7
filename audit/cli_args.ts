/**
 * The command line of `deno task audit` (audit.ts): its usage text, and the arguments read into
 * the command they name, each refused with the reason (exit status 2).
 * @module
 */
import { readArguments, UsageError } from "../lib/command_line.ts";
import type { TrustedWitnesses } from "../lib/client/audit/log_checks.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatVerifierKey,
  parseVerifierKey,
  type VerifierKey,
} from "../lib/protocol/note.ts";

/** The usage text, printed for --help and after a usage error. */
export const USAGE =
  `usage: deno task audit [URL] [--round ID] [--key HEX] [--witness VKEY …] [--quorum K]
                       [--save FILE | --resume FILE]
       deno task audit FILE [--round ID] [--key HEX] [--witness VKEY …] [--quorum K]
       deno task audit --evidence FILE [URL] [--round ID] [--key HEX]
A URL starts with http:// or https://; anything else is an election record file.
--round ID      audits round ID of the server (2, 3, …); without it, round 1, the election.
                With a record FILE, 2 and up: the record must be a round's (its group rule).
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
export type Command =
  | {
    kind: "audit";
    url: string;
    round: number | null;
    key: string | null;
    witnesses: TrustedWitnesses | null;
    save: string | null;
    resume: string | null;
  }
  | {
    kind: "record";
    file: string;
    key: string | null;
    witnesses: TrustedWitnesses | null;
    round: number | null;
  }
  | { kind: "evidence"; file: string; key: string | null; url: string | null; round: number | null }
  | { kind: "help" };

/** The command `args` name; throws {@link UsageError} for anything else. */
export function parseCommand(args: readonly string[]): Command {
  let target: string | null = null;
  let key: string | null = null;
  let file: string | null = null;
  let save: string | null = null;
  let resume: string | null = null;
  let round: number | null = null;
  const witnesses: VerifierKey[] = [];
  let quorum: string | null = null;
  const help = readArguments(args, (flag, value, arg) => {
    if (flag === "--key") key = pinnedKey(value());
    else if (flag === "--evidence") file = value();
    else if (flag === "--save") save = value();
    else if (flag === "--resume") resume = value();
    else if (flag === "--round") round = roundId(value());
    else if (flag === "--witness") witnesses.push(witnessKey(value(), witnesses));
    else if (flag === "--quorum") {
      if (quorum !== null) throw new UsageError("--quorum is given twice");
      quorum = value();
    } else if (arg.startsWith("-")) return false;
    else if (target === null) target = arg;
    else throw new UsageError(`one URL or FILE at most, got "${target}" and "${arg}"`);
    return true;
  });
  if (help === "help") return { kind: "help" };
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
    return { kind: "record", file: target, key, witnesses: trusted, round };
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
