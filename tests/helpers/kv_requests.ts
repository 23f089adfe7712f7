/**
 * What a KV Connect data-path request asks for, in words: the keys a `snapshot_read` reads (a
 * point read, or a listing with its limit) and the checks and sets of an `atomic_write`, each key
 * as its readable parts. For the round-trip lists of docs/performance.md; tests/helpers/
 * kv_connect_server.ts records a request's body, and this reads it (protobuf of denokv's
 * `datapath.proto`, keys in the FoundationDB tuple encoding).
 * @module
 */

/** One data-path request as the server saw it: its kind, the time it came, and its body. */
export type KvRequest = { kind: "read" | "write"; at: number; body: Uint8Array };

/** The fields of one protobuf message: field number to its raw values (bytes or varints). */
type Fields = Map<number, (Uint8Array | bigint)[]>;

function varint(bytes: Uint8Array, at: number): [bigint, number] {
  let value = 0n;
  for (let shift = 0n;; shift += 7n) {
    const byte = bytes[at++];
    value |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return [value, at];
  }
}

function fields(bytes: Uint8Array): Fields {
  const out: Fields = new Map();
  for (let at = 0; at < bytes.length;) {
    const [tag, next] = varint(bytes, at);
    at = next;
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    let value: Uint8Array | bigint;
    if (wire === 0) {
      [value, at] = varint(bytes, at);
    } else if (wire === 2) {
      const [length, start] = varint(bytes, at);
      value = bytes.subarray(start, start + Number(length));
      at = start + Number(length);
    } else if (wire === 1) {
      value = bytes.subarray(at, at + 8);
      at += 8;
    } else if (wire === 5) {
      value = bytes.subarray(at, at + 4);
      at += 4;
    } else {
      throw new Error(`Unknown protobuf wire type ${wire}`);
    }
    out.set(field, [...out.get(field) ?? [], value]);
  }
  return out;
}

const bytesOf = (f: Fields, n: number) => (f.get(n) ?? []) as Uint8Array[];
const numberOf = (f: Fields, n: number) => Number((f.get(n)?.[0] as bigint | undefined) ?? 0n);

/**
 * A key in KV's tuple encoding as readable parts: strings quoted, numbers as numbers, byte arrays
 * as `bytes`; a key cut short (a listing's end) shows the parts it has.
 */
export function readableKey(key: Uint8Array): string {
  const parts: string[] = [];
  for (let at = 0; at < key.length;) {
    const type = key[at++];
    if (type === 0x02 || type === 0x01) {
      const raw: number[] = [];
      while (at < key.length && !(key[at] === 0 && key[at + 1] !== 0xff)) {
        raw.push(key[at]);
        at += key[at] === 0 ? 2 : 1;
      }
      at++;
      parts.push(
        type === 0x02
          ? JSON.stringify(new TextDecoder().decode(new Uint8Array(raw)))
          : `bytes(${raw.length})`,
      );
    } else if (type === 0x21) {
      const raw = key.slice(at, at + 8);
      at += 8;
      // Order-preserving double: a positive number has its sign bit flipped, a negative all bits.
      if (raw[0] & 0x80) raw[0] ^= 0x80;
      else for (let i = 0; i < 8; i++) raw[i] ^= 0xff;
      parts.push(String(new DataView(raw.buffer).getFloat64(0)));
    } else if (type === 0x26 || type === 0x27) {
      parts.push(String(type === 0x27));
    } else if (type === 0x00 || type === 0xff) {
      // The end of a listing's range: a prefix followed by 0x00 or 0xff.
      parts.push(type === 0xff ? "…" : "");
    } else {
      parts.push(`?${type.toString(16)}`);
      break;
    }
  }
  return `[${parts.filter((p) => p !== "").join(",")}]`;
}

/**
 * `key` with its numbers (heights, ids) as `N` and its long strings (vote ids, tags, keys) as `*`,
 * so that the requests of one operation read alike.
 */
function shape(key: string): string {
  return key.replace(/^\[(.*)\]$/, "$1").split(",").map((part, i) => {
    if (i > 0 && /^-?\d+(\.\d+)?$/.test(part)) return "N";
    if (part.startsWith('"') && part.length > 14) return "*";
    return part;
  }).join(",");
}

/**
 * The request in words: `read [k1] [k2] …` for point reads (a getMany), `list [prefix…] ≤limit`
 * for a listing, `write: checks [k] …; sets [k]×n …` for a commit, keys shaped alike.
 */
export function describeRequest({ kind, body }: KvRequest): string {
  const f = fields(body);
  if (kind === "read") {
    const ranges = bytesOf(f, 1).map((range) => {
      const r = fields(range);
      const start = bytesOf(r, 1)[0] ?? new Uint8Array();
      const end = bytesOf(r, 2)[0] ?? new Uint8Array();
      const limit = numberOf(r, 3);
      const point = limit === 1 && end.length === start.length + 1 && end.at(-1) === 0 &&
        start.every((b, i) => end[i] === b);
      return point
        ? `[${shape(readableKey(start))}]`
        : `list [${shape(readableKey(start))} … ${shape(readableKey(end))}] ≤${limit}`;
    });
    return `read ${ranges.join(" ")}`;
  }
  const checks = bytesOf(f, 1).map((check) =>
    `[${shape(readableKey(bytesOf(fields(check), 1)[0]))}]`
  );
  const sets = new Map<string, number>();
  for (const mutation of bytesOf(f, 2)) {
    const key = `[${shape(readableKey(bytesOf(fields(mutation), 1)[0]))}]`;
    sets.set(key, (sets.get(key) ?? 0) + 1);
  }
  const setList = [...sets].map(([key, n]) => (n > 1 ? `${key}×${n}` : key));
  return `write: checks ${checks.join(" ") || "none"}; sets ${setList.join(" ") || "none"}`;
}

/** `requests` described, with how many times each description came, in order of first coming. */
export function requestTable(requests: KvRequest[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const request of requests) {
    const what = describeRequest(request);
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  return [...counts];
}
