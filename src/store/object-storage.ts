/**
 * Git's object database, read and written directly: loose objects (formats: git-format.ts),
 * trees parsed once and kept by oid; objects that live in packs are read by git (pack-reader.ts).
 *
 * Operations on loose objects are synchronous. The files are small: a synchronous read
 * or write takes ~20 µs, the same through the libuv thread pool ~100 µs in round trips
 * (10,000 blobs load in 0.2 s instead of 1 s; a commit takes 2 ms instead of 4).
 * runSyncIo() keeps bursts of them from holding the event loop; fsync, which takes
 * milliseconds, is always asynchronous.
 */
import { randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs';
import path from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { closeAfterSync, createFileSync, isCode, syncDirectory } from './durable-files.js';
import {
  EMPTY_TREE_OID,
  type GitObject,
  type ObjectType,
  type ParsedCommit,
  type TreeEntry,
  hashObject,
  isOid,
  parseCommit,
  parseTree,
  unwrapObject,
  wrapObject,
  wrapTree,
} from './git-format.js';
import { PackReader } from './pack-reader.js';
import { Semaphore } from '../semaphore.js';
import { type SpareFiles, spareFilesOf } from './spare-files.js';
import { runSyncIo } from './sync-io.js';

// git's own default for loose objects is core.looseCompression = 1, and blobs and commits (YAML
// and text) are deflated so. Trees are stored uncompressed (core.looseCompression = 0 for them):
// half of every entry is a binary oid, so deflate saves about a quarter of a few kilobytes (the
// same 4 KB blocks on disk), while it was the largest piece of a write's CPU at 10,000
// components (~0.4 ms of ~2.7 ms: the 8 KB components/ tree and a shard's tree, each deflated
// anew). Packing deltas and compresses them anyway. So is anything past 64 KB.
const COMPRESSED_OBJECT_LIMIT = 64 * 1024;
const TREE_HEADER_BYTE = 't'.charCodeAt(0);
// At level 0 the window and hash never come into play: the smallest sizes spare zlib's ~256 KB
// of state set up per call. The header then announces a 512-byte window, which git and every
// inflater accept.
const STORED = { level: 0, memLevel: 1, windowBits: 9 } as const;
const DEFLATED = { level: 1 } as const;
/** How a loose object (its wrapped bytes) is deflated; bench/choices.ts measures the choice. */
export const compressionFor = (wrapped: Buffer) =>
  wrapped[0] === TREE_HEADER_BYTE || wrapped.length > COMPRESSED_OBJECT_LIMIT ? STORED : DEFLATED;
// Unique across processes (pid, random) and within one (counter), without a syscall each.
const TEMP_NAME_PREFIX = `${process.pid}_${randomBytes(4).toString('hex')}_`;
let nextTempNumber = 0;
// Fan-out directories (objects/xx) known to exist, so a write does not mkdir each time.
const FANOUT_DIRS = new Set<string>();
/** Tries of one object write whose fan-out directory keeps vanishing (a repack beside it). */
const MAX_STORE_ATTEMPTS = 5;
// Those created by this process whose entry in objects/ may not be synced yet (durable mode:
// whichever commit next puts an object in one syncs objects/ too).
const UNSYNCED_FANOUT_DIRS = new Set<string>();
/** Objects looked at to judge whether a bulk read is of packed objects (see looksPacked). */
const PACKED_SAMPLE = 8;

export class ObjectNotFoundError extends Error {
  constructor(readonly oid: string) {
    super(`Git object ${oid} does not exist.`);
    this.name = 'ObjectNotFoundError';
  }
}

export class WrongObjectTypeError extends Error {
  constructor(
    readonly oid: string,
    readonly actual: ObjectType,
    readonly expected: ObjectType,
  ) {
    super(`Git object ${oid} is a ${actual}, not a ${expected}.`);
    this.name = 'WrongObjectTypeError';
  }
}

// Loose files are read into this one buffer (grown when needed) and inflated from it:
// readFileSync would also fstat each file and allocate for it, ~30% more time on a cold start.
let readBuffer = Buffer.allocUnsafe(64 * 1024);

/** Where git keeps the loose object `oid`: `objects/<first two hex digits>/<the other 38>`. */
export function loosePathOf(objectsDir: string, oid: string): string {
  return path.join(objectsDir, oid.slice(0, 2), oid.slice(2));
}

/** The loose object `oid` of `objectsDir`, read synchronously; null when it is not loose (absent, or packed). */
export function readLooseObject(objectsDir: string, oid: string): GitObject | null {
  let fd: number;
  try {
    fd = nodeFs.openSync(loosePathOf(objectsDir, oid), 'r');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return null;
    throw error;
  }
  let length = 0;
  try {
    for (;;) {
      if (length === readBuffer.length) {
        const larger = Buffer.allocUnsafe(readBuffer.length * 2);
        readBuffer.copy(larger);
        readBuffer = larger;
      }
      const read = nodeFs.readSync(fd, readBuffer, length, readBuffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
  } finally {
    nodeFs.closeSync(fd);
  }
  return unwrapObject(inflateSync(readBuffer.subarray(0, length)), oid);
}

// ---------------------------------------------------------------------------
// Caches

/** Least-recently-used map bounded by a total weight (tree entries, not trees). */
class WeightedLru<V> {
  private readonly items = new Map<string, { value: V; weight: number }>();
  private total = 0;

  constructor(private readonly budget: number) {}

  get(key: string): V | undefined {
    const item = this.items.get(key);
    if (!item) return undefined;
    this.items.delete(key);
    this.items.set(key, item);
    return item.value;
  }

  set(key: string, value: V, weight: number): void {
    const previous = this.items.get(key);
    if (previous) {
      this.total -= previous.weight;
      this.items.delete(key);
    }
    this.items.set(key, { value, weight });
    this.total += weight;
    for (const [oldest, item] of this.items) {
      if (this.total <= this.budget || oldest === key) break;
      this.items.delete(oldest);
      this.total -= item.weight;
    }
  }
}

// Objects are named by their content, so one cache can serve every repository of the
// process; it is only ever used for parsing, never as proof that a repo holds an object.
const sharedTrees = new WeightedLru<readonly TreeEntry[]>(300_000);
const sharedCommits = new WeightedLru<ParsedCommit>(20_000);

// ---------------------------------------------------------------------------
// Reading and writing

export class ObjectStore {
  readonly objectsDir: string;
  private readonly packs: PackReader;

  constructor(
    readonly gitdir: string,
    private readonly durable = false,
    /** Files of packed objects to write new ones into (spare-files.ts). */
    readonly spares: SpareFiles = spareFilesOf(gitdir),
  ) {
    this.objectsDir = path.join(gitdir, 'objects');
    this.packs = new PackReader(gitdir);
  }

  loosePath(oid: string): string {
    return loosePathOf(this.objectsDir, oid);
  }

  /**
   * `packedFirst`, for objects that are likely packed: when there is no loose file (one stat,
   * where reading it would be an open scheduled through runSyncIo), ask git straight away.
   */
  async read(oid: string, packedFirst = false): Promise<GitObject> {
    if (!isOid(oid)) throw new ObjectNotFoundError(String(oid));
    if (packedFirst && !nodeFs.existsSync(this.loosePath(oid))) {
      const packed = await this.readPacked(oid);
      if (packed) return packed;
    }
    // A concurrent `git gc` may move an object from loose to packed (or between packs)
    // between our two looks, so a miss is only believed the second time, as git does.
    for (let attempt = 0; attempt < 2; attempt++) {
      const loose = await this.readLoose(oid);
      if (loose) return loose;
      const packed = await this.readPacked(oid);
      if (packed) return packed;
    }
    if (oid === EMPTY_TREE_OID) return { type: 'tree', content: Buffer.alloc(0) };
    throw new ObjectNotFoundError(oid);
  }

  private readLoose(oid: string): Promise<GitObject | null> {
    return runSyncIo(() => readLooseObject(this.objectsDir, oid));
  }

  /**
   * Whether most of these objects are likely packed (judged from a few of them): then reading
   * them loose first, one failed open each, is wasted, and so is a worker to do it.
   */
  looksPacked(oids: readonly string[]): boolean {
    const sample = oids.slice(0, PACKED_SAMPLE);
    return sample.length > 0 && sample.every((oid) => !nodeFs.existsSync(this.loosePath(oid)));
  }

  private readPacked(oid: string): Promise<GitObject | null> {
    return this.packs.read(oid);
  }

  async readTyped(oid: string, type: ObjectType, packedFirst = false): Promise<Buffer> {
    const object = await this.read(oid, packedFirst);
    if (object.type !== type) throw new WrongObjectTypeError(oid, object.type, type);
    return object.content;
  }

  /** Parsed tree entries, in tree order. Shared and cached: never mutate the array. */
  async readTree(oid: string): Promise<readonly TreeEntry[]> {
    const cached = sharedTrees.get(oid);
    if (cached) return cached;
    const entries = parseTree(await this.readTyped(oid, 'tree'));
    sharedTrees.set(oid, entries, entries.length + 1);
    return entries;
  }

  async readCommit(oid: string): Promise<ParsedCommit> {
    const cached = sharedCommits.get(oid);
    if (cached) return cached;
    const commit = parseCommit(await this.readTyped(oid, 'commit'));
    sharedCommits.set(oid, commit, 1);
    return commit;
  }

  /** Begins a group of writes whose directories are synced together (durable mode). */
  startWriting(): ObjectWriter {
    return new ObjectWriter(this, this.durable);
  }
}

/** Writes loose objects; in durable mode, finish() makes them survive a power loss. */
export class ObjectWriter {
  private readonly touchedDirs = new Set<string>();
  // Callers may start thousands of writes at once; this bounds the files open in fsync.
  private readonly slots = new Semaphore(16);
  private readonly pending: Promise<void>[] = [];

  constructor(
    private readonly store: ObjectStore,
    private readonly durable: boolean,
  ) {}

  /**
   * The object's id at once; the file is written in the background and `finish` waits for
   * it. So a commit's blobs, trees and commit object are written (and, durable, fsynced) side
   * by side rather than one after the other: nothing can name them before the ref moves.
   */
  write(type: ObjectType, content: Buffer): Promise<string> {
    return this.writeWrapped(wrapObject(type, content));
  }

  private writeWrapped(wrapped: Buffer): Promise<string> {
    const oid = hashObject(wrapped);
    const stored = this.slots.run(() => this.storeObject(oid, wrapped));
    // finish() reports the failure; a commit abandoned before finish() must not crash the process.
    stored.catch(() => {});
    this.pending.push(stored);
    return Promise.resolve(oid);
  }

  private async storeObject(oid: string, wrapped: Buffer, attempt = 1): Promise<void> {
    const target = this.store.loosePath(oid);
    const dir = path.dirname(target);
    // Published by rename, so a file under the final name is always complete: readers
    // and a crash never see half an object, and "exists" means "exists and is whole".
    const temp = path.join(dir, `tmp_obj_${TEMP_NAME_PREFIX}${nextTempNumber++}`);
    try {
      // Everything but the fsync is one short synchronous job of runSyncIo, so that a commit of
      // tens of thousands of blobs is written a slice of the event loop at a time. (Work after
      // an await runs as a microtask: a commit's blobs would all be written in one go, holding
      // the event loop 1.8 s for 45,000 of them.)
      const unsynced = await runSyncIo(() => {
        if (freshenIfPresent(target)) return null;
        if (!FANOUT_DIRS.has(dir)) {
          if (nodeFs.mkdirSync(dir, { recursive: true }) !== undefined) UNSYNCED_FANOUT_DIRS.add(dir);
          FANOUT_DIRS.add(dir);
        }
        const data = deflateSync(wrapped, compressionFor(wrapped));
        const fd = this.store.spares.writeAs(temp, data) ?? createFileSync(temp, data, 0o444);
        if (this.durable) return fd;
        nodeFs.closeSync(fd);
        nodeFs.renameSync(temp, target);
        return null;
      });
      if (unsynced === null) return;
      await closeAfterSync(unsynced, true);
      await runSyncIo(() => nodeFs.renameSync(temp, target));
    } catch (error) {
      nodeFs.rmSync(temp, { force: true });
      // The fan-out directory went away under us: background packing (git repack -d prunes the
      // loose objects it packed, and their emptied directories) or someone's rm. Every writer
      // that meets this makes the directory again, however many saw it at once.
      if (isCode(error, 'ENOENT') && attempt < MAX_STORE_ATTEMPTS) {
        FANOUT_DIRS.delete(dir);
        return this.storeObject(oid, wrapped, attempt + 1);
      }
      throw error;
    }
    this.touchedDirs.add(dir);
  }

  /** Writes a tree whose entries are already in tree order, and caches it parsed. */
  async writeTree(entries: readonly TreeEntry[]): Promise<string> {
    const oid = await this.writeWrapped(wrapTree(entries));
    sharedTrees.set(oid, entries, entries.length + 1);
    return oid;
  }

  /**
   * Waits for every object written; durable mode then syncs their directories, so the
   * renames survive before a ref names them.
   */
  async finish(): Promise<void> {
    await Promise.all(this.pending);
    this.pending.length = 0;
    if (!this.durable) return;
    const newDirs = [...this.touchedDirs].filter((dir) => UNSYNCED_FANOUT_DIRS.has(dir));
    if (newDirs.length > 0) this.touchedDirs.add(this.store.objectsDir);
    await Promise.all([...this.touchedDirs].map(syncDirectory));
    this.touchedDirs.clear();
    for (const dir of newDirs) UNSYNCED_FANOUT_DIRS.delete(dir);
  }
}

// Like git's freshen_file: bumping the mtime keeps a concurrent `git gc --prune` from
// deleting an old unreachable object at the moment a new commit starts to use it again.
function freshenIfPresent(file: string): boolean {
  if (!nodeFs.statSync(file, { throwIfNoEntry: false })) return false;
  const now = new Date();
  try {
    nodeFs.utimesSync(file, now, now);
  } catch (error) {
    if (isCode(error, 'ENOENT')) return false;
    // EPERM/EACCES: another user's object, which exists all the same.
  }
  return true;
}
