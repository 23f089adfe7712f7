// A meeting with join cards (page §14.7, protocol §2.11), in real Chromium against the real
// server: the presenter makes 12 cards with two names; the print view is rendered to PDF, read back
// with pdftoppm and zbarimg (every QR code a distinct card address) and pdftotext (the names); the
// presenter starts a carded round and forgets the codes; 10 phones at 390×844 join from 10 card
// addresses, vote and turn green; a phone on the plain address is asked for a card, a mistyped code
// is caught before anything is sent, a used card is refused in words; the audit and the projector
// count 10 keys from 10 cards of 12; a second carded round admits the same 10 cards again.
// A second test puts a lying proxy in front: a set served with a card the presenter never made
// raises the presenter's alert, and a phone whose round's set does not match its genesis sends
// nothing.
import assert from "node:assert/strict";
import type { Page, Request } from "playwright-core";
import { build } from "../../scripts/build.ts";
import { freePort, startServer } from "../helpers/server_process.ts";
import { COLOURS, launchChromium, openPhone, skipWithoutChromium } from "./browser.ts";
import { signIn } from "./relay_presenter.ts";
import { base64urlToBytes, bytesToBase64url } from "../../lib/protocol/bytes.ts";
import { cardFromRandom, cardKeyPair, describeCardSet } from "../../lib/protocol/cards.ts";
import { makeCards as makeTestCards } from "../helpers/cards.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const ROOT = new URL("../../", import.meta.url);
const TOKEN = "cards-meeting-presenter-0123456789";
const CHOICES = ["Yes", "No"];
const CARDS = 12;
const PHONES = 10;
const NAMES = ["Ada Lovelace", "Alan Turing"];
const PROJECTOR = { width: 1920, height: 1080 };

/** The tools that read the printed PDF back. */
const TOOLS = ["pdftoppm", "pdftotext", "pdfinfo", "zbarimg"];
const TOOLS_HINT = "zbarimg, pdftoppm, pdftotext or pdfinfo not found: apt-get install -y " +
  "zbar-tools poppler-utils";

/** True when `name` runs. */
function runs(name: string): boolean {
  try {
    new Deno.Command(name, { args: ["-v"], stdout: "null", stderr: "null" }).outputSync();
    return true;
  } catch {
    return false;
  }
}

/** As browser tests treat a missing Chromium: skipped with the install command, failed in CI. */
function skipWithoutTools(): boolean {
  if (skipWithoutChromium()) return true;
  if (TOOLS.every(runs)) return false;
  if (Deno.env.get("CI") === "true") return false;
  console.warn(`${TOOLS_HINT}; the cards meeting test is skipped`);
  return true;
}

/** Runs `cmd args…`; answers its standard output, failing with its error output. */
async function run(cmd: string, args: string[]): Promise<string> {
  if (!runs(cmd)) throw new Error(TOOLS_HINT);
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, `${cmd}: ${new TextDecoder().decode(out.stderr)}`);
  return text;
}

/** GET `path` of the server as JSON. */
async function json(url: string, path: string) {
  const res = await fetch(`${url}${path}`);
  assert.equal(res.status, 200, path);
  return await res.json();
}

/** Makes `count` cards on the presenter's page; answers the print view once it is drawn. */
async function makeCards(presenter: Page, count: number, names: string[]): Promise<Page> {
  await presenter.locator("input[data-cards]").fill(String(count));
  await presenter.locator("textarea[data-card-names]").fill(names.join("\n"));
  const opened = presenter.context().waitForEvent("page");
  await presenter.locator('[data-action="make-cards"]').click();
  const view = await opened;
  return view;
}

/** The card's code in a card address. */
function codeOf(address: string): string {
  return decodeURIComponent(new URL(address).hash.match(/card=([^&]*)/)![1]);
}

