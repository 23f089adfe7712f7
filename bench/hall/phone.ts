// One phone of the hall bench (bench/hall/main.ts), at the HTTP level: what the relayed voting page
// does, with the page's own client logic (lib/client/): poll the round's state through the relay,
// read its group by index, vote in its send window, retry, read its tag, proof, "sealed with"
// and checkpoints, all through the relay and under the phone's request budget.
import { ApiCallError, createApiClient } from "../../lib/client/api_client.ts";
import { groupIndexOf } from "../../lib/client/rounds/group_index.ts";
import { readGroupFromState } from "../../lib/client/rounds/state_group.ts";
import { createRelayedTransport } from "../../lib/client/relay/relayed_transport.ts";
import { sealingEncapsulator } from "../../lib/client/relay/sealing.ts";
import { checkWindow, planHallSend, sendWindowMs } from "../../lib/client/relay/send_window.ts";
import {
  classifyVoteAnswer,
  nextVoteStep,
  tagCheckStep,
  type VoteOutcome,
  type VoteStep,
} from "../../lib/client/relay/vote_retry.ts";
import {
  checkpointDue,
  nextPollDelay,
  PAGE_REQUESTS_PER_MINUTE,
  type PollStage,
  RequestBudget,
} from "../../lib/client/relay/poll_schedule.ts";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import type { VoteSubmission } from "../../lib/protocol/schemas.ts";

/** What the bench gives a phone. */
export type PhoneSetup = {
  index: number;
  keyId: number;
  key: string;
  round: number;
  choices: string[];
  origin: string;
  relay: string;
  ohttp: string;
  /** The ballot signed before the opening (bench shortcut), over the ring the rule predicts. */
  presigned: VoteSubmission;
  /** Signs again over `keys` when the group read differs from the prediction. */
  sign(keys: string[]): VoteSubmission;
};

