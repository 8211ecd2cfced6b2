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

/**
 * The seal a data-directory file carries as its first line (keys.yaml, share-links.yaml): how many
 * records it holds and the SHA-256 of everything after that line. Every writer of the file writes
 * it, so a file c4store wrote and something else then cut short (a disk fault) or changed is told
 * from a whole one, however it was cut: the seal is the one line a cut cannot remove without
 * removing every record, and a record, a field or a digit dropped is a hash that no longer
 * matches. A file without a seal (written before seals, or by hand) is read as it is, its
 * records checked one by one; its next write seals it. After changing a sealed file by hand, one
 * deletes its seal (the 503 says so).
 */
const SEAL_START = '# c4store seal:';

/** The file's text: `rest` under its seal, which counts `count` `noun` (`keys`, `links`). */
export function sealed(rest: string, count: number, noun: string): string {
  return `${sealLine(rest, count, noun)}\n${rest}`;
}

function sealLine(rest: string, count: number, noun: string): string {
  return `${SEAL_START} ${count} ${noun}, sha256 ${sha256Hex(rest)}`;
}

/**
 * The records `parse` reads from the file's text, once its seal (if it has one) matches the rest
 * and counts as many records as were read. A seal that does not is damage: thrown, never a
 * shorter list.
 */
export function parseSealed<T>(text: string, file: string, noun: string, parse: (text: string) => T[]): T[] {
  let counted: number | undefined;
  if (text.startsWith(SEAL_START)) {
    const end = text.indexOf('\n');
    const seal = new RegExp(`^${SEAL_START} (\\d{1,9}) ${noun}, sha256 [0-9a-f]{64}$`).exec(end < 0 ? text : text.slice(0, end));
    if (seal === null || end < 0 || sealLine(text.slice(end + 1), Number(seal[1]), noun) !== seal[0]) {
      throw new Error(
        `${file}: its seal (the first line) does not match the rest: the file was cut short, or changed by other means than c4store (after a change by hand, delete the seal line to have each ${noun.slice(0, -1)} checked and the file sealed again).`,
      );
    }
    counted = Number(seal[1]);
  }
  const records = parse(text);
  if (counted !== undefined && counted !== records.length) {
    throw new Error(`${file}: its seal counts ${counted} ${noun}, and it holds ${records.length}.`);
  }
  return records;
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
