/**
 * A bare git repository holding one organization's model on branch main: no index, no
 * working tree. A commit rewrites only the trees on the paths it changes.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { ABANDONED_AFTER_MS, isCode, processRuns, syncDirectory, THIS_MACHINE, writeNewFile } from './durable-files.js';
import { BLOB_MODES, blobOid, isDirMode, isOid, serializeCommit } from './git-format.js';
import { ObjectNotFoundError, ObjectStore } from './object-storage.js';
import { type FileChange, type TreeChange, toTreeEdits, writeEditedTree } from './tree-edits.js';
import { MAIN_REF, StaleHeadError, prepareRefUpdate, readRef } from './refs.js';
import { withDirectoryLock } from './lock.js';
import { readBlobCache, removeStaleBlobCacheTemps, writeBlobCache } from './blob-cache.js';
import { readLooseBlobs } from './loose-reader.js';
import { SpareFiles } from './spare-files.js';
import { adoptOrgIdentity, identityConfigLines } from './org-identity.js';

export { StaleHeadError } from './refs.js';
export { type BlobPlacement, type FileChange, PathConflictError, type TreeChange } from './tree-edits.js';

export interface Author {
  name: string;
  email: string;
}

export interface RepoOptions {
  /** fsync objects, their directories and the ref before a commit is reported done. */
  durable?: boolean;
  /** Files of packed objects to write new ones into; default: the repository's pool of the process. */
  spares?: SpareFiles;
}

export interface CommitArgs {
  parent: string;
  /** The branch the commit goes on (default main); it must still point at `parent`. */
  ref?: string;
  /** A merge commit's second parent (the branch merged in). */
  mergedParent?: string;
  changes: TreeChange[];
  author: Author;
  message: string;
  /** Seconds since the epoch; defaults to now. */
  timestamp?: number;
}

export interface ChangedFile {
  path: string;
  before: string | null;
  after: string | null;
  /** The file's mode after (`100644`, `100755` executable, `120000` a symbolic link); null when deleted. */
  mode: string | null;
}

export interface LogEntry {
  oid: string;
  parents: string[];
  /** Raw author line: `Name <email> <seconds> <tz>`. */
  author: string;
  message: string;
}

/** Below this many blobs a bulk read neither consults nor writes the blob cache: loose reads are quick enough. */
export const BLOB_CACHE_MIN_BLOBS = 256;
/** A bulk read that found this many blobs missing from the cache rewrites it. */
const BLOB_CACHE_REFRESH_AFTER = 256;
/** From this many missing blobs on, a bulk read is done on a worker thread (starting one costs ~30 ms). */
const BLOB_READ_WORKER_MIN_BLOBS = 1024;

/** A repository `init` is assembling: `<name>.git.init-<machine>-<pid>-<random>` (earlier versions: `<name>.git.init-<random>`). */
const STAGING_NAME = /\.git\.init-(?:([0-9a-f]{8})-(\d+)-)?[0-9a-f]{12}$/;

export class Repo {
  readonly gitdir: string;
  private readonly durable: boolean;
  private readonly objects: ObjectStore;

  constructor(gitdir: string, options: RepoOptions = {}) {
    this.gitdir = path.resolve(gitdir);
    this.durable = options.durable ?? false;
    this.objects = new ObjectStore(this.gitdir, this.durable, options.spares);
  }

  /**
   * Creates the bare repository with its first commit. It is assembled in a temporary
   * sibling directory and renamed into place, so a crash never leaves a half-made repo
   * under the real name, and of two concurrent inits only one succeeds. The sibling's name
   * says who makes it (STAGING_NAME), for removeAbandonedStagings to tell a killed maker's.
   */
  static async init(
    gitdir: string,
    first: {
      files: FileChange[];
      author: Author;
      message: string;
      timestamp?: number;
      identity?: string;
      /**
       * Runs on the staged repository, its first commit made, before it appears under its name:
       * what must be there whenever the repository is (a hook, a key), so that a kill leaves it whole or absent.
       */
      complete?: (staging: string) => Promise<void>;
    },
    options: RepoOptions = {},
  ): Promise<Repo> {
    const target = path.resolve(gitdir);
    if (await exists(target)) throw new Error(`${target} already exists.`);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    const staging = `${target}.init-${THIS_MACHINE}-${process.pid}-${randomBytes(6).toString('hex')}`;
    try {
      const durable = options.durable ?? false;
      await createBareLayout(staging, durable, first.identity);
      // A pool of its own: the staging directory is gone once renamed, and the process keeps a pool per repository.
      const staged = new Repo(staging, { ...options, spares: new SpareFiles(staging) });
      await staged.writeCommit({ ...first, parent: null, changes: first.files });
      await first.complete?.(staging);
      if (durable) await Promise.all([staging, path.join(staging, 'refs')].map(syncDirectory));
      if (await exists(target)) throw new Error(`${target} already exists.`);
      await fsp.rename(staging, target);
    } catch (error) {
      await fsp.rm(staging, { recursive: true, force: true });
      if (isCode(error, 'ENOTEMPTY') || isCode(error, 'EEXIST')) {
        throw new Error(`${target} already exists.`);
      }
      throw error;
    }
    if (options.durable) await syncDirectory(path.dirname(target));
    return new Repo(target, options);
  }

