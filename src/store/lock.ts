/**
 * One writer per repository at a time: a FIFO queue inside the process (waiters do not
 * poll), then proper-lockfile across processes (the CLI and a running server).
 *
 * The cross-process lock is an optimisation, not the guarantee. proper-lockfile's stale
 * takeover is a stat + rmdir + mkdir sequence, so two processes that find the same stale
 * lock can both end up "holding" it (moxystudio/node-proper-lockfile#121). What keeps the
 * repository correct is the compare-and-swap on refs/heads/main (refs.ts): of two writers
 * that started from the same parent, the second gets StaleHeadError.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';

export const LOCK_FILE_NAME = 'c4store.lock';

export const CROSS_PROCESS_LOCK_OPTIONS = {
  // A lock left by a kill -9 is taken over after this long.
  stale: 3000,
  // The holder touches the lock this often, so a slow write is never mistaken for a dead one.
  update: 1000,
  // Retry for far longer than `stale` (about a minute in total), briefly enough that a
  // released lock is picked up within tens of milliseconds.
  retries: { retries: 1000, minTimeout: 5, maxTimeout: 60, factor: 1.2 },
  realpath: false,
} as const;

const queueTails = new Map<string, Promise<void>>();

/** Runs fn while holding the directory's write lock. Not reentrant: do not nest for one dir. */
export async function withDirectoryLock<T>(dir: string, fn: () => Promise<T>, lockFileName = LOCK_FILE_NAME): Promise<T> {
  const lockfilePath = path.join(path.resolve(dir), lockFileName);
  // Queued before anything is awaited, so the lock is granted in call order.
  return inProcessQueue(lockfilePath, async () => {
    // proper-lockfile would retry a missing directory for its whole retry budget (a minute).
    if (!(await fsp.stat(dir)).isDirectory()) throw new Error(`${dir} is not a directory.`);
    return withCrossProcessLock(lockfilePath, fn);
  });
}

async function inProcessQueue<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = queueTails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  queueTails.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (queueTails.get(key) === tail) queueTails.delete(key);
  }
}

async function withCrossProcessLock<T>(lockfilePath: string, fn: () => Promise<T>): Promise<T> {
  let compromised: Error | null = null;
  // The lock path doubles as the locked "file": proper-lockfile tracks its locks by that
  // name, so two locks in one directory (a repo's, keys.yaml's) stay apart.
  const unlock = await lockfile.lock(lockfilePath, {
    ...CROSS_PROCESS_LOCK_OPTIONS,
    lockfilePath,
    // The default handler throws from a timer and takes the whole server down. Carrying on
    // is safe for repositories, where the ref compare-and-swap still rejects a conflicting
    // commit; keys.yaml writes take milliseconds, far below `stale`.
    onCompromised: (error) => {
      compromised = error;
      console.error(`c4store: write lock ${lockfilePath} was compromised: ${error.message}`);
    },
  });
  try {
    return await fn();
  } finally {
    if (!compromised) {
      await unlock().catch((error: Error) => console.error(`c4store: releasing ${lockfilePath}: ${error.message}`));
    }
  }
}