Deno.test({
  name: "a meeting with join cards: printed, scanned, one key per card per round",
  ignore: skipWithoutTools(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const port = freePort();
    const url = `http://127.0.0.1:${port}/`;
    const server = await startServer({
      env: { ADMIN_TOKEN: TOKEN, BLOCK_INTERVAL_MS: "1000", PORT: String(port), PUBLIC_URL: url },
    });
    const browser = await launchChromium();
    const work = await Deno.makeTempDir({ prefix: "ringvote-cards-" });
    const pageErrors: string[] = [];
    const watch = (page: Page) => page.on("pageerror", (error) => pageErrors.push(String(error)));
    try {
      const desk = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const presenter = await desk.newPage();
      watch(presenter);
      await signIn(presenter, url, TOKEN);
      let set = "";
      let addresses: string[] = [];

      await t.step("the presenter makes 12 cards with two names; they print", async () => {
        const view = await makeCards(presenter, CARDS, NAMES);
        watch(view);
        await view.waitForURL(/\/print\/cards\?set=[0-9a-f]{16}$/);
        set = new URL(view.url()).searchParams.get("set")!;
        await view.locator('[data-print-ready="true"]').waitFor({ timeout: 30_000 });
        await presenter.locator('[data-cards-status="made"]').waitFor();
        addresses = await view.locator("[data-card]").evaluateAll((cards) =>
          cards.map((card) => card.getAttribute("data-card")!)
        );
        assert.equal(addresses.length, CARDS);
        assert.equal(new Set(addresses).size, CARDS);
        for (const address of addresses) {
          assert.ok(address.startsWith(`${url}#card=`), address);
        }
        const served = await json(url, `api/cards/${set}`);
        assert.equal(served.count, CARDS);
        // Names and codes: names only on paper, codes only in the presenter's browser.
        const stored = await presenter.evaluate(() => JSON.stringify({ ...localStorage }));
        for (const name of NAMES) assert.ok(!stored.includes(name), `${name} is not stored`);
        assert.ok(stored.includes(codeOf(addresses[0])), "the codes are kept until forgotten");
        const qr = (await view.locator(".print-card-qr").first().boundingBox())!;
        assert.ok(qr.width * 25.4 / 96 >= 30, `QR code ${qr.width * 25.4 / 96} mm wide`);

        const pdf = `${work}/cards.pdf`;
        await Deno.writeFile(pdf, await view.pdf({ preferCSSPageSize: true }));
        await run("pdftoppm", ["-r", "200", "-png", pdf, `${work}/page`]);
        const pngs = [...Deno.readDirSync(work)].map((e) => e.name)
          .filter((n) => n.startsWith("page") && n.endsWith(".png")).sort();
        assert.equal(pngs.length, Math.ceil(CARDS / 8), `pages: ${pngs.join(", ")}`);
        const decoded: string[] = [];
        for (const png of pngs) {
          const out = await run("zbarimg", [
            "--quiet",
            "--raw",
            "-Sdisable",
            "-Sqrcode.enable",
            `${work}/${png}`,
          ]);
          decoded.push(...out.split("\n").filter((line) => line !== ""));
        }
        assert.deepEqual([...decoded].sort(), [...addresses].sort());
        const text = await run("pdftotext", ["-layout", pdf, "-"]);
        for (const name of NAMES) assert.ok(text.includes(name), `${name} is printed`);
        assert.ok(text.includes(`Card 7 of ${CARDS}`));
        assert.ok(text.includes(codeOf(addresses[6])));
        await run("pdftoppm", [
          "-r",
          "80",
          "-png",
          "-f",
          "1",
          "-l",
          "1",
          "-singlefile",
          pdf,
          new URL("cards-print-page1", ARTIFACTS).pathname,
        ]);
        await view.close();
      });

      await t.step("the presenter starts a carded round and forgets the codes", async () => {
        const form = presenter.locator('[data-section="rounds"]');
        await form.locator('[name="question"]').fill("Adopt the budget?");
        await form.locator('[name="choices"]').fill(CHOICES.join("\n"));
        await form.locator('[name="interval"]').fill("1");
        await form.locator('[name="cards"]').check();
        await presenter.locator('[data-action="start-round"]').click();
        await presenter.locator('[data-round-status="started"]').waitFor();
        await presenter.locator('.voting-page[data-round="2"]').waitFor({ timeout: 30_000 });
        const round = (await json(url, "api/rounds")).rounds[1];
        assert.equal(round.cards, set);
        // The demo round is never carded, and says so.
        await presenter.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor();
        assert.equal(
          await presenter.locator("[data-demo-uncarded]").textContent(),
          "The demo round is never carded: its voters are simulated in this browser, without " +
            "cards, and it runs only in a round that admits any key.",
        );
        await presenter.locator('[data-action="demo-round"]').click();
        assert.equal(
          await presenter.locator('[data-demo-status="failed"]').textContent(),
          "Not started: the demo round is never carded, and this round admits card holders only. " +
            "Start a round without cards for the demo.",
        );
        assert.equal((await json(url, "api/rounds/2/pki/key/offset/0/limit/1")).total, 0);
        await presenter.locator("[data-forget-prompt]").waitFor({ timeout: 30_000 });
        await presenter.locator(`[data-card-set="${set}"] [data-action="forget-codes"]`).click();
        await presenter.locator(`[data-card-set="${set}"][data-codes="forgotten"]`).waitFor();
        assert.equal(await presenter.locator("[data-forget-prompt]").count(), 0);
        const stored = await presenter.evaluate(() => JSON.stringify({ ...localStorage }));
        assert.ok(!stored.includes(codeOf(addresses[0])), "the codes are forgotten");
      });

      const projector = await desk.newPage();
      await projector.setViewportSize(PROJECTOR);
      watch(projector);
      await projector.goto(`${url}board?view=room`);
      await projector.locator('[data-room-phase="join"]').waitFor({ timeout: 45_000 });

      const phones: Page[] = [];
      await t.step("10 phones join from 10 card addresses, vote and turn green", async () => {
        for (let i = 0; i < PHONES; i++) {
          const { page } = await openPhone(browser);
          watch(page);
          await page.goto(addresses[i]);
          await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor();
          const join = page.locator('[data-action="join"]');
          await join.waitFor();
          assert.equal(
            await join.textContent(),
            `Join with card ${codeOf(addresses[i]).slice(0, 4)}-…`,
          );
          assert.ok(!page.url().includes("card="), "the card leaves the address bar");
          await join.click();
          await page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
          await page.locator(`[data-choice="${CHOICES[i % 2]}"]`).click();
          phones.push(page);
        }
        await presenter.locator('[data-open-joined="10"]').waitFor({ timeout: 30_000 });
        await presenter.locator('[data-action="open-voting"]').click();
        await presenter.locator('[data-open-status="opened"]').waitFor();
        for (const page of phones) {
          const vote = page.locator('[data-kind="vote"][data-status="voted"]');
          await vote.waitFor({ timeout: 90_000 });
          assert.equal(await vote.evaluate((el) => getComputedStyle(el).color), COLOURS.green);
        }
      });

      await t.step("a phone on the plain address is asked for a card", async () => {
        const { page } = await openPhone(browser);
        watch(page);
        await page.goto(url);
        const ask = page.locator("[data-card-ask]");
        await ask.waitFor({ timeout: 30_000 });
        assert.equal(
          await ask.textContent(),
          "This round admits card holders only: scan your card, or type its code",
        );
        assert.equal(await page.locator('[data-action="join"]').count(), 0);
        await page.screenshot({ path: new URL("cards-phone-ask-390.png", ARTIFACTS).pathname });

        // A mistyped code: one character changed, so its check symbol no longer matches.
        const code = codeOf(addresses[PHONES]);
        const typo = code.replace(/^(.)/, (c) => (c === "7" ? "8" : "7"));
        const sent: Request[] = [];
        const record = (request: Request) => {
          if (request.method() !== "GET" || /\/cards|pki\/key/.test(request.url())) {
            sent.push(request);
          }
        };
        page.on("request", record);
        await page.locator("input[data-card-code]").fill(typo);
        await page.locator('[data-action="use-card"]').click();
        const said = page.locator("[data-card-typo]");
        await said.waitFor();
        assert.match(
          (await said.textContent())!,
          /^The code's last character does not match: a character is mistyped\. Nothing was sent/,
        );
        assert.equal(await page.locator('[data-action="join"]').count(), 0);
        page.off("request", record);
        assert.deepEqual(sent.map((r) => `${r.method()} ${r.url()}`), [], "nothing was sent");
        await page.context().close();
      });

      await t.step("a phone on a used card's address is refused in words", async () => {
        const { page } = await openPhone(browser);
        watch(page);
        await page.goto(addresses[0]);
        await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor();
        await page.locator('[data-action="join"]').click();
        const refused = page.locator('[data-card-refusal="card_used"]');
        await refused.waitFor({ timeout: 60_000 });
        assert.match(
          (await refused.textContent())!,
          /^This card has already joined this round with another key: one card admits one key per round\. Nothing was kept on this phone\.$/,
        );
        assert.equal(await page.locator("[data-voter]").count(), 0);
        // Nothing kept: no voter, no key; the card stays for a retry.
        const kept = await page.evaluate(() => ({
          voters: localStorage.getItem("round/2/voters"),
          keys: Object.keys(localStorage).filter((k) =>
            k.startsWith("round/2/") && k.includes(":")
          ),
          card: localStorage.getItem("ringvote/card"),
        }));
        assert.ok(kept.voters === null || kept.voters === "", `voters: ${kept.voters}`);
        assert.deepEqual(kept.keys, []);
        assert.equal(kept.card, codeOf(addresses[0]));
        await page.context().close();
      });

      await t.step("the audit and the projector count 10 keys from 10 cards of 12", async () => {
        const audit = await new Deno.Command(Deno.execPath(), {
          args: ["task", "audit", url, "--round", "2"],
          cwd: ROOT.pathname,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const out = new TextDecoder().decode(audit.stdout) + new TextDecoder().decode(audit.stderr);
        assert.equal(audit.code, 0, out);
        assert.ok(out.includes("10 keys from 10 distinct cards of 12"), out);
        console.log(out.split("\n").filter((line) => /cards|passed|Audit/i.test(line)).join("\n"));
        const keys = projector.locator(
          `[data-room-keys="${PHONES}"][data-room-cards-used="${PHONES}"]`,
        );
        await keys.waitFor({ timeout: 45_000 });
        assert.equal(
          await keys.textContent(),
          "10 keys from 10 cards of 12. Count the hands: more keys than people means someone " +
            "made extra keys",
        );
        await projector.locator('[data-room-voted="10"]').waitFor({ timeout: 60_000 });
        await projector.screenshot({
          path: new URL("cards-projector-1920x1080.png", ARTIFACTS).pathname,
        });
      });

      await t.step("a second carded round of the same set admits the same 10 cards", async () => {
        const form = presenter.locator('[data-section="rounds"]');
        await form.locator('[name="question"]').fill("Elect the chair?");
        await form.locator('[name="choices"]').fill(CHOICES.join("\n"));
        await form.locator('[name="cards"]').check();
        await presenter.locator('[data-action="start-round"]').click();
        await presenter.locator('.voting-page[data-round="3"]').waitFor({ timeout: 30_000 });
        assert.equal((await json(url, "api/rounds")).rounds[2].cards, set);
        for (const page of phones) {
          await page.locator('.voting-page[data-ready="true"][data-round="3"]').waitFor({
            timeout: 30_000,
          });
          await page.locator('[data-action="join"]').click();
          await page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
        }
        const cards = await json(url, "api/rounds/3/cards");
        assert.deepEqual({ set: cards.set, count: cards.count, used: cards.used }, {
          set,
          count: CARDS,
          used: PHONES,
        });
      });

      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await server.stop();
      await Deno.remove(work, { recursive: true });
    }
  },
});

/** A fresh valid card key, wire form: a card no presenter made. */
function strangerKey(): string {
  const { bytes } = cardFromRandom(crypto.getRandomValues(new Uint8Array(10)));
  return bytesToBase64url(cardKeyPair(bytes).publicKey);
}

/** `keys` served as a self-consistent set: its own hash and id. */
function servedSet(keys: string[]) {
  return {
    ...describeCardSet(keys.map((key) => base64urlToBytes(key, 32))),
    keys,
  };
}

/**
 * A proxy in front of `target` that lies about card sets when told: `add` serves every set with a
 * card key of its own added; `swap` serves a set whose last card is replaced (its own hash, so
 * only a genesis check catches it). Every request's method and path is logged.
 */
function lyingProxy(target: string) {
  const state = { lie: "none" as "none" | "add" | "swap", log: [] as string[] };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    state.log.push(`${req.method} ${url.pathname}`);
    const headers = new Headers(req.headers);
    headers.delete("accept-encoding");
    const res = await fetch(new URL(url.pathname + url.search, target), {
      method: req.method,
      headers,
      body: req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer(),
      redirect: "manual",
    });
    const out = new Headers(res.headers);
    out.delete("content-encoding");
    out.delete("content-length");
    if (req.method === "GET" && /^\/api\/cards\/[0-9a-f]{16}$/.test(url.pathname) && res.ok) {
      const honest = await res.json();
      if (state.lie === "none") return Response.json(honest, { headers: out });
      const keys = state.lie === "add"
        ? [...honest.keys, strangerKey()]
        : [...honest.keys.slice(0, -1), strangerKey()];
      return Response.json(servedSet(keys), { headers: out });
    }
    return new Response(res.body, { status: res.status, headers: out });
  });
  const { port } = server.addr as Deno.NetAddr;
  return { url: `http://127.0.0.1:${port}/`, state, stop: () => server.shutdown() };
}

