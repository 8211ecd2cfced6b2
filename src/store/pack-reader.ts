/**
 * Objects that live in packs, read by git itself: one long-lived `git cat-file --batch` per
 * repository, fed object ids and answering each with `<oid> <type> <size>\n<content>\n` (or
 * `<oid> missing\n`), in order. Reading a pack this way is sequential and streamed, where
 * isomorphic-git's reader holds the whole pack in memory and resolves deltas one object at a
 * time (19 s and 1 GB of RSS for a packed repository of 100,000 components, issue 19).
 *
 * The child is started on the first packed read and ends after a moment without any, so an
 * idle organization holds no process. Without a usable `git` (not installed), reads fall back
 * to isomorphic-git.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import * as nodeFs from 'node:fs';
import { type GitObject, OBJECT_TYPES, type ObjectType } from './git-format.js';

const IDLE_MS = 2_000;

interface Pending {
  oid: string;
  resolve: (object: GitObject | null) => void;
  reject: (error: Error) => void;
}

/** One `git cat-file --batch` child and the requests it has yet to answer, oldest first. */
class BatchProcess {
  private readonly pending: Pending[] = [];
  private head = 0;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The object being received: its header, and how many content bytes (plus the final LF) are still due. */
  private current: { type: ObjectType; size: number } | null = null;
  private failed: Error | null = null;

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (data: Buffer) => this.receive(data));
    child.stdin.on('error', (error) => this.fail(error));
    child.on('error', (error) => this.fail(error));
    child.on('exit', (code, signal) => this.fail(new Error(`git cat-file exited (${signal ?? code})`)));
    child.stderr.resume();
    this.holdProcess(false);
  }

  /**
   * An idle child must not keep the process alive (a command-line run would wait for the idle
   * timeout), a busy one must: a pending read is only a promise, which holds nothing.
   */
  private holdProcess(hold: boolean): void {
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as Array<{ ref(): void; unref(): void }>) {
      if (hold) handle.ref();
      else handle.unref();
    }
  }

  get busy(): boolean {
    return this.head < this.pending.length;
  }

  get alive(): boolean {
    return this.failed === null;
  }

  read(oid: string): Promise<GitObject | null> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      if (!this.busy) this.holdProcess(true);
      this.pending.push({ oid, resolve, reject });
      this.child.stdin.write(`${oid}\n`);
    });
  }

  end(): void {
    this.child.stdin.end();
  }

  private receive(data: Buffer): void {
    this.chunks.push(data);
    this.buffered += data.length;
    for (;;) {
      if (this.current === null) {
        const line = this.takeLine();
        if (line === null) return;
        const [oid, type, size] = line.split(' ');
        const request = this.pending[this.head];
        if (request === undefined || request.oid !== oid) {
          this.fail(new Error(`git cat-file answered '${line}' out of turn`));
          return;
        }
        if (type === 'missing') this.settle(null);
        else if (OBJECT_TYPES.includes(type!) && /^\d+$/.test(size ?? '')) this.current = { type: type as ObjectType, size: Number(size) };
        else this.settle(new Error(`git cat-file: unexpected answer '${line}'`));
        continue;
      }
      if (this.buffered < this.current.size + 1) return;
      const all = this.take(this.current.size + 1);
      const object = { type: this.current.type, content: all.subarray(0, this.current.size) };
      this.current = null;
      this.settle(object);
    }
  }

  private settle(result: GitObject | null | Error): void {
    const request = this.pending[this.head]!;
    this.pending[this.head++] = undefined as unknown as Pending;
    if (this.head === this.pending.length) {
      this.pending.length = 0;
      this.head = 0;
      this.holdProcess(false);
    }
    if (result instanceof Error) request.reject(result);
    else request.resolve(result);
  }

  private takeLine(): string | null {
    // Headers are short: look for LF in the first chunks only as far as needed.
    let length = 0;
    for (const chunk of this.chunks) {
      const at = chunk.indexOf(0x0a);
      if (at >= 0) return this.take(length + at + 1).toString('latin1', 0, length + at);
      length += chunk.length;
    }
    return null;
  }

  private take(count: number): Buffer {
    const first = this.chunks[0]!;
    let taken: Buffer;
    if (first.length >= count) {
      taken = first.subarray(0, count);
      if (first.length === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
    } else {
      const all = Buffer.concat(this.chunks, this.buffered);
      taken = all.subarray(0, count);
      this.chunks = all.length > count ? [all.subarray(count)] : [];
    }
    this.buffered -= count;
    return taken;
  }

  private fail(error: Error): void {
    if (this.failed) return;
    this.failed = error;
    for (let i = this.head; i < this.pending.length; i++) this.pending[i]!.reject(error);
    this.pending.length = 0;
    this.head = 0;
    this.holdProcess(false);
  }
}

/** Packed (and any other) objects of one repository through `git cat-file --batch`. */
export class PackReader {
  private batch: BatchProcess | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private unavailable = false;
  // isomorphic-git keeps parsed pack indexes in this object between calls (the fallback only).
  private readonly packCache: object = {};

  constructor(private readonly gitdir: string) {}

  /** The object, or null when the repository does not have it. */
  async read(oid: string): Promise<GitObject | null> {
    if (this.unavailable) return this.readWithIsomorphicGit(oid);
    const batch = this.process();
    if (batch === null) return this.readWithIsomorphicGit(oid);
    try {
      return await batch.read(oid);
    } catch (error) {
      if (this.unavailable) return this.readWithIsomorphicGit(oid);
      throw error;
    } finally {
      this.scheduleIdleEnd();
    }
  }

  private process(): BatchProcess | null {
    if (this.batch?.alive) return this.batch;
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn('git', ['--git-dir', this.gitdir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'pipe'] });
    } catch {
      this.unavailable = true;
      return null;
    }
    // No git on this machine: spawn reports ENOENT asynchronously; remember it, and read the other way.
    child.once('error', (error) => {
      if ((error as { code?: string }).code === 'ENOENT') this.unavailable = true;
    });
    this.batch = new BatchProcess(child);
    return this.batch;
  }

  private scheduleIdleEnd(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.batch && !this.batch.busy) {
        this.batch.end();
        this.batch = null;
      }
    }, IDLE_MS);
    this.idleTimer.unref();
  }

  private async readWithIsomorphicGit(oid: string): Promise<GitObject | null> {
    try {
      // Loaded on first use: only where git itself cannot be run.
      const { readObject } = await import('isomorphic-git');
      const result = await readObject({ fs: nodeFs, gitdir: this.gitdir, oid, format: 'content', cache: this.packCache });
      const type = result.type as string;
      if (!(result.object instanceof Uint8Array) || !OBJECT_TYPES.includes(type)) {
        throw new Error(`Unexpected packed object ${oid}.`);
      }
      const bytes = result.object;
      return { type: type as ObjectType, content: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    } catch (error) {
      if ((error as { code?: string }).code === 'NotFoundError') return null;
      throw error;
    }
  }
}
