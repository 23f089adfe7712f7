/**
 * The witness's record of each log (tlog-witness §add-checkpoint: "MUST persist the new checkpoint
 * before responding"): one file per origin, `logs/<hex SHA-256 of the origin>.json`, holding the
 * latest size and root it cosigned, replaced atomically and durably. Updates of one origin run one
 * at a time, check and write together, and a lock file keeps a second process off the directory.
 * @module
 */
import { join } from "node:path";
import { bytesToBase64, bytesToHex, utf8 } from "../../lib/protocol/bytes.ts";
import { sha256 } from "../../lib/protocol/hash.ts";
import { HASH_SIZE } from "../../lib/protocol/merkle.ts";
import { decodeBase64Strict } from "../../lib/protocol/note.ts";
import { removeTempFiles, syncDirectory, writeFileDurably } from "./durable_file.ts";

/** Name of the lock file in the state directory. */
export const LOCK_FILE = "lock";
/** Name of the folder of per-log records in the state directory. */
export const LOGS_DIR = "logs";

/** What the witness last cosigned for one log. */
export type CosignedCheckpoint = {
  origin: string;
  size: number;
  root: Uint8Array;
  /** The checkpoint as cosigned: its text, the log's verified signature lines and the witness's. */
  note: string;
};

/** What an update decides: its result, and the record to persist before it is answered. */
export type Decision<T> = { result: T; next?: CosignedCheckpoint };

/** The witness's records, one per origin. */
export type WitnessStateStore = {
  /** What the witness last cosigned for `origin`; null when it never did. */
  latest(origin: string): Promise<CosignedCheckpoint | null>;
  /**
   * Runs `decide` on `origin`'s latest record while every other update of `origin` waits, and
   * writes the `next` record it answers, durably, before resolving with its `result`. A failed
   * write rejects, and the record stays as it was.
   */
  update<T>(
    origin: string,
    decide: (latest: CosignedCheckpoint | null) => Decision<T>,
  ): Promise<T>;
  /** Releases the directory's lock. */
  close(): void;
};

/** The state directory is held by another process (or another store of this one). */
export class StateLockedError extends Error {
  override name = "StateLockedError";
}

/**
 * The store over state directory `dir`, created (mode 0700) when missing. Takes the directory's
 * lock, or throws {@link StateLockedError}; removes temporary files a killed witness left.
 */
export async function openStateStore(dir: string): Promise<WitnessStateStore> {
  const logs = join(dir, LOGS_DIR);
  await Deno.mkdir(logs, { recursive: true, mode: 0o700 });
  const lock = await Deno.open(join(dir, LOCK_FILE), {
    read: true,
    write: true,
    create: true,
    mode: 0o600,
  });
  if (!await lock.tryLock(true)) {
    lock.close();
    throw new StateLockedError(`another witness is running on "${dir}"`);
  }
  await removeTempFiles(dir);
  await removeTempFiles(logs);
  await syncDirectory(dir);

  const fileOf = (origin: string) => join(logs, `${bytesToHex(sha256(utf8(origin)))}.json`);
  const latest = (origin: string) => readRecord(fileOf(origin), origin);
  const queues = new Map<string, Promise<void>>();

  /** Runs `task` after every task queued for `origin` before it has settled. */
  function oneAtATime<T>(origin: string, task: () => Promise<T>): Promise<T> {
    const run = (queues.get(origin) ?? Promise.resolve()).then(task);
    const settled = run.then(() => {}, () => {});
    queues.set(origin, settled);
    settled.then(() => {
      if (queues.get(origin) === settled) queues.delete(origin);
    });
    return run;
  }

  return {
    latest,
    update(origin, decide) {
      return oneAtATime(origin, async () => {
        const { result, next } = decide(await latest(origin));
        if (next !== undefined) {
          if (next.origin !== origin) throw new Error(`a record of "${origin}" names another log`);
          await writeFileDurably(fileOf(origin), utf8(`${JSON.stringify(recordJson(next))}\n`));
        }
        return result;
      });
    },
    close() {
      lock.close();
    },
  };
}

function recordJson({ origin, size, root, note }: CosignedCheckpoint) {
  return { origin, size, root: bytesToBase64(root), note };
}

/**
 * The record in `path`, null when there is none. A record that cannot be read, or is not one of
 * `origin`, throws: the witness fails closed, never starting over from size 0.
 */
async function readRecord(path: string, origin: string): Promise<CosignedCheckpoint | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  const corrupt = (why: string) => new Error(`the witness record "${path}" is corrupt: ${why}`);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text);
  } catch {
    throw corrupt("not JSON");
  }
  if (typeof json !== "object" || json === null) throw corrupt("not an object");
  const { size, root, note } = json;
  if (json.origin !== origin) throw corrupt(`it is not the record of "${origin}"`);
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
    throw corrupt("no size");
  }
  if (typeof note !== "string") throw corrupt("no note");
  let rootBytes: Uint8Array;
  try {
    rootBytes = decodeBase64Strict(root, "root");
  } catch {
    throw corrupt("no root");
  }
  if (rootBytes.length !== HASH_SIZE) throw corrupt("no root");
  return { origin, size, root: rootBytes, note };
}
