/**
 * Browser-safe. The lab's split view for a newcomer (protocol §4.7, §4.10): a browser that has never
 * seen the ledger is shown the lens's forked history. Alone, it has nothing to compare it with and
 * accepts it; under a witness policy naming the projector's witness — which cosigned the history
 * everyone else sees, and never cosigns a second one — it waits for a cosignature that cannot come.
 * @module
 */
import { generateSeed } from "../../protocol/keys.ts";
import { checkLogForkEvidence } from "../../protocol/log_evidence.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatNote,
  formatVerifierKey,
  type NoteSigner,
  parseNote,
  signCosignature,
  signerKey,
} from "../../protocol/note.ts";
import type { ApiClient } from "../api_client.ts";
import { logAlerts } from "../log/head_alerts.ts";
import type { SeenHeads } from "../log/heads.ts";
import { emptyLogMemory, type LogMemory, type LogProblem } from "../log/log_memory.ts";
import { checkLog, type LogCheck } from "../log/log_view.ts";
import { MAX_WITNESS_INTERVAL_MS, unwitnessedBoundMs } from "../log/log_witness.ts";
import type { StoredVote } from "../voter/status.ts";
import type { WitnessPolicy } from "../log/witness_policy.ts";
import { checkVoteView, type LensVerdict } from "./lens_checks.ts";

/** The name of the projector's witness the lab makes for the demonstration. */
export const LAB_WITNESS_NAME = "witness.ringvote.local/lab-projector";

/**
 * What one newcomer's browser does with the history shown: accepts it — the page stays green — or
 * refuses it: it raises an alert (red). `witness` is where it stands with its witnesses, null
 * without a policy; `details` say why, one line each.
 */
export type NewcomerVerdict = {
  verdict: "accepted" | "refused";
  witness: WitnessStatus | null;
  details: string[];
};

/**
 * Why the projector's witness refuses to cosign the forked checkpoint: it is a fork of the one it
 * cosigned — at the same size another root, or at a larger size a consistency proof that fails —
 * or it fails the log's check for another reason (`kind` of log_view.ts's LogProblem).
 */
export type ProjectorRefusal =
  | { kind: "fork"; form: "same-size" | "failed-proof" }
  | { kind: LogProblem["kind"] };

/** Where a browser with a witness policy stands with its witnesses (log_view.ts). */
export type WitnessStatus = NonNullable<LogCheck["witness"]>["status"];

/** The split view as the lab shows it: two newcomers side by side, and the projector's part. */
export type SplitViewRun = {
  /** The newcomer without a witness policy. */
  alone: NewcomerVerdict;
  /** The newcomer whose policy requires the projector's witness, {@link boundMs} after it looked. */
  witnessed: NewcomerVerdict;
  /** That newcomer's witness status when it first looked. */
  witnessedAtFirst: WitnessStatus | null;
  /** The same policy's status of the honest history with the projector's cosignature. */
  honestUnderPolicy: WitnessStatus | null;
  /** The projector's witness: its vkey, the size it cosigned, and why it refused the fork. */
  projector: { vkey: string; cosignedSize: number; refusal: ProjectorRefusal | null };
  /** How long a page waits for a witness before it raises `unwitnessed`. */
  boundMs: number;
};

/** A witness key made in this browser, for the demonstration only: the projector's stand-in. */
export function labWitness(seed: Uint8Array = generateSeed()): NoteSigner {
  return { name: LAB_WITNESS_NAME, seed };
}

/**
 * Shows the split view of `split` (the lens telling `split-view`) to two newcomers, after the
 * projector's witness has accepted and cosigned what `honest` (the lens telling no lie) shows:
 *
 * - the projector checks the honest checkpoint as a page does and cosigns it; asked to cosign the
 *   forked checkpoint, it checks it against the one it cosigned and refuses (a fork);
 * - a newcomer without a policy runs the voter's checks and the log's on the split view: all hold;
 * - a newcomer whose policy requires the projector is shown the forked checkpoint with the
 *   projector's line copied onto it, the best a liar can do: that line signs another root, so the
 *   checkpoint is `waiting`, and the same rule asked `boundMs` later says `unwitnessed`. The honest
 *   checkpoint with that line is witnessed at once, so the policy refuses only what it must.
 *
 * `key` is the lens key both views are signed with; `now` the time of the cosignature and checks.
 * Throws when the honest view does not hold, or a read fails.
 */
