// What an audit found, asserted as data (lib/client/audit/findings.ts): tests decide what failed by
// kinds and values, never by words; the words appear only in the messages of failed assertions.
import type { AuditReport } from "../../lib/client/audit/audit.ts";
import type { AuditFinding } from "../../lib/client/audit/findings.ts";
import { findingText } from "../../lib/client/audit/report_text.ts";

/** Some of a finding's fields, nested ones (`vote`) partly too. */
export type FindingPattern = { kind: AuditFinding["kind"] } & Record<string, unknown>;

/** True when every field of `pattern` equals the same field of `value`, nested objects partly. */
export function matchesPattern(value: unknown, pattern: unknown): boolean {
  if (typeof pattern !== "object" || pattern === null || Array.isArray(pattern)) {
    return Object.is(value, pattern) ||
      (Array.isArray(pattern) && JSON.stringify(value) === JSON.stringify(pattern));
  }
  if (typeof value !== "object" || value === null) return false;
  return Object.entries(pattern).every(([k, v]) =>
    matchesPattern((value as Record<string, unknown>)[k], v)
  );
}

/** The findings of `report` that match `pattern`. */
export function findingsLike(report: AuditReport, pattern: FindingPattern): AuditFinding[] {
  return report.failures.filter((f) => matchesPattern(f, pattern));
}

/** True when some finding of `report` matches one of `patterns`. */
export function hasFinding(report: AuditReport, ...patterns: FindingPattern[]): boolean {
  return report.failures.some((f) => patterns.some((p) => matchesPattern(f, p)));
}

/** The kinds of `report`'s findings, in order. */
export function kindsOf(report: AuditReport): string[] {
  return report.failures.map((f) => f.kind);
}

/** `report`'s findings in words, one a line: for the message of a failed assertion only. */
export function inWords(report: AuditReport): string {
  return report.failures.map(findingText).join("\n");
}
