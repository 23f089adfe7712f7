/**
 * Joining a carded round (page §14.7): with the phone's card, "Join with card 7KQ2-…"
 * (`[data-action="join"]`) first checks the round's committed card set against its genesis and
 * the card's key in it, with nothing sent but reads; then the voter is made and its key registered
 * with the card's admission. Without a card the phone asks for one, and a typed code is read by
 * Crockford's rules before anything is sent. Each refusal is said in words and keeps nothing.
 * Loaded only in a carded round: the card code stays out of the page's first load, and what the
 * page has loaded already (joining, the round's API, the relay's alert) comes in
 * props, so that this chunk splits none of the page's own.
 * @module
 */
import { useEffect, useRef, useState } from "react";
import type { JoinIO, JoinProgress } from "../../lib/client/voter/join.ts";
import type { ApiClient } from "../../lib/client/api_client.ts";
import {
  CARD_ASK_TEXT,
  CARD_KEPT_TEXT,
  cardOfText,
  cardRefusalText,
  joinWithCardText,
} from "../../lib/client/cards/card_keep.ts";
import {
  type CardCodeModule,
  cardSigner,
  checkCardForRound,
} from "../../lib/client/voter/card_check.ts";
import type { GenesisChecks } from "../../lib/client/voter/card_code.ts";
import type { PanelCard } from "./VoterPanel.tsx";
import { keepPhoneCard, readPhoneCard } from "../hooks/phone_card.ts";

/** Props of {@link CardJoin}. */
export type CardJoinProps = {
  round: number;
  /** The round's API client (page calls). */
  api: Pick<ApiClient, "roundCards" | "cardSet" | "blocks">;
  /** The card set the round lists. */
  set: string;
  ready: boolean;
  joined: boolean;
  /** True while the page's relay check failed (`[data-relay-alert]`): nothing may be sent. */
  pinsFailed: boolean;
  /** "Join as a voter" of the page (lib/client/voter/join.ts) and its status sentence. */
  joinAsVoter(io: JoinIO): Promise<JoinProgress>;
  joinStatusText(progress: JoinProgress): string;
  /** The signing code, which carries the card code (`loadSigning` of panel_actions.ts). */
  loadSigning(): Promise<CardCodeModule>;
  /** The genesis checks of lib/protocol/chain.ts, which the page has loaded already. */
  chain: GenesisChecks;
  addVoter(): Promise<string>;
  panelOf: JoinIO["panelOf"];
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
  props: CardJoinProps,
) {
  const [progress, setProgress] = useState<CardProgress | null>(null);
  const [typed, setTyped] = useState("");
  const [typo, setTypo] = useState<string | null>(null);
  const [number, setNumber] = useState<string | null>(null);
  const busy = useRef(false);
  const { round, set, ready, joined, pinsFailed, addVoter, removeVoter, onCard } = props;
  // The card code, loaded with the signing code as this control appears (so a typed code is read
  // with nothing fetched then), and the card as kept (`#card=` or typed); undefined until read.
  const [cards, setCards] = useState<CardCodeModule | null>(null);
  const [given, setGiven] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    props.loadSigning().then(setCards);
    readPhoneCard().then(setGiven);
  }, []);
  function keep(code: string) {
    keepPhoneCard(code);
    setGiven(code);
  }
  // The card as kept: read by Crockford's rules here, kept again in its display form.
  const read = given == null || cards === null ? null : cards.readCardCode(given);
  const code = read?.ok ? read.code : null;
  useEffect(() => {
    if (read?.ok && read.code !== given) keep(read.code);
  }, [given, cards]);

  function onTyped(event: Event) {
    event.preventDefault();
    if (cards === null) return;
    const parsed = cards.readCardCode(typed);
    if (!parsed.ok) {
      setTypo(`${parsed.reason}. Nothing was sent: check the code and type it again.`);
      return;
    }
    setTypo(null);
    setTyped("");
    keep(parsed.code);
  }

  async function join() {
    if (busy.current || code === null || cards === null) return;
    busy.current = true;
    try {
      const parsed = cards.readCardCode(code);
      if (!parsed.ok) {
        setProgress({ kind: "unchecked", reason: parsed.reason });
        return;
      }
      setProgress({ kind: "checking" });
      const checked = await checkCardForRound({
        api: props.api,
        round,
        listed: set,
        bytes: parsed.bytes,
        code: cards,
        chain: props.chain,
      });
      if (!checked.ok) {
        setProgress({ kind: "unchecked", reason: checked.reason });
        return;
      }
      setNumber(cardOfText(checked.number, checked.count));
      let refusal: { code: string; reason: string } | null = null;
      onCard({
        sign: cardSigner({ bytes: parsed.bytes, setSha256: checked.sha256, round, code: cards }),
        refused(error) {
          // An ApiCallError's code and reason (read by shape: no value import of the client).
          const { code = "failed", reason = String(error) } = error as {
            code?: string;
            reason?: string;
          };
          refusal = { code, reason };
        },
      });
      let added: string | null = null;
      const last = await props.joinAsVoter({
        addVoter: async () => (added = await addVoter()),
        panelOf: props.panelOf,
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

  if (given === undefined || cards === null) return null;
  const running = progress?.kind === "step" || progress?.kind === "checking";
  if (joined && progress === null) return null;
  const say = props.joinStatusText;
  if (joined && progress?.kind === "joined") return <JoinStatus progress={progress} say={say} />;
  return (
    <div class="join join-card" role="group" aria-label="Join with your card">
      {read !== null && !read.ok && (
        <p class="notice card-notice" data-card-notice="">
          The card this phone was given is not read: {read.reason}. Type its code below.
        </p>
      )}
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
      {progress !== null && <JoinStatus progress={progress} say={say} />}
    </div>
  );
}

/** The status line of a card join. */
function JoinStatus(
  { progress, say }: { progress: CardProgress; say(progress: JoinProgress): string },
) {
  const failed = progress.kind === "failed" || progress.kind === "unchecked" ||
    progress.kind === "refused";
  const text = progress.kind === "checking"
    ? "Checking your card against the cards this round committed to…"
    : progress.kind === "unchecked"
    ? `Not joined: ${progress.reason}. Nothing was sent.`
    : progress.kind === "refused"
    ? progress.text
    : say(progress);
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
