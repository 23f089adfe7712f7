// The Oblivious HTTP gateway (protocol §4.11) fed generated input over the real application and an
// in-memory KV (fast-check): random and cut encapsulations, Binary HTTP with huge or lying varint
// lengths, and well-formed requests over generated paths. Whatever is sent, the outer status is a
// 4xx or a 200 whose sealed answer is padded Binary HTTP, and nothing inside is a 5xx either.
import assert from "node:assert/strict";
import fc from "fast-check";
import { decodeResponse, encodeRequest, pad } from "../../../lib/protocol/bhttp.ts";
import { decapsulateResponse, encapsulateRequest } from "../../../lib/protocol/ohttp.ts";
import { gatewayApp } from "../../helpers/app_fixture.ts";
import { withKv } from "../../helpers/kv.ts";

async function gateway(kv: Deno.Kv) {
  const { config: served, post } = await gatewayApp(kv);
  const config = await served();
  /** Seals `message`, posts it, and answers the outer status and, on a 200, the inner answer. */
  const send = async (message: Uint8Array) => {
    const { encapsulated, context } = await encapsulateRequest(config, message);
    const outer = await post(encapsulated);
    const bytes = new Uint8Array(await outer.arrayBuffer());
    if (outer.status !== 200) return { outer: outer.status, inner: null };
    const opened = await decapsulateResponse(context, bytes);
    assert.equal(opened.length % 1024, 0, "the sealed answer is padded");
    return { outer: outer.status, inner: decodeResponse(opened) };
  };
  return { config, post, send };
}

/** A QUIC varint of `n` written in `size` bytes, whatever its value needs. */
function varint(n: bigint, size: 1 | 2 | 4 | 8): Uint8Array {
  const out = new Uint8Array(size);
  let v = n;
  for (let i = size - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  out[0] = (out[0] & 0x3f) | ({ 1: 0, 2: 0x40, 4: 0x80, 8: 0xc0 }[size]);
  return out;
}

const sizes = fc.constantFrom(1 as const, 2 as const, 4 as const, 8 as const);
const varints = fc.tuple(fc.bigInt({ min: 0n, max: (1n << 62n) - 1n }), sizes).map(([n, s]) =>
  varint(n, s)
);
const chunks = fc.oneof(varints, fc.uint8Array({ maxLength: 40 }), fc.constant(new Uint8Array(1)));

/** A path close to the API's: variants of the gateway's own, dot segments, escapes, queries. */
const paths = fc.oneof(
  fc.constantFrom(
    "/api/ohttp",
    "/api/ohttp/",
    "/api/ohttp/key",
    "/api/ohtt%70",
    "/api/ohtt%70/key",
    "/api/OHTTP",
    "/api/ohttp?x=1",
    "/api/ohttp%2fkey",
    "/api/%2e%2e/board",
    "/api/.%2e/api/ohttp",
    "/api/rounds%3Fx",
    "/api/r%6Funds",
    "/api/rounds/1/vote",
    "/api/vote",
    "/api/presenter",
    "/api/lens/api/rounds",
    "/api/tag/" + "0".repeat(64),
    "/api/block/id/18446744073709551616/votes",
    "/api/%",
    "/api/%zz",
    "/api/%C0%AF",
    "/api/blocks?from=%zz",
    "/api/log/cosigned?key=%&min=%E0%A4%A",
  ),
  fc.tuple(
    fc.constantFrom("/api/", "/api/rounds/", "/api/block/", "/api/pki/key/", "/api/lab/"),
    fc.string({ unit: "grapheme-ascii", maxLength: 30 }),
  ).map(([a, b]) => a + b),
);

Deno.test(
  "generated encapsulations and Binary HTTP get a 4xx or a padded 200, never a 5xx",
  withKv(async (kv) => {
    const { config, post, send } = await gateway(kv);
    // Raw bodies: random, cut or with the right header and random rest.
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }),
          fc.uint8Array({ minLength: 60, maxLength: 200 }).map((b) => {
            b.set([config.keyId, 0, 0x20, 0, 1, 0, 1]);
            return b;
          }),
        ),
        async (body) => {
          const res = await post(body);
          await res.body?.cancel();
          assert.ok(res.status >= 400 && res.status < 500, `outer ${res.status}`);
        },
      ),
      { numRuns: 150 },
    );
    // Opens, but its Binary HTTP is made of random varints and bytes, then padded.
    await fc.assert(
      fc.asyncProperty(
        fc.array(chunks, { maxLength: 12 }),
        fc.boolean(),
        async (parts, padded) => {
          const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
          let at = 0;
          for (const p of parts) joined.set(p, (at += p.length) - p.length);
          const { outer, inner } = await send(padded ? pad(joined) : joined);
          assert.ok(outer === 200 || (outer >= 400 && outer < 500), `outer ${outer}`);
          if (inner) assert.ok(inner.status < 500, `inner ${inner.status}`);
        },
      ),
      { numRuns: 150 },
    );
    // Well-formed Binary HTTP over generated paths and methods.
    await fc.assert(
      fc.asyncProperty(paths, fc.constantFrom("GET", "POST"), async (path, method) => {
        const write = method === "POST";
        const { outer, inner } = await send(pad(encodeRequest({
          method,
          scheme: "http",
          authority: "localhost",
          path,
          headers: write ? [["content-type", "application/json"]] : [],
          content: new TextEncoder().encode(write ? "{}" : ""),
        })));
        assert.ok(outer === 200 || (outer >= 400 && outer < 500), `${path}: outer ${outer}`);
        if (inner) assert.ok(inner.status < 500, `${path}: inner ${inner.status}`);
      }),
      { numRuns: 200 },
    );
  }),
);
