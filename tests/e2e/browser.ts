// Chromium for the browser tests: the Debian build at /usr/bin/chromium driven by playwright-core.
// Without it the tests are skipped with the install command, except under CI=true, where a
// missing browser fails the run.
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { storedKeysFromSeed } from "../../lib/protocol/keys.ts";

/** Where Debian's chromium package installs the browser. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

const INSTALL_HINT = `Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium`;

/** True when Debian's Chromium is at {@link CHROMIUM_PATH}. */
export function chromiumInstalled(): boolean {
  try {
    return Deno.statSync(CHROMIUM_PATH).isFile;
  } catch {
    return false;
  }
}

/**
 * Value for `Deno.test({ ignore })`: true (with a message) when Chromium is missing, unless
 * CI=true, where the test runs and {@link launchChromium} fails with the install command.
 */
export function skipWithoutChromium(): boolean {
  if (chromiumInstalled()) return false;
  if (Deno.env.get("CI") === "true") return false;
  console.warn(`${INSTALL_HINT}; browser tests skipped`);
  return true;
}

/** The flags every Chromium of the tests and benchmarks runs with. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

/** Launches headless Chromium; throws with the install command when it is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumInstalled()) throw new Error(INSTALL_HINT);
  return await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/**
 * Launches headless Chromium over a browser profile in `dir`, as a visitor's browser has one: its
 * HTTP cache on disk rather than a private context's in memory. Closing the context closes it.
 */
export async function launchProfile(
  dir: string,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<BrowserContext> {
  if (!chromiumInstalled()) throw new Error(INSTALL_HINT);
  return await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
    ...options,
  });
}

/** A phone's browser context: 390×844, mobile, with touch. */
export const PHONE_CONTEXT = {
  viewport: { width: 390, height: 844 },
  isMobile: true,
  hasTouch: true,
  deviceScaleFactor: 1,
} as const;

/** A phone: a fresh browser context of {@link PHONE_CONTEXT} and its page. */
export async function openPhone(
  browser: Browser,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(PHONE_CONTEXT);
  return { context, page: await context.newPage() };
}

/** The computed CSS colours of page §4's colour names. */
export const COLOURS = {
  red: "rgb(255, 0, 0)",
  orange: "rgb(255, 165, 0)",
  green: "rgb(0, 128, 0)",
  blue: "rgb(0, 0, 255)",
} as const;

/** What a page voter holds once it has voted: its seed, key id, and the vote the server accepted. */
export type PageVote = {
  voter: { seed: Uint8Array };
  keyId: number;
  voteId: string;
  blockId: number;
  payload: string;
  signature: string;
};

/** The localStorage entries of a page voter `namespace` holding `cast`, as the page stores them. */
export function storedVoter(namespace: string, cast: PageVote): Record<string, string> {
  const keys = storedKeysFromSeed(cast.voter.seed);
  return {
    [`${namespace}:publicKey`]: keys.publicKey,
    [`${namespace}:privateKey`]: keys.privateKey,
    [`${namespace}:keyId`]: String(cast.keyId),
    [`${namespace}:voteId`]: cast.voteId,
    [`${namespace}:blockId`]: String(cast.blockId),
    [`${namespace}:voteContent`]: cast.payload,
    [`${namespace}:voteSignature`]: cast.signature,
  };
}