export async function viewSplit(
  { honest, split }: { honest: ApiClient; split: ApiClient },
  { stored, key, witness = labWitness(), now = Date.now(), boundMs = DEFAULT_BOUND_MS }: {
    stored: StoredVote;
    key: string;
    witness?: NoteSigner;
    now?: number;
    boundMs?: number;
  },
): Promise<SplitViewRun> {
  const checkOf = (api: ApiClient, note: string, options: LogOptions) =>
    checkLog(api, { key, note, boundMs, ...options });
  // The projector accepts the honest history, as its board does, and cosigns it.
  const honestNote = await honest.checkpoint();
  const seenByProjector = await checkOf(honest, honestNote, fresh(now));
  if (!seenByProjector.checkpoint || seenByProjector.problems.length > 0) {
    throw new Error("The projector could not accept the honest history");
  }
  const honestText = parseNote(honestNote).text;
  const line = signCosignature(honestText, witness, Math.floor(now / 1000));
  const cosignedSize = seenByProjector.checkpoint.size;
  const forkedNote = await split.checkpoint();
  const asked = await checkOf(split, forkedNote, { ...fresh(now), memory: seenByProjector.memory });
  const refusal = projectorRefusal(asked);

  const view = await checkVoteView(split, { stored, key, seen: NOTHING_SEEN });
  const shown = view.shown;
  const alone = newcomer(view, await checkOf(split, forkedNote, { ...fresh(now), shown }));

  // The best a liar can do for a browser with a policy: copy the projector's line onto the fork.
  const policy: WitnessPolicy = { witnesses: [signerKey(witness, COSIGNATURE_V1_TYPE)], quorum: 1 };
  const withLine = (note: string) => {
    const { text, signatures } = parseNote(note);
    return formatNote({ text, signatures: [...signatures, line] });
  };
  const control = await checkOf(honest, withLine(honestNote), { ...fresh(now), policy });
  const first = await checkOf(split, withLine(forkedNote), { ...fresh(now), shown, policy });
  const later = await checkOf(split, withLine(forkedNote), {
    ...fresh(now + boundMs + 1),
    memory: first.memory,
    shown,
    policy,
  });
  const witnessed = newcomer(view, later);
  witnessed.details.unshift(
    `The projector's witness cosigned the history everyone else sees (${cosignedSize} blocks); ` +
      `with that cosignature, this browser finds it ${control.witness?.status ?? "unchecked"}.`,
    "The forked checkpoint carries the projector's cosignature copied from that history: it " +
      "signs another root, so it counts for nothing. This browser is " +
      `${first.witness?.status ?? "unchecked"} for the projector; the same check made ` +
      `${Math.round(boundMs / 1000)} s later, the longest a page waits, says:`,
  );
  return {
    alone,
    witnessed,
    witnessedAtFirst: first.witness?.status ?? null,
    honestUnderPolicy: control.witness?.status ?? null,
    projector: {
      vkey: formatVerifierKey(signerKey(witness, COSIGNATURE_V1_TYPE)),
      cosignedSize,
      refusal,
    },
    boundMs,
  };
}

/** The longest a page waits for its witnesses (two sealing intervals of at most a minute, + 15 s). */
const DEFAULT_BOUND_MS = unwitnessedBoundMs(MAX_WITNESS_INTERVAL_MS);

const NOTHING_SEEN: SeenHeads = { key: null, heads: [] };

/** What {@link checkLog} takes besides the key, the note and the bound. */
type LogOptions = {
  memory: LogMemory;
  shown: LensVerdict["shown"];
  policy: WitnessPolicy | null;
  now: number;
};

/** A browser that remembers nothing, has no policy and was shown nothing yet, at `now`. */
function fresh(now: number): LogOptions {
  return { memory: emptyLogMemory(), shown: [], policy: null, now };
}

/**
 * Why the projector's witness would not cosign what `asked` checked: a fork of what it cosigned, or
 * another problem of the log; null when it would cosign it.
 */
function projectorRefusal(asked: LogCheck): ProjectorRefusal | null {
  if (asked.fork) {
    const check = checkLogForkEvidence(asked.fork);
    return { kind: "fork", form: check.ok ? check.form : "failed-proof" };
  }
  const problem = asked.problems[0];
  return problem ? { kind: problem.kind } : null;
}

/** A newcomer's verdict: the voter's checks on the view, then the log's check of what it showed. */
function newcomer(view: LensVerdict, log: LogCheck): NewcomerVerdict {
  const alerts = logAlerts(log.problems);
  const refused = view.detected || log.fork !== null || alerts.length > 0;
  const details = [...view.details, ...alerts.map((a) => `${a.title}: ${a.text}`)];
  if (log.checkpoint && !refused) {
    const proven = log.beyond.length === 0
      ? "every block shown proven included"
      : "every block shown within it proven included (those above it wait for the next check)";
    details.push(
      `The vote's checks hold, and the checkpoint of ${log.checkpoint.size} blocks is signed by ` +
        `the key the server answers, with ${proven}. A browser that remembers nothing has ` +
        "nothing to compare it with.",
    );
  }
  return {
    verdict: refused ? "refused" : "accepted",
    witness: log.witness?.status ?? null,
    details,
  };
}
