/**
 * Browser-safe. The attack lab's actions: its own voters, the honest votes the attacks start from,
 * each attack sent with the ledger read around it, each lie seen through the lens — all on the
 * practice ledger (`/api/lab/…`, protocol §4.7).
 * @module
 */
import { base64ToBytes, bytesToHex } from "../../protocol/bytes.ts";
import { generateSeed, keyPairFromSeed } from "../../protocol/keys.ts";
import type { SignatureWire, VoteSubmission } from "../../protocol/schemas.ts";
import { ApiCallError, type ApiClient, createApiClient, type Transport } from "../api_client.ts";
import { type Attack, type AttackFact, type AttackInput, type LabKey } from "./attacks.ts";
import type { SeenHeads } from "../log/heads.ts";
import { checkVoteView, type LensVerdict } from "./lens_checks.ts";
import { HONEST_VIEW, type LensView, type LieId } from "./lies.ts";
import { type SplitViewRun, viewSplit } from "./split_view.ts";
import {
  type ClientIO,
  generateKeys,
  loadKeyStatus,
  readStoredKeys,
  readStoredVote,
  registerKey,
  submitVote,
} from "../voter/panel_actions.ts";
import { storedBlockId } from "../voter/status.ts";
import { serializeVoterList } from "../voter/voters.ts";

/**
 * Browser-storage key of the lab's voter list: the lab's voters are not on the voting page's
 * list (`voters`, page §3), so the voting page never shows them.
 */
export const LAB_VOTERS_KEY = "ringvote/lab-voters";

/** The namespace of lab voter `n` (1-based). */
export function labNamespace(n: number): string {
  return `Lab voter ${n}`;
}

/** What the lab needs from outside: storage, the honest API client and the lens's clients. */
export type LabIO = ClientIO & { lensApi(view: LensView): ApiClient };

/**
 * The lab's clients over `fetch`: every call to the practice ledger (`/api/lab/…`), and its lens
 * (`/api/lab/lens/{view}/…`); nothing the lab sends reaches the election's ledger.
 */
export function labClients(fetch: Transport): Pick<LabIO, "api" | "lensApi"> {
  return {
    api: createApiClient({ fetch, ledger: "lab" }),
    lensApi: (view) => createApiClient({ fetch, ledger: "lab", lens: view }),
  };
}

/**
 * The practice ledger refused a key or a vote because it is full (409 `lab_full`): the lab needs
 * a fresh one ({@link startFreshLedger}). `message` is the server's reason.
 */
export class LabFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LabFullError";
  }
}

/** Starts a fresh practice ledger (`POST /api/lab/reset`); the lab's voters register again. */
export async function startFreshLedger(io: LabIO): Promise<void> {
  await io.api.resetLedger();
}

/**
 * `io` with its registrations and votes watched for the practice ledger's `lab_full` refusal,
 * and the refusal seen last, as a {@link LabFullError}, or null.
 */
function watchingFull(io: LabIO): { io: LabIO; full(): LabFullError | null } {
  let full: LabFullError | null = null;
  const noting = (error: unknown): never => {
    if (error instanceof ApiCallError && error.code === "lab_full") {
      full = new LabFullError(error.reason);
    }
    throw error;
  };
  const api: ApiClient = {
    ...io.api,
    registerKey: (body) => io.api.registerKey(body).catch(noting),
    submitVote: (body) => io.api.submitVote(body).catch(noting),
  };
  return { io: { ...io, api }, full: () => full };
}

/** The ledger as the lab shows it: the height, the number of sealed votes and the tally. */
export type LedgerFacts = {
  height: number;
  votes: number;
  tally: { payload: string; count: number }[];
};

/** The ledger's height, vote count and tally, read now. */
export async function readLedger(api: ApiClient): Promise<LedgerFacts> {
  const [status, tally] = await Promise.all([api.blockStatus(), api.tally()]);
  return { height: status.height, votes: tally.total, tally: tally.results };
}

/** True when `a` and `b` show the same ledger. */
export function sameLedger(a: LedgerFacts, b: LedgerFacts): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The payloads of the lab's two honest votes. */
export const HONEST_PAYLOADS = ["Lab: honest vote", "Lab: second honest vote"] as const;

/** Where the lab stands once prepared: its keys, and its voter's sealed honest vote. */
export type LabReady = {
  input: AttackInput;
  /** The namespace whose vote the lens shows. */
  viewer: string;
};

/** Progress of {@link prepareLab}, one line for the page. */
export type LabProgress = (line: string) => void;

/**
 * Prepares the lab: `count` lab voters with registered keys (made again when the server no longer
 * knows them), two honest votes — by voter 1, whose vote the attacks and the lens start from, and
 * by voter 2, so that voter 1's block holds two votes and its proof has a path — and waits until
 * they are sealed. Voter 3 never votes: attacks that must be refused only for the check they
 * break are signed with its key. Throws with a readable message when a step fails, and a
 * {@link LabFullError} when the practice ledger is full.
 */
