/**
 * The witnesses named by `WITNESS_POLICY` (protocol §6): the `witness <name> <vkey> <url>` lines of
 * a C2SP transparency-log policy file (c2sp.org/tlog-policy), each a cosignature/v1 vkey and the
 * witness's submission prefix (c2sp.org/tlog-witness). The policy's other line kinds are noted and
 * ignored; anything malformed throws a {@link PolicyError} naming its line.
 * @module
 */
import { COSIGNATURE_V1_TYPE, parseVerifierKey, type VerifierKey } from "../lib/protocol/note.ts";
import { bytesToHex } from "../lib/protocol/bytes.ts";
import { MAX_VKEY_LENGTH } from "../lib/protocol/schemas.ts";

/** Most witnesses a policy may name: tlog-policy asks implementations to support at least 32. */
export const MAX_POLICY_WITNESSES = 32;

/** One witness of the policy: its policy name, its vkey (text and parsed) and where to push. */
export type PolicyWitness = {
  /** The name the policy gives it (local to the policy, not its key name). */
  name: string;
  /** Its cosignature/v1 vkey, as written. */
  vkey: string;
  key: VerifierKey;
  /** Its submission prefix: an http(s) URL, without a trailing "/". */
  url: string;
};

/** A parsed policy: the witnesses to push to, and a note for each line read but not used. */
export type WitnessPolicy = { witnesses: PolicyWitness[]; notes: string[] };

/** A policy file that cannot be used: `line` is the 1-based line at fault (0: the whole file). */
export class PolicyError extends Error {
  override name = "PolicyError";
  constructor(readonly line: number, message: string) {
    super(line > 0 ? `line ${line}: ${message}` : message);
  }
}

/** The line kinds of tlog-policy this server reads but does not use. */
const IGNORED_KINDS = new Set(["log", "group", "quorum"]);
/** True when `line` holds a control character other than tab: tlog-policy allows no other. */
function hasForbiddenControl(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

/**
 * The witnesses of policy `text`. Blank lines and `#` comments are skipped; items are separated by
 * spaces and tabs. A `witness` line must have a name not used before (nor `none`), a cosignature/v1
 * (type 0x04) vkey whose key no other line has, and an http(s) URL; one without a URL is noted and
 * not pushed to. `log`, `group` and `quorum` lines are noted and ignored; any other line, a control
 * character other than tab, or over {@link MAX_POLICY_WITNESSES} witnesses throws
 * {@link PolicyError}.
 */
export function parseWitnessPolicy(text: string): WitnessPolicy {
  const witnesses: PolicyWitness[] = [];
  const notes: string[] = [];
  const names = new Set<string>();
  const keys = new Set<string>();
  for (const [i, raw] of text.split("\n").entries()) {
    const line = i + 1;
    const fail = (message: string) => new PolicyError(line, message);
    if (hasForbiddenControl(raw)) throw fail("holds a control character other than tab");
    const items = raw.split(/[ \t]+/).filter((item) => item !== "");
    if (items.length === 0 || items[0].startsWith("#")) continue;
    const [kind, name, vkey, url, ...rest] = items;
    if (IGNORED_KINDS.has(kind)) {
      notes.push(`line ${line}: a "${kind}" line is not used by the server, ignored`);
      continue;
    }
    if (kind !== "witness") throw fail(`unknown line kind "${kind.slice(0, 40)}"`);
    if (vkey === undefined) throw fail("a witness line is witness <name> <vkey> <url>");
    if (rest.length > 0) throw fail(`unexpected "${rest[0].slice(0, 40)}" after the URL`);
    if (name === "none") throw fail(`"none" is a reserved name`);
    if (names.has(name)) throw fail(`the name "${name.slice(0, 80)}" is used twice`);
    names.add(name);
    const key = witnessKey(vkey, fail);
    const publicKey = bytesToHex(key.publicKey);
    if (keys.has(publicKey)) throw fail(`witness "${name}" has the key of an earlier witness`);
    keys.add(publicKey);
    if (url === undefined) {
      notes.push(`line ${line}: witness "${name}" has no URL and is not pushed to`);
      continue;
    }
    witnesses.push({ name, vkey, key, url: submissionPrefix(url, fail) });
    if (witnesses.length > MAX_POLICY_WITNESSES) {
      throw fail(`more than ${MAX_POLICY_WITNESSES} witnesses`);
    }
  }
  return { witnesses, notes };
}

function witnessKey(vkey: string, fail: (message: string) => Error): VerifierKey {
  if (vkey.length > MAX_VKEY_LENGTH) throw fail(`the vkey is over ${MAX_VKEY_LENGTH} characters`);
  let key: VerifierKey;
  try {
    key = parseVerifierKey(vkey);
  } catch (error) {
    throw fail(`not a vkey: ${(error as Error).message}`);
  }
  if (key.type !== COSIGNATURE_V1_TYPE) {
    throw fail(
      `a witness vkey must be of type 0x04 (cosignature/v1), got 0x${
        key.type.toString(16).padStart(2, "0")
      }`,
    );
  }
  return key;
}

/** `text` as an http(s) URL without query, fragment or trailing "/". */
function submissionPrefix(text: string, fail: (message: string) => Error): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw fail(`the URL "${text.slice(0, 80)}" is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw fail(`the URL "${text.slice(0, 80)}" must be http or https`);
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw fail(`the URL "${text.slice(0, 80)}" must have no query, fragment or credentials`);
  }
  return url.href.replace(/\/+$/, "");
}
