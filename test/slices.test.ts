/**
 * Large answers are built in slices (src/slices.ts, issue 15.1): other work gets turns while
 * one is built, and the bytes are those of a single pass.
 */
import test from 'ava';
import { textInSlices, textOf } from '../src/slices.js';

function* pieces(count: number, spinMs: number): Generator<string | undefined> {
  for (let i = 0; i < count; i++) {
    const until = performance.now() + spinMs;
    while (performance.now() < until) {
      // Stands for the work of building one piece.
    }
    yield i % 3 === 0 ? undefined : `piece ${i} é€😀\n`;
  }
}

test('a long build lets timers run between its slices, and gives the text of one pass', async (t) => {
  // 400 pieces of at least 0.25 ms each: 100 ms of work in all, in slices of about 8 ms.
  let built = 0;
  const counted = function* () {
    for (const piece of pieces(400, 0.25)) {
      built++;
      yield piece;
    }
  };
  // Pieces built between two turns of other work. Counted, not timed: on a busy machine the
  // process may be descheduled mid-slice, which stretches a slice's time but not its pieces
  // (how long other work waits for a turn is a benchmark: bench/timing.ts).
  const perSlice: number[] = [];
  let seen = 0;
  let ticking = true;
  const tick = () => {
    perSlice.push(built - seen);
    seen = built;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const text = await textInSlices(counted());
  ticking = false;
  t.is(text.toString('utf8'), textOf(pieces(400, 0)));
  t.true(perSlice.length >= 5, `other work ran ${perSlice.length} times during the build`);
  // The builder looks at the clock every 32 pieces and a piece takes at least 0.25 ms, so 32
  // pieces are 8 ms, a whole slice: one slice is 32 pieces (64 if a look came a hair early).
  t.true(Math.max(...perSlice) <= 64, `most pieces in one slice: ${Math.max(...perSlice)}`);
});

test('text is encoded as UTF-8 across the chunk boundaries of the builder', async (t) => {
  const long = Array.from({ length: 50_000 }, (_, i) => (i % 2 === 0 ? '😀' : `x${i}`));
  t.is((await textInSlices(long)).toString('utf8'), long.join(''));
  t.is((await textInSlices([])).length, 0);
});
