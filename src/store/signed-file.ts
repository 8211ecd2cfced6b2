import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import { ApiError } from '../errors.js';

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

/**
 * The file's signature and its content parsed by `parse`; `missing` and `undefined` when there is no file.
 * What `parse` throws is the refusal `refuse` makes of its first line (by default: the data directory's file).
 */
export async function readSigned<T>(
  file: string,
  parse: (text: string) => T,
  refuse: (why: string) => ApiError = (why) => damagedInDataDirectory(path.basename(file), why),
): Promise<{ signature: string; value: T | undefined }> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { signature: 'missing', value: undefined };
    throw error;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const text = await handle.readFile('utf8');
    let value: T;
    try {
      value = parse(text);
    } catch (error) {
      throw refuse(reasonOf(file, error as Error));
    }
    return { signature: `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`, value };
  } finally {
    await handle.close();
  }
}

/** Why a file was refused, as one sentence: the first line of what its parser threw, without the file's path. */
function reasonOf(file: string, error: Error): string {
  // The first line only: a YAML parser's message goes on with an excerpt of the file.
  const message = (error.message.startsWith(`${file}: `) ? error.message.slice(file.length + 2) : error.message).split('\n')[0]!.trim();
  return message.replace(/[.:]?$/, '.');
}

/**
 * A damaged file is never read as empty (the next write would put that over every key or link):
 * what needs it is refused, 503, saying which file and why, until someone repairs it. The data
 * directory's path stays out of answers.
 */
function damagedInDataDirectory(name: string, why: string): ApiError {
  return new ApiError(503, `The data directory's ${name} cannot be read: ${why} Requests that need it are refused until it is repaired.`);
}
