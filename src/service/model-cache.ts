/**
 * The resources of a model as parsed and checked, in one file, so that a restart does not
 * parse every YAML file again: at 10,000 components the parse took ~250 ms of a ~1.1 s start,
 * and reading the blobs to parse ~100 ms more; this file is read and decoded in ~60 ms. It also
 * holds the list of the files of the tree it was written from (path → blob id, as
 * Repo.listFiles makes it from 500 trees: ~0.1 s at 10,000 components, ~0.75 s at 100,000),
 * used when the commit loaded has that very tree.
 *
 * What a blob parses to depends on the code that parses and checks it, so an entry is only
 * ever used by the very code that wrote it: the file names the build it was written by (a hash
 * of the sources and the lockfile, fixed when the service is built) and the Node version, and
 * is ignored by any other. A process not run from a build (the tests, `tsx`) has no such name
 * unless `C4STORE_CODE_ID` gives one, and neither reads nor writes the file. A checksum of the
 * whole file guards against a truncated or damaged one; an entry is keyed by its blob id and
 * kind, and `loadModel` still checks it against its file's name. Like the blob cache, it is
 * derived data in the git directory, where git ignores it; deleting it only costs time.
 *
 * Format: MAGIC, the code's name and the body's SHA-1 (hex), each on a line; then chunks, each a
 * uint32 (big-endian) length and a v8-serialized value: first `{ tree, files: [path, blob id][] }`,
 * then arrays of [kind, blob id, resource] (v8's format keeps what JSON would lose: -0, undefined).
 */
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { StoredKind } from '../model/paths.js';
import { isCode, removeAbandonedReplacements, replaceFile } from '../store/durable-files.js';
import { nextIoSlice } from '../store/sync-io.js';

export const MODEL_CACHE_FILE = 'c4store-model-cache';
const MAGIC = 'c4store model cache 2';
const ENTRIES_PER_CHUNK = 512;
const LENGTH_BYTES = 4;

export interface ParsedResource {
  kind: StoredKind;
  resource: { id: string };
}

export interface ModelCache {
  /** The files (path → blob id) of the tree `tree`, as Repo.listFiles lists them; null in an empty cache. */
  listing: { tree: string; files: Map<string, string> } | null;
  /** The resources by blob id. */
  parsed: Map<string, ParsedResource>;
}

/**
 * The name of the code that parses and checks model files: the build's (scripts/build.mjs
 * sets it), with the Node version; undefined when not run from a build.
 */
export function modelCodeId(): string | undefined {
  const build = process.env.C4STORE_CODE_ID;
  return build ? `${build} ${process.version}` : undefined;
}

/**
 * What the cache holds: nothing when there is no file, or none this code wrote, or a damaged
 * one; undefined when not run from a build (no cache is kept at all).
 */
export async function readModelCache(gitdir: string, codeId = modelCodeId()): Promise<ModelCache | undefined> {
  if (codeId === undefined) return undefined;
  const empty = (): ModelCache => ({ listing: null, parsed: new Map() });
  let data: Buffer;
  try {
    data = await fsp.readFile(path.join(gitdir, MODEL_CACHE_FILE));
  } catch (error) {
    if (isCode(error, 'ENOENT')) return empty();
    throw error;
  }
  const header = `${MAGIC}\n${codeId}\n`;
  if (data.toString('utf8', 0, header.length) !== header) return empty();
  const sumEnd = data.indexOf(0x0a, header.length);
  if (sumEnd === -1) return empty();
  const body = data.subarray(sumEnd + 1);
  if (createHash('sha1').update(body).digest('hex') !== data.toString('latin1', header.length, sumEnd)) return empty();
  const cache = empty();
  try {
    for (let offset = 0; offset < body.length; ) {
      // ~0.1 s at 10,000 components (profiled), and it grows with the model: other requests get turns in between.
      await nextIoSlice();
      const length = body.readUInt32BE(offset);
      const chunk = deserialize(body.subarray(offset + LENGTH_BYTES, offset + LENGTH_BYTES + length));
      if (offset === 0) {
        const { tree, files } = chunk as { tree: string; files: [string, string][] };
        cache.listing = { tree, files: new Map(files) };
      } else {
        for (const [kind, oid, resource] of chunk as [StoredKind, string, { id: string }][]) cache.parsed.set(oid, { kind, resource });
      }
      offset += LENGTH_BYTES + length;
    }
  } catch {
    // The checksum held, so only a file of another format gets here: use none of it.
    return empty();
  }
  return cache;
}

/** Removes the temporary files of cache writes a killed process left (run at start). */
export function removeStaleModelCacheFiles(gitdir: string): Promise<void> {
  return removeAbandonedReplacements(path.join(gitdir, MODEL_CACHE_FILE));
}

/**
 * Replaces the cache file with the listing of `tree` and these resources (by blob id); nothing
 * when not run from a build.
 */
export async function writeModelCache(
  gitdir: string,
  listing: { tree: string; files: ReadonlyMap<string, string> },
  entries: Iterable<readonly [oid: string, kind: StoredKind, resource: { id: string }]>,
  codeId = modelCodeId(),
): Promise<void> {
  if (codeId === undefined) return;
  const chunks: Buffer[] = [];
  const add = (value: unknown) => {
    const encoded = serialize(value);
    const length = Buffer.allocUnsafe(LENGTH_BYTES);
    length.writeUInt32BE(encoded.length);
    chunks.push(length, encoded);
  };
  add({ tree: listing.tree, files: [...listing.files] });
  let chunk: [StoredKind, string, { id: string }][] = [];
  for (const [oid, kind, resource] of entries) {
    chunk.push([kind, oid, resource]);
    if (chunk.length === ENTRIES_PER_CHUNK) {
      add(chunk);
      chunk = [];
      await nextIoSlice();
    }
  }
  if (chunk.length > 0) add(chunk);
  const sum = createHash('sha1');
  for (const part of chunks) sum.update(part);
  const data = Buffer.concat([Buffer.from(`${MAGIC}\n${codeId}\n${sum.digest('hex')}\n`, 'utf8'), ...chunks]);
  await replaceFile(path.join(gitdir, MODEL_CACHE_FILE), data, { mode: 0o644, durable: false });
}
