/**
 * Browser-safe. The one Binary HTTP length of every vote of a round sent through the Oblivious HTTP
 * gateway (protocol §4.11), so that neither its choice nor its ring shows in its length: the phone
 * pads to it, the gateway refuses a vote of another length.
 * @module
 */
import { encodeRequest, pad } from "./bhttp.ts";
import { MAX_RING } from "./ring_signature.ts";
import { MAX_PAYLOAD_CODE_POINTS } from "./schemas.ts";

/** True for a vote submission: `POST /api/vote` or a round's `POST /api/rounds/{id}/vote`. */
export function isVotePath(path: string): boolean {
  return /^\/api\/(?:rounds\/[0-9]+\/)?vote$/.test(path);
}

/** The round a vote path names: its id, or 1 for the election's `/api/vote`. */
export function voteRound(path: string): number {
  const id = /^\/api\/rounds\/([0-9]+)\/vote$/.exec(path)?.[1];
  return id === undefined ? 1 : Number(id);
}

/**
 * The Binary HTTP length of every vote sent to `path` at `scheme://authority`: that of a vote over
 * a ring of {@link MAX_RING} members whose payload is the round's longest choice in JSON bytes, or
 * for free text (`choices` empty) {@link MAX_PAYLOAD_CODE_POINTS} code points that JSON writes in
 * 6 bytes each, rounded up to a multiple of 1,024.
 */
export function voteLength(
  { scheme, authority }: { scheme: string; authority: string },
  path: string,
  choices: readonly string[],
): number {
  const hex = "0".repeat(64);
  const members = Array.from({ length: MAX_RING }, () => hex);
  const signature = JSON.stringify({ c0: hex, r: members, I: hex, ring: members });
  const json = (text: string) => new TextEncoder().encode(JSON.stringify(text)).length;
  const payload = choices.length === 0
    ? "\u0000".repeat(MAX_PAYLOAD_CODE_POINTS)
    : choices.reduce((a, b) => (json(b) > json(a) ? b : a));
  const body = JSON.stringify({ publicKeys: members, signature, tag: hex, payload });
  return pad(encodeRequest({
    method: "POST",
    scheme,
    authority,
    path,
    headers: [["content-type", "application/json"]],
    content: new TextEncoder().encode(body),
  })).length;
}
