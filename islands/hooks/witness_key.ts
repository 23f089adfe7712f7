/**
 * The page's own witness (page §10.13): an Ed25519 key made in this browser the first time it is
 * asked to witness, kept in its storage with the switch that says it witnesses, so a reload of the
 * projector goes on witnessing under the same key. The key never leaves the browser: only its
 * public half, as a vkey, is shown and sent. A browser signed in as the presenter also pins it as
 * the room's witness (protocol §4.10), so strangers' cosignatures never crowd it out.
 * @module
 */
import { useEffect, useState } from "react";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatVerifierKey,
  type NoteSigner,
  signerKey,
} from "../../lib/protocol/note.ts";
import { ADMIN_TOKEN_KEY } from "./use_rounds.ts";
import { createApiClient } from "../../lib/client/api_client.ts";

/** Browser-storage key of the witness key: `{name, seed}` (hex seed). */
export const WITNESS_KEY_KEY = "ringvote/witness-key";
/** Browser-storage key of the switch: "on" while this browser witnesses. */
export const WITNESSING_KEY = "ringvote/witnessing";

/** The kept witness key, or null when none is kept or it does not read as one. */
export function storedWitnessKey(storage: Pick<Storage, "getItem">): NoteSigner | null {
  try {
    const { name, seed } = JSON.parse(storage.getItem(WITNESS_KEY_KEY) ?? "null") ?? {};
    const signer = { name, seed: hexToBytes(seed, 32) };
    formatVerifierKey(signerKey(signer, COSIGNATURE_V1_TYPE)); // throws for a bad name
    return signer;
  } catch {
    return null;
  }
}

/** A new witness key, named `witness.ringvote.local/<8 hex digits>` to tell projectors apart. */
export function newWitnessKey(): NoteSigner {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const tag = bytesToHex(crypto.getRandomValues(new Uint8Array(4)));
  return { name: `witness.ringvote.local/${tag}`, seed };
}

/** The vkey of `signer` as a cosignature/v1 witness (`name+hex8+base64(0x04‖key)`). */
export function witnessVkey(signer: NoteSigner): string {
  return formatVerifierKey(signerKey(signer, COSIGNATURE_V1_TYPE));
}

/**
 * Pins `vkey` as the room's witness with the presenter's `token`
 * (`POST /api/log/witnesses/pin`); a failure is logged, never thrown: the witness works unpinned.
 */
export async function pinWitness(vkey: string, token: string): Promise<void> {
  try {
    await createApiClient({ fetch }).pinWitness(vkey, token);
  } catch (error) {
    console.warn(`Pinning the room's witness: ${(error as Error).message}`);
  }
}

/**
 * Whether this browser witnesses, with its key (made and kept on the first start), and the switch.
 * While it witnesses in a browser signed in as the presenter, the key is pinned as the room's.
 */
export function useWitnessKey(): {
  witness: NoteSigner | null;
  start(): void;
  stop(): void;
} {
  const [witness, setWitness] = useState<NoteSigner | null>(() =>
    typeof localStorage !== "undefined" && localStorage.getItem(WITNESSING_KEY) === "on"
      ? storedWitnessKey(localStorage)
      : null
  );
  const vkey = witness && witnessVkey(witness);
  useEffect(() => {
    const token = localStorage.getItem(ADMIN_TOKEN_KEY);
    if (vkey !== null && token !== null) void pinWitness(vkey, token);
  }, [vkey]);
  return {
    witness,
    start() {
      let key = storedWitnessKey(localStorage);
      if (key === null) {
        key = newWitnessKey();
        localStorage.setItem(
          WITNESS_KEY_KEY,
          JSON.stringify({ name: key.name, seed: bytesToHex(key.seed) }),
        );
      }
      localStorage.setItem(WITNESSING_KEY, "on");
      setWitness(key);
    },
    stop() {
      localStorage.removeItem(WITNESSING_KEY);
      setWitness(null);
    },
  };
}
