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
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isCode } from './durable-files.js';

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
  while (offset + OID_BYTES + LENGTH_BYTES <= data.length) {
    const oid = data.toString('hex', offset, offset + OID_BYTES);
    const length = data.readUInt32BE(offset + OID_BYTES);
    const start = offset + OID_BYTES + LENGTH_BYTES;
    if (start + length > data.length) break; // cut short, e.g. by a full disk
    const content = data.subarray(start, start + length);
    if (blobId(content) === oid) blobs.set(oid, content);
    offset = start + length;
  }
  return blobs;
}

function blobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/**
 * Replaces the cache file with exactly these blobs. Published by rename, never fsynced:
 * after a crash the file is either the old one, the new one, or missing, and all three are fine.
 */
export async function writeBlobCache(gitdir: string, blobs: ReadonlyMap<string, Buffer>): Promise<void> {
  const parts: Buffer[] = [MAGIC];
  for (const [oid, content] of blobs) {
    const header = Buffer.allocUnsafe(OID_BYTES + LENGTH_BYTES);
    header.write(oid, 0, OID_BYTES, 'hex');
    header.writeUInt32BE(content.length, OID_BYTES);
    parts.push(header, content);
  }
  const target = path.join(gitdir, BLOB_CACHE_FILE);
  const temp = `${target}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    await fsp.writeFile(temp, Buffer.concat(parts), { mode: 0o644 });
    await fsp.rename(temp, target);
  } catch (error) {
    await fsp.rm(temp, { force: true });
    throw error;
  }
}
