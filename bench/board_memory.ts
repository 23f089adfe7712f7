// The board's memory and time on a kept ledger, as a browser holds them: headless Chromium driven
// over its DevTools protocol alone, with no Network domain (Playwright's, which bench/browser_audit.ts
// uses, keeps every response body in the renderer, tens of MB more at 10,000 votes). The board is
// loaded until its recount and anonymity lens are done, then its one-click audit runs to the
// verdict. Prints the time of each, the private memory (RssAnon: heaps, not shared code) of
// Chromium's renderer process, which runs the page and its workers (before the
// click, its peak while loading and during the audit, each 2 s's peak), the renderer's CPU time
// while the loaded board is left alone for 10 s, and with `--breakdown` the renderer's own account
// of its memory (memory-infra: each V8 heap, the array buffers, malloc, Blink) every 15 s of the
// audit (`BENCH_ALLOCATORS=1`: every allocator over 4 MB too); then the renderer 3, 30 and 90 s
// after the verdict, the page left open.
//
//   deno run -A bench/board_memory.ts LEDGER.sqlite3 [--breakdown]
//
// LEDGER is a KV file written by bench/build_ledger.ts (or any bench's BENCH_LEDGER). Needs Debian's
// Chromium (apt-get install -y chromium); without it, says so and exits 0.
import { build } from "../scripts/build.ts";
import { CHROMIUM_PATH, skipWithoutChromium } from "../tests/e2e/browser.ts";
import { startServer } from "../tests/helpers/server_process.ts";
import { rendererCpuSeconds, rendererMb } from "./processes.ts";

const [ledger] = Deno.args.filter((a) => !a.startsWith("--"));
const breakdown = Deno.args.includes("--breakdown");
if (!ledger) {
  console.error("usage: deno run -A bench/board_memory.ts LEDGER.sqlite3 [--breakdown]");
  Deno.exit(2);
}
if (skipWithoutChromium()) Deno.exit(0);

const mb = (bytes: number) => (bytes / 1048576).toFixed(1);

/** Longest wait for the page (a 100,000-vote audit takes minutes; a hung one, forever). */
const PAGE_DEADLINE_MS = 60 * 60 * 1000;

/** How long the loaded board is left alone before the click, its CPU time measured. */
const IDLE_MS = 10_000;

type CdpMessage = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
};

/** A DevTools protocol connection to the browser at `url`. */
async function connect(url: string) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let nextId = 1;
  const waiting = new Map<number, (m: CdpMessage) => void>();
  const listeners = new Set<(m: CdpMessage) => void>();
  // A browser that ended answers nothing more: every call waiting fails instead of hanging.
  ws.onclose = () => {
    for (const answer of waiting.values()) answer({ error: { message: "DevTools closed" } });
    waiting.clear();
  };
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data) as CdpMessage;
    if (message.id === undefined) listeners.forEach((listen) => listen(message));
    else waiting.get(message.id)?.(message), waiting.delete(message.id);
  };
  return {
    send(method: string, params: object = {}, sessionId?: string) {
      const id = nextId++;
      ws.send(JSON.stringify({ id, method, params, sessionId }));
      return new Promise<Record<string, unknown>>((resolve, reject) =>
        waiting.set(
          id,
          (m) =>
            m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result ?? {}),
        )
      );
    },
    listen(listener: (m: CdpMessage) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => ws.close(),
  };
}

type Cdp = Awaited<ReturnType<typeof connect>>;

