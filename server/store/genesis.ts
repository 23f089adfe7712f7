/**
 * What a ledger needs in place before its first call (protocol §5.2): its genesis block with the
 * guard and the head, and the seed of its head-signing key, each made once with a checked commit
 * so that processes starting together on one database all end with the same.
 * @module
 */
import { genesisBlock } from "../../lib/protocol/chain.ts";
import type * as wire from "../../lib/protocol/schemas.ts";
import {
  absent,
  type HeadRecord,
  type KvLedger,
  type OpenRecord,
  type ServerKeyRecord,
} from "./layout.ts";
import { backoff, MAX_ATTEMPTS, readRetrying, tryCommit } from "./kv_calls.ts";

/**
 * Creates the genesis block, the guard and the head of a ledger that has none yet; answers the
 * genesis block stored. A carded round's genesis has its card set's sha256 as `prev_hash`
 * (protocol §2.11).
 */
export async function ensureGenesis(
  { kv, keys }: KvLedger,
  now: number,
  prevHash?: string,
): Promise<wire.BlockRecord> {
  for (let attempt = 0;; attempt++) {
    const existing = await readRetrying(() => kv.get<wire.BlockRecord>(keys.block(0)));
    if (existing.value) return existing.value;
    const genesis = genesisBlock(now, prevHash);
    const res = await tryCommit(
      kv.atomic()
        .check(absent(keys.block(0)))
        .check(absent(keys.head()))
        .check(absent(keys.open()))
        .set(keys.block(0), genesis)
        .set(
          keys.head(),
          { height: 0, hash: genesis.hash, timestamp: genesis.timestamp } satisfies HeadRecord,
        )
        .set(keys.open(), { height: 1 } satisfies OpenRecord),
    );
    if (res?.ok) return genesis;
    if (attempt >= MAX_ATTEMPTS) throw new Error("Could not create the genesis block");
    await backoff(attempt);
  }
}

/**
 * The head-signing key's seed: read, or made and stored with a check that nothing is there yet,
 * so that processes starting together on one database all end with the one stored key.
 */
export async function ensureServerKey({ kv, keys }: KvLedger): Promise<Uint8Array> {
  for (let attempt = 0;; attempt++) {
    const existing = await readRetrying(() => kv.get<ServerKeyRecord>(keys.serverKey()));
    if (existing.value) return existing.value.seed;
    const seed = crypto.getRandomValues(new Uint8Array(32));
    const res = await tryCommit(
      kv.atomic()
        .check({ key: keys.serverKey(), versionstamp: null })
        .set(keys.serverKey(), { seed } satisfies ServerKeyRecord),
    );
    if (res?.ok) return seed;
    if (attempt >= MAX_ATTEMPTS) throw new Error("Could not store the server key");
    await backoff(attempt);
  }
}

/**
 * Both of the above for a store's start: one `getMany` of the genesis block and the server key,
 * which answers every start but a ledger's first; what is missing is then made as above. Answers
 * the genesis block (sealed blocks never change, so it may be kept) and the server key's seed.
 */
export async function ensureLedger(
  ledger: KvLedger,
  now: number,
  prevHash?: string,
): Promise<{ genesis: wire.BlockRecord; seed: Uint8Array }> {
  const { kv, keys } = ledger;
  const [genesis, serverKey] = await readRetrying(() =>
    kv.getMany<[wire.BlockRecord, ServerKeyRecord]>([keys.block(0), keys.serverKey()])
  );
  return {
    genesis: genesis.value ?? await ensureGenesis(ledger, now, prevHash),
    seed: serverKey.value ? serverKey.value.seed : await ensureServerKey(ledger),
  };
}
