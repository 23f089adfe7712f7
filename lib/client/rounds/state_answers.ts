/**
 * Browser-safe. A quiet phone's reads served from its one state read (page §14.8): a relayed phone
 * in a round with phases reads `GET /api/rounds/{r}/state` and nothing else on a timer; the reads
 * the page's parts make on their own timers (the open block, the log's checkpoint, the groups) are
 * answered from the latest state instead of being sent. The answers are the bytes the server would
 * give, so each part checks them as it checks the server's.
 * @module
 */

import { ledgerBase } from "../api_client.ts";

export { groupIndexOf } from "./group_index.ts";

/** What a quiet phone's answers are made of: the fields of the state read they repeat. */
export type StateFields = {
  round: number;
  phase: "join" | "voting" | "closed";
  keysAtOpen: number | null;
  groups: number[][];
  pending: number[];
  intervalMs: number;
  verifyRate: number;
  sendWindowMs: number | null;
  open: { height: number; votes: number; nextSealAt: number };
  checkpoint: string;
};

/** An answer made from the state: its content type and body. */
export type StateAnswer = { type: string; body: string };

/** The reads the state answers, by the path after `/api/rounds/{r}/`. */
const ANSWERED = ["block/open", "log/checkpoint", "groups"] as const;

/** True for a path of a read the state answers, of any round. */
export function answeredByState(path: string): boolean {
  const match = /^\/api\/rounds\/\d+\/(.+)$/.exec(path);
  return match !== null && (ANSWERED as readonly string[]).includes(match[1]);
}

/**
 * The answer to `GET path` made from `state`, or null when the state does not answer it (another
 * call, another round, or not a GET).
 */
export function answerFromState(
  state: StateFields,
  method: string,
  path: string,
): StateAnswer | null {
  if (method !== "GET") return null;
  const prefix = ledgerBase({ round: state.round });
  if (!path.startsWith(prefix)) return null;
  const rest = path.slice(prefix.length) as (typeof ANSWERED)[number];
  if (!ANSWERED.includes(rest)) return null;
  const json = (value: unknown) => ({ type: "application/json", body: JSON.stringify(value) });
  switch (rest) {
    case "block/open":
      return json({ ...state.open, intervalMs: state.intervalMs });
    case "log/checkpoint":
      return { type: "text/plain; charset=utf-8", body: state.checkpoint };
    case "groups": {
      const { phase, keysAtOpen, groups, pending, verifyRate, sendWindowMs } = state;
      return json({ phase, keysAtOpen, groups, pending, verifyRate, sendWindowMs });
    }
  }
}