export async function prepareLab(
  labIO: LabIO,
  { count, ringSize, progress, pollMs = 500, sleep = defaultSleep }: {
    count: number;
    ringSize: number;
    progress: LabProgress;
    pollMs?: number;
    sleep?: (ms: number) => Promise<void>;
  },
): Promise<LabReady> {
  const { io, full } = watchingFull(labIO);
  const namespaces = Array.from({ length: count }, (_, i) => labNamespace(i + 1));
  io.storage.setItem(LAB_VOTERS_KEY, serializeVoterList(namespaces));
  for (const [i, namespace] of namespaces.entries()) {
    progress(`Registering the lab's voters: ${i + 1} of ${count}`);
    const line = await loadKeyStatus(io, namespace);
    if (line.status === "registered") continue;
    generateKeys(io, namespace);
    const registered = await registerKey(io, namespace);
    if (registered.status !== "registered") {
      throw full() ?? new Error(`${namespace} could not register its key`);
    }
  }
  for (const [i, payload] of HONEST_PAYLOADS.entries()) {
    const namespace = namespaces[i];
    if (await honestVoteStands(io, namespace)) continue;
    progress(`${namespace} casts an honest vote: "${payload}"`);
    const outcome = await submitVote(io, namespace, { content: payload, ringSize });
    if (!outcome.ok) {
      throw full() ?? new Error(`${namespace}'s honest vote failed: ${outcome.reason}`);
    }
  }
  const blockIds = namespaces.slice(0, 2).map((n) => storedBlockId(readStoredVote(io.storage, n))!);
  const last = Math.max(...blockIds);
  for (;;) {
    const { height } = await io.api.blockStatus();
    if (height >= last) break;
    progress(`Waiting for the server to seal block ${last} (the chain is at ${height})…`);
    await sleep(pollMs);
  }
  const keys = namespaces.map((n) => labKey(io, n));
  const viewer = namespaces[0];
  const stored = readStoredVote(io.storage, viewer);
  const boardVote = (await io.api.blockVotes(blockIds[0])(0, 100)).items
    .find((entry) => entry.voteId === stored.voteId)?.vote ?? null;
  return {
    viewer,
    input: {
      voter: keys[0],
      spare: keys[2],
      members: keys,
      stranger: freshKey(),
      honest: submissionOf(stored.voteSignature!, stored.voteContent!),
      boardVote,
      ringSize,
    },
  };
}

/** True when `namespace` has a stored vote the server still holds (the tag lookup agrees). */
async function honestVoteStands(io: LabIO, namespace: string): Promise<boolean> {
  const stored = readStoredVote(io.storage, namespace);
  if (stored.voteId === null || stored.voteSignature === null) return false;
  try {
    const { I } = JSON.parse(stored.voteSignature) as SignatureWire;
    return (await io.api.voteOfTag(I)).voteId === stored.voteId;
  } catch {
    return false;
  }
}

function labKey(io: LabIO, namespace: string): LabKey {
  const { publicKey, privateKey } = readStoredKeys(io.storage, namespace);
  return { seed: base64ToBytes(privateKey!, "privateKey"), key: publicKey! };
}

/** A key that was never registered: made here, and forgotten after the page closes. */
function freshKey(): LabKey {
  const seed = generateSeed();
  return { seed, key: bytesToHex(keyPairFromSeed(seed).publicKey) };
}

/** The submission a stored vote was sent as. */
function submissionOf(signature: string, payload: string): VoteSubmission {
  const wire = JSON.parse(signature) as SignatureWire;
  return { publicKeys: wire.ring, signature, tag: wire.I, payload };
}

/** An attack as it went: what was sent, what came back, the ledger before and after. */
export type AttackRun = {
  body: VoteSubmission;
  facts: AttackFact[];
  status: number;
  code: string | null;
  answer: string;
  outcome: "refused" | "accepted";
  before: LedgerFacts;
  after: LedgerFacts;
};

/** Builds `attack` from the lab's keys, sends it for real, and reads the ledger around it. */
export async function runAttack(
  api: ApiClient,
  { attack, input }: { attack: Attack; input: AttackInput },
): Promise<AttackRun> {
  const { body, facts } = attack.build(input);
  const before = await readLedger(api);
  let status: number;
  let code: string | null = null;
  let answer: string;
  try {
    const accepted = await api.submitVote(body);
    status = 202;
    answer = JSON.stringify(accepted);
  } catch (error) {
    if (!(error instanceof ApiCallError) || error.status === 0) throw error;
    status = error.status;
    code = error.code;
    answer = `${error.code}: ${error.reason}`;
  }
  const after = await readLedger(api);
  const outcome = status >= 400 && status < 500 ? "refused" : "accepted";
  return { body, facts, status, code, answer, outcome, before, after };
}

/**
 * A lie as seen: whether the voter's checks caught it, which failed, and the evidence; for the
 * split view, its two newcomers and the projector's witness.
 */
export type LieRun = LensVerdict & { split: SplitViewRun | null };

/**
 * Views the lab voter's vote through the lens telling no lie (remembering the signed heads shown),
 * then through the lens telling `lie`, and runs the voter's checks on each view. Both views and
 * the key they are checked against are the lens's (protocol §4.7): a fork shown here is proven
 * under the lens key only, never under the server key. The split view is shown to newcomers
 * instead, who remember nothing ({@link viewSplit}); `seen` is then kept as it was.
 */
export async function runLie(
  io: LabIO,
  { lie, viewer, seen }: { lie: LieId; viewer: string; seen: SeenHeads },
): Promise<LieRun> {
  const stored = readStoredVote(io.storage, viewer);
  const baseline = io.lensApi(HONEST_VIEW);
  const { key } = await baseline.serverKey();
  if (lie === "split-view") {
    const split = await viewSplit({ honest: baseline, split: io.lensApi(lie) }, { stored, key });
    const caught = split.witnessed.verdict === "refused";
    return {
      detected: caught,
      failed: caught ? ["witness cosignature"] : [],
      details: [],
      evidence: null,
      seen,
      shown: [],
      split,
    };
  }
  const honest = await checkVoteView(baseline, { stored, key, seen });
  if (honest.detected) {
    throw new Error(`The honest server already fails a check: ${honest.details.join("; ")}`);
  }
  const told = await checkVoteView(io.lensApi(lie), { stored, key, seen: honest.seen });
  return { ...told, seen: honest.seen, split: null };
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
