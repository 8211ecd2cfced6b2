/**
 * The write step of a large request runs in slices: between its phases it lets the event loop
 * serve other requests (other organizations' reads must not wait for a 2,000-instance diagram
 * to be matched, checked and serialized in one go). Only large inputs pay for the turn.
 */
const LARGE = 500;

/** Waits for the event loop's next turn when `size` elements were just processed in one go. */
export function nextTurn(size: number): Promise<void> | undefined {
  if (size < LARGE) return undefined;
  return new Promise((resolve) => setImmediate(resolve));
}
