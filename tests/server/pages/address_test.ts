// The address phones must use (page §2, protocol §6 `PUBLIC_URL`, `TRUST_PROXY`): pageAddresses
// over a fake list of network interfaces, then the voting page's QR code through the whole app.
// Nothing here sends a request to a network address: addresses are only compared as text.
import assert from "node:assert/strict";
import { build } from "../../../scripts/build.ts";
import { createApp } from "../../../server/app.ts";
import { type AddressOptions, pageAddresses } from "../../../server/pages/address.ts";
import { createStore } from "../../../server/store/mod.ts";

/** One interface of the fake machine. */
function nic(name: string, family: "IPv4" | "IPv6", address: string): Deno.NetworkInterfaceInfo {
  return { name, family, address, netmask: "", scopeid: null, cidr: `${address}/24`, mac: "" };
}

/** A laptop on the room's Wi-Fi: loopback, one LAN address, IPv6 link-local only. */
const LAPTOP = [
  nic("lo", "IPv4", "127.0.0.1"),
  nic("eth0", "IPv4", "192.168.1.20"),
  nic("lo", "IPv6", "::1"),
  nic("eth0", "IPv6", "fe80::1c2b:3aff:fe4d:5e6f"),
];

/** A machine on no network: loopback, and a self-assigned link-local address. */
const OFFLINE = [nic("lo", "IPv4", "127.0.0.1"), nic("eth0", "IPv4", "169.254.7.9")];

const WARNING = "Phones cannot open localhost: this machine has no network address they can " +
  "reach. Connect it to the room's network, or set PUBLIC_URL to the address phones should use.";

/**
 * pageAddresses of a GET of `url` with `headers` from the peer `peer` (this machine's loopback by
 * default), on a machine with `interfaces`.
 */
function addressesOf(
  url: string,
  headers: Record<string, string>,
  options: Partial<AddressOptions> = {},
  peer: string | null = "127.0.0.1",
) {
  return pageAddresses(new Request(url, { headers }), {
    publicUrl: null,
    trustProxy: false,
    interfaces: () => LAPTOP,
    ...options,
  }, peer);
}

/** The connection info `Deno.serve` hands the app, for a request from `hostname`. */
function fromPeer(hostname: string): Deno.ServeHandlerInfo<Deno.NetAddr> {
  return {
    remoteAddr: { transport: "tcp", hostname, port: 50000 },
    completed: Promise.resolve(),
  };
}

Deno.test("pageAddresses: only a loopback peer learns this machine's network addresses", () => {
  const askedOnly = {
    address: "http://localhost:8000/",
    addresses: ["http://localhost:8000/"],
    fromNetwork: false,
    warning: null,
  };
  // Host: localhost from a phone on the LAN, or from a peer the app was not told of.
  for (const peer of ["192.168.1.50", "10.0.0.7", "2001:db8::5", "::ffff:192.168.1.50", null]) {
    assert.deepEqual(addressesOf("http://x/", { Host: "localhost:8000" }, {}, peer), askedOnly);
  }
  // No Host header at all: the request's URL names the host.
  assert.deepEqual(addressesOf("http://localhost:8000/", {}, {}, "192.168.1.50"), askedOnly);
  // Behind a trusted proxy every peer is the proxy: the addresses are never listed, and the
  // presenter is told that phones cannot open the loopback address it asked for.
  assert.deepEqual(
    addressesOf("http://x/", { Host: "localhost:8000" }, { trustProxy: true }, "127.0.0.1"),
    {
      ...askedOnly,
      warning: "Phones cannot open localhost: behind a proxy, set PUBLIC_URL to the address " +
        "phones should use.",
    },
  );
  // The presenter's own browser, over IPv4, IPv6 or IPv4-mapped loopback.
  for (const peer of ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"]) {
    assert.equal(
      addressesOf("http://localhost:8000/", {}, {}, peer).address,
      "http://192.168.1.20:8000/",
      peer,
    );
  }
});