Deno.test({
  name:
    "a lying server's card set is caught: the presenter's alert, and a phone that sends nothing",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, BLOCK_INTERVAL_MS: "1000" } });
    const proxy = lyingProxy(server.url);
    const browser = await launchChromium();
    try {
      const desk = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const presenter = await desk.newPage();
      await signIn(presenter, proxy.url, TOKEN);

      await t.step("a set served with a card of the server's own raises the alert", async () => {
        proxy.state.lie = "add";
        await makeCards(presenter, 8, []);
        const alert = presenter.locator('[data-cards-status="alert"]');
        await alert.waitFor({ timeout: 30_000 });
        assert.equal(await alert.getAttribute("role"), "alert");
        assert.equal(
          await alert.textContent(),
          "The server's card set is not the one this browser made: The server lists 1 card key " +
            "this browser did not make. Do not print or use these cards.",
        );
        assert.equal(await alert.evaluate((el) => getComputedStyle(el).color), COLOURS.red);
        const kept = await presenter.evaluate(() =>
          Object.keys(localStorage).filter((key) => key.startsWith("ringvote/card"))
        );
        assert.deepEqual(kept, [], "nothing of a refused set is kept");
      });

      let address = "";
      await t.step("honest again: cards are made and a carded round starts", async () => {
        proxy.state.lie = "none";
        const view = await makeCards(presenter, 8, []);
        await view.waitForURL(/\/print\/cards\?set=/);
        await view.locator('[data-print-ready="true"]').waitFor({ timeout: 30_000 });
        address = (await view.locator("[data-card]").first().getAttribute("data-card"))!;
        await view.close();
        const form = presenter.locator('[data-section="rounds"]');
        await form.locator('[name="question"]').fill("Adjourn?");
        await form.locator('[name="choices"]').fill(CHOICES.join("\n"));
        await form.locator('[name="cards"]').check();
        await presenter.locator('[data-action="start-round"]').click();
        await presenter.locator('.voting-page[data-round="2"]').waitFor({ timeout: 30_000 });
      });

      await t.step(
        "a set that is not the genesis's: the phone says so and sends nothing",
        async () => {
          proxy.state.lie = "swap";
          const { page } = await openPhone(browser);
          // The card's address names the server's address; the phone opens it through the proxy.
          await page.goto(proxy.url + new URL(address).hash);
          await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor();
          const before = proxy.state.log.length;
          await page.locator('[data-action="join"]').click();
          const said = page.locator('[data-join-status="unchecked"]');
          await said.waitFor({ timeout: 30_000 });
          assert.equal(
            await said.textContent(),
            "Not joined: The round's genesis block does not commit to this card set. Nothing was sent.",
          );
          const posted = proxy.state.log.slice(before).filter((line) => line.startsWith("POST"));
          assert.deepEqual(posted, []);
          assert.equal(await page.locator("[data-voter]").count(), 0);
          await page.context().close();
        },
      );
    } finally {
      await browser.close();
      await proxy.stop();
      await server.stop();
    }
  },
});

