/**
 * The witness's Ed25519 key: made once, then kept in the state directory as `witness-key`, the
 * standard base64 of its 32-byte RFC 8032 seed and a newline, mode 0600. A key file that others
 * may read, or that holds anything else, is refused rather than replaced.
 * @module
 */
import { join } from "node:path";
import { bytesToBase64, utf8 } from "../../lib/protocol/bytes.ts";
import { decodeBase64Strict } from "../../lib/protocol/note.ts";
import { writeFileDurably } from "./durable_file.ts";

/** Name of the key file in the state directory. */
export const KEY_FILE = "witness-key";

/** Why the key cannot be used: the witness does not start. */
export class WitnessKeyError extends Error {
  override name = "WitnessKeyError";
}

/**
 * The seed in `dir`/witness-key, made from `random` (32 bytes) and written there first when the
 * file does not exist. Throws {@link WitnessKeyError} for a file others may read or one that is
 * not a base64 seed; file-system errors as they are.
 */
export async function loadOrCreateKey(
  dir: string,
  random: () => Uint8Array = () => crypto.getRandomValues(new Uint8Array(32)),
): Promise<Uint8Array> {
  const path = join(dir, KEY_FILE);
  const seed = random();
  // Created only if absent: two witnesses started at once on one directory keep one key.
  await writeFileDurably(path, utf8(`${bytesToBase64(seed)}\n`), { mode: 0o600, replace: false });
  return await readKey(path);
}

async function readKey(path: string): Promise<Uint8Array> {
  const { mode } = await Deno.stat(path);
  if (mode !== null && (mode & 0o077) !== 0) {
    throw new WitnessKeyError(
      `"${path}" may be read by others (mode ${(mode & 0o777).toString(8)}): chmod 600 it`,
    );
  }
  const text = await Deno.readTextFile(path);
  const line = text.endsWith("\n") ? text.slice(0, -1) : text;
  let seed: Uint8Array | null = null;
  try {
    seed = decodeBase64Strict(line, "witness key");
  } catch {
    // Reported below, without echoing the file.
  }
  if (seed === null || seed.length !== 32) {
    throw new WitnessKeyError(`"${path}" does not hold the base64 of a 32-byte seed`);
  }
  return seed;
}
