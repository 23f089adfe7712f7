/**
 * The witness's HTTP application: `POST /add-checkpoint` of c2sp.org/tlog-witness@v1.0.0 over an
 * injected state store and clock. Each result of ./add_checkpoint.ts becomes its status here, in
 * one place: 200 the cosignature lines, 409 the latest size as `text/x.tlog.size`, and every other
 * refusal one line of plain text. A 500 names no cause: the error is logged, never answered.
 * @module
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { NoteSigner, VerifierKey } from "../../lib/protocol/note.ts";
import {
  addCheckpoint,
  type AddCheckpointResult,
  trustedLogs,
  type Witness,
} from "./add_checkpoint.ts";
import type { WitnessStateStore } from "./state.ts";

/** Largest request body read, in bytes: 63 proof lines and a checkpoint with 100 signatures fit. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** Content type of a 409's body, the witness's latest size (tlog-witness §add-checkpoint). */
export const SIZE_CONTENT_TYPE = "text/x.tlog.size";
/** Content type of every other body: the spec names none; this is what Go's witnesses send. */
export const TEXT_CONTENT_TYPE = "text/plain; charset=utf-8";

/** What the application needs. */
export type WitnessAppOptions = {
  /** The witness's key and name (a key name: no spaces, no `+`). */
  signer: NoteSigner;
  /** The Ed25519 (type 0x01) note keys of the logs it cosigns for, named after their origins. */
  logs: readonly VerifierKey[];
  store: WitnessStateStore;
  /** Milliseconds since the epoch; `Date.now` by default. */
  now?: () => number;
  /** Told of every checkpoint cosigned or found inconsistent; an operator's log line. */
  onResult?: (result: AddCheckpointResult) => void;
};

/** The witness's HTTP application. Throws RangeError for a log key that is not Ed25519. */
export function createWitnessApp(options: WitnessAppOptions): Hono {
  const witness: Witness = {
    signer: options.signer,
    logs: trustedLogs(options.logs),
    store: options.store,
    now: options.now ?? Date.now,
  };
  const onResult = options.onResult ?? (() => {});
  const app = new Hono();

  app.post(
    "/add-checkpoint",
    bodyLimit({
      maxSize: MAX_REQUEST_BYTES,
      onError: () => text(413, `Request body is larger than ${MAX_REQUEST_BYTES} bytes`),
    }),
    async (c) => {
      const body = new Uint8Array(await c.req.arrayBuffer());
      const result = await addCheckpoint(body, witness);
      if (result.kind === "cosigned" || result.kind === "inconsistent") onResult(result);
      return answer(result);
    },
  );
  app.all("/add-checkpoint", () => text(405, "add-checkpoint takes POST", { Allow: "POST" }));
  app.notFound((c) => text(404, `No such path "${c.req.path.slice(0, 80)}"`));
  app.onError((error) => {
    console.error("witness: internal error:", error);
    return text(500, "Internal error");
  });
  return app;
}

/** The HTTP answer to `result`: the one mapping from add-checkpoint results to statuses. */
export function answer(result: AddCheckpointResult): Response {
  switch (result.kind) {
    case "cosigned":
      return new Response(result.lines, {
        status: 200,
        headers: { "Content-Type": TEXT_CONTENT_TYPE, "X-Content-Type-Options": "nosniff" },
      });
    case "stale":
      return new Response(`${result.latestSize}\n`, {
        status: 409,
        headers: { "Content-Type": SIZE_CONTENT_TYPE, "X-Content-Type-Options": "nosniff" },
      });
    case "malformed":
      return text(400, `Malformed request: ${result.reason}`);
    case "unknown-origin":
      return text(404, `Unknown log "${shown(result.origin)}"`);
    case "unverified":
      return text(403, `No valid signature by a key of log "${shown(result.origin)}"`);
    case "old-size-too-large":
      return text(
        400,
        `Old size ${result.oldSize} is above the checkpoint's size ${result.size}`,
      );
    case "inconsistent":
      return text(422, inconsistencyMessage(result));
  }
}

/** The sentence that explains an inconsistent checkpoint. */
export function inconsistencyMessage(
  { oldSize, size, inconsistency }: Extract<AddCheckpointResult, { kind: "inconsistent" }>,
): string {
  switch (inconsistency) {
    case "empty-tree-root":
      return "A checkpoint of size 0 must have the empty tree's root";
    case "proof-not-empty":
      return `The consistency proof from size ${oldSize} to ${size} must be empty`;
    case "root-mismatch":
      return `The checkpoint of size ${size} has another root than the one cosigned at that size`;
    case "proof":
      return `The consistency proof from size ${oldSize} to ${size} does not verify`;
  }
}

/** At most 80 characters of an origin the request chose. */
function shown(origin: string): string {
  return origin.length > 80 ? `${origin.slice(0, 80)}…` : origin;
}

function text(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(`${message}\n`, {
    status,
    headers: {
      ...headers,
      "Content-Type": TEXT_CONTENT_TYPE,
      "X-Content-Type-Options": "nosniff",
    },
  });
}
