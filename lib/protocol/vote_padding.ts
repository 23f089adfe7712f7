/**
 * Browser-safe. The one Binary HTTP length of every vote of a round sent through the Oblivious HTTP
 * gateway (protocol §4.11), so that neither its choice nor its ring shows in its length: the phone
 * pads to it, the gateway refuses a vote of another length. And the one length of every answer to
 * a read of a vote's proof, which holds the vote: the gateway pads those to it.
 * @module
 */
import { encodeRequest, encodeResponse, pad } from "./bhttp.ts";

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

/** True for a read of a vote's proof: `GET …/block/id/{blockId}/vote/{voteId}` under `/api/`. */
export function isVoteProofPath(path: string): boolean {
  return /^\/api\/(?:.*\/)?block\/id\/[0-9]+\/vote\/[^/]+$/.test(path);
}

/** A ring signature's wire form over the largest ring, and that ring's keys, as hex. */
function largestSignature(): { signature: string; members: string[] } {
  const hex = "0".repeat(64);
  const members = Array.from({ length: VOTE_BOUNDS.ring }, () => hex);
  return { signature: JSON.stringify({ c0: hex, r: members, I: hex, ring: members }), members };
}

/** The longest payload's JSON: `VOTE_BOUNDS.payloadCodePoints` code points of 6 bytes each. */
const LONGEST_PAYLOAD = "\u0000".repeat(VOTE_BOUNDS.payloadCodePoints);

/**
 * The Binary HTTP length of every answer to a read of a vote's proof (`isVoteProofPath`), in any
 * round: that of the proof of a vote over the largest ring with the longest payload, at the deepest
 * audit path a safe-integer leaf count allows, of a block whose numbers are the largest, rounded up
 * to a multiple of 1,024. A smaller proof, or a refusal, is padded to it.
 */
export function voteProofLength(): number {
  const { signature, members } = largestSignature();
  const most = Number.MAX_SAFE_INTEGER;
  const hash = "0".repeat(64);
  const proof = JSON.stringify({
    vote: { payload: LONGEST_PAYLOAD, signature, publicKeys: members },
    index: most,
    path: Array.from({ length: 53 }, () => hash),
    block: {
      height: most,
      timestamp: most,
      merkle_root: hash,
      prev_hash: hash,
      hash,
      size: most,
      head_signature: hash + hash,
    },
  });
  return pad(encodeResponse({
    status: 200,
    headers: [["content-type", "application/json; charset=UTF-8"]],
    content: new TextEncoder().encode(proof),
  })).length;
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
  const { signature, members } = largestSignature();
  const json = (text: string) => new TextEncoder().encode(JSON.stringify(text)).length;
  const payload = choices.length === 0
    ? LONGEST_PAYLOAD
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
