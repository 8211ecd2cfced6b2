/**
 * Files freed by the store kept to be written again as new files, instead of deleted and
 * created anew: the loose objects git has packed, and each ref a commit replaced.
 *
 * Why: on ext4 without a journal (this project's machine kind), the kernel will not give out
 * an inode freed in the last 60 s, and skips such inodes one by one on every file creation
 * (fs/ext4/ialloc.c, `recently_deleted`). Packing deletes the five or six loose objects of
 * each of the last thousand commits, and every commit frees the ref it replaces; so creating
 * each new file (a commit's objects and its ref's lock) cost the server 0.2–0.4 ms of kernel
 * time, about half an update. A spare is renamed or linked to the new file's name and
 * overwritten: no inode is allocated, none freed.
 *
 * A spare is reused only `reuseAfterMs` after it was kept: a reader that opened the file before
 * it was moved away (git maps a loose object while it inflates it) has long finished with it by
 * then. One whose inode is linked elsewhere too (a power loss can leave the spare's old
 * directory entry beside the object's new one) is never written into.
 */
import { randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isCode } from './durable-files.js';

/** The repository's directory of spare files (in the git directory, outside objects/: git ignores it). */
export const SPARE_FILES_DIR = 'c4store-spare-files';
/**
 * Spares kept at most per repository: what `REUSE_AFTER_MS` of the fastest writing (~1,500
 * objects a second) creates, so sustained writes reuse every file rather than a few. Each costs
 * an inode (which exists anyway) and a directory entry, no data: see `empty`.
 */
export const MAX_SPARE_FILES = 16_384;
/** How long a spare waits before it is reused (see above): reading a loose object takes microseconds. */
export const REUSE_AFTER_MS = 10_000;

/** The suffix of a spare while it is emptied (see `empty`): not to be taken. */
const EMPTYING = '.emptying';
const NAME_PREFIX = `${process.pid}_${randomBytes(4).toString('hex')}_`;
let nextNameNumber = 0;

interface Waiting {
  name: string;
  usableAt: number;
}

export class SpareFiles {
  readonly dir: string;
  /** Spares usable now (emptied by this process). */
  private readonly ready: string[] = [];
  /** Spares usable from a time on, in that order; `first` is the next one not handed out. */
  private readonly waiting: Waiting[] = [];
  private first = 0;
  private readonly known = new Set<string>();
  /** Spares kept and not yet emptied (see `keep`). */
  private readonly pending = new Set<string>();
  /** Batches waiting to be emptied, by their timer; and the emptying under way. */
  private readonly toEmpty = new Map<NodeJS.Timeout, { names: readonly string[]; usableAt: number }>();
  private emptying: Promise<void> = Promise.resolve();
  /** Moves on at each `stop`: an emptying under way hands what it has not done yet to `waiting`. */
  private generation = 0;
  private listedAt = Number.NEGATIVE_INFINITY;
  /** Spares handed out while the directory is being listed: the listing may still show them. */
  private takenWhileListing: Set<string> | undefined;
  private dirMade = false;

  constructor(
    gitdir: string,
    private readonly reuseAfterMs = REUSE_AFTER_MS,
  ) {
    this.dir = path.join(gitdir, SPARE_FILES_DIR);
  }

  /** Spares this process may use (kept by it and emptied, or found in the directory), whether usable yet or not. */
  get size(): number {
    return this.ready.length + this.waiting.length - this.first;
  }

  /**
   * Moves `files` (loose objects git has packed) into the pool, and deletes those beyond its
   * bound. After `reuseAfterMs` they are emptied and then used: an idle repository's pool holds
   * inodes, not its old objects' bytes (a few kilobytes each, up to MAX_SPARE_FILES of them).
   */
  async keep(files: readonly string[]): Promise<void> {
    if (files.length === 0) return;
    await fsp.mkdir(this.dir, { recursive: true });
    this.dirMade = true;
    const kept: string[] = [];
    for (const file of files) {
      if (this.size + this.pending.size >= MAX_SPARE_FILES) {
        await fsp.rm(file, { force: true });
        continue;
      }
      const name = `${NAME_PREFIX}${nextNameNumber++}`;
      // Pending before it is in the directory: a listing under way must not take it for usable.
      this.pending.add(name);
      try {
        await fsp.rename(file, path.join(this.dir, name));
      } catch (error) {
        this.pending.delete(name);
        // Gone already: another process pruned it.
        if (isCode(error, 'ENOENT')) continue;
        throw error;
      }
      // git makes objects read-only; a spare is written again by whoever serves the repository.
      await fsp.chmod(path.join(this.dir, name), 0o644);
      kept.push(name);
    }
    const usableAt = Date.now() + this.reuseAfterMs;
    const timer = setTimeout(() => {
      this.toEmpty.delete(timer);
      this.emptying = this.emptying.then(() => this.empty(kept, usableAt));
    }, this.reuseAfterMs).unref();
    this.toEmpty.set(timer, { names: kept, usableAt });
  }

