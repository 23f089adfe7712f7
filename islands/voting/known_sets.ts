/**
 * The card sets this presenter's browser made (page §14.7), as the round form offers them for
 * "Members only: use the cards": read from the browser's storage, updated by "Make cards".
 * @module
 */
import { signal } from "@preact/signals";
import { type KnownSet, readKnownSets } from "../../lib/client/cards/card_keep.ts";

/** The sets known, oldest first. */
export const knownSets = signal<KnownSet[]>([]);

/** Reads the sets kept in this browser. */
export function loadKnownSets(): void {
  knownSets.value = readKnownSets(localStorage);
}
