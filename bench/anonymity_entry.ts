// Browser side of bench/anonymity.ts: builds the benchmark record in the page, then times reading
// its JSON (the baseline), the analysis on the page's thread, and the whole round trip through the
// anonymity worker (posting the record, analysing, receiving the answer) — the page's real path.
import { runLens } from "../lib/client/anonymity/anonymity_lens.ts";
import type { LensAnswer } from "../lib/client/anonymity/anonymity_lens.ts";
import { benchDirectory, benchRecord, median, timeAgainstParse } from "./anonymity_record.ts";

/** Medians in ms over `rounds`: baseline parse, analysis in the page, worker round trip. */
async function anonymityBench(
  { ballots, keys, rounds, workerUrl }: {
    ballots: number;
    keys: number;
    rounds: number;
    workerUrl: string;
  },
) {
  const record = benchRecord({ ballots, keys });
  const directory = benchDirectory(keys);
  const request = (seq: number) => ({ seq, ballots: record, reveals: [], directory });
  const { parseMs, analysisMs } = timeAgainstParse(record, {
    rounds,
    analyse: (parsed) => runLens({ ...request(0), ballots: parsed }),
  });
  const worker = new Worker(workerUrl, { type: "module" });
  const roundTrip: number[] = [];
  const inside: number[] = [];
  try {
    for (let seq = 0; seq <= rounds; seq++) {
      const started = performance.now();
      const answer = await new Promise<LensAnswer>((resolve, reject) => {
        worker.onmessage = (event) => resolve(event.data);
        worker.onerror = (event) => reject(new Error(event.message));
        worker.postMessage(request(seq));
      });
      if ("error" in answer) throw new Error(answer.error);
      // The first answer includes starting the worker and compiling its module: not counted.
      if (seq === 0) continue;
      roundTrip.push(performance.now() - started);
      inside.push(answer.ms);
    }
  } finally {
    worker.terminate();
  }
  return { parseMs, analysisMs, workerMs: median(roundTrip), workerInsideMs: median(inside) };
}

(globalThis as { anonymityBench?: typeof anonymityBench }).anonymityBench = anonymityBench;
