/**
 * The light part of the quiet phone (page §14.8) the page holds from its first load: the quiet
 * round and its latest state, and the hold between voting opening and the vote leaving. The rest
 * (quiet_room.ts: its schedule, the reads its state answers, its own W) loads with the relay
 * transport, which every quiet read goes through.
 * @module
 */
import { signal } from "@preact/signals";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";

/** The quiet round and its latest state (null: no quiet round, or no state read yet). */
export const quietRoom = signal<{ round: number; state: RoundState | null } | null>(null);

/** True when `state` says its round is over for this page: closed, or another round is current. */
export function roundOver(state: RoundState): boolean {
  return state.phase === "closed" || state.current !== state.round;
}

/**
 * True from voting opening until a quiet phone's vote has left, within the send window: its reads
 * but the state, its group, the rounds and its vote's own wait meanwhile (page §14.8).
 */
export const quietHold = signal(false);

/**
 * True when this page may hold a relay pin, known at once (the pin itself is read later): its
 * address carries one, or the browser keeps one (page §14.6).
 */
export function mayHoldPin(): boolean {
  if (typeof localStorage === "undefined") return false;
  return localStorage.getItem("ringvote/relay-pin") !== null ||
    /(?:^#|&)(?:relay|ohttp)=/.test(location.hash);
}
