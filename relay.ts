// `deno task relay --gateway URL [--port N] [--hostname H] [--deadline S] [--recheck S]`: runs an
// Oblivious HTTP relay (RFC 9458) for one gateway, a program for a party other than the server's.
// At start it pins the gateway's key configuration, serves that copy, and prints the address it
// listens on with the configuration's SHA-256 (base64url), which the presenter's code carries.
// Exit 2: usage; exit 1: the gateway's configuration could not be read.
import { portNumber, readArguments, seconds, UsageError } from "./lib/command_line.ts";
import { createRelay } from "./relay/app.ts";
import { fetchKeys, PinError } from "./relay/pin.ts";
import { isSameMachine, resolveName } from "./relay/same_machine.ts";

const DEFAULT_PORT = 8002;
const DEFAULT_HOSTNAME = "0.0.0.0";

const USAGE = `usage: deno task relay --gateway URL [--port N] [--hostname H] [--deadline S]
                       [--recheck S]
--gateway URL   the server whose gateway this relay serves, e.g. http://192.168.1.20:8000
--port N        the port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
--hostname H    the address to listen on (default ${DEFAULT_HOSTNAME}, every interface)
--deadline S    seconds the gateway may take to answer before the client gets a 504 (default 10)
--recheck S     seconds between reads of the gateway's key configuration (default 30)`;

type Command = {
  gateway: URL;
  port: number;
  hostname: string;
  deadlineMs: number;
  recheckMs: number;
};

function parseCommand(args: readonly string[]): Command | "help" {
  let gateway: URL | null = null;
  let port = DEFAULT_PORT;
  let hostname = DEFAULT_HOSTNAME;
  let deadlineMs = 10_000;
  let recheckMs = 30_000;
  const help = readArguments(args, (flag, value) => {
    if (flag === "--gateway") gateway = gatewayUrl(value());
    else if (flag === "--port") port = portNumber(flag, value());
    else if (flag === "--hostname") hostname = value();
    else if (flag === "--deadline") deadlineMs = seconds(flag, value(), 3600);
    else if (flag === "--recheck") recheckMs = seconds(flag, value(), 3600);
    else return false;
    return true;
  });
  if (help === "help") return "help";
  if (gateway === null) throw new UsageError("--gateway is required");
  return { gateway, port, hostname, deadlineMs, recheckMs };
}

function gatewayUrl(value: string): URL {
  if (!URL.canParse(value)) throw new UsageError(`--gateway "${value}" is not a URL`);
  const url = new URL(value);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError("--gateway must be an http or https URL");
  }
  return new URL(url.origin);
}

/** This machine's interface addresses, none where they may not be read. */
function ownAddresses(): string[] {
  try {
    return Deno.networkInterfaces().map((i) => i.address);
  } catch {
    return [];
  }
}

/** The address phones reach: the listening one, or this machine's first LAN IPv4 address. */
function shownHost(hostname: string): string {
  if (hostname !== "0.0.0.0") return hostname.includes(":") ? `[${hostname}]` : hostname;
  try {
    const lan = Deno.networkInterfaces().find((i) => i.family === "IPv4" && !isLocal(i.address));
    return lan?.address ?? "127.0.0.1";
  } catch {
    return "127.0.0.1";
  }
}

function isLocal(address: string): boolean {
  return address.startsWith("127.");
}

async function main(args: readonly string[]): Promise<number> {
  let command: Command | "help";
  try {
    command = parseCommand(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`relay: ${error.message}\n${USAGE}`);
    return 2;
  }
  if (command === "help") {
    console.log(USAGE);
    return 0;
  }
  const { gateway, port, hostname, deadlineMs, recheckMs } = command;
  const client = Deno.createHttpClient({});
  let pinned;
  try {
    pinned = await fetchKeys(gateway, { client, deadlineMs });
  } catch (error) {
    if (!(error instanceof PinError)) throw error;
    console.error(`relay: cannot pin ${gateway.origin}'s key configuration: ${error.message}`);
    return 1;
  }
  const sameMachine = await isSameMachine(gateway.hostname, ownAddresses(), resolveName);
  const relay = createRelay({ gateway, pinned, client, deadlineMs, sameMachine });
  setInterval(async () => {
    const before = relay.stopped();
    await relay.recheck();
    if (before === null && relay.stopped() !== null) {
      console.error(`relay: stopped forwarding: ${relay.stopped()}`);
    }
  }, recheckMs);
  await new Promise<void>((ready) => {
    Deno.serve({
      hostname,
      port,
      onListen: ({ port }) => {
        console.log(
          `relay listening on http://${shownHost(hostname)}:${port}/ for gateway ` +
            `${gateway.origin}/ key configuration sha256 ${pinned.sha256}` +
            (sameMachine ? " (same machine as the gateway: a demonstration, no protection)" : ""),
        );
        ready();
      },
    }, (request, info) => relay.handler(request, info));
  });
  return await new Promise<number>(() => {});
}

if (import.meta.main) {
  const code = await main(Deno.args);
  Deno.exit(code);
}
