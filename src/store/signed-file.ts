import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import * as fsp from 'node:fs/promises';

/**
 * A small file in the data directory (keys, share links) that every process re-reads when it
 * changes: its stat signature says whether it did, and its content and signature are read from
 * one open file, so they always belong together.
 */

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

// Every request checks it: a synchronous stat takes microseconds, a trip through the thread
// pool ~0.1 ms of the event loop's time (an eighth of its work serving GET /component at 10,000).
export function statSignature(file: string): string {
  const stat = nodeFs.statSync(file, { bigint: true, throwIfNoEntry: false });
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}` : 'missing';
}

/** The file's signature and its content parsed by `parse`; `missing` and `undefined` when there is no file. */
export async function readSigned<T>(file: string, parse: (text: string) => T): Promise<{ signature: string; value: T | undefined }> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { signature: 'missing', value: undefined };
    throw error;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const value = parse(await handle.readFile('utf8'));
    return { signature: `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`, value };
  } finally {
    await handle.close();
  }
}
