/**
 * The election record on the board (protocol §4.8), part of the audit section: download the record
 * of the chain shown, written with the command line's own writer, or choose a record file to audit.
 * @module
 */
import { useState } from "react";
import Notice from "../../components/Notice.tsx";
import type { AuditSource } from "../../lib/client/audit/source.ts";
import { type RecordProgress, writeRecord } from "../../lib/client/audit/election_record.ts";

/** Characters of record text gathered before they are sealed into a Blob part. */
const BLOB_PART_CHARS = 1 << 20;

/**
 * A sink gathering the record in Blob parts of about a MiB each, so that a large record is held
 * by the browser's blob store rather than as a hundred thousand strings on the page's heap.
 */
function blobSink() {
  let parts: Blob[] = [];
  let lines: string[] = [];
  let chars = 0;
  const seal = () => {
    if (lines.length > 0) parts.push(new Blob(lines));
    [lines, chars] = [[], 0];
  };
  return {
    write(text: string) {
      lines.push(text);
      chars += text.length;
      if (chars >= BLOB_PART_CHARS) seal();
    },
    restart() {
      [parts, lines, chars] = [[], [], 0];
    },
    blob(): Blob {
      seal();
      return new Blob(parts, { type: "application/x-ndjson" });
    },
  };
}

/** Hands `blob` to the browser as a download named `name`. */
function offerDownload(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own reference by now; the URL is kept a while for slow browsers.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

type Saved = { name: string; bytes: number; votes: number; height: number };

/** The download control with its progress, and the control that audits a chosen record file. */
export default function RecordControls(
  { api, busy, onAuditFile }: {
    api: AuditSource;
    busy: boolean;
    onAuditFile: (file: File) => void;
  },
) {
  const [progress, setProgress] = useState<RecordProgress | null>(null);
  const [saved, setSaved] = useState<Saved | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  async function download() {
    setSaved(null);
    setProblem(null);
    setProgress({ height: 0, of: 0 });
    const sink = blobSink();
    try {
      const { height, votes } = await writeRecord(api, sink, { onProgress: setProgress });
      const blob = sink.blob();
      const name = `ringvote-record-${height}.ndjson`;
      offerDownload(blob, name);
      setSaved({ name, bytes: blob.size, votes, height });
    } catch (error) {
      setProblem(`The election record could not be read: ${(error as Error).message}`);
    }
    setProgress(null);
  }

  return (
    <div class="record-controls">
      <h3>The election record</h3>
      <p class="record-intro">
        Download the election record: one file with every block, vote and registered key and the
        tally, which anyone can keep and audit again later, even when this server is gone.
      </p>
      <button
        type="button"
        data-action="download-record"
        disabled={progress !== null}
        onClick={download}
      >
        {progress !== null ? "Reading the record…" : "Download the election record"}
      </button>
      {progress !== null && (
        <div class="record-progress" role="status" aria-live="polite">
          <progress
            id="record-progress"
            max={Math.max(progress.of, 1)}
            value={progress.height}
          />
          <label for="record-progress">Reading block {progress.height} of {progress.of}</label>
        </div>
      )}
      {saved !== null && (
        <p class="record-saved" data-record-saved={saved.name}>
          Saved {saved.name}: {saved.votes} {saved.votes === 1 ? "vote" : "votes"} up to block{" "}
          {saved.height}, {saved.bytes.toLocaleString("en")} bytes.
        </p>
      )}
      {problem !== null && <Notice tone="problem" text={problem} />}
      <p class="record-intro">
        Choose an election record file to audit it here with the same checks, from the file alone,
        without asking any server.
      </p>
      <label class="record-pick">
        Election record file (.ndjson){" "}
        <input
          type="file"
          accept=".ndjson,.jsonl,application/x-ndjson"
          data-action="audit-file"
          disabled={busy}
          onChange={(event) => {
            const input = event.currentTarget;
            const file = input.files?.[0];
            if (file) onAuditFile(file);
            // The same file chosen again is audited again.
            input.value = "";
          }}
        />
      </label>
    </div>
  );
}
