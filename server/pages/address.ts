/**
 * The voting page's address phones must use (page §2, protocol §6 `PUBLIC_URL`, `TRUST_PROXY`):
 * the configured one, else the host the page was opened with, else, when that host is this machine's
 * loopback, which no phone can reach, this machine's own network addresses.
 * @module
 */
import type { Context } from "hono";
import { HOST_HEADER, MAX_HOST_LENGTH } from "../security.ts";

/**
 * What the address is made from: `PUBLIC_URL` (already an absolute http(s) URL ending in "/", see
 * server/config.ts), whether `X-Forwarded-Host`/`-Proto` come from a proxy we trust, and the
 * machine's network interfaces (`Deno.networkInterfaces` by default).
 */
export type AddressOptions = {
  publicUrl: string | null;
  trustProxy: boolean;
  interfaces?: () => Deno.NetworkInterfaceInfo[];
};

/**
 * The voting page's root URL phones must use (`address`, ending in "/"), every candidate
 * (`addresses`, `address` first), whether they were worked out from this machine's network
 * interfaces because the page was opened on a loopback address (`fromNetwork`), and a sentence
 * for the presenter when phones cannot reach `address` (`warning`), else null.
 */
export type PageAddresses = {
  address: string;
  addresses: string[];
  fromNetwork: boolean;
  warning: string | null;
};

/**
 * The address a request came from, as its connection says (`Deno.serve` hands the app its
 * `remoteAddr`; a test passes the same as the app's env), or null when unknown.
 */
export function peerOf(c: Context): string | null {
  const remote = (c.env as { remoteAddr?: { hostname?: unknown } } | undefined)?.remoteAddr;
  return typeof remote?.hostname === "string" ? remote.hostname : null;
}

/** A host as a URL holds it: normalised name or address (IPv6 bracketed) and port, "" if default. */
type Host = { scheme: "http:" | "https:"; hostname: string; port: string };

/**
 * The addresses of the voting page `req` was made to, for phones: see {@link PageAddresses}.
 * `peer` is the address the request came from (the connection's, not a header), null when unknown.
 * This machine's network addresses are listed only for a loopback host asked from a loopback peer
 * with no proxy in between: the presenter's own browser. Anyone else may send `Host: localhost`,
 * and learns only the host it asked for.
 */
export function pageAddresses(
  req: Request,
  options: AddressOptions,
  peer: string | null,
): PageAddresses {
  if (options.publicUrl !== null) {
    const address = options.publicUrl;
    return { address, addresses: [address], fromNetwork: false, warning: null };
  }
  const host = requestHost(req, options.trustProxy);
  const asked = rootAddress(host);
  if (!isLoopback(host.hostname)) {
    return { address: asked, addresses: [asked], fromNetwork: false, warning: null };
  }
  if (!isLoopbackPeer(peer)) {
    return { address: asked, addresses: [asked], fromNetwork: false, warning: null };
  }
  if (options.trustProxy) {
    // Behind a proxy this machine's own addresses are not where phones come in: the operator says.
    const warning = `Phones cannot open ${host.hostname}: behind a proxy, set PUBLIC_URL to the ` +
      "address phones should use.";
    return { address: asked, addresses: [asked], fromNetwork: false, warning };
  }
  const found = networkHosts(options.interfaces ?? Deno.networkInterfaces).map((hostname) =>
    rootAddress({ scheme: "http:", hostname, port: host.port })
  );
  if (found.length === 0) {
    return {
      address: asked,
      addresses: [asked],
      fromNetwork: false,
      warning:
        `Phones cannot open ${host.hostname}: this machine has no network address they can ` +
        "reach. Connect it to the room's network, or set PUBLIC_URL to the address phones " +
        "should use.",
    };
  }
  return { address: found[0], addresses: found, fromNetwork: true, warning: null };
}

/**
 * The host and scheme the browser asked for: from `X-Forwarded-Host`/`X-Forwarded-Proto` only
 * when `trustProxy` (any client can send them, so otherwise a visitor could put their own address
 * in the QR code), else from the Host header, else from the URL. Of a forwarded list, the last
 * value counts: the one the nearest proxy appended, where the values before it are whatever the
 * client sent. A value that is not a plain host or scheme is ignored.
 */
