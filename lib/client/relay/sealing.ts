/**
 * Browser-safe. The relayed transport's encapsulator made of the sealing of lib/client/ohttp_client.ts
 * (Binary HTTP padded to 1,024 bytes, a vote to its round's one length, then HPKE): the code a
 * page loads in a chunk of its own when its phone joins, never on first paint.
 * @module
 */
import { isVotePath, pinnedTarget, sealCall, voteLength } from "./ohttp_client.ts";
import type { EncapsulatorFactory, InnerRequest } from "./relayed_transport.ts";
import { RelayError } from "./relayed_transport.ts";

/** Where the calls are sealed for, and the choices of a round (its votes' one length). */
export type SealingOptions = {
  /** The pinned hash of the key configuration list. */
  ohttp: string;
  /** The server's origin: the authority of every inner request. */
  origin: string;
  /** The choices of the round a vote path names (none: free text). */
  choicesOf(path: string): Promise<readonly string[]>;
};

/** The encapsulator factory of `options` for {@link createRelayedTransport}. */
export function sealingEncapsulator(options: SealingOptions): EncapsulatorFactory {
  return (keys) => {
    const target = pinnedTarget(keys, options.ohttp, options.origin);
    if (target === null) {
      throw new RelayError("key-mismatch", "The key configuration is not the pinned one");
    }
    return async (inner: InnerRequest) => {
      if (inner.method !== "GET" && inner.method !== "POST") {
        throw new TypeError(`A relayed call is a GET or a POST, not ${inner.method}`);
      }
      const body = inner.body === undefined ? undefined : new TextDecoder().decode(inner.body);
      const voteBytes = isVotePath(inner.path)
        ? voteLength(target, inner.path, await options.choicesOf(inner.path))
        : undefined;
      const sealed = await sealCall(
        target,
        { method: inner.method, path: inner.path, body },
        { voteBytes },
      );
      return {
        request: sealed.encapsulated,
        async open(response: Uint8Array) {
          const answer = await sealed.open(response);
          return { status: answer.status, headers: answer.headers, body: answer.body };
        },
      };
    };
  };
}