/** What a phone measured. */
export type PhoneLog = {
  /** Every relayed request's send time, ms since the epoch (the key read included). */
  requests: number[];
  /** Relayed requests between the state read that showed voting open and a signed ballot. */
  atOpening: number;
  sawOpenAt: number | null;
  windowMs: number | null;
  windowDiffers: boolean;
  sendAt: number | null;
  sendReason: string | null;
  sends: { at: number; ms: number; outcome: VoteOutcome["kind"] }[];
  accepted: number;
  acceptedAt: number | null;
  relay504: { reads: number; votes: number };
  resigned: boolean;
  sealedHeight: number | null;
  sealedAt: number | null;
  sealedWith: number | null;
  final: "proven" | "waiting" | "failed" | "unfinished";
  reason: string | null;
  readErrors: number;
  checkpointChecks: number;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The size line of a checkpoint note. */
function checkpointSize(note: string): number {
  return Number(note.split("\n")[1]);
}

/** Runs one phone until the hall closes; answers its log. */
export async function runPhone(setup: PhoneSetup, startDelayMs: number): Promise<PhoneLog> {
  const log: PhoneLog = {
    requests: [],
    atOpening: 0,
    sawOpenAt: null,
    windowMs: null,
    windowDiffers: false,
    sendAt: null,
    sendReason: null,
    sends: [],
    accepted: 0,
    acceptedAt: null,
    relay504: { reads: 0, votes: 0 },
    resigned: false,
    sealedHeight: null,
    sealedAt: null,
    sealedWith: null,
    final: "unfinished",
    reason: null,
    readErrors: 0,
    checkpointChecks: 0,
  };
  const budget = new RequestBudget(PAGE_REQUESTS_PER_MINUTE);
  const counted: typeof fetch = async (url, init) => {
    // Every relayed request waits for room in the phone's budget, the page's: 18 in any 60 s.
    for (let wait = budget.delayFor(Date.now()); wait > 0; wait = budget.delayFor(Date.now())) {
      await sleep(wait);
    }
    budget.record(Date.now());
    log.requests.push(Date.now());
    return await fetch(url, init);
  };
  const { transport, keyCheck } = createRelayedTransport({
    pin: { relay: setup.relay, ohttp: setup.ohttp },
    origin: setup.origin,
    fetch: counted,
    encapsulator: sealingEncapsulator({
      ohttp: setup.ohttp,
      origin: setup.origin,
      choicesOf: () => Promise.resolve(setup.choices),
    }),
  });
  const api = createApiClient({
    fetch: transport,
    baseUrl: setup.origin,
    ledger: { round: setup.round },
  });
  const is504 = (error: unknown) =>
    error instanceof ApiCallError && error.status === 0 && error.reason.includes("504");
  const read = async <T>(call: () => Promise<T>): Promise<T | null> => {
    try {
      return await call();
    } catch (error) {
      if (is504(error)) log.relay504.reads++;
      else log.readErrors++;
      return null;
    }
  };

  let stage = "waiting" as PollStage;
  let state = null as RoundState | null;
  const opened = Promise.withResolvers<RoundState>();
  let checked: { size: number; at: number } | null = null;
  const checkpointCheck = async (final: boolean) => {
    if (state === null) return;
    const size = checkpointSize(state.checkpoint);
    const due = checkpointDue({
      size,
      checkedSize: checked?.size ?? null,
      checkedAt: checked?.at ?? null,
      now: Date.now(),
      final,
    });
    if (!due) return;
    if (checked !== null && checked.size > 0) {
      const proof = await read(() => api.consistencyProof(checked!.size, size));
      if (proof === null) return;
    }
    log.checkpointChecks++;
    checked = { size, at: Date.now() };
  };

  // The one poll: the round's state, jittered, sparser once proven, one last after the close.
  const poller = (async () => {
    await sleep(startDelayMs);
    for (;;) {
      const fresh = await read(() => api.roundState());
      if (fresh !== null) {
        state = fresh;
        if (fresh.phase !== "join" && log.sawOpenAt === null) {
          log.sawOpenAt = Date.now();
          opened.resolve(fresh);
        }
        const over = fresh.phase === "closed" || fresh.current !== setup.round;
        if (over) {
          await checkpointCheck(true);
          return;
        }
        if (stage === "proven") await checkpointCheck(false);
      }
      const delay = nextPollDelay(stage, Math.random);
      if (delay === null) return;
      await sleep(delay);
    }
  })();

  const ok = await keyCheck();
  if (ok.kind !== "ok") {
    log.final = "failed";
    log.reason = `key check: ${ok.kind}`;
    await poller;
    return log;
  }

  // The opening: the state read that showed it, then one read of the group, then sign.
  const atOpen = await opened.promise;
  const before = log.requests.length;
  const rule = { minVoters: 8, lateJoiners: false };
  let group = null;
  for (let tries = 0; group === null && tries < 5; tries++) {
    const got = await readGroupFromState(api, {
      ownId: setup.keyId,
      ownKey: setup.key,
      rule,
      state: state ?? atOpen,
    });
    if (got.kind === "group") group = got;
    else if (got.kind === "unknown") await sleep(2_000 + Math.random() * 3_000);
    else {
      log.final = "failed";
      log.reason = `group: ${got.kind}`;
      await poller;
      return log;
    }
  }
  if (group === null) {
    log.final = "failed";
    log.reason = "group never read";
    await poller;
    return log;
  }
  let ballot = setup.presigned;
  if (ballot.publicKeys.join() !== group.keys.join()) {
    ballot = setup.sign(group.keys);
    log.resigned = true;
  }
  log.atOpening = log.requests.length - before + 1;
  const readyAt = Date.now();
  const own = sendWindowMs({
    keysAtOpen: atOpen.keysAtOpen!,
    intervalMs: atOpen.intervalMs,
    verifyRate: atOpen.verifyRate,
  });
  const { windowMs, differs } = checkWindow(own, atOpen.sendWindowMs);
  log.windowMs = windowMs;
  log.windowDiffers = differs;
  const plan = planHallSend({ openedAt: atOpen.openedAt!, readyAt, windowMs }, Math.random);
  log.sendAt = plan.at;
  log.sendReason = plan.reason;
  stage = "voting";
  await sleep(plan.at - Date.now());

  // The vote, and its retries: the same bytes every time.
  const intervalMs = atOpen.intervalMs;
  const nextSeal = () => (Math.floor(Date.now() / intervalMs) + 1) * intervalMs;
  let step: VoteStep = { kind: "resend", at: Date.now() };
  let sends = 0;
  while (step.kind === "resend" || step.kind === "check-tag") {
    await sleep(step.at - Date.now());
    if (step.kind === "resend") {
      sends++;
      const started = Date.now();
      let outcome: VoteOutcome;
      try {
        await api.submitVote(ballot);
        outcome = classifyVoteAnswer({ status: 202 });
        log.accepted++;
        log.acceptedAt = Date.now();
      } catch (error) {
        if (!(error instanceof ApiCallError)) throw error;
        if (is504(error)) log.relay504.votes++;
        outcome = classifyVoteAnswer({
          status: error.status === 0 ? null : error.status,
          code: error.code,
          retryAfter: error.retryAfterSeconds === null ? null : String(error.retryAfterSeconds),
        });
      }
      log.sends.push({ at: started, ms: Date.now() - started, outcome: outcome.kind });
      stage = "sent";
      step = nextVoteStep(
        { outcome, sends, now: Date.now(), nextSealAt: nextSeal(), intervalMs },
        Math.random,
      );
    } else {
      const tag = await read(() =>
        api.voteOfTag(ballot.tag).then(() => true, (error) => {
          if (error instanceof ApiCallError && error.status === 404) return false;
          throw error;
        })
      );
      if (tag === null) {
        step = { kind: "check-tag", at: nextSeal() + 1_000 + Math.random() * 2_000 };
        continue;
      }
      step = tagCheckStep({ found: tag, sends, now: Date.now(), intervalMs }, Math.random);
    }
  }
  if (step.kind !== "done") {
    log.final = step.kind;
    log.reason = step.reason;
    await poller;
    return log;
  }

  // Sealed and proven: its tag's block once sealed, its proof, and its group's count in it.
  for (let tries = 0; tries < 12 && log.final === "unfinished"; tries++) {
    await sleep(nextSeal() - Date.now() + 1_000 + Math.random() * 2_000);
    const where = await read(() => api.voteOfTag(ballot.tag));
    if (where === null) continue;
    const proof = await read(() => api.voteProof(where.blockId, where.voteId));
    if (proof === null) continue;
    const counts = await read(() => api.blockGroups(where.blockId));
    if (counts === null) continue;
    const g = groupIndexOf((state ?? atOpen).groups, setup.keyId)!;
    log.sealedHeight = where.blockId;
    log.sealedAt = proof.block.timestamp;
    log.sealedWith = counts.counts[g];
    log.final = "proven";
    stage = "proven";
  }
  await poller;
  return log;
}