/** The renderer's memory-infra account: its footprint and the allocators' sizes, in MB. */
async function memoryInfra(cdp: Cdp, label: string) {
  type Dump = { ph: string; pid: number; args?: { dumps?: DumpArgs } };
  type DumpArgs = {
    process_totals?: { private_footprint_bytes?: string };
    allocators?: Record<string, { attrs?: { size?: { value: string } } }>;
  };
  const events: Dump[] = [];
  let complete!: () => void;
  const done = new Promise<void>((resolve) => (complete = resolve));
  const stop = cdp.listen((m) => {
    if (m.method === "Tracing.dataCollected") events.push(...(m.params!.value as Dump[]));
    if (m.method === "Tracing.tracingComplete") complete();
  });
  await cdp.send("Tracing.start", {
    traceConfig: {
      includedCategories: ["disabled-by-default-memory-infra"],
      memoryDumpConfig: { triggers: [] },
    },
    transferMode: "ReportEvents",
  });
  await cdp.send("Tracing.requestMemoryDump", { deterministic: false, levelOfDetail: "detailed" });
  await cdp.send("Tracing.end");
  await done;
  stop();
  const byPid = new Map<
    number,
    { footprint: number; allocators: NonNullable<DumpArgs["allocators"]> }
  >();
  for (const event of events) {
    const dumps = event.ph === "v" ? event.args?.dumps : undefined;
    if (!dumps) continue;
    const entry = byPid.get(event.pid) ?? { footprint: 0, allocators: {} };
    const footprint = parseInt(dumps.process_totals?.private_footprint_bytes ?? "0", 16);
    entry.footprint = Math.max(entry.footprint, footprint);
    Object.assign(entry.allocators, dumps.allocators ?? {});
    byPid.set(event.pid, entry);
  }
  const renderer = [...byPid.values()].sort((a, b) => b.footprint - a.footprint)[0];
  if (!renderer) return;
  const size = (name: string) => parseInt(renderer.allocators[name]?.attrs?.size?.value ?? "0", 16);
  const parts = [
    ["page young generation", "v8/main/heap/new_space"],
    ["page old generation", "v8/main/heap/old_space"],
    ["page large objects", "v8/main/heap/large_object_space"],
    ["workers' young generations", "v8/workers/heap/new_space"],
    ["workers' old generations", "v8/workers/heap/old_space"],
    ["workers' large objects", "v8/workers/heap/large_object_space"],
    ["array buffers", "partition_alloc/partitions/array_buffer"],
    ["other partitions", "partition_alloc/partitions/buffer"],
    ["malloc", "malloc"],
    ["Blink's heap", "blink_gc"],
    ["compositor", "cc"],
  ];
  console.log(
    `  [${label}] footprint ${mb(renderer.footprint)} MB: ` +
      parts.map(([name, key]) => `${name} ${mb(size(key))}`).join(", "),
  );
  if (Deno.env.get("BENCH_ALLOCATORS")) {
    const big = Object.keys(renderer.allocators).filter((name) => size(name) > 4 * 1048576);
    console.log(`    ${big.map((name) => `${name} ${mb(size(name))}`).join(", ")}`);
  }
}

