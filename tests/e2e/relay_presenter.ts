// The presenter's part in the relay browser tests: signing in, naming the room's relay (or none)
// and starting a round, as a presenter does it on the page.
import type { Page } from "playwright-core";

/** What the presenter fills in before starting a round. */
export type RelayedRound = {
  /** The relay's address, or "" for none. */
  relay: string;
  question: string;
  choices: readonly string[];
  /** Seconds between seals, or the form's default. */
  intervalSeconds?: number;
  /** The id the round gets. */
  round: number;
};

/** Opens the presenter's page of `url`, signed in with `token` (`?admin=`). */
export async function signIn(presenter: Page, url: string, token: string): Promise<void> {
  await presenter.goto(`${url}?admin=${token}`);
  await presenter.locator('[data-section="presenter"]').waitFor({ timeout: 20_000 });
}

/** Names the room's relay (or clears it) and starts a round with `round`'s question and choices. */
export async function startRelayedRound(presenter: Page, round: RelayedRound): Promise<void> {
  await presenter.locator("[data-relay-address]").fill(round.relay);
  await presenter.locator('[data-action="set-relay"]').click();
  const setting = round.relay === "" ? "none" : "pinned";
  await presenter.locator(`[data-relay-setting="${setting}"]`).waitFor({ timeout: 20_000 });
  const form = presenter.locator('[data-section="rounds"]');
  await form.locator('[name="question"]').fill(round.question);
  await form.locator('[name="choices"]').fill(round.choices.join("\n"));
  if (round.intervalSeconds !== undefined) {
    await form.locator('[name="interval"]').fill(String(round.intervalSeconds));
  }
  await presenter.locator('[data-action="start-round"]').click();
  await presenter.locator(`.voting-page[data-round="${round.round}"]`).waitFor({ timeout: 15_000 });
}

/** The address the presenter's code shows (with its relay fragment), read from the open code. */
export async function scannedAddress(presenter: Page): Promise<string> {
  await presenter.locator('[data-action="present"]').click();
  return (await presenter.locator("[data-relay-qr]").getAttribute("data-relay-qr"))!;
}
