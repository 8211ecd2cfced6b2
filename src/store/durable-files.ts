/**
 * The few file operations the store's durability rests on (objects, refs, keys, the repository
 * skeleton): a new file written whole and optionally fsynced, a file replaced whole, a directory
 * fsynced.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { promises as fsp } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const fsyncFd = promisify(nodeFs.fsync);

/** Creates `file` (it must not exist) with `data`; durable: fsynced before it is closed. */
export async function writeNewFile(file: string, data: Buffer | string, mode: number, durable: boolean): Promise<void> {
  await closeAfterSync(createFileSync(file, data, mode), durable);
}

/** Creates `file` (it must not exist) holding `data`, and returns it still open. */
export function createFileSync(file: string, data: Buffer | string, mode: number): number {
  const fd = nodeFs.openSync(file, 'wx', mode);
  try {
    nodeFs.writeFileSync(fd, data);
  } catch (error) {
    nodeFs.closeSync(fd);
    throw error;
  }
  return fd;
}

/** Closes `fd`; durable: fsynced first. */
export async function closeAfterSync(fd: number, durable: boolean): Promise<void> {
  try {
    // fsync takes milliseconds: it must not block the event loop.
    if (durable) await fsyncFd(fd);
  } finally {
    nodeFs.closeSync(fd);
  }
}

/**
 * Replaces `file` whole: `data` goes to a temporary file beside it, made with `mode` (set again
 * whatever the umask took away), durable: fsynced, then renamed over `file`, durable: its
 * directory fsynced. A reader sees the old file or the new one, never part of one, and a failed
 * write leaves neither a changed file nor its temporary one behind. Every small file of the data
 * directory (keys, share links, webhooks, draft records, mirrors, the push hook) is written so.
 */
export async function replaceFile(file: string, data: string | Buffer, options: { mode: number; durable: boolean }): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const untrack = trackTemporaryFile(temp);
  try {
    const handle = await openTemporaryFile(temp, options.mode);
    try {
      await handle.chmod(options.mode);
      await handle.writeFile(data);
      if (options.durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, file);
  } catch (error) {
    await fsp.rm(temp, { force: true });
    throw error;
  } finally {
    untrack();
  }
  if (options.durable) await syncDirectory(path.dirname(file));
}

/**
 * Creates `temp` (it must not exist) and opens it for writing. It is created here, on the main
 * thread, and only opened in the thread pool: an open that creates it there may run after
 * the exit hook of trackTemporaryFile has removed what was tracked (a SIGTERM during a cache
 * write left `c4store-blob-cache.tmp-*` behind); an open that does not create fails instead.
 */
export function openTemporaryFile(temp: string, mode: number): Promise<fsp.FileHandle> {
  nodeFs.closeSync(nodeFs.openSync(temp, 'wx', mode));
  return fsp.open(temp, 'r+');
}

/** Temporary files being written by this process: removed if it exits first (a stop by SIGTERM). */
const temporaryFiles = new Set<string>();
let exitHookSet = false;

/** Counts `temp` among the files to remove at exit until the returned function is called. */
export function trackTemporaryFile(temp: string): () => void {
  if (!exitHookSet) {
    exitHookSet = true;
    process.once('exit', () => {
      for (const left of temporaryFiles) nodeFs.rmSync(left, { force: true });
    });
  }
  temporaryFiles.add(temp);
  return () => temporaryFiles.delete(temp);
}

const REPLACEMENT_TEMP = /^\.(\d+)\.[0-9a-f]{12}\.tmp$/;
/**
 * What is being written (a temporary file, a repository being assembled) and is this old is left
 * over whoever wrote it: writing one takes well under a second, making an organization seconds.
 */
export const ABANDONED_AFTER_MS = 10 * 60_000;
/**
 * This machine, as the names of what is being made record their maker beside its pid: a pid
 * says nothing about a process of another machine sharing the volume. A hash: a host name may
 * hold any character, and be long.
 */
export const THIS_MACHINE = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/**
 * Removes the temporary files of `dir` whose writer is gone (killed before it could remove
 * them): those of a process that no longer runs, and any older than ten minutes (a pid reused,
 * another machine sharing the volume). `writerOf` names a file's writing pid; undefined: a
 * temporary file that names none (always a leftover); null: not a temporary file. Only for files
 * that cost time when a write of them fails (caches): a writer on another machine has a pid this
 * one does not run.
 */
export async function removeAbandonedTemporaryFiles(dir: string, writerOf: (name: string) => string | undefined | null): Promise<void> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = writerOf(name);
    if (pid === null) continue;
    const file = path.join(dir, name);
    const stat = await fsp.stat(file).catch(() => undefined);
    if (stat === undefined) continue;
    const abandoned = Date.now() - stat.mtimeMs > ABANDONED_AFTER_MS;
    const writerGone = pid === undefined || (Number(pid) !== process.pid && !processRuns(Number(pid)));
    if (abandoned || writerGone) await fsp.rm(file, { force: true });
  }
}

/** removeAbandonedTemporaryFiles for the temporary files replaceFile makes beside `file`. */
export function removeAbandonedReplacements(file: string): Promise<void> {
  const base = path.basename(file);
  return removeAbandonedTemporaryFiles(path.dirname(file), (name) =>
    name.startsWith(base) ? (REPLACEMENT_TEMP.exec(name.slice(base.length))?.[1] ?? null) : null,
  );
}

/** Whether a process of this pid runs on this machine. */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return !isCode(error, 'ESRCH');
  }
}

/** Opening and closing take microseconds and stay synchronous; only the fsync goes to the thread pool. */
export async function syncDirectory(dir: string): Promise<void> {
  const fd = nodeFs.openSync(dir, 'r');
  try {
    await fsyncFd(fd);
  } finally {
    nodeFs.closeSync(fd);
  }
}

export function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