  /**
   * Removes the repositories `init` was assembling in `dir` whose maker is gone (killed before
   * it could remove its own): one of a process of this machine that no longer runs, and any
   * older than ABANDONED_AFTER_MS (another machine's maker cannot be asked; a version before
   * names had their maker named none). One being made is left alone.
   */
  static async removeAbandonedStagings(dir: string): Promise<void> {
    for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
      const maker = STAGING_NAME.exec(name);
      if (maker === null) continue;
      const [, machine, pid] = maker;
      const staging = path.join(dir, name);
      const stat = await fsp.stat(staging).catch(() => undefined);
      if (stat === undefined) continue;
      const old = Date.now() - stat.mtimeMs > ABANDONED_AFTER_MS;
      const makerGone = machine === THIS_MACHINE && !processRuns(Number(pid));
      if (old || makerGone) await fsp.rm(staging, { recursive: true, force: true });
    }
  }

  readHead(): Promise<string | null> {
    return readRef(this.gitdir, MAIN_REF);
  }

  /** The commit a branch (a full ref name: `refs/heads/drafts/x`) points at; null if there is none. */
  readBranch(ref: string): Promise<string | null> {
    return readRef(this.gitdir, ref);
  }

  /**
   * Whether this repository stores the commit. Read uncached: the parsed-object caches are
   * shared by every repository of the process, and must never answer for this one.
   */
  async hasCommit(oid: string): Promise<boolean> {
    if (!isOid(oid)) return false;
    try {
      return (await this.objects.read(oid)).type === 'commit';
    } catch (error) {
      if (error instanceof ObjectNotFoundError) return false;
      throw error;
    }
  }

  /** The oid of the commit's tree. */
  async treeOf(commit: string): Promise<string> {
    return (await this.objects.readCommit(commit)).tree;
  }

  /** Every file of the commit's tree, path -> blob oid. */
  async listFiles(commit: string): Promise<Map<string, string>> {
    const { tree } = await this.objects.readCommit(commit);
    return this.collectFiles(tree, '');
  }

  /** In tree order; subtrees are read side by side (from a pack, each read is a round trip to git). */
  private async collectFiles(treeOid: string, prefix: string): Promise<Map<string, string>> {
    const entries = await this.objects.readTree(treeOid);
    const subtrees = entries.map((entry) => (isDirMode(entry.mode) ? this.collectFiles(entry.oid, `${prefix}${entry.name}/`) : null));
    const files = new Map<string, string>();
    for (const [i, entry] of entries.entries()) {
      const subtree = subtrees[i];
      if (subtree) for (const [path, oid] of await subtree) files.set(path, oid);
      else if (BLOB_MODES.has(entry.mode)) files.set(prefix + entry.name, entry.oid);
    }
    return files;
  }

  /**
   * The files that differ between two commits' trees (`parent` null: every file of `commit`), in
   * tree order, each with its blob before and after (null: absent) and its mode after: a file
   * made executable with its content unchanged differs too. Identical subtrees are not read, so a
   * commit of the sharded layout costs the few trees it changed.
   */
  async changedFiles(parent: string | null, commit: string): Promise<ChangedFile[]> {
    const after = (await this.objects.readCommit(commit)).tree;
    const before = parent === null ? null : (await this.objects.readCommit(parent)).tree;
    const changed: ChangedFile[] = [];
    await this.diffTrees(before, after, '', changed);
    return changed;
  }

  private async diffTrees(before: string | null, after: string | null, prefix: string, changed: ChangedFile[]): Promise<void> {
    if (before === after) return;
    const left = new Map((before === null ? [] : await this.objects.readTree(before)).map((e) => [e.name, e]));
    const right = new Map((after === null ? [] : await this.objects.readTree(after)).map((e) => [e.name, e]));
    for (const name of [...new Set([...left.keys(), ...right.keys()])].sort()) {
      const [l, r] = [left.get(name), right.get(name)];
      const tree = (e: typeof l) => (e !== undefined && isDirMode(e.mode) ? e.oid : null);
      const blob = (e: typeof l) => (e !== undefined && BLOB_MODES.has(e.mode) ? e.oid : null);
      const mode = (e: typeof l) => (blob(e) === null ? null : e!.mode);
      if (tree(l) !== null || tree(r) !== null) await this.diffTrees(tree(l), tree(r), `${prefix}${name}/`, changed);
      if (blob(l) !== blob(r) || mode(l) !== mode(r)) changed.push({ path: prefix + name, before: blob(l), after: blob(r), mode: mode(r) });
    }
  }

  /** What `path` (`a/b`, no trailing slash) names in the commit's tree: a file (any of BLOB_MODES), a folder, or nothing (null). */
  async pathKind(commit: string, path: string): Promise<'file' | 'folder' | null> {
    let tree = (await this.objects.readCommit(commit)).tree;
    const names = path.split('/');
    for (const [depth, name] of names.entries()) {
      const entry = (await this.objects.readTree(tree)).find((e) => e.name === name);
      if (entry === undefined) return null;
      if (depth === names.length - 1) return isDirMode(entry.mode) ? 'folder' : BLOB_MODES.has(entry.mode) ? 'file' : null;
      if (!isDirMode(entry.mode)) return null;
      tree = entry.oid;
    }
    return null;
  }

  /** The paths of the files under folder `dir` (`a/b`) of the commit's tree, at any depth; none if it has no such folder. */
  async filesUnder(commit: string, dir: string): Promise<string[]> {
    let tree = (await this.objects.readCommit(commit)).tree;
    for (const name of dir.split('/')) {
      const entry = (await this.objects.readTree(tree)).find((e) => e.name === name && isDirMode(e.mode));
      if (entry === undefined) return [];
      tree = entry.oid;
    }
    return [...(await this.collectFiles(tree, `${dir}/`)).keys()];
  }

  /** The names of the files directly in directory `dir` (`a/b`, no trailing slash) of the commit's tree; none if it has no such directory. */
  async fileNamesIn(commit: string, dir: string): Promise<string[]> {
    let tree = (await this.objects.readCommit(commit)).tree;
    for (const name of dir.split('/')) {
      const entry = (await this.objects.readTree(tree)).find((e) => e.name === name && isDirMode(e.mode));
      if (entry === undefined) return [];
      tree = entry.oid;
    }
    return (await this.objects.readTree(tree)).filter((e) => BLOB_MODES.has(e.mode)).map((e) => e.name);
  }

  /** `changes` without the writes of a file exactly as `commit` holds it (deletes are kept). */
  async withoutUnchanged<C extends { path: string; action: string; content: string }>(commit: string, changes: readonly C[]): Promise<C[]> {
    const files = await this.listFiles(commit);
    return changes.filter((change) => {
      const stored = files.get(change.path);
      return change.action === 'delete' || stored === undefined || blobOid(Buffer.from(change.content)) !== stored;
    });
  }

  readBlob(oid: string): Promise<Buffer> {
    return this.objects.readTyped(oid, 'blob');
  }

  /**
   * The contents of many blobs, for loading a whole commit, each as a promise that settles as
   * soon as that blob is read, so that a caller can parse the first ones while later ones are
   * still being read. They come from the blob cache where it has them (see blob-cache.ts);
   * many missing ones are read on a worker thread (loose-reader.ts), a few on this one. When
   * the cache lacked many, it is rewritten in the background with exactly this set, so the
   * next cold start of a model at about this commit reads one file.
   */
  async readBlobs(oids: Iterable<string>): Promise<Map<string, Promise<Buffer>>> {
    const wanted = [...new Set(oids)];
    const useCache = wanted.length >= BLOB_CACHE_MIN_BLOBS;
    const cached = useCache ? await readBlobCache(this.gitdir).catch(() => new Map<string, Buffer>()) : new Map<string, Buffer>();
    const blobs = new Map<string, Promise<Buffer>>();
    const missing: string[] = [];
    const settle = new Map<string, (content: Promise<Buffer>) => void>();
    for (const oid of wanted) {
      const content = cached.get(oid);
      if (content !== undefined) {
        blobs.set(oid, Promise.resolve(content));
        continue;
      }
      missing.push(oid);
      const promise = new Promise<Buffer>((resolve) => settle.set(oid, resolve));
      // A caller that stops at the first bad file leaves the rest unawaited.
      promise.catch(() => {});
      blobs.set(oid, promise);
    }
    const packed = missing.length > 0 && this.objects.looksPacked(missing);
    const readHere = (oid: string) => settle.get(oid)!(this.objects.readTyped(oid, 'blob', packed));
    if (missing.length >= BLOB_READ_WORKER_MIN_BLOBS && !packed) {
      void readLooseBlobs(this.objects.objectsDir, missing, (oid, content) => settle.get(oid)!(Promise.resolve(content)), readHere);
    } else {
      for (const oid of missing) readHere(oid);
    }
    if (useCache && missing.length >= BLOB_CACHE_REFRESH_AFTER) void this.rewriteBlobCache(blobs);
    return blobs;
  }

  private async rewriteBlobCache(blobs: Map<string, Promise<Buffer>>): Promise<void> {
    const contents = new Map<string, Buffer>();
    try {
      for (const [oid, content] of blobs) contents.set(oid, await content);
      await writeBlobCache(this.gitdir, contents);
    } catch {
      // A blob that cannot be read fails the load itself; a cache that cannot be written
      // (read-only data directory, full disk) only costs time.
    }
  }

  /** Removes blob-cache files a killed process left half-written (blob-cache.ts). */
  removeStaleBlobCacheFiles(): Promise<void> {
    return removeStaleBlobCacheTemps(this.gitdir);
  }

  /** First-parent history from `start` (default: main), newest first. */
  async log(start?: string, limit = 100): Promise<LogEntry[]> {
    const entries: LogEntry[] = [];
    let oid: string | null = start ?? (await this.readHead());
    while (oid && entries.length < limit) {
      const commit = await this.objects.readCommit(oid);
      entries.push({ oid, parents: commit.parents, author: commit.author, message: commit.message });
      oid = commit.parents[0] ?? null;
    }
    return entries;
  }

  /** Gives a repository made before identities existed one; another process may just have done so. */
  adoptIdentity(): Promise<string> {
    return this.withWriteLock(() => adoptOrgIdentity(this.gitdir));
  }

  /** Serializes writers of this repository, across the process and across processes. */
  withWriteLock<T>(fn: () => Promise<T>): Promise<T> {
    return withDirectoryLock(this.gitdir, fn);
  }

  /**
   * Commits `changes` on top of `parent` and moves the branch (main unless `ref` says
   * otherwise) there, provided it is still `parent` (else StaleHeadError, and the branch is
   * left alone). Returns the new commit's oid.
   */
  async commit(args: CommitArgs): Promise<string> {
    if (!isOid(args.parent)) throw new Error(`Not a commit id: ${String(args.parent)}`);
    return this.writeCommit(args);
  }

  private async writeCommit(args: Omit<CommitArgs, 'parent'> & { parent: string | null }): Promise<string> {
    const edits = await toTreeEdits(args.changes);
    // Cheap early refusal; the compare-and-swap below is what actually decides.
    const branch = args.ref ?? MAIN_REF;
    const head = await readRef(this.gitdir, branch);
    if (head !== args.parent) throw new StaleHeadError(args.parent, head);

    const baseTree = args.parent ? (await this.objects.readCommit(args.parent)).tree : null;
    const writer = this.objects.startWriting();
    const tree = await writeEditedTree(this.objects, writer, baseTree, edits);
    // Changes that rewrite files as they already are (c4store upgrade run twice) are no commit:
    // a commit holding its parent's tree would only be noise in `git log`.
    if (tree === baseTree && args.parent !== null && args.mergedParent === undefined) {
      await writer.finish();
      return args.parent;
    }
    const who = { ...args.author, timestamp: args.timestamp ?? Math.floor(Date.now() / 1000) };
    const parents = [...(args.parent ? [args.parent] : []), ...(args.mergedParent ? [args.mergedParent] : [])];
    const commit = await writer.write('commit', serializeCommit({ tree, parents, author: who, committer: who, message: args.message }));
    // The ref update is prepared (lock taken, checked, written and synced) while the objects
    // are still being synced: in durable mode that saves one round of fsync per commit.
    const [objects, ref] = await Promise.allSettled([
      writer.finish(),
      prepareRefUpdate(this.gitdir, branch, args.parent, commit, { durable: this.durable, spares: this.objects.spares }),
    ]);
    if (ref.status === 'rejected') throw ref.reason;
    if (objects.status === 'rejected') {
      ref.value.abandon();
      throw objects.reason;
    }
    await ref.value.publish();
    return commit;
  }
}

async function createBareLayout(gitdir: string, durable: boolean, identity: string | undefined): Promise<void> {
  await fsp.mkdir(gitdir);
  for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info']) {
    await fsp.mkdir(path.join(gitdir, dir), { recursive: true });
  }
  const files = {
    HEAD: `ref: ${MAIN_REF}\n`,
    config: `[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n${identity === undefined ? '' : identityConfigLines(identity)}`,
    description: 'c4store model repository\n',
  };
  for (const [name, content] of Object.entries(files)) {
    await writeNewFile(path.join(gitdir, name), content, 0o644, durable);
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fsp.lstat(file);
    return true;
  } catch (error) {
    if (isCode(error, 'ENOENT')) return false;
    throw error;
  }
}
