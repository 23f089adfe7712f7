// The voting page's interactive part (page §2, §14): the current round's question, "Join as a
// voter", the 'Generate A new Voter' button and one panel per voter, restored from this round's
// browser storage. All cryptography runs here, in the browser, through lib/. The page follows the
// current round by itself; a presenter signed in with `/?admin=TOKEN` also gets the room controls.
import { lazy, Suspense, useEffect } from "react";
import RoundVoters from "./voting/RoundVoters.tsx";
import { roundOf, usePresenter, useRounds } from "./hooks/use_rounds.ts";
import { declareRelays } from "./hooks/relay_state.ts";

/** The presenter's bar, loaded only in the presenter's browser: phones never need its code. */
const PresenterControls = lazy(() => import("./voting/PresenterControls.tsx"));

/**
 * Props the server renders the voting page with: the ring size, the address phones use, and the
 * relay the server suggests (`OHTTP_RELAY`), which declares that this room's votes go through one.
 */
export type VotingPageProps = { ringSize: number; address?: string; relay?: string };

/** The current round's voters, and the presenter's controls for the one who holds the token. */
export default function VotingPage({ ringSize, address = "", relay }: VotingPageProps) {
  useEffect(() => {
    if (relay !== undefined) declareRelays();
    // A card in the address is kept and leaves the address bar at once, in any round (page §14.7);
    // the card code loads only then, or in a carded round.
    if (/(?:^#|&)card=/.test(location.hash)) {
      import("./voting/card_chunk.ts").then((chunk) => chunk.readPhoneCard());
    }
  }, []);
  const list = useRounds();
  const { token: presenter, signOut } = usePresenter();
  const round = list === null ? null : roundOf(list, list.current);
  // A round the presenter declared relayed asks the same of a page without a relay pinned.
  useEffect(() => {
    if (round?.relayed) declareRelays();
  }, [round?.relayed]);
  return (
    <div class="voting-room" data-round={round?.id}>
      <p class="simulated-note" data-simulated="">
        Voters here are simulated: nothing stops one phone from making many of them, so the counts
        show keys, not people (protocol §7.1).
      </p>
      {presenter !== null && round !== null && (
        <Suspense fallback={<p class="notice notice-working">Loading the presenter's controls…</p>}>
          <PresenterControls
            token={presenter}
            address={address}
            round={round}
            onSignOut={signOut}
            relayPrefill={relay}
          />
        </Suspense>
      )}
      {round === null
        ? (
          <div class="voting-page" data-ready="false">
            <p class="notice notice-working" role="status">Finding the current round…</p>
          </div>
        )
        : (
          <RoundVoters
            key={round.id}
            round={round}
            ringSize={ringSize}
            presenter={presenter}
          />
        )}
      <p class="page-link">
        <a href={round === null || round.id === 1 ? "/board" : `/board?round=${round.id}`}>
          Public bulletin board
        </a>{" "}
        · <a href="/lab">Attack lab</a>
      </p>
    </div>
  );
}
