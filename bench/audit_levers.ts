// The levers of the audit's speed (issue 28), measured one against another on the same votes in one
// thread of one process: every vote of a ledger of really signed votes (rings of 8, blocks of 100,
// one key per vote), in chain order, checked as an audit worker checks it (leaf hash, signature
// decoded, every verifier check) with its ring members taken from
//
//   old cache      the worker's member cache before issue 28: 48 MiB of members counted at 13.5 KB
//                  (3,728), each met anew decoded, torsion-checked and given Hp, without combs
//   every Hp       the same, with room for every key: each key checked once, no combs
//   combs, twice   each key checked and given its combs by each of two workers that meet it
//                  (the cost of a key counted twice), no key data shared
//   combs, once    each key checked and given its combs once (the pool's key data), decoded
//                  from its stored form by the worker that verifies, which keeps the members it
//                  decoded last (WORKER_MEMBERS_BUDGET)
//   … 48 MiB       the same, the worker keeping 48 MiB of decoded members
//   narrow, once   each key checked and given its narrow combs once (a directory too large for
//                  combs), decoded by the worker that verifies
//   checked, once  each key checked once and kept as P and Hp(P) alone, no combs
//   server         the server's verification of the same votes with their stored combs
//                  (server/verifier/jobs.ts runJob, one worker's share of the member budget)
//
// Prints CPU time per vote for each and its ratio to the server's, medians of the rounds, and what
// that CPU time alone comes to for an election of 100,000 votes over 100,000 keys (the kept ledger
// of bench/build_ledger.ts: one key per vote, each key in about 8 rings, as here) on 2 cores divided
// without loss: the floor of each lever's audit, before any read, hash or message.
//
//   deno run -A bench/audit_levers.ts [votes] [rounds]      defaults: 10000 votes, 1 round
//   BENCH_LEDGER=FILE deno run -A bench/audit_levers.ts …   the ledger kept in FILE
import process from "node:process";
import {
  createAuditMembers,
  type KeyForm,
  precomputeKeys,
  WORKER_MEMBERS_BUDGET,
} from "../lib/client/audit/audit_keys.ts";
import { verifyVote } from "../lib/client/audit/vote_checks.ts";
import type { KeyPrecomputation } from "../lib/protocol/key_precomputation.ts";
import { createMemberCache, DEFAULT_MEMBER_BUDGET } from "../lib/protocol/member_cache.ts";
import type { VoteRecord } from "../lib/protocol/schemas.ts";
import { decodeSignature } from "../lib/protocol/signature_wire.ts";
import { runJob, warmUp } from "../server/verifier/jobs.ts";
import { createStore } from "../server/store/mod.ts";
import { buildLedger } from "../tests/helpers/ledger_builder.ts";

const VOTES = Number(Deno.args[0] ?? 10_000);
const ROUNDS = Number(Deno.args[1] ?? 1);

/** CPU seconds of this process so far. */
function cpu(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

const kept = Deno.env.get("BENCH_LEDGER");
const dir = kept ? null : await Deno.makeTempDir({ prefix: "ringvote-audit-levers-" });
const kv = await Deno.openKv(kept ?? `${dir}/ledger.sqlite3`);
const store = await createStore(kv);
if ((await store.tally()).total === 0) {
  await buildLedger(store, { votes: VOTES, perBlock: 100 });
}
const votes: VoteRecord[] = [];
const { height } = await store.blocks(0, 1);
for (let h = 1; h <= height; h++) {
  for (let offset = 0;; offset += 100) {
    const page = await store.blockVotes(h, offset, 100);
    votes.push(...page.votes.map((v) => v.vote));
    if (page.votes.length < 100) break;
  }
}
kv.close();
if (dir) await Deno.remove(dir, { recursive: true });
if (votes.length !== VOTES) throw new Error(`the ledger holds ${votes.length} votes, not ${VOTES}`);
const keys = [...new Set(votes.flatMap((v) => v.publicKeys))];
/** Every key's data in `form`, by key. */
function keyData(form: KeyForm): Map<string, Uint8Array> {
  const data = new Map<string, Uint8Array>();
  precomputeKeys(keys, form).forEach((pre, i) => {
    if (typeof pre !== "string") data.set(keys[i], pre);
  });
  return data;
}
const stored: Map<string, KeyPrecomputation> = keyData("combs");
const narrow = keyData("narrow");
const checked = keyData("checked");
console.log(`${votes.length} votes over ${keys.length} keys`);

/** Checks every vote with `members` as an audit worker does; all must verify. */
function audit(members: Parameters<typeof verifyVote>[1]) {
  for (const vote of votes) {
    if (!verifyVote(vote, members).check?.ok) throw new Error("a vote does not verify");
  }
}

const LEVERS: Record<string, () => void> = {
  "old cache": () => audit(createMemberCache()),
  "every Hp": () => audit(createMemberCache({ budgetBytes: Number.MAX_SAFE_INTEGER })),
  "combs, twice": () => {
    precomputeKeys(keys);
    audit(createAuditMembers({ budgetBytes: Number.MAX_SAFE_INTEGER }));
  },
  "combs, once": () => {
    precomputeKeys(keys);
    audit(createAuditMembers({
      budgetBytes: WORKER_MEMBERS_BUDGET,
      supplied: (key) => stored.get(key),
    }));
  },
  "… 48 MiB": () => {
    precomputeKeys(keys);
    audit(createAuditMembers({
      budgetBytes: 48 * 1024 * 1024,
      supplied: (key) => stored.get(key),
    }));
  },
  "narrow, once": () => {
    precomputeKeys(keys, "narrow");
    audit(createAuditMembers({ budgetBytes: 0, supplied: (key) => narrow.get(key) }));
  },
  "checked, once": () => {
    precomputeKeys(keys, "checked");
    audit(createAuditMembers({ budgetBytes: 0, supplied: (key) => checked.get(key) }));
  },
  server: () => {
    const cache = createMemberCache({ budgetBytes: DEFAULT_MEMBER_BUDGET / 2 });
    for (const vote of votes) {
      const job = {
        type: "verify" as const,
        signature: decodeSignature(vote.signature),
        payload: vote.payload,
        members: vote.publicKeys.map((key) => stored.get(key) ?? null),
      };
      if (!runJob(job, cache).ok) throw new Error("a vote does not verify");
    }
  },
};

warmUp();
const perVote: Record<string, number[]> = {};
for (let round = 1; round <= ROUNDS; round++) {
  const line: string[] = [];
  for (const [name, run] of Object.entries(LEVERS)) {
    const started = cpu();
    run();
    const ms = (cpu() - started) / votes.length * 1000;
    (perVote[name] ??= []).push(ms);
    line.push(`${name} ${ms.toFixed(2)} ms`);
  }
  console.log(`  round ${round}: ${line.join(", ")}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The election the floor is computed for, and the cores it is divided between. */
const FLOOR_VOTES = 100_000;
const FLOOR_CORES = 2;

const server = median(perVote.server);
console.log(
  `\n${(keys.length / votes.length).toFixed(2)} keys a vote, as in the 100,000-vote ledger`,
);
console.log(`| members | CPU per vote | ÷ server | ${FLOOR_VOTES} votes on ${FLOOR_CORES} cores |`);
console.log("| --- | ---: | ---: | ---: |");
for (const [name, values] of Object.entries(perVote)) {
  const m = median(values);
  const floor = m * FLOOR_VOTES / FLOOR_CORES / 1000;
  console.log(
    `| ${name} | ${m.toFixed(2)} ms | ${(m / server).toFixed(2)}× | ${floor.toFixed(0)} s |`,
  );
}
