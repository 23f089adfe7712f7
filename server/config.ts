// Configuration from the environment (protocol §6), read once by main.ts. Bad values stop the
// start with a message naming the variable.

/** The settings of one server process. */
export type Config = {
  /** HTTP port. */
  port: number;
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
};

/** Ring size the page uses when `RING_SIZE` is unset (protocol §6). */
export const DEFAULT_RING_SIZE = 8;

/** Most keys and votes of the attack lab's practice ledger when unset (protocol §6). */
export const DEFAULT_LAB_MAX = 500;

/** Default Deno KV file, relative to the working directory. */
export const DEFAULT_KV_PATH = "./data/ringvote.kv";

/**
 * Reads the configuration from `env`. On an edge runtime (Deno Deploy sets
 * `DENO_DEPLOYMENT_ID`) with no KV_PATH, `kvPath` is null: the platform's database, no file.
 */
export function readConfig(env: (name: string) => string | undefined): Config {
  const kvPath = env("KV_PATH") || (env("DENO_DEPLOYMENT_ID") ? null : DEFAULT_KV_PATH);
  const interval = env("BLOCK_INTERVAL_MS");
  return {
    port: integer(env, { name: "PORT", fallback: 8000, min: 0, max: 65535 }),
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
  };
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
