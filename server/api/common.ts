/**
 * Edge validation shared by the API sub-apps: JSON bodies through lib/protocol/schemas.ts, and
 * integer path and query parameters. Every failure is a 400 `invalid_request` naming the value.
 * @module
 */
import type { Context } from "hono";
import type * as z from "zod/mini";
import { describeIssues, MAX_PAGE_LIMIT } from "../../lib/protocol/schemas.ts";
import { invalidRequest, quote } from "../errors.ts";

const INTEGER = /^(?:0|[1-9][0-9]{0,15})$/;

/** Parses the JSON body against `schema`; the zod error is returned for the caller to map. */
export async function readJson<T>(
  c: Context,
  schema: z.ZodMiniType<T>,
): Promise<{ ok: true; data: T } | { ok: false; error: z.core.$ZodError }> {
  const text = await c.req.text();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw invalidRequest("Body is not valid JSON");
  }
  const parsed = schema.safeParse(data);
  return parsed.success ? { ok: true, data: parsed.data } : { ok: false, error: parsed.error };
}

/** Parses the JSON body against `schema`, refusing a mismatch with 400 `invalid_request`. */
export async function parseJson<T>(c: Context, schema: z.ZodMiniType<T>): Promise<T> {
  const parsed = await readJson(c, schema);
  if (!parsed.ok) throw invalidRequest(`Invalid body: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** A non-negative integer parameter, or 400 naming it. */
export function integerParam(value: string | undefined, name: string): number {
  if (value === undefined || !INTEGER.test(value) || !Number.isSafeInteger(Number(value))) {
    throw invalidRequest(`${name} must be a non-negative integer, got "${quote(value ?? "")}"`);
  }
  return Number(value);
}

/** An optional non-negative integer query parameter, `fallback` when absent. */
export function integerQuery(c: Context, name: string, fallback: number): number {
  const value = c.req.query(name);
  return value === undefined || value === "" ? fallback : integerParam(value, name);
}

/** A page size: a non-negative integer of at most MAX_PAGE_LIMIT. */
export function pageLimit(value: number, name = "limit"): number {
  if (value > MAX_PAGE_LIMIT) {
    throw invalidRequest(`${name} must be at most ${MAX_PAGE_LIMIT}, got ${value}`);
  }
  return value;
}
