/**
 * The log pushes its checkpoints to the witnesses of `WITNESS_POLICY` (c2sp.org/tlog-witness@v1.0.0
 * `POST <url>/add-checkpoint`) and keeps the cosignatures they answer (./store/cosignatures.ts),
 * after each seal and at a steady pace: detached from sealing, one request in flight per witness,
 * each with a deadline. A 409 is followed once; a 422, a fork or an unverifiable 200 is an alarm
 * that stops pushes to that witness until the next start.
 * @module
 */
import { derivedOrigin } from "../lib/protocol/block_log.ts";
import { bytesToBase64, equalBytes } from "../lib/protocol/bytes.ts";
import { formatCheckpoint } from "../lib/protocol/checkpoint.ts";
import { serverPublicKey } from "../lib/protocol/head.ts";
import {
  formatNote,
  formatVerifierKey,
  parseNote,
  type SignedNote,
  signNote,
} from "../lib/protocol/note.ts";
import type { WitnessProblem } from "../lib/protocol/schemas.ts";
import { createBlockLog } from "./store/block_log.ts";
import type { WitnessPushRecord } from "./store/cosignatures.ts";
import type { Store } from "./store/mod.ts";
import type { PolicyWitness } from "./witness_policy.ts";

/** How long one add-checkpoint request may take, answer read included. */
export const PUSH_TIMEOUT_MS = 10_000;
/** The steady pace: how often main.ts pushes again with nothing sealed, to refresh timestamps. */
export const WITNESS_REFRESH_MS = 60_000;
/** The first pause after a failed push; it doubles with each failure in a row, up to the next. */
export const FIRST_BACKOFF_MS = 5_000;
/** The longest pause after failed pushes. */
export const MAX_BACKOFF_MS = 300_000;
/** Most bytes of a witness's answer read; the rest is dropped. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** Content type of a 409's body, the witness's size (tlog-witness §add-checkpoint). */
const SIZE_CONTENT_TYPE = "text/x.tlog.size";
const SIZE_BODY = /^(0|[1-9][0-9]{0,15})\n$/;

/** What the pusher needs. */
export type WitnessPushOptions = {
  /** The ledger whose checkpoints are pushed (the election's). */
  store: Pick<Store, "blocks" | "serverSeed" | "cosignatures">;
  witnesses: readonly PolicyWitness[];
  /** The log's origin (`LOG_ORIGIN`); derived from the ledger's key when null or absent. */
  origin?: string | null;
  /** The HTTP client; `fetch` by default. */
  fetch?: typeof fetch;
  /** Milliseconds since the epoch; `Date.now` by default. */
  now?: () => number;
  /** Deadline of one request; {@link PUSH_TIMEOUT_MS} by default. */
  timeoutMs?: number;
  /** Where failures and alarms are told, with the witness's name; `console` by default. */
  logger?: Pick<Console, "error">;
};

/** Pushes one ledger's checkpoints to its witnesses. */
export type WitnessPusher = {
  /**
   * Pushes the current checkpoint to every witness that has not cosigned its size (with
   * `refresh`, to every witness), except one stopped by an alarm or pausing after failures; a
   * witness with a push in flight gets one more after it. Resolves when those pushes have
   * settled and never rejects: callers that must not wait (sealing) do not await it.
   */
  push(options?: { refresh?: boolean }): Promise<void>;
};

/** What the pusher holds in memory of one witness. */
type Peer = {
  witness: PolicyWitness;
  vkey: string;
  /** The size the witness is believed to hold; null until read from its push record. */
  known: number | null;
  /** The size it last cosigned in this process; -1 before. */
  cosigned: number;
  flight: Promise<void> | null;
  /** A push was asked for while one was in flight. */
  again: boolean;
  /** An alarm stopped pushes to it until the next start. */
  halted: boolean;
  failures: number;
  /** No push before this time (ms): the pause after failures. */
  pauseUntil: number;
};

/** What one add-checkpoint request came to. */
type Answer =
  | { kind: "answered"; status: number; type: string; body: string }
  | { kind: "none"; reason: string };

