// Bytes on the wire for a full board visit, per sealed vote: the board opened in headless Chromium
// until it has recounted every vote, then its one-click audit until the verdict; then the same
// visit again in the same browser (a revisit: its HTTP cache and its memory of the last audit
// kept), and once more after 100 new votes (BENCH_NEW_VOTES) were sealed. Counted by Chromium itself (DevTools'
// Network.loadingFinished, `encodedDataLength`: headers and body as received, 0 for an answer from
// its cache), the whole visit and the audit alone (click to verdict), with the audit's own time
// (`data-audit-ms`) and the votes it checked and remembered.
//
// The first two visits are measured two ways in one run, on one ledger served by one server
// process: as served now (compressed, sealed blocks cached for good), and through a proxy that asks
// for no encoding and takes away every cache header — the wire before protocol §4.1's compression
// and caching (the audit's memory still applies there).
//
//   deno run -A bench/wire_bytes.ts [votes]        default: 2000 votes (rings of 8, blocks of 100)
//   BENCH_LEDGER=FILE deno run -A bench/wire_bytes.ts …    the ledger kept in FILE for the next run
//   BENCH_NOW_ONLY=1 …     only the wire as served now;   BENCH_DETAIL=1 …     bytes by call
//   BENCH_PROFILE=1 …      the visits in a browser profile (its HTTP cache on disk, as a visitor's
//                          browser has), not in a private context (its cache in memory)
//
// Needs Debian's Chromium (apt-get install -y chromium); without it, says so and exits 0.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { build } from "../scripts/build.ts";
import { sealNextBlock } from "../server/sealer.ts";
import { createStore } from "../server/store/mod.ts";
import { launchChromium, launchProfile, skipWithoutChromium } from "../tests/e2e/browser.ts";
import { buildLedger } from "../tests/helpers/ledger_builder.ts";
import { makeVoters, signedVote } from "../tests/helpers/ledger_fixtures.ts";
import { startServer } from "../tests/helpers/server_process.ts";

const VOTES = Number(Deno.args[0] ?? 2000);
/** Votes sealed before the third visit: BENCH_NEW_VOTES, 100 by default. */
const NEW_VOTES = Number(Deno.env.get("BENCH_NEW_VOTES") ?? 100);

if (skipWithoutChromium()) Deno.exit(0);

/** The ledger's KV file: BENCH_LEDGER when it exists already, else built now. */
async function ledgerFile(): Promise<string> {
  const kept = Deno.env.get("BENCH_LEDGER");
  if (kept !== undefined) {
    try {
      await Deno.stat(kept);
      return kept;
    } catch {
      // Built below and kept there.
    }
  }
  const path = kept ?? `${await Deno.makeTempDir({ prefix: "ringvote-wire-" })}/ledger.sqlite3`;
  const kv = await Deno.openKv(path);
  const started = performance.now();
  await buildLedger(await createStore(kv), { votes: VOTES, perBlock: 100 });
  kv.close();
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(`Ledger of ${VOTES} votes built in ${seconds} s`);
  return path;
}

/** Seals `count` more votes into the ledger at `path`, through its store, as one block. */
async function sealMore(path: string, count: number) {
  const kv = await Deno.openKv(path);
  try {
    const store = await createStore(kv);
    const voters = makeVoters(count);
    for (const v of voters) await store.registerKey(v.key);
    for (const voter of voters) {
      const ring = [...voters.filter((v) => v !== voter).slice(0, 7), voter]
        .sort((a, b) => (a.key < b.key ? -1 : 1));
      const vote = signedVote(voter, ring, "Choice A");
      const { payload, signature, publicKeys } = vote;
      await store.submitVote({ payload, signature, publicKeys }, vote.tag);
    }
    await sealNextBlock(store, Date.now());
  } finally {
    kv.close();
  }
}

/**
 * A proxy to `target` showing the wire as it was: it asks the server for no encoding and passes
 * the answers on without `Cache-Control`, `ETag` or `Vary`, so nothing is compressed or cached.
 */
