// The server's CPU per relayed read (protocol §4.11), against the same read sent directly, in one
// run, over a Deno KV file: the whole application serves both, the relayed one through the gateway
// (open, Binary HTTP, the inner call, pad, seal). The requests are sealed before the clock starts
// and their answers opened after it stops, so only the server's work is counted. Then the gateway's
// steps one by one, and HPKE's opening with WebCrypto's X25519 against the JavaScript one.
// Run: deno run -A bench/gateway.ts [reads per block]
import { cpuUsage } from "node:process";
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from "@hpke/core";
import { DhkemX25519HkdfSha256 as ScriptX25519 } from "@hpke/dhkem-x25519";
import { type GatewayTarget, sealCall, type SealedCall } from "../lib/client/relay/ohttp_client.ts";
import { encodeResponse, pad, PAD_BLOCK } from "../lib/protocol/bhttp.ts";
import {
  decapsulateRequest,
  encapsulateResponse,
  KEYS_PATH,
  parseKeyConfigs,
} from "../lib/protocol/ohttp.ts";
import { importRecipientKey, openBase } from "../lib/protocol/hpke_open.ts";
import { innerRequest } from "../server/api/ohttp.ts";
import { createApp } from "../server/app.ts";
import { createGatewayKeys } from "../server/store/ohttp_key.ts";
import { createStore } from "../server/store/mod.ts";
import { createRounds } from "../server/store/rounds.ts";

const PER_BLOCK = Number(Deno.args[0] ?? 400);
const BLOCKS = 3;
const ORIGIN = "http://localhost";
/** The reads a relayed phone makes most: the rounds, and a page of the directory. */
const PATHS = ["/api/rounds", "/api/pki/key/offset/0/limit/10"];

const dir = await Deno.makeTempDir({ prefix: "ringvote-gateway-bench-" });
const kv = await Deno.openKv(`${dir}/ledger.kv`);
const store = await createStore(kv);
const rounds = await createRounds(kv, {
  election: store,
  electionIntervalMs: 60_000,
  adminToken: "bench-token-0123456789",
});
const keys = await createGatewayKeys(kv);
const app = createApp({ store, rounds, ohttp: keys });
const config = parseKeyConfigs(
  new Uint8Array(await (await app.request(`${ORIGIN}${KEYS_PATH}`)).arrayBuffer()),
)[0];
const target: GatewayTarget = { config, scheme: "http", authority: "localhost" };

const direct = (i: number) => app.fetch(new Request(`${ORIGIN}${PATHS[i % PATHS.length]}`));
const relayed = (sealed: SealedCall) =>
  app.fetch(
    new Request(`${ORIGIN}/api/ohttp`, {
      method: "POST",
      headers: { "content-type": "message/ohttp-req" },
      body: sealed.encapsulated.slice(),
    }),
  );
const seal = (n: number) =>
  Promise.all(
    Array.from({ length: n }, (_, i) =>
      sealCall(target, { method: "GET", path: PATHS[i % PATHS.length] })),
  );

/** CPU ms of the process (user + system) spent on `run`. */
async function cpuMs(run: () => Promise<void>): Promise<number> {
  const start = cpuUsage();
  await run();
  const used = cpuUsage(start);
  return (used.user + used.system) / 1000;
}

// Warm-up: the JIT, the page of keys, the key kept.
for (let i = 0; i < 100; i++) await (await direct(i)).arrayBuffer();
for (const sealed of await seal(100)) await (await relayed(sealed)).arrayBuffer();

let directMs = 0, relayedMs = 0;
for (let block = 0; block < BLOCKS; block++) {
  const sealed = await seal(PER_BLOCK);
  const answers: Uint8Array[] = [];
  directMs += await cpuMs(async () => {
    for (let i = 0; i < PER_BLOCK; i++) await (await direct(i)).arrayBuffer();
  });
  relayedMs += await cpuMs(async () => {
    for (const s of sealed) answers.push(new Uint8Array(await (await relayed(s)).arrayBuffer()));
  });
  // Every relayed answer opens to a 200: the bench measured reads that worked.
  for (const [i, s] of sealed.entries()) {
    const inner = await s.open(answers[i]);
    if (inner.status !== 200) throw new Error(`relayed read answered ${inner.status}`);
  }
}
const n = PER_BLOCK * BLOCKS;
const perDirect = directMs / n, perRelayed = relayedMs / n;
console.log(`reads: ${n} direct, ${n} relayed (${PATHS.join(", ")}), one at a time`);
console.log(`server CPU per direct read:  ${perDirect.toFixed(3)} ms`);
console.log(`server CPU per relayed read: ${perRelayed.toFixed(3)} ms`);
console.log(
  `relayed ÷ direct: ${(perRelayed / perDirect).toFixed(2)}; the gateway's own share: ` +
    `${(perRelayed - perDirect).toFixed(3)} ms`,
);

