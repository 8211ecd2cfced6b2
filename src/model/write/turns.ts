/**
 * The write step of a large request runs in slices: between its phases it lets the event loop
 * serve other requests (other organizations' reads must not wait for a 2,000-instance diagram
 * to be matched, checked and serialized in one go). Only large inputs pay for the turn. At each
 * turn a write past its deadline is cancelled; it has committed nothing yet.
 */
import { ApiError } from '../../errors.js';
import { Slice } from '../../slices.js';
import type { Draft } from '../draft.js';

const LARGE = 500;
/** The share of the event loop of each step running now, from its first look (slices.ts). */
const slices = new WeakMap<Draft, Slice>();

/**
 * Inside a phase that goes through many elements (45,000 components in one request): waits for
 * the event loop's next turn once the step has run its share (8 ms) since its first look or its
 * last turn. A small write never waits.
 */
export async function turnIfDue(draft: Draft): Promise<void> {
  const slice = slices.get(draft);
  if (slice === undefined) slices.set(draft, new Slice());
  else if (slice.spent) await takeTurn(draft);
}

/** Waits for the event loop's next turn when `size` elements were just processed in one go. */
export async function nextTurn(draft: Draft, size: number): Promise<void> {
  if (size < LARGE) return;
  await takeTurn(draft);
}

async function takeTurn(draft: Draft): Promise<void> {
  let slice = slices.get(draft);
  if (slice === undefined) slices.set(draft, (slice = new Slice()));
  await slice.giveTurn();
  const { deadline } = draft.options;
  if (deadline !== undefined && Date.now() > deadline.at) {
    throw new ApiError(503, `This write took longer than ${deadline.seconds} s and was cancelled; nothing was changed.`);
  }
}
