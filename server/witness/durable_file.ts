/**
 * Durable, atomic file writes for the witness's state: the bytes go to a temporary file in the
 * same directory, which is fsynced and then renamed (or linked) over the target, and the
 * directory is fsynced, so a reader sees the old file or the new one, whole, after any crash.
 * @module
 */
import { basename, dirname, join } from "node:path";
import { bytesToHex } from "../../lib/protocol/bytes.ts";

/** Names of the temporary files {@link writeFileDurably} makes: a dot, the target, random, `.tmp`. */
export const TEMP_FILE = /^\..+\.[0-9a-f]{16}\.tmp$/;

/**
 * Writes `data` to `path` atomically and durably, the new file created with `mode` (before the
 * umask). With `replace` false the file is only created: false is answered, and nothing written,
 * when `path` already exists. Throws what the file system throws; no temporary file is left then.
 */
export async function writeFileDurably(
  path: string,
  data: Uint8Array,
  { mode = 0o644, replace = true }: { mode?: number; replace?: boolean } = {},
): Promise<boolean> {
  const dir = dirname(path);
  const random = bytesToHex(crypto.getRandomValues(new Uint8Array(8)));
  const temp = join(dir, `.${basename(path)}.${random}.tmp`);
  try {
    const file = await Deno.open(temp, { write: true, createNew: true, mode });
    try {
      for (let written = 0; written < data.length;) {
        written += await file.write(data.subarray(written));
      }
      await file.sync();
    } finally {
      file.close();
    }
    if (replace) {
      await Deno.rename(temp, path);
    } else {
      try {
        // link(2) fails when the target exists: create-if-absent without a window.
        await Deno.link(temp, path);
      } catch (error) {
        if (error instanceof Deno.errors.AlreadyExists) return false;
        throw error;
      }
    }
  } finally {
    await Deno.remove(temp).catch(() => {});
  }
  await syncDirectory(dir);
  return true;
}

/** Fsyncs directory `dir`, so that a rename or link in it survives a crash of the machine. */
export async function syncDirectory(dir: string): Promise<void> {
  if (Deno.build.os === "windows") return; // No directory handles there; rename is durable.
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

/** Removes the temporary files a killed writer left in `dir`; call only with `dir` locked. */
export async function removeTempFiles(dir: string): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && TEMP_FILE.test(entry.name)) {
      await Deno.remove(join(dir, entry.name)).catch(() => {});
    }
  }
}
