/**
 * Browser-safe. The tag and the ring of a wire signature string (protocol §2) read as plain JSON,
 * without decoding a point: light enough for the bulletin board's first load.
 * @module
 */
import { HEX32_PATTERN } from "./bytes.ts";

/** The tag (`I`, hex) of a stored wire signature, or null when it is absent or malformed. */
export function tagOfSignature(signature: string | null): string | null {
  const I = signatureField(signature, "I");
  return typeof I === "string" && HEX32_PATTERN.test(I) ? I : null;
}

/** The ring (hex keys, signed order) of a stored wire signature, or null when malformed. */
export function ringOfSignature(signature: string | null): string[] | null {
  const ring = signatureField(signature, "ring");
  return Array.isArray(ring) &&
      ring.every((key) => typeof key === "string" && HEX32_PATTERN.test(key))
    ? ring
    : null;
}

/** One field of a stored wire signature's JSON; undefined when absent or not JSON. */
function signatureField(signature: string | null, field: "I" | "ring"): unknown {
  if (signature === null) return undefined;
  try {
    return (JSON.parse(signature) as Record<string, unknown> | null)?.[field];
  } catch {
    return undefined;
  }
}
