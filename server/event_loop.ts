// Yielding to the event loop, for long work on the request thread (in-process verification,
// sealing): a runtime such as Deno Deploy expects no stretch of a second or more without a turn.

/** Resolves on a later turn of the event loop, after pending I/O callbacks have run. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