Deno.test("pageAddresses: PUBLIC_URL wins over every header, with no warning", () => {
  const got = addressesOf("http://localhost:8000/board", {
    Host: "localhost:8000",
    "X-Forwarded-Host": "vote.example.org",
    "X-Forwarded-Proto": "https",
  }, { publicUrl: "https://vote.example.net/room/", trustProxy: true });
  assert.deepEqual(got, {
    address: "https://vote.example.net/room/",
    addresses: ["https://vote.example.net/room/"],
    fromNetwork: false,
    warning: null,
  });
});

Deno.test("pageAddresses: a page opened on localhost points phones at the LAN address", () => {
  const got = addressesOf("http://localhost:8000/?voter=x", { Host: "localhost:8000" });
  assert.deepEqual(got, {
    address: "http://192.168.1.20:8000/",
    addresses: ["http://192.168.1.20:8000/"],
    fromNetwork: true,
    warning: null,
  });
  // Without a port (the scheme's default) the LAN address has none either.
  assert.equal(
    addressesOf("http://localhost/", { Host: "localhost" }).address,
    "http://192.168.1.20/",
  );
});

Deno.test("pageAddresses: every loopback spelling counts as loopback", () => {
  for (const host of ["127.0.0.1:8000", "127.5.6.7:8000", "0.0.0.0:8000", "app.localhost:8000"]) {
    assert.equal(
      addressesOf("http://x/", { Host: host }).address,
      "http://192.168.1.20:8000/",
      host,
    );
  }
  // IPv6 loopback, in its short and long spellings.
  for (const host of ["[::1]:8000", "[0:0:0:0:0:0:0:1]:8000"]) {
    assert.deepEqual(addressesOf("http://[::1]:8000/", { Host: host }).addresses, [
      "http://192.168.1.20:8000/",
    ], host);
  }
});

Deno.test("pageAddresses: IPv4 addresses first, then global IPv6, bracketed, each once", () => {
  const interfaces = () => [
    nic("docker0", "IPv4", "172.17.0.1"),
    nic("wlan0", "IPv6", "2001:db8::20"),
    nic("wlan0", "IPv6", "fd00::2"),
    nic("wlan0", "IPv4", "10.0.0.5"),
    nic("wlan1", "IPv4", "10.0.0.5"),
  ];
  const got = addressesOf("http://localhost:8000/", { Host: "localhost:8000" }, { interfaces });
  // A container bridge rarely reaches a phone: its address comes after the room's network.
  assert.deepEqual(got.addresses, [
    "http://10.0.0.5:8000/",
    "http://172.17.0.1:8000/",
    "http://[2001:db8::20]:8000/",
  ]);
  assert.equal(got.address, "http://10.0.0.5:8000/");
});

Deno.test("pageAddresses: no LAN address keeps the loopback one and warns the presenter", () => {
  const got = addressesOf("http://localhost:8000/", { Host: "localhost:8000" }, {
    interfaces: () => OFFLINE,
  });
  assert.deepEqual(got, {
    address: "http://localhost:8000/",
    addresses: ["http://localhost:8000/"],
    fromNetwork: false,
    warning: WARNING,
  });
  // Interfaces that cannot be read (no --allow-sys) are no interfaces.
  const denied = addressesOf("http://127.0.0.1:8000/", { Host: "127.0.0.1:8000" }, {
    interfaces: () => {
      throw new Deno.errors.NotCapable('Requires sys access to "networkInterfaces"');
    },
  });
  assert.equal(denied.address, "http://127.0.0.1:8000/");
  assert.match(denied.warning ?? "", /^Phones cannot open 127\.0\.0\.1: /);
});

