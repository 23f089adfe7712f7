// What one add-checkpoint request costs `deno task witness` (server/witness/add_checkpoint.ts)
// when its note repeats the log's signature line: the CPU time of a request carrying 100 copies
// of the line, against one carrying it once, in one run. Both stop right after the signature check
// (an old size above the checkpoint's, answered 400), so neither writes the witness's state.
//
//   deno run -A bench/witness_copies.ts
import { cpuUsage } from "node:process";
import { signCheckpoint } from "../lib/protocol/checkpoint.ts";
import { formatNote, type NoteSigner, parseNote } from "../lib/protocol/note.ts";
import { addCheckpoint, type Witness } from "../server/witness/add_checkpoint.ts";
import { openStateStore } from "../server/witness/state.ts";
import { ED25519_TYPE, signerKey } from "../lib/protocol/note.ts";

const ORIGIN = "vote.example.org/log";
const LOG_SEED = new Uint8Array(32).fill(7);
const ROUNDS = 50;

const dir = await Deno.makeTempDir({ prefix: "ringvote-witness-bench-" });
const store = await openStateStore(dir);
try {
  const signer: NoteSigner = { name: "witness.example/bench", seed: new Uint8Array(32).fill(9) };
  const witness: Witness = {
    signer,
    logs: new Map([[ORIGIN, [signerKey({ name: ORIGIN, seed: LOG_SEED }, ED25519_TYPE)]]]),
    store,
    now: Date.now,
  };
  const note = parseNote(
    signCheckpoint({ origin: ORIGIN, size: 5, root: new Uint8Array(32) }, LOG_SEED),
  );
  const body = (copies: number) =>
    new TextEncoder().encode(
      `old 6\n\n${
        formatNote({ text: note.text, signatures: Array(copies).fill(note.signatures[0]) })
      }`,
    );
  const cpuOf = async (request: Uint8Array) => {
    const answer = await addCheckpoint(request, witness); // warm-up, and the answer's kind
    if (answer.kind !== "old-size-too-large") throw new Error(`unexpected ${answer.kind}`);
    const start = cpuUsage();
    for (let i = 0; i < ROUNDS; i++) await addCheckpoint(request, witness);
    const used = cpuUsage(start);
    return (used.user + used.system) / 1000 / ROUNDS;
  };
  const one = body(1);
  const hundred = body(100);
  const oneMs = await cpuOf(one);
  const hundredMs = await cpuOf(hundred);
  console.log(`1 copy:     ${one.length} bytes, ${oneMs.toFixed(2)} ms of CPU per request`);
  console.log(`100 copies: ${hundred.length} bytes, ${hundredMs.toFixed(2)} ms of CPU per request`);
  console.log(`ratio 100 copies / 1 copy: ${(hundredMs / oneMs).toFixed(1)}`);
} finally {
  store.close();
  await Deno.remove(dir, { recursive: true });
}
