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
import * as fs from 'node:fs';
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

/**
 * While writers of this process are queued for a directory, the cross-process lock passes
 * from one to the next without being released and taken again (an rmdir and a mkdir, each a
 * trip through the thread pool and a journaled metadata change): up to this many writes in a
 * row, then it is released, so that other processes get their turn.
 */
export const MAX_WRITES_PER_HOLD = 16;

interface Queue {
  tail: Promise<void>;
  /** Writers queued or running. */
  size: number;
}

interface Hold {
  release(): Promise<void>;
  readonly compromised: boolean;
  writes: number;
}

const queues = new Map<string, Queue>();
/** Cross-process locks kept for the next queued writer of the same directory. */
const kept = new Map<string, Hold>();

/** Runs fn while holding the directory's write lock. Not reentrant: do not nest for one dir. */
export async function withDirectoryLock<T>(dir: string, fn: () => Promise<T>, lockFileName = LOCK_FILE_NAME): Promise<T> {
  const lockfilePath = path.join(path.resolve(dir), lockFileName);
  // Queued before anything is awaited, so the lock is granted in call order.
  return inProcessQueue(lockfilePath, async (othersQueued) => {
    let hold = kept.get(lockfilePath);
    kept.delete(lockfilePath);
    if (hold?.compromised) hold = undefined; // taken over while kept: take it anew
    if (hold === undefined) {
      // proper-lockfile would retry a missing directory for its whole retry budget (a minute).
      if (!fs.statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory.`);
      hold = await acquireCrossProcessLock(lockfilePath);
    }
    try {
      return await fn();
    } finally {
      hold.writes++;
      if (othersQueued() && hold.writes < MAX_WRITES_PER_HOLD && !hold.compromised) kept.set(lockfilePath, hold);
      else await hold.release();
    }
  });
}

async function inProcessQueue<T>(key: string, fn: (othersQueued: () => boolean) => Promise<T>): Promise<T> {
  let queue = queues.get(key);
  if (!queue) queues.set(key, (queue = { tail: Promise.resolve(), size: 0 }));
  const previous = queue.tail;
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  queue.tail = tail;
  const waits = queue.size > 0;
  queue.size++;
  await previous;
  // Handed on from a writer of this process: the event loop gets a turn first. Nothing else
  // in a write need wait for I/O (the lock's calls and the object files are synchronous), so
  // without it a queue of writes runs back to back as one task, and every other request of
  // every organization (a body's next chunk, a parse done on a worker) waits for all of them.
  if (waits) await new Promise((resolve) => setImmediate(resolve));
  try {
    return await fn(() => queue.size > 1);
  } finally {
    queue.size--;
    release();
    if (queue.size === 0) queues.delete(key);
  }
}

/**
 * proper-lockfile's file system, with two changes.
 *
 * Each call is made synchronously (its callback still comes later, as from an asynchronous
 * call): the lock's calls take microseconds, where each trip through the libuv thread pool
 * took 0.1–0.2 ms (the object store makes the same choice, object-storage.ts).
 *
 * The lock is an empty file made with O_EXCL rather than a directory made with mkdir: both are
 * atomic, exclusive and carry the mtime proper-lockfile keeps fresh, but a directory holds a data
 * block that its rmdir frees and journals at every write. Measured with `perf trace` on the
 * server over 1,000 updates: the rmdir took 0.38 ms on average, the file's unlink 0.034 ms. A
 * lock of an older version (a directory) is still refused by O_EXCL and still removed when stale.
 */
type Callback<T> = (error: NodeJS.ErrnoException | null, value?: T) => void;
function later<T>(call: () => T, callback: Callback<T>): void {
  let value: T;
  try {
    value = call();
  } catch (error) {
    process.nextTick(callback, error as NodeJS.ErrnoException);
    return;
  }
  process.nextTick(callback, null, value);
}
function createLock(file: string): void {
  fs.closeSync(fs.openSync(file, 'wx', 0o644));
}
function removeLock(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EISDIR') throw error;
    fs.rmdirSync(file);
  }
}
const LOCK_FS = {
  mkdir: (file: string, callback: Callback<void>) => later(() => createLock(file), callback),
  rmdir: (file: string, callback: Callback<void>) => later(() => removeLock(file), callback),
  rmdirSync: removeLock,
  stat: (file: string, callback: Callback<fs.Stats>) => later(() => fs.statSync(file), callback),
  utimes: (file: string, atime: Date, mtime: Date, callback: Callback<void>) => later(() => fs.utimesSync(file, atime, mtime), callback),
  realpath: (file: string, callback: Callback<string>) => later(() => fs.realpathSync(file), callback),
};

async function acquireCrossProcessLock(lockfilePath: string): Promise<Hold> {
  let compromised = false;
  // The lock path doubles as the locked "file": proper-lockfile tracks its locks by that
  // name, so two locks in one directory (a repo's, keys.yaml's) stay apart.
  const options: lockfile.LockOptions = {
    ...CROSS_PROCESS_LOCK_OPTIONS,
    fs: LOCK_FS,
    lockfilePath,
    // The default handler throws from a timer and takes the whole server down. Carrying on
    // is safe for repositories, where the ref compare-and-swap still rejects a conflicting
    // commit; keys.yaml writes take milliseconds, far below `stale`.
    onCompromised: (error) => {
      compromised = true;
      console.error(`c4store: write lock ${lockfilePath} was compromised: ${error.message}`);
    },
  };
  // One try first: the retry schedule of a thousand tries is built at every call that has one.
  const unlock = await lockfile.lock(lockfilePath, { ...options, retries: 0 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ELOCKED') throw error;
    return lockfile.lock(lockfilePath, options);
  });
  return {
    writes: 0,
    get compromised() {
      return compromised;
    },
    async release() {
      if (compromised) return;
      await unlock().catch((error: Error) => console.error(`c4store: releasing ${lockfilePath}: ${error.message}`));
    },
  };
}