Deno.test("pageAddresses: a Host that is not loopback is used as is, pointing at /", () => {
  const got = addressesOf("http://192.168.1.20:8000/board?vote=x", { Host: "192.168.1.20:8000" });
  assert.deepEqual(got, {
    address: "http://192.168.1.20:8000/",
    addresses: ["http://192.168.1.20:8000/"],
    fromNetwork: false,
    warning: null,
  });
  assert.equal(
    addressesOf("http://x/", { Host: "Vote.Example.org:80" }).address,
    "http://vote.example.org/",
  );
  // No Host header: the URL's host.
  assert.equal(addressesOf("http://10.1.2.3:9000/lab", {}).address, "http://10.1.2.3:9000/");
});

Deno.test("pageAddresses: X-Forwarded-Host is ignored unless TRUST_PROXY, then used", () => {
  const headers = {
    Host: "192.168.1.20:8000",
    "X-Forwarded-Host": "evil.example",
    "X-Forwarded-Proto": "https",
  };
  assert.equal(addressesOf("http://x/", headers).address, "http://192.168.1.20:8000/");
  const trusted = addressesOf("http://x/", headers, { trustProxy: true });
  assert.equal(trusted.address, "https://evil.example/");
  assert.equal(trusted.warning, null);
  // A proxy appends: the last value is the one it saw; those before it are the client's own.
  assert.equal(
    addressesOf("http://x/", {
      Host: "127.0.0.1:8000",
      "X-Forwarded-Host": "evil.example, vote.example",
      "X-Forwarded-Proto": "http, https",
    }, { trustProxy: true }).address,
    "https://vote.example/",
  );
});

Deno.test("pageAddresses: forwarded values that are not a plain host or scheme are ignored", () => {
  for (
    const [forwardedHost, forwardedProto] of [
      ["evil.example/path", "javascript"],
      ["evil.example@other", "ftp"],
      ["evil example", "https:"],
      ["", ""],
      ["a".repeat(300), "http2"],
      ["evil.example:99999", "data"],
    ]
  ) {
    const got = addressesOf("http://x/", {
      Host: "192.168.1.20:8000",
      "X-Forwarded-Host": forwardedHost,
      "X-Forwarded-Proto": forwardedProto,
    }, { trustProxy: true });
    assert.equal(got.address, "http://192.168.1.20:8000/", `${forwardedHost} ${forwardedProto}`);
  }
});

/** A fresh build in a temporary directory, so tests never race the served static/build/. */
async function freshBuild() {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-address-test-" });
  const outDir = new URL(`file://${dir}/`);
  await build({ outDir });
  return { dir, outDir };
}

/** The address the page's QR code encodes, and the address written under it, from its HTML. */
function qrTexts(html: string): { label: string; caption: string } {
  const label = html.match(/aria-label="QR code of ([^"]*)"/);
  const caption = html.match(/<span class="address-qr-url">([^<]*)<\/span>/);
  assert.ok(label && caption, "the page has a QR code with its address written out");
  return { label: label[1], caption: caption[1] };
}

