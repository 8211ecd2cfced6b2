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
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { isCode } from './durable-files.js';

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
const takes = new Map<string, number>();
/** How many times this process has taken the directory's cross-process lock (hand-ons from writer to writer are not takes). */
export function crossProcessLockTakes(dir: string, lockFileName = LOCK_FILE_NAME): number {
  return takes.get(path.join(path.resolve(dir), lockFileName)) ?? 0;
}
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
 * The lock is a hard link to a file of this process's own (its "key"), made with link(2): atomic
 * and exclusive like mkdir, and carrying the mtime proper-lockfile keeps fresh (the key's, set just
 * before the link). Releasing it removes a name, not a file. A lock made and removed as a file (or
 * a directory) of its own allocates an inode and frees it at every write, and on ext4 without a
 * journal (this project's own machines) a new inode skips every inode freed in the last minute (six
 * while its inode-table block is unwritten; fs/ext4/ialloc.c, recently_deleted), one lookup each:
 * measured with `perf record` on the server, ~10% of its time went to that scan, each file
 * creation 0.2–0.7 ms once writes had freed a few thousand. Locks of older versions (an empty
 * file, a directory) are still refused by link() and still removed when stale.
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
/** This process's key for each lock path (made on first use, removed at exit). */
const keys = new Map<string, string>();
/** An idle key left this long by a process that ended without removing it (a kill -9) is removed. */
const ORPHAN_KEY_MS = 60 * 60 * 1000;

function keyOf(lockPath: string): string {
  let key = keys.get(lockPath);
  if (key === undefined) {
    if (keys.size === 0) process.once('exit', removeKeys);
    key = `${lockPath}.holder-${process.pid}-${randomBytes(4).toString('hex')}`;
    keys.set(lockPath, key);
    removeOrphanKeys(lockPath);
  }
  return key;
}

function createLock(file: string): void {
  const key = keyOf(file);
  for (let attempt = 1; ; attempt++) {
    try {
      const now = new Date();
      fs.utimesSync(key, now, now);
      fs.linkSync(key, file);
      return;
    } catch (error) {
      // The key is made here the first time, and again if an orphan sweep took it for a dead one's.
      if (!isCode(error, 'ENOENT') || attempt > 1 || !fs.existsSync(path.dirname(file))) throw error;
      fs.closeSync(fs.openSync(key, 'a', 0o644));
    }
  }
}

function removeKeys(): void {
  for (const key of keys.values()) fs.rmSync(key, { force: true });
}

/** Keys of ended processes: not linked as the lock (one link) and untouched for an hour. */
function removeOrphanKeys(lockPath: string): void {
  const prefix = `${path.basename(lockPath)}.holder-`;
  const dir = path.dirname(lockPath);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((name) => name.startsWith(prefix));
  } catch {
    return;
  }
  for (const name of names) {
    try {
      const stat = fs.lstatSync(path.join(dir, name));
      if (stat.nlink === 1 && Date.now() - stat.mtimeMs > ORPHAN_KEY_MS) fs.unlinkSync(path.join(dir, name));
    } catch {
      // Gone already, or another sweep's: either way not ours to worry about.
    }
  }
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
  takes.set(lockfilePath, (takes.get(lockfilePath) ?? 0) + 1);
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

/**
 * The directory's lock `lockFileName` if no one else holds it, else null at once: for work
 * that one process of several does for all and the others may skip meanwhile (packing). It is
 * kept fresh every `timing.update` ms while held, and taken over `timing.stale` ms after a
 * holder that died stopped doing so. Returns its release.
 */
export async function tryDirectoryLock(
  dir: string,
  lockFileName: string,
  timing: { stale: number; update: number },
  log: (line: string) => void,
): Promise<(() => Promise<void>) | null> {
  const lockfilePath = path.join(path.resolve(dir), lockFileName);
  try {
    const unlock = await lockfile.lock(lockfilePath, {
      ...timing,
      retries: 0,
      realpath: false,
      fs: LOCK_FS,
      lockfilePath,
      // The default handler throws from a timer and takes the whole server down.
      onCompromised: (error) => log(`lock ${lockfilePath} was compromised: ${error.message}`),
    });
    return () => unlock().catch((error: Error) => log(`releasing ${lockfilePath}: ${error.message}`));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') return null;
    throw error;
  }
}
