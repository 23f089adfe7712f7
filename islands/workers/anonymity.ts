// The anonymity lens off the main thread: each message is a LensRequest, each answer a LensAnswer
// (lib/app/anonymity_lens.ts), so the page stays responsive while thousands of ballots are
// analysed. Started by the pages with startWorker("anonymity").
import { type LensAnswer, type LensRequest, runLens } from "../../lib/app/anonymity_lens.ts";

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<LensRequest>) => void) | null;
  postMessage(answer: LensAnswer): void;
};

scope.onmessage = (event) => {
  const started = performance.now();
  let answer: LensAnswer;
  try {
    answer = { ...runLens(event.data), ms: performance.now() - started };
  } catch (error) {
    answer = {
      seq: event.data?.seq ?? -1,
      error: error instanceof Error ? error.message : String(error),
    };
  }
  scope.postMessage(answer);
};
