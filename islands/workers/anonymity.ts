// The anonymity lens off the main thread: each message is a LensMessage, each answer a LensAnswer
// (lib/client/anonymity/anonymity_lens.ts), so the page stays responsive while thousands of ballots are
// analysed. Started by the pages with startWorker("anonymity").
import {
  type LensAnswer,
  type LensMessage,
  runLensMessage,
} from "../../lib/client/anonymity/anonymity_lens.ts";
import { messageOf } from "../../lib/client/text.ts";

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<LensMessage>) => void) | null;
  postMessage(answer: LensAnswer): void;
};

scope.onmessage = (event) => {
  const started = performance.now();
  let answer: LensAnswer;
  try {
    answer = { ...runLensMessage(event.data), ms: performance.now() - started };
  } catch (error) {
    answer = {
      seq: event.data?.seq ?? -1,
      error: messageOf(error),
    };
  }
  scope.postMessage(answer);
};
