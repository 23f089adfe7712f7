// `deno task audit [URL]`: re-verifies the whole public record of a Ringvote server through its
// read-only API (protocol §4) with the same lib/ the server uses, and exits 0 only when every
// check holds. Default URL: http://localhost:8000.
import { createApiClient } from "./lib/app/api_client.ts";
import { auditLedger, type AuditProgress, formatReport } from "./lib/app/audit.ts";

const BAR_WIDTH = 30;

function progressLine({ phase, done, total }: AuditProgress): string {
  const filled = total > 0 ? Math.round((done / total) * BAR_WIDTH) : BAR_WIDTH;
  const bar = "#".repeat(Math.min(filled, BAR_WIDTH)).padEnd(BAR_WIDTH, ".");
  return `\r${phase.padEnd(10)} [${bar}] ${done}/${total}`;
}

if (import.meta.main) {
  const url = Deno.args[0] ?? "http://localhost:8000";
  const encoder = new TextEncoder();
  const tty = Deno.stderr.isTerminal();
  let last = 0;
  const report = await auditLedger(createApiClient({ fetch, baseUrl: url }), {
    onProgress: (p) => {
      const now = Date.now();
      if (!tty && now - last < 1000 && p.done !== p.total) return;
      last = now;
      Deno.stderr.writeSync(encoder.encode(progressLine(p) + (tty ? "" : "\n")));
    },
  });
  if (tty) Deno.stderr.writeSync(encoder.encode("\n"));
  console.log(formatReport(url, report));
  Deno.exit(report.ok ? 0 : 1);
}