Deno.test({
  name: "a card whose printed relay pin fails the check is kept, and the phone asks for the code",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, BLOCK_INTERVAL_MS: "1000" } });
    // A relay that moved: it serves a key configuration other than the one the card was printed with.
    const relay = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () =>
        new Response(new Uint8Array([1, 2, 3]), {
          headers: {
            "content-type": "application/ohttp-keys",
            "access-control-allow-origin": "*",
          },
        }),
    );
    const relayUrl = `http://127.0.0.1:${(relay.addr as Deno.NetAddr).port}`;
    const browser = await launchChromium();
    try {
      const cards = makeTestCards(8, 40);
      const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
      const posted = await fetch(`${server.url}api/cards`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ keys: cards.map((card) => card.key) }),
      });
      assert.equal(posted.status, 201);
      const { set } = await posted.json();
      const started = await fetch(`${server.url}api/rounds`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ question: "Adjourn?", choices: CHOICES, cards: set }),
      });
      assert.equal(started.status, 201, await started.text());
      const { page } = await openPhone(browser);
      const posts: string[] = [];
      page.on("request", (r) => r.method() === "POST" && posts.push(r.url()));
      const printedPin = bytesToBase64url(new Uint8Array(32).fill(7));
      await page.goto(
        `${server.url}#card=${encodeURIComponent(cards[0].code)}&relay=${
          encodeURIComponent(relayUrl)
        }&ohttp=${printedPin}`,
      );
      await page.locator("[data-relay-alert]").waitFor({ timeout: 30_000 });
      const kept = page.locator("[data-card-kept]");
      await kept.waitFor({ timeout: 30_000 });
      assert.equal(
        await kept.textContent(),
        "Your card is kept on this phone. Scan the projector's code to open this page with the " +
          "room's relay, then join with your card.",
      );
      assert.equal(await page.locator('[data-action="join"]').isDisabled(), true);
      assert.equal(await page.evaluate(() => localStorage.getItem("ringvote/card")), cards[0].code);
      assert.ok(!page.url().includes("card="), "the card leaves the address bar");
      assert.deepEqual(posts, []);
    } finally {
      await browser.close();
      await relay.shutdown();
      await server.stop();
    }
  },
});
