/**
 * The worker pool every off-thread job uses (src/threads.ts: drawings, layouts, PNGs, YAML):
 * real worker threads running test/support/echo-worker.ts.
 */
import test from 'ava';
import type { Worker } from 'node:worker_threads';
import { WorkerPool, type WorkerOutcome } from '../src/threads.js';

const ECHO = new URL('./support/echo-worker.ts', import.meta.url);
const LIMITS = { maxOldGenerationSizeMb: 64 };
type Echo = { id: number; threadId: number; began: number; ended: number };

function answer(outcome: WorkerOutcome<Echo>): Echo {
  if (outcome.kind !== 'answer') throw new Error(`expected an answer, got ${outcome.kind}`);
  return outcome.message;
}

test('a worker that answered is kept for the next task, up to `keep`; one that failed or ran out of time is not', async (t) => {
  const pool = new WorkerPool(ECHO, { resourceLimits: LIMITS, keep: 1 });
  try {
    const first = answer(await pool.run({}, 30_000));
    t.is(answer(await pool.run({}, 30_000)).threadId, first.threadId, 'the idle worker took the next task');
    const [a, b] = await Promise.all([pool.run<Echo>({ sleepMs: 50 }, 30_000), pool.run<Echo>({ sleepMs: 50 }, 30_000)]);
    t.not(answer(a).threadId, answer(b).threadId, 'two at once: a second worker');
    const kept = answer(await pool.run({}, 30_000)).threadId;
    t.true([answer(a).threadId, answer(b).threadId].includes(kept));
    t.is(answer(await pool.run({}, 30_000)).threadId, kept, 'only one of them was kept');

    t.is((await pool.run({ silent: true }, 200)).kind, 'timeout');
    t.not(answer(await pool.run({}, 30_000)).threadId, kept, 'the worker that ran out of time was ended');
    const crashed = await pool.run<Echo>({ crash: true }, 30_000);
    t.is(crashed.kind, 'error');
    t.regex(crashed.kind === 'error' ? crashed.error.message : '', /asked to crash/);
  } finally {
    await pool.close();
  }
});

test('slots bound the tasks running at once; the others wait their turn, in order', async (t) => {
  const pool = new WorkerPool(ECHO, { resourceLimits: LIMITS, keep: 2, slots: 1 });
  try {
    const answers = (await Promise.all([0, 1, 2].map(() => pool.run<Echo>({ sleepMs: 60 }, 30_000)))).map(answer);
    for (let i = 1; i < answers.length; i++) t.true(answers[i]!.began >= answers[i - 1]!.ended, 'one after the other');
  } finally {
    await pool.close();
  }
});

test('a task given as a function is made only once a slot is free for it', async (t) => {
  const pool = new WorkerPool(ECHO, { resourceLimits: LIMITS, keep: 1, slots: 1 });
  try {
    const made: number[] = [];
    const running = pool.run<Echo>({ sleepMs: 150 }, 30_000);
    const waiting = pool.run<Echo>(() => {
      made.push(Date.now());
      return { sleepMs: 0 };
    }, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    t.deepEqual(made, [], 'not made while the only slot is taken');
    const first = answer(await running);
    answer(await waiting);
    t.is(made.length, 1);
    t.true(made[0]! >= first.ended, 'made after the first task ended');
  } finally {
    await pool.close();
  }
});

test('an aborted task and a closed pool end their workers (outcome exit); a worker that never gets ready is ended too', async (t) => {
  const pool = new WorkerPool(ECHO, { resourceLimits: LIMITS, keep: 2 });
  const closing = new AbortController();
  const aborted = pool.run<Echo>({ silent: true }, 30_000, closing.signal);
  setTimeout(() => closing.abort(), 100);
  t.is((await aborted).kind, 'exit');
  t.is((await pool.run({ silent: true }, 30_000, closing.signal)).kind, 'exit', 'already aborted');

  const idle = (await Promise.all([pool.run<Echo>({ sleepMs: 50 }, 30_000), pool.run<Echo>({ sleepMs: 50 }, 30_000)])).map(
    (outcome) => answer(outcome).threadId,
  );
  const running = pool.run<Echo>({ silent: true }, 30_000);
  setTimeout(() => void pool.close(), 100);
  t.is((await running).kind, 'exit');
  const after = answer(await pool.run({}, 30_000));
  t.false(idle.includes(after.threadId), 'close ended the idle workers too: a task after it starts a new one');
  await pool.close();

  const never = new WorkerPool(ECHO, {
    resourceLimits: LIMITS,
    keep: 1,
    ready: async (worker: Worker) => {
      await worker.terminate();
      return false;
    },
  });
  t.is((await never.run({}, 30_000)).kind, 'exit');
  await never.close();
});
