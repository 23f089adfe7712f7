/**
 * The one-click audit's summary (page §10.8): what it checked, in how long and where — the votes it
 * checked now and those it took from this browser's memory of its last audit — and, for an
 * election record, whether the record's own key is the server key this browser remembers.
 * @module
 */
import type { AuditReport } from "../../lib/client/audit/audit.ts";

/** What the summary says of one audit. */
export type SummaryProps = {
  report: AuditReport;
  ms: number;
  workers: number;
  /** The record file's name; null for the server's audit. */
  record: string | null;
  /** The height the audit took up from this browser's memory; null when it read every vote. */
  from: number | null;
  /** The server key this browser remembers for this server (page §12); null for none. */
  rememberedKey: string | null;
};

/** The summary line, and for a record the line on its key, which never fails the audit. */
export default function AuditSummary(
  { report, ms, workers, record, from, rememberedKey }: SummaryProps,
) {
  const seconds = (ms / 1000).toFixed(1);
  const by = `by ${workers} ${workers === 1 ? "worker" : "workers"} in this browser`;
  const checked = report.votes - report.remembered;
  return (
    <>
      {from === null
        ? (
          <p class="audit-summary">
            {report.votes} votes in {report.blocks} blocks and {report.keys} registered keys
            {record === null ? "" : ` of the election record ${record}`} checked in {seconds} s{" "}
            {by}.
          </p>
        )
        : (
          <p class="audit-summary">
            {checked} new {checked === 1 ? "vote" : "votes"} checked in {seconds} s {by}, and{" "}
            {report.remembered} remembered from this browser's last audit, up to block {from}:{" "}
            {report.votes} votes in {report.blocks} blocks and {report.keys} registered keys in all.
          </p>
        )}
      {record !== null && report.serverKey !== null && (
        <RecordKeyLine recordKey={report.serverKey} rememberedKey={rememberedKey} />
      )}
    </>
  );
}

/** Whether the record's key is the one this browser remembers for this server: said, not judged. */
function RecordKeyLine(
  { recordKey, rememberedKey }: { recordKey: string; rememberedKey: string | null },
) {
  const kind = rememberedKey === null ? "none" : rememberedKey === recordKey ? "same" : "other";
  return (
    <p class="audit-record-key" data-record-key={kind}>
      {kind === "same"
        ? `The record was audited under its own key ${recordKey}, which is the server key this ` +
          "browser remembers for this server."
        : kind === "other"
        ? `The record was audited under its own key ${recordKey}, which is not the server key ` +
          `this browser remembers for this server (${rememberedKey}): it is the record of another ` +
          "election, or of this server under another key. Compare its key out of band."
        : `The record was audited under its own key ${recordKey}; this browser remembers no ` +
          "server key for this server to compare it with. Compare it out of band."}
    </p>
  );
}