  /**
   * Renames a usable spare to `temp`, writes `data` into it and returns it open (read-only
   * for anyone, as git's objects are); undefined when there is none to use.
   */
  writeAs(temp: string, data: Buffer): number | undefined {
    for (;;) {
      const name = this.next();
      if (name === undefined) return undefined;
      const claimed = this.claim(name, (spare) => nodeFs.renameSync(spare, temp));
      if (claimed === undefined) return undefined;
      if (!claimed) continue;
      let fd: number | undefined;
      try {
        fd = nodeFs.openSync(temp, nodeFs.constants.O_WRONLY);
        if (nodeFs.fstatSync(fd).nlink !== 1) throw new Error('linked elsewhere too');
        nodeFs.writeFileSync(fd, data);
        nodeFs.ftruncateSync(fd, data.length);
        nodeFs.fchmodSync(fd, 0o444);
        return fd;
      } catch {
        // Not ours to write into (linked elsewhere, or left by another user): only our name of it goes.
        if (fd !== undefined) nodeFs.closeSync(fd);
        nodeFs.rmSync(temp, { force: true });
      }
    }
  }

  /**
   * Makes `file` (it must not exist) of a usable spare and returns it open, empty; undefined
   * when there is none to use, or when `file` exists (then the caller's own creation of it
   * meets that too). Exclusive as a creation with O_EXCL: a ref's lock is taken so.
   */
  createAs(file: string, mode: number): number | undefined {
    for (;;) {
      const name = this.next();
      if (name === undefined) return undefined;
      const spare = path.join(this.dir, name);
      const claimed = this.claim(name, () => nodeFs.linkSync(spare, file));
      if (claimed === undefined) return undefined;
      if (!claimed) continue;
      nodeFs.rmSync(spare, { force: true });
      let fd: number | undefined;
      try {
        fd = nodeFs.openSync(file, nodeFs.constants.O_WRONLY);
        // Another process took the spare between the link and the unlink: neither writes into it.
        if (nodeFs.fstatSync(fd).nlink !== 1) throw new Error('linked elsewhere too');
        nodeFs.ftruncateSync(fd, 0);
        nodeFs.fchmodSync(fd, mode);
        // As made now: a lock's age is read from its mtime (an old one is taken for a dead holder's).
        const now = new Date();
        nodeFs.futimesSync(fd, now, now);
        return fd;
      } catch {
        if (fd !== undefined) nodeFs.closeSync(fd);
        nodeFs.rmSync(file, { force: true });
      }
    }
  }

  /**
   * Keeps, as a spare usable after the wait, the file that a rename is about to replace (a
   * ref, when its lock is renamed onto it): a second name for it, so the rename frees no inode.
   */
  keepReplaced(file: string): void {
    if (this.size + this.pending.size >= MAX_SPARE_FILES) return;
    if (!this.dirMade) {
      nodeFs.mkdirSync(this.dir, { recursive: true });
      this.dirMade = true;
    }
    const name = `${NAME_PREFIX}${nextNameNumber++}`;
    try {
      nodeFs.linkSync(file, path.join(this.dir, name));
    } catch (error) {
      // Nothing to replace (a new ref), or the pool's directory removed under us.
      if (isCode(error, 'ENOENT')) this.dirMade = false;
      return;
    }
    this.add(name, Date.now() + this.reuseAfterMs);
  }

  /**
   * Moves (or links) spare `name` where `move` puts it: true once done; false when another
   * process serving the repository took it first; undefined when the destination exists or its
   * directory does not (a repack removed an emptied fan-out directory): the spare is kept, and
   * the caller's own creation meets the same and deals with it.
   */
  private claim(name: string, move: (spare: string) => void): boolean | undefined {
    const spare = path.join(this.dir, name);
    try {
      move(spare);
      return true;
    } catch (error) {
      if (isCode(error, 'ENOENT') && !nodeFs.existsSync(spare)) return false;
      this.makeReady(name);
      if (isCode(error, 'EEXIST') || isCode(error, 'ENOENT')) return undefined;
      throw error;
    }
  }

