// Configuration from the environment (protocol §6), read once by main.ts. Bad values stop the
// start with a message naming the variable.
import { isOrigin } from "../lib/protocol/checkpoint.ts";
import { DEFAULT_VERIFY_RATE } from "../lib/protocol/hall.ts";
import { parseWitnessPolicy, type WitnessPolicy } from "./witness_policy.ts";

/** The settings of one server process. */
export type Config = {
  /** HTTP port. */
  port: number;
  /** Address to listen on (`LISTEN_HOSTNAME`): every interface by default, so phones reach it. */
  hostname: string;
  /** Deno KV location: a file path, `:memory:`, a KV Connect URL, or null for the platform's own. */
  kvPath: string | null;
  /** Seal on a timer of this many ms; null seals every minute with Deno.cron. */
  blockIntervalMs: number | null;
  /** Ring size the page uses. */
  ringSize: number;
  /** Most keys the attack lab's practice ledger holds (protocol §4.7). */
  labMaxKeys: number;
  /** Most votes the attack lab's practice ledger accepts (protocol §4.7). */
  labMaxVotes: number;
  /** The address phones must use (`PUBLIC_URL`), or null to work it out per request. */
  publicUrl: string | null;
  /** True when `X-Forwarded-Host`/`X-Forwarded-Proto` come from a proxy we trust (`TRUST_PROXY`). */
  trustProxy: boolean;
  /** The presenter's token (`ADMIN_TOKEN`), or null to make one and keep it in KV. */
  adminToken: string | null;
  /** The election ledger's log origin (`LOG_ORIGIN`), or null to derive it (protocol §4.10). */
  logOrigin: string | null;
  /** The witnesses the election's log pushes to (`WITNESS_POLICY`, read from its file), or null. */
  witnessPolicy: (WitnessPolicy & { path: string }) | null;
  /**
   * The relay suggested to the presenter (`OHTTP_RELAY`), or null: it fills the presenter's relay
   * field, and a page without a relay pinned then declines to send a round's vote (protocol §7).
   */
  ohttpRelay: string | null;
  /**
   * Votes a second the verifier is taken to check (`VERIFY_RATE`), fixed at start and never
   * measured live: phones size their send window with it (protocol §7.4).
   */
  verifyRate?: number;
};

/** Ring size the page uses when `RING_SIZE` is unset (protocol §6). */
export const DEFAULT_RING_SIZE = 8;

/** Most keys and votes of the attack lab's practice ledger when unset (protocol §6). */
export const DEFAULT_LAB_MAX = 500;

/** Default Deno KV file, relative to the working directory. */
export const DEFAULT_KV_PATH = "./data/ringvote.kv";

/**
 * Reads the configuration from `env`, and the file `WITNESS_POLICY` names with `readTextFile`. On
 * an edge runtime (Deno Deploy sets `DENO_DEPLOYMENT_ID`) with no KV_PATH, `kvPath` is null: the
 * platform's database, no file.
 */
export function readConfig(
  env: (name: string) => string | undefined,
  { readTextFile = Deno.readTextFileSync }: { readTextFile?: (path: string) => string } = {},
): Config {
  const kvPath = env("KV_PATH") || (env("DENO_DEPLOYMENT_ID") ? null : DEFAULT_KV_PATH);
  const interval = env("BLOCK_INTERVAL_MS");
  return {
    port: integer(env, { name: "PORT", fallback: 8000, min: 0, max: 65535 }),
    hostname: listenAddress(env("LISTEN_HOSTNAME")),
    kvPath,
    blockIntervalMs: interval
      ? integer(env, { name: "BLOCK_INTERVAL_MS", fallback: 0, min: 1, max: 86_400_000 })
      : null,
    ringSize: integer(env, { name: "RING_SIZE", fallback: DEFAULT_RING_SIZE, min: 2, max: 64 }),
    labMaxKeys: integer(env, {
      name: "LAB_MAX_KEYS",
      fallback: DEFAULT_LAB_MAX,
      min: 1,
      max: 10_000,
    }),
    labMaxVotes: integer(env, {
      name: "LAB_MAX_VOTES",
      fallback: DEFAULT_LAB_MAX,
      min: 1,
      max: 10_000,
    }),
    publicUrl: publicUrl(env("PUBLIC_URL")),
    trustProxy: flag(env, "TRUST_PROXY"),
    adminToken: adminToken(env("ADMIN_TOKEN")),
    logOrigin: logOrigin(env("LOG_ORIGIN")),
    witnessPolicy: witnessPolicy(env("WITNESS_POLICY"), readTextFile),
    ohttpRelay: ohttpRelay(env("OHTTP_RELAY")),
    verifyRate: integer(env, {
      name: "VERIFY_RATE",
      fallback: DEFAULT_VERIFY_RATE,
      min: 1,
      max: 1_000,
    }),
  };
}

/** Shortest and longest `ADMIN_TOKEN` accepted: long enough not to be guessed, short enough to type. */
export const ADMIN_TOKEN_LENGTH = { min: 16, max: 128 };