await build({ ifNeeded: true });
const server = await startServer({ env: { KV_PATH: ledger, BLOCK_INTERVAL_MS: "3600000" } });
const serverPid = server.process.pid;
const profile = await Deno.makeTempDir({ prefix: "ringvote-board-memory-" });
const chromium = new Deno.Command(CHROMIUM_PATH, {
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",
    `--user-data-dir=${profile}`,
    "--remote-debugging-port=0",
    "--window-size=1280,800",
    "about:blank",
  ],
  stdout: "null",
  stderr: "piped",
}).spawn();
try {
  // Chromium says where its DevTools listen on stderr; the rest of stderr is drained.
  const reader = chromium.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  let url: string | undefined;
  while (url === undefined) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`Chromium ended before listening:\n${said}`);
    said += value;
    url = /DevTools listening on (ws:\/\/\S+)/.exec(said)?.[1];
  }
  (async () => {
    while (!(await reader.read()).done) { /* drained */ }
  })();
  const cdp = await connect(url);
  const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
  const evaluate = async (expression: string) => {
    const answer = await cdp.send("Runtime.evaluate", {
      expression,
      returnByValue: true,
      awaitPromise: true,
    }, sessionId as string);
    return (answer.result as { value: unknown }).value;
  };
  const until = async (expression: string) => {
    const deadline = Date.now() + PAGE_DEADLINE_MS;
    while (!(await evaluate(expression))) {
      if (Date.now() > deadline) throw new Error(`still not true after an hour: ${expression}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  /** Samples the renderer every 250 ms: its peak, and each 2 s's peak. */
  const sample = () => {
    const series: number[] = [];
    let peak = 0;
    let windowPeak = 0;
    let ticks = 0;
    const timer = setInterval(() => {
      const now = rendererMb(serverPid);
      peak = Math.max(peak, now);
      windowPeak = Math.max(windowPeak, now);
      if (++ticks % 8 === 0) series.push(windowPeak), windowPeak = 0;
    }, 250);
    return () => (clearInterval(timer), { peak, series });
  };

  const loading = sample();
  const opened = performance.now();
  await cdp.send("Page.navigate", { url: new URL("board", server.url).href }, sessionId as string);
  await until(`document.body?.innerText.includes("the counts agree") &&
    !!document.querySelector(".anonymity-summary")`);
  const load = loading();
  const before = rendererMb(serverPid);
  console.log(
    `board loaded (recount and anonymity lens done) in ${
      ((performance.now() - opened) / 1000).toFixed(1)
    } s; ` +
      `renderer peak while loading ${load.peak.toFixed(0)} MB, ${
        before.toFixed(0)
      } MB before the click`,
  );
  if (breakdown) await memoryInfra(cdp, "before the click");
  // What the loaded page costs while nobody touches it: its polls and renders.
  const idleCpu = rendererCpuSeconds(serverPid);
  await new Promise((r) => setTimeout(r, IDLE_MS));
  console.log(
    `the loaded board, left alone ${IDLE_MS / 1000} s: renderer CPU ${
      ((rendererCpuSeconds(serverPid) - idleCpu) / (IDLE_MS / 1000) * 100).toFixed(1)
    }% of a core, ${rendererMb(serverPid).toFixed(0)} MB`,
  );

  const auditing = sample();
  let dumping: Promise<void> | undefined;
  const dumps = breakdown
    ? setInterval(() => {
      dumping ??= memoryInfra(cdp, `audit, renderer ${rendererMb(serverPid).toFixed(0)} MB`)
        .catch(() => {}).finally(() => (dumping = undefined));
    }, 15_000)
    : undefined;
  const clicked = performance.now();
  await evaluate(`document.querySelector('[data-action="audit"]').click()`);
  await until(`!!document.querySelector("[data-audit-verdict]")`);
  const seconds = (performance.now() - clicked) / 1000;
  clearInterval(dumps);
  const audit = auditing();
  await dumping;
  const verdict = await evaluate(
    `document.querySelector("[data-audit-verdict]").dataset.auditVerdict +
    ": " + document.querySelector(".audit-summary")?.textContent`,
  );
  console.log(
    `renderer MB, peak of each 2 s of the audit: ${
      audit.series.map((n) => n.toFixed(0)).join(" ")
    }`,
  );
  console.log(
    `audit ${verdict} — ${seconds.toFixed(1)} s from the click; renderer ${
      before.toFixed(0)
    } MB before it, ` +
      `peak ${audit.peak.toFixed(0)} MB during it`,
  );
  // The page left open after its audit, as a projector's is: its renderer at a few moments.
  let waited = 0;
  for (const at of [3, 30, 90]) {
    await new Promise((r) => setTimeout(r, (at - waited) * 1000));
    waited = at;
    console.log(`${at} s after the verdict: renderer ${rendererMb(serverPid).toFixed(0)} MB`);
    if (breakdown) await memoryInfra(cdp, `${at} s after the verdict`);
  }
  cdp.close();
} finally {
  chromium.kill("SIGTERM");
  await chromium.status;
  await server.stop();
  await Deno.remove(profile, { recursive: true }).catch(() => {});
}
