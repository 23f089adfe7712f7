// What binding key records to their keys costs vote ingest (protocol §5.2): per ring-8 vote, the
// members' records looked up (server/store/mod.ts, a Deno KV file) and the signature verified on
// this thread (server/verifier/jobs.ts runJob, with a member cache as a worker keeps one). Three
// paths: "bound" is the store as it is, each record read from KV checked against its MAC (native
// HMAC-SHA-256, server/store/layout.ts); "unbound" is the same lookup without that check (the
// store's lookup before records carried a MAC, copied below); "noble" is "unbound" plus the same
// check with @noble/hashes' HMAC, in JavaScript, the alternative to the native one. They alternate
// vote by vote, in an order rotated every vote and every round; each round passes over every vote
// once. A ratio reported is the median, over every vote of every round, of the path's time over
// unbound's time for the same vote, measured moments apart.
//
// Two cases: a directory far larger than the memory budgets (both budgets 0: every vote reads its
// 8 records from KV, checks 8 MACs and decodes 8 members, the worst case for the MAC's share), and
// one within them (the default budgets: MACs are checked only when a record is first read).
//
//   deno run -A bench/record_binding.ts [votes=40] [rounds=15]
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { hexToBytes, utf8 } from "../lib/protocol/bytes.ts";
import {
  isStoredPrecomputation,
  type KeyPrecomputation,
  precomputeKey,
} from "../lib/protocol/key_precomputation.ts";
import {
  createLruCache,
  createMemberCache,
  DEFAULT_MEMBER_BUDGET,
  type LruCache,
} from "../lib/protocol/member_cache.ts";
import { type RingSignature } from "../lib/protocol/ring_signature.ts";
import { decodeSignature } from "../lib/protocol/signature_wire.ts";
import { KEY_RECORD_MAC_LABEL, keyRecordSecret } from "../server/store/key_record_mac.ts";
import { getManyChunked } from "../server/store/kv_calls.ts";
import { type KeyIdRecord, kvKeys } from "../server/store/layout.ts";
import {
  type CheckedKeyRecord,
  createStore,
  DEFAULT_RECORD_BUDGET,
  RECORD_BYTES,
} from "../server/store/mod.ts";
import { runJob } from "../server/verifier/jobs.ts";
import { makeVoters, signedVote } from "../tests/helpers/ledger_fixtures.ts";
import { percentile, sampledRing } from "./http_driver.ts";

const VOTES = Number(Deno.args[0] ?? 40);
const ROUNDS = Number(Deno.args[1] ?? 15);
const KEYS = 256;
const RING_SIZE = 8;

type Lookup = (keys: string[]) => Promise<(CheckedKeyRecord | null)[]>;
type Vote = { publicKeys: string[]; signature: RingSignature; payload: string };

/**
 * The store's lookup before records carried a MAC (any record in the current form is used), or,
 * given `isBound`, with that check of each record read from KV.
 */
function lookupFrom(
  kv: Deno.Kv,
  records: LruCache<CheckedKeyRecord>,
  isBound?: (record: KeyIdRecord, key: Uint8Array) => boolean,
): Lookup {
  return async (keys) => {
    const found = keys.map((key) => records.get(key) ?? null);
    const unread = keys.flatMap((_, i) => (found[i] ? [] : [i]));
    if (unread.length === 0) return found;
    const keyIds = unread.map((i) => kvKeys.keyId(keys[i]));
    const entries = await getManyChunked<KeyIdRecord>(kv, keyIds);
    entries.forEach(({ value }, k) => {
      if (!value) return;
      const usable = isBound
        ? isBound(value, hexToBytes(keys[unread[k]], 32))
        : isStoredPrecomputation(value.pre);
      const record = usable ? { id: value.id, pre: value.pre } : { id: value.id };
      found[unread[k]] = record;
      records.set(keys[unread[k]], record);
    });
    return found;
  };
}

