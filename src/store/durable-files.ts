/**
 * The few file operations the store's durability rests on (objects, refs, keys, the repository
 * skeleton): a new file written whole and optionally fsynced, a directory fsynced.
 */
import * as nodeFs from 'node:fs';
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
