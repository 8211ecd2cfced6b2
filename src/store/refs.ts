/**
 * Branch refs, read and moved the way git itself does it.
 *
 * isomorphic-git's writeRef (GitRefManager.writeRef in 1.44) is not used: it only takes an
 * in-process lock keyed by the ref path and then writes the ref file in place
 * (fs.writeFile truncates, then writes), with no compare-and-swap. A crash in between
 * leaves an empty or partial ref, and two processes can overwrite each other's update.
 * Here the new value goes into `<ref>.lock` (created with O_EXCL, which also excludes
 * git itself, e.g. a concurrent `git pack-refs`), is checked against the expected old
 * value under that lock, and replaces the ref with an atomic rename.
 */
import * as nodeFs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { isCode, syncDirectory } from './durable-files.js';
import { isOid } from './git-format.js';
import type { SpareFiles } from './spare-files.js';

export const MAIN_REF = 'refs/heads/main';

/**
 * The version (tag) names c4store makes and reads back wherever a revision is taken: the one
 * rule for both, so that no version can be made that no revision can name. 200 characters at
 * most: a ref's lock file (`<name>.lock`) must fit the file system's 255-byte names.
 */
export const VERSION_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;

const fsyncFd = promisify(nodeFs.fsync);

/**
 * A live writer holds `<ref>.lock` for milliseconds. One older than this was left by a
 * killed process. Younger ones are waited for rather than removed: withWriteLock normally
 * guarantees no other writer, but when proper-lockfile lets two processes in at once
 * (its issue #121) removing the other's fresh lock would defeat the compare-and-swap.
 */
const REF_LOCK_STALE_MS = 1000;
const REF_LOCK_POLL_MS = 10;

export class StaleHeadError extends Error {
  constructor(
    readonly expected: string | null,
    readonly actual: string | null,
  ) {
    super(`main is at ${actual ?? '(none)'}, not at ${expected ?? '(none)'}.`);
    this.name = 'StaleHeadError';
  }
}

/** The oid a ref points at, from its loose file or else packed-refs; null if neither has it. */
/** A ref file whose content is no object id (written by hand, cut by a disk fault). */
export class RefNotAnIdError extends Error {
  constructor(
    readonly ref: string,
    gitdir: string,
  ) {
    super(`${ref} in ${gitdir} does not hold an object id.`);
  }
}

export async function readRef(gitdir: string, ref: string): Promise<string | null> {
  return readRefNow(gitdir, ref);
}

// Synchronous: two small reads, far cheaper than thread-pool round trips (see objects.ts).
function readRefNow(gitdir: string, ref: string): string | null {
  const loose = readIfPresent(path.join(gitdir, ref));
  if (loose !== null) {
    const value = loose.trim();
    if (!isOid(value)) throw new RefNotAnIdError(ref, gitdir);
    return value;
  }
  const packed = readIfPresent(path.join(gitdir, 'packed-refs'));
  for (const line of packed?.split('\n') ?? []) {
    if (line.startsWith('#') || line.startsWith('^')) continue;
    if (line[40] === ' ' && line.slice(41).trimEnd() === ref && isOid(line.slice(0, 40))) return line.slice(0, 40);
  }
  return null;
}

function readIfPresent(file: string): string | null {
  try {
    return nodeFs.readFileSync(file, 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'EISDIR')) return null;
    throw error;
  }
}

/** A ref update written to `<ref>.lock` and checked, waiting to be published or abandoned. */
export interface PreparedRefUpdate {
  /** Renames the lock over the ref (durable: and syncs its directory). */
  publish(): Promise<void>;
  /** Removes the lock; the ref stays where it was. */
  abandon(): void;
}

/**
 * Moving `ref` from `expected` (null: the ref must not exist yet) to `next`, by
 * compare-and-swap, in two halves. This first one takes `<ref>.lock`, checks that the ref is
 * still `expected` (else StaleHeadError, and nothing is left behind), and writes `next` into
 * the lock (durable: fsynced). Nothing can see the new value until publish(), so a commit
 * prepares its ref update while its objects are still being synced, and publishes once they are.
 */
export async function prepareRefUpdate(
  gitdir: string,
  ref: string,
  expected: string | null,
  next: string,
  options: { durable?: boolean; spares: SpareFiles },
): Promise<PreparedRefUpdate> {
  if (!isOid(next)) throw new Error(`Not an object id: ${next}`);
  const refPath = path.join(gitdir, ref);
  const lockPath = `${refPath}.lock`;
  const { spares } = options;
  const lock = await acquireRefLock(lockPath, spares);
  let open = true;
  try {
    const actual = readRefNow(gitdir, ref);
    if (actual !== expected) throw new StaleHeadError(expected, actual);
    nodeFs.writeFileSync(lock, `${next}\n`);
    if (options.durable) await fsyncFd(lock);
    nodeFs.closeSync(lock);
    open = false;
  } catch (error) {
    if (open) nodeFs.closeSync(lock);
    nodeFs.rmSync(lockPath, { force: true });
    throw error;
  }
  let settled = false;
  return {
    async publish() {
      if (settled) throw new Error('This ref update is already settled.');
      settled = true;
      try {
        spares.keepReplaced(refPath);
        nodeFs.renameSync(lockPath, refPath);
      } catch (error) {
        nodeFs.rmSync(lockPath, { force: true });
        throw error;
      }
      if (options.durable) await syncDirectory(path.dirname(refPath));
    },
    abandon() {
      if (settled) return;
      settled = true;
      nodeFs.rmSync(lockPath, { force: true });
    },
  };
}

/** Creates `<ref>.lock` exclusively (of a spare file if there is one) and returns its file descriptor. */
async function acquireRefLock(lockPath: string, spares: SpareFiles): Promise<number> {
  for (;;) {
    try {
      return spares.createAs(lockPath, 0o644) ?? nodeFs.openSync(lockPath, 'wx', 0o644);
    } catch (error) {
      if (isCode(error, 'ENOENT')) {
        // `git pack-refs` may have pruned the directory along with the loose ref.
        nodeFs.mkdirSync(path.dirname(lockPath), { recursive: true });
        continue;
      }
      if (!isCode(error, 'EEXIST')) throw error;
    }
    const stat = nodeFs.statSync(lockPath, { throwIfNoEntry: false });
    if (!stat) continue;
    const age = Date.now() - stat.mtimeMs;
    if (age >= REF_LOCK_STALE_MS) {
      nodeFs.rmSync(lockPath, { force: true });
      continue;
    }
    await sleep(Math.min(REF_LOCK_POLL_MS, REF_LOCK_STALE_MS - age));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(1, ms)));
}