/** `OHTTP_RELAY` as an http(s) origin and path without a trailing slash; or null. */
function ohttpRelay(value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`OHTTP_RELAY must be an absolute http or https URL, got "${value}"`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash) {
    throw new Error(`OHTTP_RELAY must be an http or https URL without query, got "${value}"`);
  }
  return url.origin + url.pathname.replace(/\/+$/, "");
}

/** `PUBLIC_URL` as an absolute http(s) URL ending in "/", query and fragment dropped; or null. */
function publicUrl(value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`PUBLIC_URL must be an absolute http or https URL, got "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`PUBLIC_URL must be an absolute http or https URL, got "${value}"`);
  }
  const path = url.pathname.endsWith("/") ? url.pathname : `${url.pathname}/`;
  return `${url.protocol}//${url.host}${path}`;
}

/** Fewest different characters an `ADMIN_TOKEN` must hold: "aaaa…" or "abab…" is no secret. */
export const ADMIN_TOKEN_MIN_DISTINCT = 10;

/**
 * `ADMIN_TOKEN`: URL-safe characters only (it travels in `/#admin=`), of a sensible length, and
 * not guessable at a glance: at least {@link ADMIN_TOKEN_MIN_DISTINCT} different characters.
 */
function adminToken(value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  const { min, max } = ADMIN_TOKEN_LENGTH;
  if (!/^[A-Za-z0-9_.~-]+$/.test(value) || value.length < min || value.length > max) {
    throw new Error(
      `ADMIN_TOKEN must be ${min} to ${max} characters of A-Z, a-z, 0-9, "-", "_", "." or "~"`,
    );
  }
  const distinct = new Set(value).size;
  if (distinct < ADMIN_TOKEN_MIN_DISTINCT) {
    throw new Error(
      `ADMIN_TOKEN is too easy to guess: it has ${distinct} different characters, and needs at ` +
        `least ${ADMIN_TOKEN_MIN_DISTINCT}. Use a random one (unset, the server makes one) or ` +
        `e.g. the output of "openssl rand -base64 18 | tr '+/' '-_'"`,
    );
  }
  return value;
}

/** Longest `LOG_ORIGIN` accepted. */
export const MAX_LOG_ORIGIN_LENGTH = 255;

/**
 * `LOG_ORIGIN`: the log's origin, which is also its key name in every checkpoint signature, so a
 * key name (signed-note: non-empty, no Unicode space, no "+", here no control character either).
 */
function logOrigin(value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  if (!isOrigin(value) || value.length > MAX_LOG_ORIGIN_LENGTH) {
    throw new Error(
      `LOG_ORIGIN must be at most ${MAX_LOG_ORIGIN_LENGTH} characters with no spaces, "+" or ` +
        `control characters, e.g. "vote.example.org/log", got "${value.slice(0, 80)}"`,
    );
  }
  return value;
}

/**
 * `WITNESS_POLICY`: the path of a C2SP policy file whose `witness <name> <vkey> <url>` lines name
 * the witnesses to push to (./witness_policy.ts); a file that cannot be read or used stops the
 * start.
 */
function witnessPolicy(
  path: string | undefined,
  readTextFile: (path: string) => string,
): (WitnessPolicy & { path: string }) | null {
  if (path === undefined || path === "") return null;
  let text: string;
  try {
    text = readTextFile(path);
  } catch (error) {
    throw new Error(`WITNESS_POLICY "${path}" cannot be read: ${(error as Error).message}`);
  }
  try {
    return { path, ...parseWitnessPolicy(text) };
  } catch (error) {
    throw new Error(`WITNESS_POLICY "${path}" ${(error as Error).message}`);
  }
}

/** `LISTEN_HOSTNAME`: an IP address or host name to listen on; "0.0.0.0" (every interface) unset. */
function listenAddress(value: string | undefined): string {
  if (value === undefined || value === "") return "0.0.0.0";
  if (!/^(?:[A-Za-z0-9.-]+|[0-9A-Fa-f:.]+)$/.test(value) || value.length > 253) {
    throw new Error(
      `LISTEN_HOSTNAME must be an IP address or host name to listen on, got "${value}"`,
    );
  }
  return value;
}

/** A yes/no setting: "1"/"true"/"yes" or "0"/"false"/"no", unset is no. */
function flag(env: (name: string) => string | undefined, name: string): boolean {
  const value = (env(name) ?? "").toLowerCase();
  if (value === "" || value === "0" || value === "false" || value === "no") return false;
  if (value === "1" || value === "true" || value === "yes") return true;
  throw new Error(`${name} must be 1, true, yes, 0, false or no, got "${env(name)}"`);
}

/** True when `kvPath` names a local file (not `:memory:`, not a URL, not the platform's). */
export function isKvFile(kvPath: string | null): kvPath is string {
  return kvPath !== null && kvPath !== ":memory:" && !/^[a-z][a-z0-9+.-]*:\/\//i.test(kvPath);
}

function integer(
  env: (name: string) => string | undefined,
  { name, fallback, min, max }: { name: string; fallback: number; min: number; max: number },
): number {
  const value = env(name);
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n < min || n > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return n;
}
