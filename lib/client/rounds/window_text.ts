/**
 * Browser-safe. The send window a phone shows (page §14.8): W as the phone works it out from the
 * round's figures fixed when voting opened, and, when the server's figure is another, that it uses
 * its own.
 * @module
 */

/** Whole seconds of `ms`, rounded up. */
function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/** The line `[data-send-window]`: the window every phone of the round sends its vote in. */
export function sendWindowText(windowMs: number): string {
  return `Votes are sent at a random time within ${seconds(windowMs)} s, from 5 s after ` +
    "voting opened, so the time a vote arrives does not point at its phone.";
}

/** The line `[data-window-differs]`: the server's W is not the one this phone worked out. */
export function windowDiffersText(ownMs: number, servedMs: number): string {
  return `The server says the send window is ${seconds(servedMs)} s; this phone works it out ` +
    `as ${seconds(ownMs)} s from the round's figures, and uses its own.`;
}

/** The projector's line `[data-room-window]` while voting is open: the round's W. */
export function roomWindowText(windowMs: number): string {
  return `Send window: ${seconds(windowMs)} s. Each phone sends its vote at a random time in it.`;
}