// The gateway's steps, one relayed read at a time (wall time of a single thread, µs per read).
const { key } = await keys.opening(config.keyId);
const steps = { open: 0, inner: 0, serve: 0, pad: 0, seal: 0 };
const sealed = await seal(n);
const authority = new Set(["localhost"]);
for (const s of sealed) {
  let t = performance.now();
  const opened = await decapsulateRequest(key, s.encapsulated);
  steps.open += performance.now() - t;
  t = performance.now();
  const request = innerRequest(opened.request, authority);
  steps.inner += performance.now() - t;
  t = performance.now();
  const answer = await app.fetch(request);
  const content = new Uint8Array(await answer.arrayBuffer());
  steps.serve += performance.now() - t;
  t = performance.now();
  const message = pad(
    encodeResponse({
      status: answer.status,
      headers: [["content-type", "application/json"]],
      content,
    }),
    PAD_BLOCK,
  );
  steps.pad += performance.now() - t;
  t = performance.now();
  await encapsulateResponse(opened.context, message);
  steps.seal += performance.now() - t;
}
console.log(
  "the gateway's steps, ms per read: " +
    Object.entries(steps).map(([k, v]) => `${k} ${(v / n).toFixed(3)}`).join(", "),
);

// HPKE's opening alone (the X25519 and the key schedule), WebCrypto's X25519 against JavaScript's.
async function openMs(kem: DhkemX25519HkdfSha256 | ScriptX25519): Promise<number> {
  const suite = new CipherSuite({ kem, kdf: new HkdfSha256(), aead: new Aes128Gcm() });
  const pair = await suite.kem.generateKeyPair();
  const senders = await Promise.all(
    Array.from(
      { length: n },
      () => suite.createSenderContext({ recipientPublicKey: pair.publicKey }),
    ),
  );
  const cts = await Promise.all(senders.map((s) => s.seal(new Uint8Array(1024))));
  return await cpuMs(async () => {
    for (const [i, s] of senders.entries()) {
      const r = await suite.createRecipientContext({ recipientKey: pair, enc: s.enc });
      await r.open(cts[i]);
    }
  }) / n;
}
/** The gateway's own opening (lib/protocol/hpke_open.ts) of the same messages, CPU ms each. */
async function openBaseMs(): Promise<number> {
  const suite = new CipherSuite({
    kem: new DhkemX25519HkdfSha256(),
    kdf: new HkdfSha256(),
    aead: new Aes128Gcm(),
  });
  const pair = await suite.kem.generateKeyPair();
  const recipient = await importRecipientKey(
    new Uint8Array(await suite.kem.serializePrivateKey(pair.privateKey)),
    new Uint8Array(await suite.kem.serializePublicKey(pair.publicKey)),
  );
  const senders = await Promise.all(
    Array.from(
      { length: n },
      () => suite.createSenderContext({ recipientPublicKey: pair.publicKey }),
    ),
  );
  const cts = await Promise.all(senders.map((s) => s.seal(new Uint8Array(1024))));
  const label = new TextEncoder().encode("message/bhttp response");
  return await cpuMs(async () => {
    for (const [i, s] of senders.entries()) {
      await openBase(
        recipient,
        new Uint8Array(s.enc),
        new Uint8Array(0),
        new Uint8Array(cts[i]),
        label,
        16,
      );
    }
  }) / n;
}
const script = await openMs(new ScriptX25519());
const native = await openMs(new DhkemX25519HkdfSha256());
const own = await openBaseMs();
console.log(
  `HPKE open, CPU ms: hpke-js with JavaScript X25519 ${script.toFixed(3)}, hpke-js with ` +
    `WebCrypto X25519 ${native.toFixed(3)}, the gateway's opening ${own.toFixed(3)}; ` +
    `÷ the first: ${(native / script).toFixed(2)}, ${(own / script).toFixed(2)}`,
);

kv.close();
await Deno.remove(dir, { recursive: true });