  private makeReady(name: string): void {
    this.known.add(name);
    this.ready.push(name);
  }

  private add(name: string, usableAt: number): void {
    if (this.known.has(name)) return;
    this.known.add(name);
    this.waiting.push({ name, usableAt });
  }

  private next(): string | undefined {
    const ready = this.ready.pop();
    if (ready !== undefined) {
      this.known.delete(ready);
      this.takenWhileListing?.add(ready);
      return ready;
    }
    const waiting = this.waiting[this.first];
    if (waiting === undefined || waiting.usableAt > Date.now()) {
      if (waiting === undefined) this.listLater();
      return undefined;
    }
    this.first++;
    this.known.delete(waiting.name);
    this.takenWhileListing?.add(waiting.name);
    if (this.first === this.waiting.length) {
      this.waiting.length = 0;
      this.first = 0;
    }
    return waiting.name;
  }

  /**
   * Other processes serving the repository keep spares too: when this one has none left, it
   * looks at the directory (at most once per `reuseAfterMs`), and what it finds waits as if
   * kept just now.
   */
  private listLater(): void {
    const now = Date.now();
    if (now - this.listedAt < this.reuseAfterMs) return;
    this.listedAt = now;
    const taken = new Set<string>();
    this.takenWhileListing = taken;
    fsp
      .readdir(this.dir)
      .then(
        (names) => {
          const usableAt = Date.now() + this.reuseAfterMs;
          for (const name of names) {
            const usable = !name.endsWith(EMPTYING) && !this.pending.has(name) && !taken.has(name);
            if (usable && this.size < MAX_SPARE_FILES) this.add(name, usableAt);
          }
        },
        () => {},
      )
      .finally(() => {
        if (this.takenWhileListing === taken) this.takenWhileListing = undefined;
      });
  }

  /**
   * Empties the spares of `names`, then lets them be used. Each is truncated under a name of its
   * own for the while, never where another process serving the repository could take it:
   * truncating it by its name in the pool could empty a spare another process has just taken
   * and filled.
   */
  private async empty(names: readonly string[], usableAt: number): Promise<void> {
    const generation = this.generation;
    for (const name of names) {
      if (this.generation !== generation) this.add(name, usableAt);
      else if (await this.emptied(name)) this.makeReady(name);
      this.pending.delete(name);
    }
  }

  /**
   * Stops emptying (the server stops: no file of the data directory is touched after): what was
   * still to be emptied is used as it is after its wait (written over, cut to length). Resolves
   * once no emptying runs; spares kept later are emptied as before.
   */
  async stop(): Promise<void> {
    this.generation++;
    for (const [timer, batch] of this.toEmpty) {
      clearTimeout(timer);
      for (const name of batch.names) {
        this.add(name, batch.usableAt);
        this.pending.delete(name);
      }
    }
    this.toEmpty.clear();
    await this.emptying;
  }

  private async emptied(name: string): Promise<boolean> {
    const file = path.join(this.dir, name);
    const aside = `${file}${EMPTYING}`;
    try {
      await fsp.rename(file, aside);
    } catch {
      // Taken meanwhile by another process, or the repository removed.
      return false;
    }
    try {
      const handle = await fsp.open(aside, nodeFs.constants.O_WRONLY);
      try {
        if ((await handle.stat()).nlink !== 1) throw new Error('linked elsewhere too');
        await handle.truncate(0);
      } finally {
        await handle.close();
      }
      await fsp.rename(aside, file);
      return true;
    } catch {
      // Not ours to empty (see writeAs): only our name of it goes.
      await fsp.rm(aside, { force: true });
      return false;
    }
  }
}

const sparesByGitdir = new Map<string, SpareFiles>();

/** The pool of `gitdir`, one per repository in the process (every writer and the packing share it). */
export function spareFilesOf(gitdir: string): SpareFiles {
  gitdir = path.resolve(gitdir);
  let spares = sparesByGitdir.get(gitdir);
  if (spares === undefined) {
    spares = new SpareFiles(gitdir);
    sparesByGitdir.set(gitdir, spares);
  }
  return spares;
}
