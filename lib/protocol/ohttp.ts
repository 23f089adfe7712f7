/**
 * Browser-safe. Oblivious HTTP (RFC 9458): key configurations and their `application/ohttp-keys`
 * list (§3, RFC 9540), request encapsulation (§4.3) and response encapsulation (§4.4) for the one
 * suite Ringvote uses: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM.
 *
 * HPKE (RFC 9180) comes from hpke-js (`@hpke/core`, `@hpke/dhkem-x25519`): a maintained
 * implementation checked against the RFC 9180 vectors, on WebCrypto where the platform has it,
 * so no HPKE key schedule is written here. The response keys of §4.4 are one HKDF (noble's) and
 * one AES-GCM (WebCrypto).
 *
 * Two X25519s, one wire format (protocol §4.11): the gateway's side (its key, opening requests)
 * runs on WebCrypto's native X25519, constant-time, and opens with ./hpke_open.ts (the receiver's
 * key schedule of this one suite, checked against the RFC 9458 vector) at a third of the CPU;
 * the sender's side (a phone sealing a request) keeps the JavaScript X25519 of
 * `@hpke/dhkem-x25519`, since WebCrypto X25519 is missing from browsers still in use (Chromium
 * before 133, Safari before 17), and a phone seals one request at a time.
 * @module
 */
import {
  Aes128Gcm,
  CipherSuite,
  DhkemX25519HkdfSha256 as NativeX25519,
  HkdfSha256,
} from "@hpke/core";
import { DhkemX25519HkdfSha256 as ScriptX25519 } from "@hpke/dhkem-x25519";
import { expand, extract } from "@noble/hashes/hkdf.js";
import { importRecipientKey, openBase, type RecipientKey } from "./hpke_open.ts";
import { sha256 } from "@noble/hashes/sha2.js";

/** DHKEM(X25519, HKDF-SHA256). */
export const KEM_X25519_SHA256 = 0x0020;
/** HKDF-SHA256. */
export const KDF_HKDF_SHA256 = 0x0001;
/** AES-128-GCM. */
export const AEAD_AES_128_GCM = 0x0001;
/** The media type of a key configuration list (RFC 9458 §3.2). */
export const KEYS_MEDIA_TYPE = "application/ohttp-keys";
/** The media type of an encapsulated request. */
export const REQUEST_MEDIA_TYPE = "message/ohttp-req";
/** The media type of an encapsulated response. */
export const RESPONSE_MEDIA_TYPE = "message/ohttp-res";
/** Where a gateway publishes its key configurations (RFC 9540 §3). */
export const KEYS_PATH = "/.well-known/ohttp-gateway";

const NPK = 32; // X25519 public key and enc
const NK = 16; // AES-128-GCM key
const NN = 12; // AES-128-GCM nonce
const RESPONSE_NONCE_BYTES = Math.max(NK, NN);
const HEADER_BYTES = 7;
const REQUEST_LABEL = "message/bhttp request";
const RESPONSE_LABEL = "message/bhttp response";
const text = new TextEncoder();

/** One symmetric suite a key configuration offers. */
export type Suite = { kdfId: number; aeadId: number };

/** A key configuration (RFC 9458 §3.1). */
export type KeyConfig = {
  keyId: number;
  kemId: number;
  publicKey: Uint8Array;
  suites: readonly Suite[];
};

/** A gateway's key: its configuration and the X25519 private key. */
export type GatewayKey = { config: KeyConfig; privateKey: Uint8Array };

/** Why an encapsulated message was refused: a typed result, worded by whoever shows it. */
export type OhttpFailure = "key-id" | "suite" | "malformed" | "decrypt";

/** An encapsulated message that could not be opened, and why. */
export class OhttpError extends Error {
  /** Why it was refused. */
  readonly kind: OhttpFailure;
  constructor(kind: OhttpFailure, message: string) {
    super(message);
    this.name = "OhttpError";
    this.kind = kind;
  }
}

/** What opens the response to one request: its `enc` and the exported response secret. */
export type ResponseContext = { enc: Uint8Array; secret: Uint8Array };

let senderMemo: CipherSuite | null = null;
/** The sender's suite: X25519 in JavaScript, there in every browser. */
function suite(): CipherSuite {
  return senderMemo ??= new CipherSuite({
    kem: new ScriptX25519(),
    kdf: new HkdfSha256(),
    aead: new Aes128Gcm(),
  });
}

let gatewayMemo: CipherSuite | null = null;
/** The gateway's suite: WebCrypto's native X25519 (constant-time), the same wire format. */
function gatewaySuite(): CipherSuite {
  return gatewayMemo ??= new CipherSuite({
    kem: new NativeX25519(),
    kdf: new HkdfSha256(),
    aead: new Aes128Gcm(),
  });
}

