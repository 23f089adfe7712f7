// Voters with real keys and real ring signatures for the server tests, plus the independent
// checks a client makes on a proof (protocol §3): Merkle inclusion and the block hash.
import { ed25519 } from "@noble/curves/ed25519.js";
import { numberToBytesLE } from "@noble/curves/utils.js";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import { blockHash } from "../../lib/protocol/chain.ts";
import { generateSeed, keyPairFromSeed, L, type Point } from "../../lib/protocol/keys.ts";
import { voteLeaf } from "../../lib/protocol/merkle.ts";
import { verifyInclusion } from "../../lib/protocol/merkle_verify.ts";
import { signRing } from "../../lib/protocol/ring_signature.ts";
import { encodeSignature } from "../../lib/protocol/signature_wire.ts";
import type { VoteProof, VoteRecord, VoteSubmission } from "../../lib/protocol/schemas.ts";

/** A simulated voter: its seed and hex public key. */
export type TestVoter = { seed: Uint8Array; key: string };

/** `n` voters with fresh random keys. */
export function makeVoters(n: number): TestVoter[] {
  return Array.from({ length: n }, () => {
    const seed = generateSeed();
    return { seed, key: bytesToHex(keyPairFromSeed(seed).publicKey) };
  });
}

/** A `POST /api/vote` body: `signer` signs `payload` over `ring` (keys in the given order). */
export function signedVote(
  signer: TestVoter,
  ring: TestVoter[],
  payload: string,
): VoteSubmission {
  const sig = signRing({
    ring: ring.map((v) => hexToBytes(v.key)),
    seed: signer.seed,
    message: payload,
  });
  const signature = encodeSignature(sig);
  return { publicKeys: ring.map((v) => v.key), signature, tag: bytesToHex(sig.tag), payload };
}

/** A ring of `size` members: `signer` plus others taken from `pool`, rotating with `offset`. */
export function ringFor(signer: TestVoter, pool: TestVoter[], size: number, offset = 0) {
  // The others are `pool` without the signer, taken in turn from `offset`; read in place, so a
  // ring costs its size, not the pool's (a 100,000-voter ledger builds 100,000 rings).
  const at = pool.indexOf(signer);
  const count = at < 0 ? pool.length : pool.length - 1;
  const other = (j: number) => pool[at < 0 || j < at ? j : j + 1];
  const ring = [signer];
  for (let i = 0; ring.length < size; i++) ring.push(other((offset + i) % count));
  // Sort by key so the signer's position varies and says nothing.
  return ring.sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** True when `proof` shows its vote in its block and the block hash matches its fields. */
export function proofVerifies(proof: VoteProof): boolean {
  const { block } = proof;
  const inTree = verifyInclusion({
    index: proof.index,
    size: block.size,
    leafHash: voteLeaf(proof.vote),
    proof: proof.path.map((p) => hexToBytes(p, 32)),
    root: hexToBytes(block.merkle_root, 32),
  });
  return inTree && blockHash(block) === block.hash;
}

/** A JSON answer; `body` is untyped because tests assert its shape field by field. */
// deno-lint-ignore no-explicit-any
export type Answer = { status: number; type: string | null; body: any };

/** Sends a JSON request to a Hono app or a base URL and returns status, content type and body. */
export async function call(
  target: { request: (path: string, init?: RequestInit) => Response | Promise<Response> } | string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const init: RequestInit = { method };
  // Every write is sent as JSON, a bodiless one too, as the API requires (protocol §4.1).
  if (method !== "GET" && method !== "HEAD") init.headers = { "content-type": "application/json" };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const res = typeof target === "string"
    ? await fetch(new URL(path, target), init)
    : await target.request(path, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the raw text is returned so the assertion on it shows what came back.
  }
  return { status: res.status, type: res.headers.get("content-type"), body: parsed };
}

/**
 * Encodings every public point check must refuse (protocol §2), derived rather than hard-coded:
 * `nonCanonical` encodes y = p (RFC 8032 §5.1.3 requires y < p), `identity` is the neutral
 * element, `smallOrder` is a torsion point, and `torsioned` is a prime-order point plus a torsion
 * point (the 2017 CryptoNote key-image flaw).
 */
export function hostilePoints(): Record<
  "nonCanonical" | "identity" | "smallOrder" | "torsioned",
  string
> {
  const { Point } = ed25519;
  const inverse8 = modPow(8n, L - 2n, L);
  let smallOrder: Point | null = null;
  for (let y = 2n; smallOrder === null; y++) {
    let candidate: Point;
    try {
      candidate = Point.fromBytes(numberToBytesLE(y, 32));
    } catch {
      continue; // y is not on the curve
    }
    const torsion = candidate.subtract(candidate.clearCofactor().multiply(inverse8));
    if (!torsion.is0()) smallOrder = torsion;
  }
  const p = 2n ** 255n - 19n;
  return {
    nonCanonical: bytesToHex(numberToBytesLE(p, 32)),
    identity: bytesToHex(Point.ZERO.toBytes()),
    smallOrder: bytesToHex(smallOrder.toBytes()),
    torsioned: bytesToHex(Point.BASE.multiply(12345n).add(smallOrder).toBytes()),
  };
}

function modPow(base: bigint, exp: bigint, mod: bigint): bigint {
  let result = 1n;
  for (let b = base % mod, e = exp; e > 0n; e >>= 1n, b = (b * b) % mod) {
    if (e & 1n) result = (result * b) % mod;
  }
  return result;
}

/**
 * An unsigned vote with a fresh random tag, for store and sealer tests that exercise storage
 * (the signature is verified by the API, not by the store), so thousands cost no signing time.
 */
export function unsignedVote(payload: string): { vote: VoteRecord; tag: string } {
  const random = () => bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
  return {
    vote: {
      payload,
      signature: JSON.stringify({ note: "unsigned" }),
      publicKeys: [random(), random()],
    },
    tag: random(),
  };
}

/** Every KV entry, for asserting that a refused request changed nothing. */
export async function dumpKv(kv: Deno.Kv): Promise<[Deno.KvKey, unknown, string][]> {
  const out: [Deno.KvKey, unknown, string][] = [];
  for await (const e of kv.list({ prefix: [] })) out.push([e.key, e.value, e.versionstamp]);
  return out;
}
