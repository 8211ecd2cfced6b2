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
  // 400 pieces of 0.25 ms each: 100 ms of work in all, in slices of about 8 ms.
  const gaps: number[] = [];
  let last = performance.now();
  let ticking = true;
  const tick = () => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const built = await textInSlices(pieces(400, 0.25));
  ticking = false;
  t.is(built.toString('utf8'), textOf(pieces(400, 0)));
  t.true(gaps.length >= 5, `other work ran ${gaps.length} times during the build`);
  // A slice ends at the first look at the clock after 8 ms: 32 pieces of 0.25 ms at most past it.
  t.true(Math.max(...gaps) < 60, `longest wait for a turn: ${Math.max(...gaps).toFixed(1)} ms`);
});

test('text is encoded as UTF-8 across the chunk boundaries of the builder', async (t) => {
  const long = Array.from({ length: 50_000 }, (_, i) => (i % 2 === 0 ? '😀' : `x${i}`));
  t.is((await textInSlices(long)).toString('utf8'), long.join(''));
  t.is((await textInSlices([])).length, 0);
});
