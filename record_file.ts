// Election record files (protocol §4.8) on disk, for `deno task audit`: read as a stream, so the
// audit holds the line being read and not the file, and written as the audit reads, in buffered
// writes, emptied when the audit starts a new run, to a file beside the one named (`--save`,
// `--resume`), renamed over it only once whole. The format itself is
// lib/client/audit/election_record.ts.
import type { RecordSink } from "./lib/client/audit/election_record.ts";

/** Bytes gathered before one write to disk. */
const FLUSH_BYTES = 256 * 1024;

/** The bytes of the record file at `path`, as a stream (the file closes when it ends). */
export async function readRecordFile(path: string): Promise<ReadableStream<Uint8Array>> {
  const file = await Deno.open(path, { read: true });
  return file.readable;
}

/**
 * A sink writing a record that is to replace the file at `path`, which it leaves untouched until
 * `commit`: the record goes to a new file beside it, which `commit` flushes, closes and renames
 * over `path`, or over `to` when given (one step on one file system), and `discard` closes and
 * removes.
 */
export async function replaceRecordFile(
  path: string,
): Promise<RecordSink & { commit(to?: string): Promise<void>; discard(): Promise<void> }> {
  const slash = path.lastIndexOf("/");
  const temp = await Deno.makeTempFile({
    dir: slash === -1 ? "." : path.slice(0, slash) || "/",
    prefix: `.${path.slice(slash + 1)}.`,
    suffix: ".partial",
  });
  // A temporary file is its owner's alone (0600); a record is for anyone to read: the file it
  // replaces keeps its mode, a new one gets a plain file's (0644).
  const mode = await Deno.stat(path).then((info) => info.mode, () => null) ?? 0o644;
  await Deno.chmod(temp, mode & 0o777).catch(() => {}); // no modes to set on Windows
  const sink = fileSink(await Deno.open(temp, { write: true, truncate: true }));
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await sink.close();
  };
  return {
    write: sink.write,
    restart: sink.restart,
    async commit(to = path) {
      await close();
      await Deno.rename(temp, to);
    },
    async discard() {
      try {
        await close();
      } finally {
        await Deno.remove(temp).catch(() => {});
      }
    },
  };
}

/** A sink of buffered writes to `file`; `close` flushes and closes it. */
function fileSink(file: Deno.FsFile): RecordSink & { close(): Promise<void> } {
  const encoder = new TextEncoder();
  let pending: string[] = [];
  let size = 0;
  const flush = async () => {
    if (pending.length === 0) return;
    const bytes = encoder.encode(pending.join(""));
    [pending, size] = [[], 0];
    for (let at = 0; at < bytes.length;) at += await file.write(bytes.subarray(at));
  };
  return {
    async write(text) {
      pending.push(text);
      size += text.length;
      if (size >= FLUSH_BYTES) await flush();
    },
    async restart() {
      [pending, size] = [[], 0];
      await file.truncate(0);
      await file.seek(0, Deno.SeekMode.Start);
    },
    async close() {
      try {
        await flush();
      } finally {
        file.close();
      }
    },
  };
}
