// `deno task witness --log VKEY [--log VKEY …] [--port N] [--hostname H] [--state PATH] [--name NAME]`:
// runs a transparency-log witness (c2sp.org/tlog-witness@v1.0.0) for the logs whose Ed25519 note
// vkeys are given: `POST /add-checkpoint` cosigns a checkpoint signed by its log's key only when it
// is consistent with everything this witness cosigned before for that log. Its key is made once
// and kept in the state directory with its record of each log; it prints its cosignature/v1 vkey
// and the address it listens on. Exit 2: usage; exit 1: it could not start.
import { resolve } from "node:path";
import { portNumber, readArguments, UsageError } from "./lib/command_line.ts";
import { bytesToHex } from "./lib/protocol/bytes.ts";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatVerifierKey,
  isKeyName,
  parseVerifierKey,
  signerKey,
  type VerifierKey,
} from "./lib/protocol/note.ts";
import { ed25519 } from "@noble/curves/ed25519.js";
import type { AddCheckpointResult } from "./server/witness/add_checkpoint.ts";
import { createWitnessApp, inconsistencyMessage } from "./server/witness/app.ts";
import { loadOrCreateKey, WitnessKeyError } from "./server/witness/key.ts";
import { openStateStore, StateLockedError } from "./server/witness/state.ts";

const DEFAULT_PORT = 8001;
const DEFAULT_HOSTNAME = "127.0.0.1";
const DEFAULT_STATE = "./data/witness/";

const USAGE =
  `usage: deno task witness --log VKEY [--log VKEY …] [--port N] [--hostname H] [--state PATH]
                         [--name NAME]
--log VKEY       a log to witness: its Ed25519 note vkey, <origin>+<key ID>+<base64 key>; repeat
                 it for more logs, or for another key of the same log
--port N         the port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
--hostname H     the address to listen on (default ${DEFAULT_HOSTNAME}, this machine only; set
                 0.0.0.0 to serve logs on other machines)
--state PATH     where the witness keeps its key and its record of each log (default
                 ${DEFAULT_STATE}); one witness per directory
--name NAME      the witness's key name (default ringvote-witness/<first 8 hex digits of its key>)`;

/** What the command line asks for. */
type Command =
  | {
    kind: "serve";
    logs: VerifierKey[];
    port: number;
    hostname: string;
    state: string;
    name: string | null;
  }
  | { kind: "help" };

/** The command `args` name; throws {@link UsageError} for anything else. */
function parseCommand(args: readonly string[]): Command {
  const logs: VerifierKey[] = [];
  let port = DEFAULT_PORT;
  let hostname = DEFAULT_HOSTNAME;
  let state = DEFAULT_STATE;
  let name: string | null = null;
  const help = readArguments(args, (flag, value) => {
    if (flag === "--log") logs.push(logKey(value()));
    else if (flag === "--port") port = portNumber(flag, value());
    else if (flag === "--hostname") hostname = value();
    else if (flag === "--state") state = value();
    else if (flag === "--name") name = keyName(value());
    else return false;
    return true;
  });
  if (help === "help") return { kind: "help" };
  if (logs.length === 0) throw new UsageError("give at least one --log");
  return { kind: "serve", logs, port, hostname, state, name };
}

/** `value` as a log's key: an Ed25519 (type 0x01) note vkey, named after the log's origin. */
function logKey(value: string): VerifierKey {
  let key: VerifierKey;
  try {
    key = parseVerifierKey(value);
  } catch (error) {
    throw new UsageError(`--log must be a note vkey: ${(error as Error).message}; got "${value}"`);
  }
  if (key.type !== ED25519_TYPE) {
    throw new UsageError(`--log must be an Ed25519 (type 0x01) vkey, got type ${key.type}`);
  }
  return key;
}

function keyName(value: string): string {
  if (!isKeyName(value)) {
    throw new UsageError(`--name must be a key name, without spaces or "+"; got "${value}"`);
  }
  return value;
}

/** The operator's line for a checkpoint cosigned or refused as inconsistent; null for others. */
function resultLine(result: AddCheckpointResult): string | null {
  if (result.kind === "cosigned") {
    return result.advanced ? `cosigned ${result.origin} at size ${result.size}` : null;
  }
  if (result.kind === "inconsistent") {
    return `REFUSED ${result.origin} at size ${result.size}: ${inconsistencyMessage(result)}`;
  }
  return null;
}

/** Starts the witness `command` describes; resolves when it has stopped. */
async function serve(command: Extract<Command, { kind: "serve" }>): Promise<void> {
  const state = resolve(command.state);
  const store = await openStateStore(state);
  let seed: Uint8Array;
  try {
    seed = await loadOrCreateKey(state);
  } catch (error) {
    store.close();
    throw error;
  }
  const name = command.name ??
    `ringvote-witness/${bytesToHex(ed25519.getPublicKey(seed).subarray(0, 4))}`;
  const signer = { name, seed };
  const app = createWitnessApp({
    signer,
    logs: command.logs,
    store,
    onResult: (result) => {
      const line = resultLine(result);
      if (line !== null) console.error(`witness: ${line}`);
    },
  });
  console.log(`witness ${name}`);
  console.log(`vkey ${formatVerifierKey(signerKey(signer, COSIGNATURE_V1_TYPE))}`);
  console.log(`state ${state}`);
  for (const key of command.logs) console.log(`log ${key.name} ${formatVerifierKey(key)}`);
  const server = Deno.serve({
    hostname: command.hostname,
    port: command.port,
    onListen: ({ hostname, port }) => {
      const host = hostname.includes(":") ? `[${hostname}]` : hostname;
      console.log(`listening on http://${host}:${port}/ (POST /add-checkpoint)`);
    },
  }, app.fetch);
  const stop = () => server.shutdown();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const signal of signals) Deno.addSignalListener(signal, stop);
  await server.finished;
  store.close();
}

if (import.meta.main) {
  let code = 0;
  try {
    const command = parseCommand(Deno.args);
    if (command.kind === "help") console.log(USAGE);
    else await serve(command);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`witness: ${error.message}\n${USAGE}`);
      code = 2;
    } else if (
      error instanceof StateLockedError || error instanceof WitnessKeyError ||
      error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.AddrInUse ||
      error instanceof Deno.errors.AddrNotAvailable || error instanceof Deno.errors.NotFound
    ) {
      console.error(`witness: ${error.message}`);
      code = 1;
    } else {
      console.error("witness: could not start:", error);
      code = 1;
    }
  }
  Deno.exit(code);
}