Deno.test("the voting page's QR code, through the whole app", async (t) => {
  const { dir, outDir } = await freshBuild();
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const appOn = (interfaces: () => Deno.NetworkInterfaceInfo[]) =>
    createApp({ store, buildDir: outDir, interfaces });
  const get = (
    app: ReturnType<typeof createApp>,
    headers: Record<string, string>,
    peer = "127.0.0.1",
  ) => app.request("http://localhost:8000/", { headers }, fromPeer(peer));
  try {
    await t.step("opened on localhost, it encodes the LAN address, with a note", async () => {
      const res = await get(appOn(() => LAPTOP), { Host: "localhost:8000" });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
      const html = await res.text();
      assert.deepEqual(qrTexts(html), {
        label: "http://192.168.1.20:8000/",
        caption: "http://192.168.1.20:8000/",
      });
      assert.match(
        html,
        /<p data-address-note[^>]*>Worked out from this machine(?:'|&#39;)s network/,
      );
      assert.doesNotMatch(html, /data-address-warning/);
    });

    await t.step("on no network, it keeps localhost and shows the warning", async () => {
      const html = await (await get(appOn(() => OFFLINE), { Host: "localhost:8000" })).text();
      assert.deepEqual(qrTexts(html), {
        label: "http://localhost:8000/",
        caption: "http://localhost:8000/",
      });
      const warning = html.match(/<p (data-address-warning[^>]*)>(.*?)<\/p>/);
      assert.ok(warning, "the warning is shown");
      assert.equal(warning[2].replaceAll("&#39;", "'"), WARNING);
      // Plain text for the presenter, not an alert: a voter has done nothing wrong.
      assert.doesNotMatch(warning[1], /role=/);
    });

    await t.step("a hostile X-Forwarded-Host without TRUST_PROXY leaves the QR code", async () => {
      const app = appOn(() => LAPTOP);
      const plain = qrTexts(await (await get(app, { Host: "localhost:8000" })).text());
      const hostile = qrTexts(
        await (await get(app, {
          Host: "localhost:8000",
          "X-Forwarded-Host": "evil.example",
          "X-Forwarded-Proto": "https",
        })).text(),
      );
      assert.deepEqual(hostile, plain);
      assert.equal(hostile.label, "http://192.168.1.20:8000/");
    });

    await t.step("PUBLIC_URL and TRUST_PROXY reach the page from createApp's config", async () => {
      const configured = createApp({
        store,
        buildDir: outDir,
        interfaces: () => LAPTOP,
        config: { publicUrl: "https://vote.example.net/" },
      });
      const html = await (await get(configured, { Host: "localhost:8000" })).text();
      assert.equal(qrTexts(html).label, "https://vote.example.net/");
      assert.doesNotMatch(html, /data-address-(?:note|warning)/);
      const proxied = createApp({
        store,
        buildDir: outDir,
        interfaces: () => LAPTOP,
        config: { trustProxy: true },
      });
      const behind = await get(proxied, {
        Host: "127.0.0.1:8000",
        "X-Forwarded-Host": "vote.example.org",
        "X-Forwarded-Proto": "https",
      });
      assert.equal(qrTexts(await behind.text()).label, "https://vote.example.org/");
    });

    await t.step("Host: localhost from a LAN peer, or no Host, lists no LAN address", async () => {
      const app = appOn(() => LAPTOP);
      for (const headers of [{ Host: "localhost:8000" }, {}] as Record<string, string>[]) {
        const html = await (await get(app, headers, "192.168.1.50")).text();
        assert.equal(qrTexts(html).label, "http://localhost:8000/");
        assert.doesNotMatch(html, /192\.168\.1\.20/);
        assert.doesNotMatch(html, /data-address-(?:note|warning)/);
      }
      // A request with no connection info at all is a stranger too.
      const bare = await app.request("http://localhost:8000/", { headers: { Host: "localhost" } });
      assert.doesNotMatch(await bare.text(), /192\.168\.1\.20/);
    });

    await t.step("through Deno.serve, the connection's own address decides", async () => {
      const app = appOn(() => LAPTOP);
      const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
      try {
        const res = await fetch(`http://127.0.0.1:${server.addr.port}/`, {
          headers: { Host: `localhost:${server.addr.port}` },
        });
        assert.equal(qrTexts(await res.text()).label, `http://192.168.1.20:${server.addr.port}/`);
      } finally {
        await server.shutdown();
      }
    });

    await t.step("a 3,000-character Host is refused 400 invalid_host", async () => {
      const res = await get(appOn(() => LAPTOP), { Host: `${"a".repeat(2995)}:8000` });
      assert.equal(res.status, 400);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      const body = await res.json();
      assert.equal(body.error.code, "invalid_host");
      // An ordinary Host is answered as ever.
      const ordinary = await get(appOn(() => LAPTOP), { Host: "192.168.1.20:8000" });
      assert.equal(ordinary.status, 200);
      assert.equal(qrTexts(await ordinary.text()).label, "http://192.168.1.20:8000/");
    });
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
