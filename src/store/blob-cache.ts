/**
 * The contents of many blobs in one file, so that a cold start reads one file instead of
 * 10,000 loose objects (at 10,000 components: ~45 ms, most of it checking every entry's
 * hash, instead of ~200 ms of open, read, close and inflate; bench/results.md).
 *
 * It is derived data and nothing else: it lives in the git directory, where git ignores
 * it (`git clone` does not copy it, `git fsck` does not look at it), and deleting it only
 * costs the next start-up its time. Every entry is hashed and compared with its object id
 * before use, so a stale, truncated or foreign file can make a load slower, never different.
 *
 * Format: MAGIC, then per blob its 20-byte id, its length (uint32, big-endian) and its bytes.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isCode, openTemporaryFile, removeAbandonedTemporaryFiles, trackTemporaryFile } from './durable-files.js';
import { blobOid } from './git-format.js';
import { nextIoSlice } from './sync-io.js';

export const BLOB_CACHE_FILE = 'c4store-blob-cache';

const MAGIC = Buffer.from('c4store blob cache 1\n', 'latin1');
const OID_BYTES = 20;
const LENGTH_BYTES = 4;

/** The blobs of the cache file that are what their ids say; an empty map if there is no usable file. */
export async function readBlobCache(gitdir: string): Promise<Map<string, Buffer>> {
  const blobs = new Map<string, Buffer>();
  let data: Buffer;
  try {
    data = await fsp.readFile(path.join(gitdir, BLOB_CACHE_FILE));
  } catch (error) {
    if (isCode(error, 'ENOENT')) return blobs;
    throw error;
  }
  if (!data.subarray(0, MAGIC.length).equals(MAGIC)) return blobs;
  let offset = MAGIC.length;
  for (let entries = 0; offset + OID_BYTES + LENGTH_BYTES <= data.length; entries++) {
    // Checking 100,000 entries takes a few hundred ms: other requests get turns in between.
    if (entries % 256 === 0) await nextIoSlice();
    const oid = data.toString('hex', offset, offset + OID_BYTES);
    const length = data.readUInt32BE(offset + OID_BYTES);
    const start = offset + OID_BYTES + LENGTH_BYTES;
    if (start + length > data.length) break; // cut short, e.g. by a full disk
    const content = data.subarray(start, start + length);
    if (blobOid(content) === oid) blobs.set(oid, content);
    offset = start + length;
  }
  return blobs;
}

const TEMP_PREFIX = `${BLOB_CACHE_FILE}.tmp-`;

/** Cache writes under way in this process, by git directory: one at a time, later ones skipped. */
const writing = new Set<string>();

/**
 * Replaces the cache file with exactly these blobs. Published by rename, never fsynced:
 * after a crash the file is either the old one, the new one, or missing, and all three are fine.
 * The temporary file is named after the writing process (`.tmp-<pid>-<random>`), so a start
 * can tell a file left by a killed process from one being written (removeStaleBlobCacheTemps);
 * a leftover never stands in the way of the next write, which uses a name of its own.
 */
export async function writeBlobCache(gitdir: string, blobs: ReadonlyMap<string, Buffer>): Promise<void> {
  const key = path.resolve(gitdir);
  if (writing.has(key)) return; // the write under way holds the same or a newer set
  writing.add(key);
  try {
    await writeCacheFile(gitdir, blobs);
  } finally {
    writing.delete(key);
  }
}

/**
 * Removes temporary cache files whose writer is gone (removeAbandonedTemporaryFiles). A name
 * without a pid is from a version that did not record one, and always a leftover.
 */
export function removeStaleBlobCacheTemps(gitdir: string): Promise<void> {
  return removeAbandonedTemporaryFiles(gitdir, (name) =>
    name.startsWith(TEMP_PREFIX) ? /^(\d+)-[0-9a-f]+$/.exec(name.slice(TEMP_PREFIX.length))?.[1] : null,
  );
}

/** Blobs written by one writev: the file is written in batches, never built whole in memory. */
const BLOBS_PER_WRITE = 1024;

async function writeCacheFile(gitdir: string, blobs: ReadonlyMap<string, Buffer>): Promise<void> {
  const target = path.join(gitdir, BLOB_CACHE_FILE);
  const temp = path.join(gitdir, `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
  const untrack = trackTemporaryFile(temp);
  try {
    // In batches, each an asynchronous writev: a cache of 100,000 blobs built and concatenated
    // in one go held the event loop ~100 ms just after a cold load, when the first answers go out.
    const file = await openTemporaryFile(temp, 0o644);
    try {
      let parts: Buffer[] = [MAGIC];
      for (const [oid, content] of blobs) {
        const header = Buffer.allocUnsafe(OID_BYTES + LENGTH_BYTES);
        header.write(oid, 0, OID_BYTES, 'hex');
        header.writeUInt32BE(content.length, OID_BYTES);
        parts.push(header, content);
        if (parts.length >= 2 * BLOBS_PER_WRITE) {
          await writeAll(file, parts);
          parts = [];
        }
      }
      await writeAll(file, parts);
    } finally {
      await file.close();
    }
    await fsp.rename(temp, target);
  } catch (error) {
    await fsp.rm(temp, { force: true });
    throw error;
  } finally {
    untrack();
  }
}

/** Writes every byte of `parts` at the file's position (writev may write less than asked). */
async function writeAll(file: fsp.FileHandle, parts: Buffer[]): Promise<void> {
  let rest = parts;
  while (rest.length > 0) {
    let { bytesWritten } = await file.writev(rest);
    let i = 0;
    while (i < rest.length && bytesWritten >= rest[i]!.length) bytesWritten -= rest[i++]!.length;
    rest = rest.slice(i);
    if (bytesWritten > 0) rest[0] = rest[0]!.subarray(bytesWritten);
  }
}