/** The pusher of `store`'s log to `witnesses`. */
export function createWitnessPusher(options: WitnessPushOptions): WitnessPusher {
  const { store } = options;
  const send = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? PUSH_TIMEOUT_MS;
  const logger = options.logger ?? console;
  const seed = store.serverSeed();
  const origin = options.origin ?? derivedOrigin(serverPublicKey(seed));
  const log = createBlockLog(store);
  const cosignatures = store.cosignatures;
  const pinned = new Set(options.witnesses.map((w) => formatVerifierKey(w.key)));
  const peers: Peer[] = options.witnesses.map((witness) => ({
    witness,
    vkey: formatVerifierKey(witness.key),
    known: null,
    cosigned: -1,
    flight: null,
    again: false,
    halted: false,
    failures: 0,
    pauseUntil: 0,
  }));
  // Ed25519 is deterministic and a size has one root: the checkpoint is signed once per size.
  let signed: { size: number; text: string; note: string; root: Uint8Array } | null = null;

  const checkpointOf = (size: number, root: Uint8Array) => {
    if (signed?.size !== size) {
      const text = formatCheckpoint({ origin, size, root });
      const note = formatNote({ text, signatures: [signNote(text, { name: origin, seed })] });
      signed = { size, text, note, root };
    }
    return signed;
  };

  const record = (peer: Peer, change: (record: WitnessPushRecord) => WitnessPushRecord) =>
    cosignatures.updatePushRecord(
      peer.vkey,
      (stored) => change(stored ?? { size: null, alarm: null, error: null }),
    );

  const alarm = async (peer: Peer, problem: Omit<WitnessProblem, "at">) => {
    peer.halted = true;
    logger.error(
      `Witness "${peer.witness.name}" ALARM (${problem.status}): ${problem.reason}; ` +
        "no more pushes to it until the next start",
    );
    await record(peer, (r) => ({ ...r, size: peer.known, alarm: { ...problem, at: now() } }));
  };

  const fail = async (peer: Peer, problem: Omit<WitnessProblem, "at">) => {
    peer.failures++;
    const pause = Math.min(FIRST_BACKOFF_MS * 2 ** (peer.failures - 1), MAX_BACKOFF_MS);
    peer.pauseUntil = now() + pause;
    logger.error(
      `Witness "${peer.witness.name}" push failed (${problem.status || "no answer"}): ` +
        `${problem.reason}; next try in ${Math.round(pause / 1000)} s at the earliest`,
    );
    await record(peer, (r) => ({ ...r, size: peer.known, error: { ...problem, at: now() } }));
  };

  /** One add-checkpoint request with its deadline; never throws. */
  const request = async (peer: Peer, body: string): Promise<Answer> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const res = await send(`${peer.witness.url}/add-checkpoint`, {
        method: "POST",
        body,
        signal: controller.signal,
      });
      const text = await readAnswer(res);
      const type = res.headers.get("content-type") ?? "";
      return { kind: "answered", status: res.status, type, body: text };
    } catch (error) {
      const cause = (error as Error).cause;
      const reason = controller.signal.aborted
        ? `no answer within ${timeoutMs} ms`
        : `the request failed: ${(error as Error).message}${
          cause instanceof Error ? ` (${cause.message})` : ""
        }`;
      return { kind: "none", reason };
    } finally {
      clearTimeout(timer);
    }
  };

  /** Pushes the current checkpoint to `peer`, following one 409; records what came of it. */
  const pushOnce = async (peer: Peer) => {
    const tree = await log.current();
    const size = tree.size;
    const { text, note, root } = checkpointOf(size, tree.root(size));
    peer.known ??= (await cosignatures.pushRecord(peer.vkey))?.size ?? 0;
    // A size above the log's cannot be proven from: asking from 0 makes the witness name its own.
    let old = peer.known <= size ? peer.known : 0;
    for (let attempt = 0;; attempt++) {
      const proof = tree.consistencyProof(old, size).map((h) => `${bytesToBase64(h)}\n`).join("");
      const answer = await request(peer, `old ${old}\n${proof}\n${note}`);
      if (answer.kind === "none") {
        return await fail(peer, { kind: "no-answer", status: 0, reason: answer.reason });
      }
      const { status, type, body } = answer;
      if (status === 200) return await cosigned(peer, { text, size, root, body });
      if (status === 422) {
        return await alarm(peer, { kind: "inconsistent", status, reason: firstLine(body) });
      }
      if (status !== 409) {
        return await fail(peer, { kind: "refused", status, reason: firstLine(body) });
      }
      const held = SIZE_BODY.exec(body);
      if (held === null || type.split(";")[0].trim() !== SIZE_CONTENT_TYPE) {
        return await fail(peer, {
          kind: "unexpected-size",
          status,
          reason: `a 409 without a size: ${firstLine(body)}`,
        });
      }
      const theirs = Number(held[1]);
      if (theirs > size) {
        return await alarm(peer, {
          kind: "witness-ahead",
          status,
          reason: `the witness holds size ${theirs}, above the log's size ${size}`,
        });
      }
      if (theirs === old) {
        // tlog-witness v1.0.0 answers 409 with the size itself when the roots at it differ.
        return await alarm(peer, {
          kind: "fork",
          status,
          reason: `the witness refused size ${size} from its own size ${old}: a fork`,
        });
      }
      peer.known = theirs;
      if (attempt > 0) {
        return await fail(peer, {
          kind: "unexpected-size",
          status,
          reason: `the witness moved again, to size ${theirs}`,
        });
      }
      old = theirs;
    }
  };

  /** Keeps the cosignature a 200 answered, if it verifies under the witness's vkey. */
  const cosigned = async (
    peer: Peer,
    { text, size, root, body }: { text: string; size: number; root: Uint8Array; body: string },
  ) => {
    let note: SignedNote;
    try {
      note = parseNote(`${text}\n${body}`);
    } catch (error) {
      return await alarm(peer, {
        kind: "bad-cosignature",
        status: 200,
        reason: `the answer is not signature lines: ${(error as Error).message}`,
      });
    }
    const { key } = peer.witness;
    const lines = note.signatures.filter((s) => s.name === key.name);
    const line = lines.find((s) => equalBytes(s.keyId, key.keyId)) ?? lines[0];
    if (line === undefined) {
      return await alarm(peer, {
        kind: "bad-cosignature",
        status: 200,
        reason: "the answer has no line of its key",
      });
    }
    const kept = await cosignatures.keep({ text, size, root }, {
      line,
      key,
      now: now(),
      pinned,
    });
    if (kept.kind === "early") {
      // A witness whose clock runs ahead signs validly: retried with backoff, never an alarm.
      return await fail(peer, { kind: "refused", status: 200, reason: kept.reason });
    }
    if (kept.kind === "bad") {
      return await alarm(peer, { kind: "bad-cosignature", status: 200, reason: kept.reason });
    }
    peer.known = size;
    peer.cosigned = size;
    peer.failures = 0;
    peer.pauseUntil = 0;
    await record(peer, () => ({ size, alarm: null, error: null }));
  };

  const start = (peer: Peer): Promise<void> => {
    if (peer.flight !== null) {
      peer.again = true;
      return peer.flight;
    }
    const run = async () => {
      do {
        peer.again = false;
        await pushOnce(peer);
      } while (peer.again && !peer.halted && now() >= peer.pauseUntil);
    };
    const flight = run()
      .catch((error) => logger.error(`Witness "${peer.witness.name}" push failed:`, error))
      .finally(() => {
        peer.again = false;
        peer.flight = null;
      });
    peer.flight = flight;
    return flight;
  };

  return {
    async push({ refresh = false } = {}) {
      try {
        const { size } = await log.current();
        const due = peers.filter((peer) =>
          !peer.halted && now() >= peer.pauseUntil && (refresh || peer.cosigned !== size)
        );
        await Promise.all(due.map(start));
      } catch (error) {
        logger.error("Pushing to the witnesses failed:", error);
      }
    },
  };
}

/** The answer's body as text, at most {@link MAX_ANSWER_BYTES} of it. */
async function readAnswer(res: Response): Promise<string> {
  if (res.body === null) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < MAX_ANSWER_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(bytes.subarray(0, MAX_ANSWER_BYTES));
}

/** The first line of a witness's answer, at most 200 characters: its reason, for the log. */
function firstLine(body: string): string {
  const line = body.split("\n", 1)[0].trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line || "(empty answer)";
}