function u16(n: number): Uint8Array {
  return new Uint8Array([n >> 8, n & 0xff]);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The encoding of §3.1: key id, KEM id, public key, then the suites with their byte length. */
export function encodeKeyConfig(config: KeyConfig): Uint8Array {
  if (config.publicKey.length !== NPK) throw new RangeError("public key must be 32 bytes");
  if (config.suites.length === 0) throw new RangeError("a key configuration offers a suite");
  return concat(
    new Uint8Array([config.keyId]),
    u16(config.kemId),
    config.publicKey,
    u16(config.suites.length * 4),
    ...config.suites.flatMap((s) => [u16(s.kdfId), u16(s.aeadId)]),
  );
}

/** Parses one key configuration of exactly `bytes`; RangeError for another KEM or any excess. */
export function parseKeyConfig(bytes: Uint8Array): KeyConfig {
  if (bytes.length < 1 + 2 + NPK + 2) throw new RangeError("key configuration is too short");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kemId = view.getUint16(1);
  if (kemId !== KEM_X25519_SHA256) throw new RangeError(`KEM ${kemId} is not X25519`);
  const suitesLength = view.getUint16(3 + NPK);
  if (suitesLength === 0 || suitesLength % 4 !== 0 || 5 + NPK + suitesLength !== bytes.length) {
    throw new RangeError("key configuration's suites do not fill it exactly");
  }
  const suites: Suite[] = [];
  for (let at = 5 + NPK; at < bytes.length; at += 4) {
    suites.push({ kdfId: view.getUint16(at), aeadId: view.getUint16(at + 2) });
  }
  return { keyId: bytes[0], kemId, publicKey: bytes.slice(3, 3 + NPK), suites };
}

/** `application/ohttp-keys` (RFC 9458 §3.2): each configuration after its 2-byte length. */
export function encodeKeyConfigs(configs: readonly KeyConfig[]): Uint8Array {
  return concat(...configs.flatMap((c) => {
    const bytes = encodeKeyConfig(c);
    return [u16(bytes.length), bytes];
  }));
}

/** Parses `application/ohttp-keys`; RangeError for a list that is empty or not exact. */
export function parseKeyConfigs(bytes: Uint8Array): KeyConfig[] {
  const configs: KeyConfig[] = [];
  for (let at = 0; at < bytes.length;) {
    if (at + 2 > bytes.length) throw new RangeError("key configuration list ends in a length");
    const length = (bytes[at] << 8) | bytes[at + 1];
    if (at + 2 + length > bytes.length) throw new RangeError("key configuration list is cut");
    configs.push(parseKeyConfig(bytes.subarray(at + 2, at + 2 + length)));
    at += 2 + length;
  }
  if (configs.length === 0) throw new RangeError("key configuration list is empty");
  return configs;
}

/** SHA-256 of a key configuration list's bytes in unpadded base64url: what a QR code pins. */
export function keyConfigsHash(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of sha256(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The header of §4.3: key id, KEM, KDF and AEAD ids. */
function requestHeader(keyId: number): Uint8Array {
  return concat(
    new Uint8Array([keyId]),
    u16(KEM_X25519_SHA256),
    u16(KDF_HKDF_SHA256),
    u16(AEAD_AES_128_GCM),
  );
}

function info(header: Uint8Array): Uint8Array {
  return concat(text.encode(REQUEST_LABEL), new Uint8Array([0]), header);
}

function offersSuite(config: KeyConfig): boolean {
  return config.kemId === KEM_X25519_SHA256 &&
    config.suites.some((s) => s.kdfId === KDF_HKDF_SHA256 && s.aeadId === AEAD_AES_128_GCM);
}

/**
 * Encapsulates `request` for the gateway of `config` (§4.3): hdr ‖ enc ‖ ct, and the context
 * that opens its response. `ephemeral` (a raw X25519 key pair) is for known-answer tests only.
 */
export async function encapsulateRequest(
  config: KeyConfig,
  request: Uint8Array,
  ephemeral?: { privateKey: Uint8Array; publicKey: Uint8Array },
): Promise<{ encapsulated: Uint8Array; context: ResponseContext }> {
  if (!offersSuite(config)) throw new OhttpError("suite", "key configuration lacks the suite");
  const s = suite();
  const header = requestHeader(config.keyId);
  const ekm = ephemeral && {
    privateKey: await s.kem.importKey("raw", buffer(ephemeral.privateKey), false),
    publicKey: await s.kem.importKey("raw", buffer(ephemeral.publicKey), true),
  };
  const sender = await s.createSenderContext({
    recipientPublicKey: await s.kem.importKey("raw", buffer(config.publicKey), true),
    info: info(header),
    ...(ekm ? { ekm } : {}),
  });
  const ct = new Uint8Array(await sender.seal(request));
  const enc = new Uint8Array(sender.enc);
  const secret = new Uint8Array(
    await sender.export(text.encode(RESPONSE_LABEL), RESPONSE_NONCE_BYTES),
  );
  return { encapsulated: concat(header, enc, ct), context: { enc, secret } };
}

/**
 * Opens an encapsulated request with the gateway's `key` (§4.3): the request's bytes and the
 * context its response is sealed with. OhttpError `key-id` for another key id, `suite` for
 * another suite, `malformed` for a message too short, `decrypt` when it does not open.
 */
export async function decapsulateRequest(
  key: GatewayKey,
  encapsulated: Uint8Array,
): Promise<{ request: Uint8Array; context: ResponseContext }> {
  if (encapsulated.length < HEADER_BYTES + NPK + 16) {
    throw new OhttpError("malformed", "encapsulated request is too short");
  }
  const header = encapsulated.subarray(0, HEADER_BYTES);
  if (header[0] !== key.config.keyId) {
    throw new OhttpError("key-id", `key id ${header[0]} is not this gateway's`);
  }
  if (!equal(header, requestHeader(key.config.keyId))) {
    throw new OhttpError("suite", "encapsulated request names another suite");
  }
  const enc = encapsulated.slice(HEADER_BYTES, HEADER_BYTES + NPK);
  try {
    const { plaintext, exported } = await openBase(
      await recipientKey(key),
      enc,
      info(header),
      encapsulated.subarray(HEADER_BYTES + NPK),
      text.encode(RESPONSE_LABEL),
      RESPONSE_NONCE_BYTES,
    );
    return { request: plaintext, context: { enc, secret: exported } };
  } catch {
    throw new OhttpError("decrypt", "encapsulated request does not open with this key");
  }
}

async function responseKey(
  context: ResponseContext,
  nonce: Uint8Array,
): Promise<{ key: CryptoKey; iv: Uint8Array<ArrayBuffer> }> {
  const prk = extract(sha256, context.secret, concat(context.enc, nonce));
  const key = await crypto.subtle.importKey(
    "raw",
    new Uint8Array(expand(sha256, prk, text.encode("key"), NK)),
    "AES-GCM",
    false,
    ["encrypt", "decrypt"],
  );
  return { key, iv: new Uint8Array(expand(sha256, prk, text.encode("nonce"), NN)) };
}

/**
 * Seals `response` to the client of `context` (§4.4): response_nonce ‖ ct. `nonce` is for
 * known-answer tests only; by default it is fresh random bytes.
 */
export async function encapsulateResponse(
  context: ResponseContext,
  response: Uint8Array,
  nonce: Uint8Array = crypto.getRandomValues(new Uint8Array(RESPONSE_NONCE_BYTES)),
): Promise<Uint8Array> {
  const { key, iv } = await responseKey(context, nonce);
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    key,
    new Uint8Array(response),
  );
  return concat(nonce, new Uint8Array(ct));
}

/** Opens an encapsulated response (§4.4); OhttpError `malformed` or `decrypt` when it does not. */
export async function decapsulateResponse(
  context: ResponseContext,
  encapsulated: Uint8Array,
): Promise<Uint8Array> {
  if (encapsulated.length < RESPONSE_NONCE_BYTES + 16) {
    throw new OhttpError("malformed", "encapsulated response is too short");
  }
  const { key, iv } = await responseKey(context, encapsulated.subarray(0, RESPONSE_NONCE_BYTES));
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt(
        { name: "AES-GCM", iv },
        key,
        encapsulated.slice(RESPONSE_NONCE_BYTES),
      ),
    );
  } catch {
    throw new OhttpError("decrypt", "encapsulated response does not open");
  }
}

