/**
 * Joining a carded round (page §14.7): with the phone's card, "Join with card 7KQ2-…"
 * (`[data-action="join"]`) first checks the round's committed card set against its genesis and
 * the card's key in it, with nothing sent but reads; then the voter is made and its key registered
 * with the card's admission. Without a card the phone asks for one, and a typed code is read by
 * Crockford's rules before anything is sent. Each refusal is said in words and keeps nothing.
 * Loaded only in a carded round: the card code stays out of the page's first load.
 * @module
 */
import { useEffect, useRef, useState } from "react";
import { parseCardCode } from "../../lib/protocol/cards.ts";
import { joinAsVoter, type JoinProgress, joinStatusText } from "../../lib/client/voter/join.ts";
import type { DemoPanel } from "../../lib/client/voter/demo_round.ts";
import {
  CARD_ASK_TEXT,
  CARD_KEPT_TEXT,
  cardOfText,
  cardRefusalText,
  joinWithCardText,
} from "../../lib/client/cards/card_keep.ts";
import { cardSigner, checkCardForRound } from "../../lib/client/cards/card_check.ts";
import { pageApiClient } from "../hooks/watch_heads.ts";
import { keepPhoneCard, phoneCard, readPhoneCard } from "../hooks/phone_card.ts";
import { relayAlert } from "../hooks/relay_state.ts";
import type { PanelCard } from "./VoterPanel.tsx";

/** Props of {@link CardJoin}. */
export type CardJoinProps = {
  round: number;
  /** The card set the round lists. */
  set: string;
  ready: boolean;
  joined: boolean;
  addVoter(): Promise<string>;
  panelOf(namespace: string): Promise<DemoPanel>;
  /** Forgets a voter whose card was refused: a refusal keeps nothing. */
  removeVoter(namespace: string): void;
  /** Hands the panels the card their key registers with. */
  onCard(card: PanelCard | null): void;
};

/** Where a card join is, beyond the steps of joining. */
type CardProgress =
  | JoinProgress
  | { kind: "checking" }
  | { kind: "unchecked"; reason: string }
  | { kind: "refused"; code: string; text: string };

/** The phone's card line, join button and status, or the ask for a card. */
export default function CardJoin(
  { round, set, ready, joined, addVoter, panelOf, removeVoter, onCard }: CardJoinProps,
) {
  const [progress, setProgress] = useState<CardProgress | null>(null);
  const [typed, setTyped] = useState("");
  const [typo, setTypo] = useState<string | null>(null);
  const [number, setNumber] = useState<string | null>(null);
  const busy = useRef(false);
  useEffect(() => {
    readPhoneCard();
  }, []);
  const card = phoneCard.value;
  const code = card?.code ?? null;

  function onTyped(event: Event) {
    event.preventDefault();
    const parsed = parseCardCode(typed);
    if (!parsed.ok) {
      setTypo(`${parsed.reason}. Nothing was sent: check the code and type it again.`);
      return;
    }
    setTypo(null);
    setTyped("");
    keepPhoneCard(parsed.code);
  }

  async function join() {
    if (busy.current || code === null) return;
    busy.current = true;
    try {
      const parsed = parseCardCode(code);
      if (!parsed.ok) {
        setProgress({ kind: "unchecked", reason: parsed.reason });
        return;
      }
      setProgress({ kind: "checking" });
      const checked = await checkCardForRound({
        api: pageApiClient({ round }),
        round,
        listed: set,
        bytes: parsed.bytes,
      });
      if (!checked.ok) {
        setProgress({ kind: "unchecked", reason: checked.reason });
        return;
      }
      setNumber(cardOfText(checked.number, checked.count));
      let refusal: { code: string; reason: string } | null = null;
      onCard({
        sign: cardSigner({ bytes: parsed.bytes, setSha256: checked.sha256, round }),
        onRefusal: (refused, reason) => refusal = { code: refused, reason },
      });
      let added: string | null = null;
      const last = await joinAsVoter({
        addVoter: async () => (added = await addVoter()),
        panelOf,
        report: setProgress,
      });
      if (last.kind === "joined") {
        document.querySelector(`[data-voter="${CSS.escape(last.namespace)}"]`)
          ?.scrollIntoView({ block: "start" });
        return;
      }
      // A refused card keeps nothing: the voter and its key go, the card stays for a retry.
      if (added !== null) removeVoter(added);
      const refused = refusal as { code: string; reason: string } | null;
      if (refused !== null) {
        setProgress({
          kind: "refused",
          code: refused.code,
          text: cardRefusalText(refused.code, refused.reason),
        });
      }
    } finally {
      busy.current = false;
    }
  }

  const running = progress?.kind === "step" || progress?.kind === "checking";
  if (joined && progress === null) return null;
  if (joined && progress?.kind === "joined") return <JoinStatus progress={progress} />;
  const pinsFailed = relayAlert.value !== null;
  return (
    <div class="join join-card" role="group" aria-label="Join with your card">
      {card?.notice && <p class="notice card-notice" data-card-notice="">{card.notice}</p>}
      {code === null
        ? (
          <form class="card-form" data-card-form="" onSubmit={onTyped}>
            <p class="card-ask" data-card-ask="">{CARD_ASK_TEXT}</p>
            <label>
              Card code
              <input
                type="text"
                data-card-code=""
                autocomplete="off"
                autocapitalize="characters"
                spellcheck={false}
                placeholder="XXXX-XXXX-XXXX-XXXX-X"
                value={typed}
                onInput={(event) => setTyped((event.target as HTMLInputElement).value)}
              />
            </label>
            <button type="submit" data-action="use-card">Use this card</button>
            {typo !== null && (
              <p class="card-typo status-red" data-card-typo="" role="alert">{typo}</p>
            )}
          </form>
        )
        : (
          <>
            {pinsFailed && <p class="card-kept status-red" data-card-kept="">{CARD_KEPT_TEXT}</p>}
            <button
              type="button"
              class="join-button"
              data-action="join"
              onClick={join}
              disabled={!ready || running || pinsFailed}
            >
              {joinWithCardText(code)}
            </button>
            {number !== null && <p class="card-number" data-card-number="">{number}</p>}
          </>
        )}
      {progress !== null && <JoinStatus progress={progress} />}
    </div>
  );
}

/** The status line of a card join. */
function JoinStatus({ progress }: { progress: CardProgress }) {
  const failed = progress.kind === "failed" || progress.kind === "unchecked" ||
    progress.kind === "refused";
  const text = progress.kind === "checking"
    ? "Checking your card against the cards this round committed to…"
    : progress.kind === "unchecked"
    ? `Not joined: ${progress.reason}. Nothing was sent.`
    : progress.kind === "refused"
    ? progress.text
    : joinStatusText(progress);
  return (
    <p
      class={`join-status${failed ? " status-red" : ""}`}
      data-join-status={progress.kind}
      data-card-refusal={progress.kind === "refused" ? progress.code : undefined}
      role="status"
      aria-live="polite"
    >
      {text}
    </p>
  );
}
