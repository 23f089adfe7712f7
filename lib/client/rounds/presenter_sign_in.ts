/**
 * Browser-safe. The presenter's sign-in (page §14.3): a token given in the address replaces the
 * one kept in this browser only once the server accepts it, so a link to `/?admin=x` from any page
 * cannot sign the presenter out; a kept token the server refuses is forgotten.
 * @module
 */
import type { PageStorage } from "./round_storage.ts";

/** Where this browser keeps the presenter's token once signed in with `/?admin=TOKEN`. */
export const ADMIN_TOKEN_KEY = "ringvote/admin-token";

/** The server's verdict on a token: accepted, refused (401), or not known (no answer). */
export type TokenVerdict = "accepted" | "refused" | "unknown";

/**
 * The presenter token to use: `given` (from the address) when the server accepts it, which then
 * replaces the kept one; otherwise the kept one if the server accepts it. A token the server
 * refuses is never stored, and a kept one it refuses is removed; one it could not check is kept
 * for the next visit. Answers null when no token is accepted.
 */
export async function signInPresenter(
  { given, storage, check, log = () => {} }: {
    given: string | null;
    storage: PageStorage;
    check(token: string): Promise<TokenVerdict>;
    log?(message: string): void;
  },
): Promise<string | null> {
  const kept = storage.getItem(ADMIN_TOKEN_KEY);
  if (given !== null && given !== kept) {
    const verdict = await check(given);
    if (verdict === "accepted") {
      storage.setItem(ADMIN_TOKEN_KEY, given);
      return given;
    }
    log(
      verdict === "refused"
        ? "Presenter sign-in: the token in the address was refused; the kept one stays"
        : "Presenter sign-in: the token in the address could not be checked; the kept one stays",
    );
  }
  if (kept === null) return null;
  const verdict = await check(kept);
  if (verdict === "accepted") return kept;
  if (verdict === "refused") storage.removeItem(ADMIN_TOKEN_KEY);
  log(`Presenter sign-in: the kept token was ${verdict === "refused" ? "refused" : "not checked"}`);
  return null;
}
