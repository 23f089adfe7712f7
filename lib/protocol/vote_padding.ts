/**
 * Browser-safe. The one Binary HTTP length of every vote of a round sent through the Oblivious HTTP
 * gateway (protocol §4.11), so that neither its choice nor its ring shows in its length: the phone
 * pads to it, the gateway refuses a vote of another length.
 * @module
 */
import { encodeRequest, pad } from "./bhttp.ts";

/**
 * The largest ring, `MAX_RING` of ./ring_signature.ts, and the longest payload in code points,
 * `MAX_PAYLOAD_CODE_POINTS` of ./schemas.ts, repeated here (a test holds them equal) so that the
 * phone's Oblivious HTTP chunk loads neither the curve nor the schemas.
 */
export const VOTE_BOUNDS = { ring: 64, payloadCodePoints: 1000 } as const;

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
 * a ring of `VOTE_BOUNDS.ring` members whose payload is the round's longest choice in JSON bytes, or
 * for free text (`choices` empty) `VOTE_BOUNDS.payloadCodePoints` code points that JSON writes in
 * 6 bytes each, rounded up to a multiple of 1,024.
 */
export function voteLength(
  { scheme, authority }: { scheme: string; authority: string },
  path: string,
  choices: readonly string[],
): number {
  const hex = "0".repeat(64);
  const members = Array.from({ length: VOTE_BOUNDS.ring }, () => hex);
  const signature = JSON.stringify({ c0: hex, r: members, I: hex, ring: members });
  const json = (text: string) => new TextEncoder().encode(JSON.stringify(text)).length;
  const payload = choices.length === 0
    ? "\u0000".repeat(VOTE_BOUNDS.payloadCodePoints)
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
