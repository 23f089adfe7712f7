/**
 * The presenter's join cards (page §14.7): "Make cards" draws the codes in this browser, posts only
 * their keys, checks the set the server serves back (a red alert when it is not exactly the one
 * made) and opens the print view. The codes stay in this browser until "Forget the codes"; the
 * names are handed to the print view in memory (a message to the window it opened) and never
 * stored. While codes are kept and a round is in its join phase, the page asks to forget them.
 * @module
 */
import { useEffect, useState } from "react";
import { createApiClient } from "../../lib/client/api_client.ts";
import {
  cardNames,
  forgetCodes,
  keepCodes,
  keepKnownSet,
  PRINT_NAMES,
  PRINT_READY,
  readKeptCodes,
} from "../../lib/client/cards/card_keep.ts";
import { cardCount, makeCards } from "../../lib/client/cards/card_make.ts";
import { messageOf } from "../../lib/client/text.ts";
import type { PhasedRoundInfo } from "../../lib/client/rounds/phases.ts";
import { knownSets, loadKnownSets } from "./known_sets.ts";

/** Names typed for each set, in this page's memory only: never stored. */
const namesBySet = new Map<string, string[]>();

/** The print view's address of `set`. */
function printHref(set: string): string {
  return `/print/cards?set=${set}`;
}

/** Answers a print view this page opened with the names of its set (none if none were typed). */
function answerPrintViews(event: MessageEvent) {
  if (event.origin !== location.origin) return;
  const data = event.data as { kind?: unknown; set?: unknown } | null;
  if (data?.kind !== PRINT_READY || typeof data.set !== "string") return;
  (event.source as Window | null)?.postMessage(
    { kind: PRINT_NAMES, set: data.set, names: namesBySet.get(data.set) ?? [] },
    location.origin,
  );
}

/** What the last "Make cards" did. */
type Status =
  | { kind: "working" }
  | { kind: "made"; text: string }
  | { kind: "failed"; text: string }
  | { kind: "alert"; text: string };

/** Props of {@link CardMaker}. */
export type CardMakerProps = { token: string; round: PhasedRoundInfo };

/** The presenter's card section. */
export default function CardMaker({ token, round }: CardMakerProps) {
  const [count, setCount] = useState("40");
  const [names, setNames] = useState("");
  const [status, setStatus] = useState<Status | null>(null);
  // Re-read after "Make cards" and "Forget the codes": which sets still have their codes here.
  const [, setVersion] = useState(0);
  useEffect(() => {
    loadKnownSets();
    addEventListener("message", answerPrintViews);
    return () => removeEventListener("message", answerPrintViews);
  }, []);

  async function make(event: Event) {
    event.preventDefault();
    const counted = cardCount(count);
    if (!counted.ok) {
      setStatus({ kind: "failed", text: `No cards made: ${counted.reason}.` });
      return;
    }
    // Opened now, while the press still counts as one, so that no popup blocker stops it.
    const view = open("", "_blank");
    setStatus({ kind: "working" });
    try {
      const made = await makeCards({
        api: createApiClient({ fetch }),
        token,
        count: counted.count,
        random: (bytes) => crypto.getRandomValues(bytes),
      });
      if (!made.ok) {
        view?.close();
        setStatus(
          made.alert
            ? {
              kind: "alert",
              text: `The server's card set is not the one this browser made: ${made.reason}. ` +
                "Do not print or use these cards.",
            }
            : { kind: "failed", text: `No cards made: ${made.reason}.` },
        );
        return;
      }
      keepCodes(localStorage, made.set, made.codes);
      knownSets.value = keepKnownSet(localStorage, { set: made.set, count: made.codes.length });
      const typed = cardNames(names);
      if (typed.some((name) => name !== "")) namesBySet.set(made.set, typed);
      setNames("");
      setStatus({
        kind: "made",
        text: `${made.codes.length} cards made (set ${made.set}): the server lists exactly ` +
          "their keys. Print them, then forget the codes before voting opens.",
      });
      if (view !== null) view.location.href = printHref(made.set);
      setVersion((v) => v + 1);
    } catch (error) {
      view?.close();
      setStatus({ kind: "failed", text: `No cards made: ${messageOf(error)}.` });
    }
  }

  function forget(set: string) {
    forgetCodes(localStorage, set);
    namesBySet.delete(set);
    setVersion((v) => v + 1);
  }

  const kept = knownSets.value.filter(({ set }) => readKeptCodes(localStorage, set) !== null);
  return (
    <section class="card-maker" data-section="cards" aria-label="Join cards">
      <h3>Join cards</h3>
      <p class="card-maker-lead">
        One card per member, printed here: a round that uses the cards admits one key per card. The
        codes are made in this browser and never sent; the server gets only the cards' public keys.
      </p>
      {kept.length > 0 && round.id !== 1 && round.phase === "join" && (
        <p class="card-forget-prompt status-red" data-forget-prompt="" role="alert">
          Forget the codes before voting opens: while this browser keeps them, whoever uses it could
          register the cards of members who are absent.
        </p>
      )}
      <form class="card-form" onSubmit={make}>
        <label>
          Number of cards (8 to 1,000)
          <input
            type="number"
            data-cards=""
            min={8}
            max={1000}
            value={count}
            onInput={(event) => setCount((event.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Names, one per line (optional: printed on the cards, never stored)
          <textarea
            data-card-names=""
            rows={3}
            value={names}
            onInput={(event) => setNames((event.target as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit" data-action="make-cards" disabled={status?.kind === "working"}>
          Make cards
        </button>
      </form>
      {status !== null && (
        <p
          class={`card-maker-status${
            status.kind === "made" || status.kind === "working" ? "" : " status-red"
          }`}
          data-cards-status={status.kind}
          role={status.kind === "alert" ? "alert" : "status"}
        >
          {status.kind === "working" ? "Making the cards in this browser…" : status.text}
        </p>
      )}
      {knownSets.value.length > 0 && (
        <ul class="card-sets">
          {knownSets.value.map(({ set, count }) => {
            const keeps = kept.some((k) => k.set === set);
            return (
              <li key={set} data-card-set={set} data-codes={keeps ? "kept" : "forgotten"}>
                Set {set}: {count} cards, {keeps ? "codes kept in this browser" : "codes forgotten"}
                {keeps && (
                  <>
                    {" "}
                    <button
                      type="button"
                      data-action="print-cards"
                      onClick={() => open(printHref(set), "_blank")}
                    >
                      Print the cards
                    </button>{" "}
                    <button type="button" data-action="forget-codes" onClick={() => forget(set)}>
                      Forget the codes
                    </button>
                  </>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