function requestHost(req: Request, trustProxy: boolean): Host {
  const url = new URL(req.url);
  const first = (name: string) => req.headers.get(name)?.split(",")[0].trim() ?? "";
  const last = (name: string) => req.headers.get(name)?.split(",").at(-1)?.trim() ?? "";
  const forwarded = trustProxy ? last("x-forwarded-proto").toLowerCase() : "";
  const proto = forwarded === "http" || forwarded === "https" ? forwarded : url.protocol;
  const scheme = proto.startsWith("https") ? "https:" : "http:";
  const candidates = [trustProxy ? last("x-forwarded-host") : "", first("host"), url.host];
  for (const candidate of candidates) {
    const host = parseHost(candidate, scheme);
    if (host !== null) return host;
  }
  // The URL of a request always has a host; this is only reached for one Deno would not build.
  return { scheme, hostname: "localhost", port: "" };
}

/** `value` as a host of `scheme` when it is a plain Host header value, else null. */
function parseHost(value: string, scheme: Host["scheme"]): Host | null {
  if (value === "" || value.length > MAX_HOST_LENGTH || !HOST_HEADER.test(value)) return null;
  try {
    // The URL parser normalises the host (case, IPv4 and IPv6 spellings) and drops a default port.
    const url = new URL(`${scheme}//${value}/`);
    return { scheme, hostname: url.hostname, port: url.port };
  } catch {
    return null;
  }
}

/** The root URL of `host`: the voting page, whatever page asked. */
function rootAddress({ scheme, hostname, port }: Host): string {
  return `${scheme}//${hostname}${port === "" ? "" : `:${port}`}/`;
}

/**
 * True for a host only this machine can reach: localhost and its subdomains (RFC 6761 §6.3),
 * 127.0.0.0/8, ::1, and the unspecified 0.0.0.0 and :: a server listens on. `hostname` is URL
 * normalised, so other spellings of these addresses are already folded into these.
 */
function isLoopback(hostname: string): boolean {
  const name = hostname.replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(name) ||
    name === "0.0.0.0" || name === "[::1]" || name === "[::]" ||
    /^\[::ffff:7f[0-9a-f]{2}:/.test(name);
}

/** True for a connection from this machine: 127.0.0.0/8, ::1, or either mapped into IPv6. */
function isLoopbackPeer(peer: string | null): boolean {
  if (peer === null) return false;
  const address = peer.toLowerCase().replace(/^\[|\]$/g, "");
  return /^(?:::ffff:)?127\.\d+\.\d+\.\d+$/.test(address) || address === "::1" ||
    /^(?:0:){5}ffff:7f[0-9a-f]{2}:/.test(address) || address === "0:0:0:0:0:0:0:1";
}

/**
 * Interfaces whose addresses rarely reach a phone in the room (containers, VMs, VPNs): their
 * addresses come after the others, so the QR code shows the room's network first.
 */
const VIRTUAL_INTERFACE = /^(?:docker|br-|veth|virbr|vmnet|vboxnet|utun|tun|tap|wg|zt|tailscale)/i;

/**
 * This machine's addresses a phone on its network may reach, as URL hosts: IPv4 addresses that are
 * not loopback or link-local (169.254.0.0/16), then global IPv6 ones (2000::/3, bracketed), those
 * of virtual interfaces last, each once. No interfaces when they cannot be read (no --allow-sys).
 */
function networkHosts(interfaces: () => Deno.NetworkInterfaceInfo[]): string[] {
  let list: Deno.NetworkInterfaceInfo[];
  try {
    list = interfaces();
  } catch {
    return [];
  }
  const ordered = [
    ...list.filter((i) => !VIRTUAL_INTERFACE.test(i.name)),
    ...list.filter((i) => VIRTUAL_INTERFACE.test(i.name)),
  ];
  const ipv4 = ordered.filter((i) => i.family === "IPv4" && isReachableIpv4(i.address))
    .map((i) => i.address);
  const ipv6 = ordered.filter((i) => i.family === "IPv6" && isGlobalIpv6(i.address))
    .map((i) => `[${i.address.toLowerCase()}]`);
  return [...new Set([...ipv4, ...ipv6])];
}

/** True for a dotted IPv4 address outside 0.0.0.0/8, 127.0.0.0/8 and 169.254.0.0/16. */
function isReachableIpv4(address: string): boolean {
  const octets = address.split(".").map(Number);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) {
    return false;
  }
  const [a, b] = octets;
  return a !== 0 && a !== 127 && !(a === 169 && b === 254);
}

/** True for a global unicast IPv6 address (2000::/3): not loopback, link-local or unique-local. */
function isGlobalIpv6(address: string): boolean {
  return /^[23][0-9a-f]{3}:/i.test(address) && !address.includes("%");
}