function startPlainProxy(target: string) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const headers = new Headers(req.headers);
    headers.set("accept-encoding", "identity");
    headers.delete("if-none-match");
    const upstream = await fetch(new URL(url.pathname + url.search, target), {
      method: req.method,
      headers,
      body: req.body,
    });
    const out = new Headers(upstream.headers);
    for (const name of ["cache-control", "etag", "vary", "content-encoding", "content-length"]) {
      out.delete(name);
    }
    return new Response(upstream.body, { status: upstream.status, headers: out });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/`, close: () => server.shutdown() };
}

/**
 * Counts what Chromium receives for `page` from now on, by DevTools; `stop` ends the count. With
 * `log`, each API answer's bytes and address are printed.
 */
async function countBytes(context: BrowserContext, page: Page, { log = false } = {}) {
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  const urls = new Map<string, string>();
  const count = { api: 0, all: 0, requests: 0, byKind: new Map<string, number>() };
  cdp.on("Network.requestWillBeSent", (e) => urls.set(e.requestId, e.request.url));
  cdp.on("Network.loadingFinished", (e) => {
    count.all += e.encodedDataLength;
    const path = new URL(urls.get(e.requestId) ?? "http://x/").pathname;
    const kind = path.replace(/\/[0-9a-zA-Z_-]{6,}/g, "/…").replace(/\/\d+/g, "/N");
    count.byKind.set(kind, (count.byKind.get(kind) ?? 0) + e.encodedDataLength);
    if (path.startsWith("/api/")) {
      count.api += e.encodedDataLength;
      if (e.encodedDataLength > 0) count.requests++;
      if (log) console.log(`  ${e.encodedDataLength} ${path}`);
    }
  });
  return { count, stop: () => cdp.detach() };
}

/** One visit as measured: the whole visit, the audit alone, and what the audit said. */
type Visit = {
  api: number;
  all: number;
  requests: number;
  auditApi: number;
  auditRequests: number;
  auditMs: number;
  checked: number;
  remembered: number;
};

/** Opens the board at `url` in the context's page, waits for the recount, audits, waits. */
async function boardVisit(context: BrowserContext, url: string): Promise<Visit> {
  const page = context.pages()[0];
  const visit = await countBytes(context, page);
  await page.goto(new URL("board", url).href);
  await page.locator('.bulletin[data-ready="true"]').waitFor({ timeout: 600_000 });
  await page.getByText(/the counts agree/).waitFor({ timeout: 600_000 });
  // The anonymity lens reads every vote too: its analysis done, the page is quiet for the audit.
  await page.locator(".anonymity-summary").waitFor({ timeout: 600_000 });
  const audit = await countBytes(context, page, { log: Deno.env.has("BENCH_DETAIL") });
  await page.locator('[data-action="audit"]').click();
  const verdict = page.locator("[data-audit-verdict]");
  await verdict.waitFor({ timeout: 1_800_000 });
  await audit.stop();
  await visit.stop();
  if (await verdict.getAttribute("data-audit-verdict") !== "pass") {
    throw new Error(`The board's audit failed:\n${await page.locator("pre").textContent()}`);
  }
  if (Deno.env.get("BENCH_DETAIL")) console.log(visit.count.byKind);
  const number = async (name: string) => Number(await verdict.getAttribute(name));
  return {
    api: visit.count.api,
    all: visit.count.all,
    requests: visit.count.requests,
    auditApi: audit.count.api,
    auditRequests: audit.count.requests,
    auditMs: await number("data-audit-ms"),
    checked: await number("data-votes-checked"),
    remembered: await number("data-votes-remembered"),
  };
}

/** A first visit and a revisit of the board at `url` in a fresh context, and `then`'s visits. */
async function measure(
  browser: Browser,
  url: string,
  then: (visit: () => Promise<Visit>) => Promise<Visit[]> = () => Promise.resolve([]),
) {
  const viewport = { width: 1280, height: 800 };
  const profile = Deno.env.has("BENCH_PROFILE")
    ? await Deno.makeTempDir({ prefix: "ringvote-wire-profile-" })
    : null;
  const context = profile === null
    ? await browser.newContext({ viewport })
    : await launchProfile(profile, { viewport });
  try {
    if (context.pages().length === 0) await context.newPage();
    const visit = () => boardVisit(context, url);
    return [await visit(), await visit(), ...await then(visit)];
  } finally {
    await context.close();
    if (profile !== null) await Deno.remove(profile, { recursive: true });
  }
}

await build({ ifNeeded: true });
const kept = await ledgerFile();
// A copy, so that the votes sealed for the third visit leave the kept ledger as it was.
const dir = await Deno.makeTempDir({ prefix: "ringvote-wire-run-" });
const path = `${dir}/ledger.sqlite3`;
await Deno.copyFile(kept, path);
const server = await startServer({ env: { KV_PATH: path, BLOCK_INTERVAL_MS: "3600000" } });
const plain = startPlainProxy(server.url);
const browser = await launchChromium();
try {
  const before = Deno.env.get("BENCH_NOW_ONLY") ? null : await measure(browser, plain.url);
  const now = await measure(browser, server.url, async (visit) => {
    await sealMore(path, NEW_VOTES);
    return [await visit()];
  });
  const per = (bytes: number, votes = VOTES) => (bytes / votes).toFixed(0);
  console.log(`\nA board visit, ${VOTES} votes (rings of 8, blocks of 100): bytes on the wire`);
  console.log(
    "| visit | wire | API bytes / vote | all bytes / vote | API requests | " +
      "audit: API bytes | audit: requests | audit: time | checked | remembered |",
  );
  console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  const rows: [string, string, Visit | undefined, number][] = [
    ["first", "before", before?.[0], VOTES],
    ["first", "now", now[0], VOTES],
    ["revisit, nothing new", "before", before?.[1], VOTES],
    ["revisit, nothing new", "now", now[1], VOTES],
    [`revisit, ${NEW_VOTES} new votes`, "now", now[2], VOTES + NEW_VOTES],
  ];
  for (const [visit, wire, m, votes] of rows) {
    if (m === undefined) continue;
    console.log(
      `| ${visit} | ${wire} | ${per(m.api, votes)} | ${per(m.all, votes)} | ${m.requests} | ` +
        `${m.auditApi.toLocaleString("en")} | ${m.auditRequests} | ` +
        `${(m.auditMs / 1000).toFixed(2)} s | ${m.checked} | ${m.remembered} |`,
    );
  }
} finally {
  await browser.close();
  await plain.close();
  await server.stop();
  await Deno.remove(dir, { recursive: true });
}