/** The MAC check of server/store/layout.ts with noble's HMAC-SHA-256 in place of node:crypto's. */
function nobleCheck(secret: Uint8Array) {
  const label = utf8(KEY_RECORD_MAC_LABEL);
  return ({ pre, mac }: KeyIdRecord, key: Uint8Array) => {
    if (!isStoredPrecomputation(pre) || !(mac instanceof Uint8Array) || mac.length !== 32) {
      return false;
    }
    const expected = hmac.create(sha256, secret).update(label).update(key).update(pre).digest();
    let difference = 0;
    for (let i = 0; i < 32; i++) difference |= expected[i] ^ mac[i];
    return difference === 0;
  };
}

/** One path of ingest: its lookup and its own member cache, as one verifying thread has. */
function ingest(lookup: Lookup, budgetBytes: number) {
  const members = createMemberCache({ budgetBytes });
  return async ({ publicKeys, signature, payload }: Vote): Promise<number> => {
    const started = performance.now();
    const records = await lookup(publicKeys);
    const stored: (KeyPrecomputation | null)[] = records.map((r) => r?.pre ?? null);
    const check = runJob({ type: "verify", signature, payload, members: stored }, members);
    if (!check.ok) throw new Error(`A bench vote did not verify: ${check.reason}`);
    return performance.now() - started;
  };
}

console.error(`Registering ${KEYS} keys and signing ${VOTES} ring-${RING_SIZE} votes…`);
const dir = await Deno.makeTempDir({ prefix: "ringvote-binding-" });
const kv = await Deno.openKv(`${dir}/ledger.kv`);
try {
  const voters = makeVoters(KEYS);
  const registrar = await createStore(kv);
  for (const v of voters) {
    await registrar.registerKey(v.key, precomputeKey(hexToBytes(v.key)) as KeyPrecomputation);
  }
  const votes: Vote[] = Array.from({ length: VOTES }, (_, i) => {
    const signer = voters[i % KEYS];
    const vote = signedVote(signer, sampledRing(signer, voters, RING_SIZE), `option ${i % 4}`);
    return { ...vote, signature: decodeSignature(vote.signature) };
  });

  const cases = [
    { name: "records read from KV for every vote", budget: 0, members: 0 },
    {
      name: "records held in memory (default budgets)",
      budget: DEFAULT_RECORD_BUDGET,
      members: DEFAULT_MEMBER_BUDGET,
    },
  ];
  const secret = keyRecordSecret(registrar.serverSeed());
  for (const { name, budget, members } of cases) {
    const store = await createStore(kv, { recordBudgetBytes: budget });
    const held = () => createLruCache<CheckedKeyRecord>(Math.floor(budget / RECORD_BYTES));
    const paths = {
      bound: ingest((keys) => store.lookupKeys(keys), members),
      unbound: ingest(lookupFrom(kv, held()), members),
      noble: ingest(lookupFrom(kv, held(), nobleCheck(secret)), members),
    };
    const names = Object.keys(paths) as (keyof typeof paths)[];
    // Warm-up: code compiled, member caches filled, records read once.
    for (const vote of votes) for (const path of names) await paths[path](vote);
    // Per vote and round, each path's time next to unbound's on the same vote moments apart: the
    // median of those ratios stands up to bursts of load from other processes.
    const ratios = { bound: [] as number[], noble: [] as number[] };
    const times = { bound: [] as number[], unbound: [] as number[], noble: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, vote] of votes.entries()) {
        const took = { bound: 0, unbound: 0, noble: 0 };
        for (let j = 0; j < names.length; j++) {
          const path = names[(round + i + j) % names.length];
          took[path] = await paths[path](vote);
        }
        for (const path of names) times[path].push(took[path]);
        ratios.bound.push(took.bound / took.unbound);
        ratios.noble.push(took.noble / took.unbound);
      }
    }
    const median = (xs: number[]) => percentile(xs.toSorted((a, b) => a - b), 50);
    const ms = (path: keyof typeof times) => median(times[path]).toFixed(2);
    console.log(
      `${name}: median ms/vote bound ${ms("bound")}, unbound ${ms("unbound")}, noble ` +
        `${ms("noble")}; ratio to unbound: bound ${median(ratios.bound).toFixed(3)}, noble ` +
        `${median(ratios.noble).toFixed(3)} (medians over ${ratios.bound.length} votes)`,
    );
  }
} finally {
  kv.close();
  await Deno.remove(dir, { recursive: true });
}