/** A fresh gateway key under `keyId` (0–255), offering the one suite. */
export async function generateGatewayKey(keyId: number): Promise<GatewayKey> {
  if (!Number.isInteger(keyId) || keyId < 0 || keyId > 255) {
    throw new RangeError("key id must be 0 to 255");
  }
  const s = gatewaySuite();
  const pair = await s.kem.generateKeyPair();
  return {
    config: {
      keyId,
      kemId: KEM_X25519_SHA256,
      publicKey: new Uint8Array(await s.kem.serializePublicKey(pair.publicKey)),
      suites: [{ kdfId: KDF_HKDF_SHA256, aeadId: AEAD_AES_128_GCM }],
    },
    privateKey: new Uint8Array(await s.kem.serializePrivateKey(pair.privateKey)),
  };
}

const recipientKeys = new WeakMap<GatewayKey, Promise<RecipientKey>>();
/** The gateway key's private half on WebCrypto, imported once per key. */
function recipientKey(key: GatewayKey): Promise<RecipientKey> {
  let pair = recipientKeys.get(key);
  if (pair === undefined) {
    pair = importRecipientKey(key.privateKey, key.config.publicKey);
    recipientKeys.set(key, pair);
  }
  return pair;
}

/** A copy of `bytes` in an ArrayBuffer of its own, as hpke-js takes raw keys. */
function buffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer;
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
