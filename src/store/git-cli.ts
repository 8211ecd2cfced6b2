import { spawn, type ChildProcess } from 'node:child_process';
import { isCode } from './durable-files.js';

/**
 * git's own command line, for what it does better than code of ours would: walking history
 * with rename detection, annotated tags and ref-name rules, packing, and the smart HTTP
 * protocol. The model's own writes never go through here (src/store/repo.ts).
 */

export class GitCommandError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed (${code}): ${stderr.trim()}`);
  }
}

export interface GitRunOptions {
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  /** Exit codes that are answers, not failures (e.g. 1 of `merge-base --is-ancestor`). */
  okCodes?: readonly number[];
  /**
   * Background work (packing): git runs at the lowest CPU priority (nice 19, inherited by the
   * processes it starts), so that on busy cores it takes only the time the server leaves over.
   */
  lowPriority?: boolean;
  /**
   * git and every process it started (a remote helper, ssh) are stopped after this long and the
   * run fails with GitTimeoutError (default DEFAULT_GIT_TIMEOUT_MS): a remote that accepts the
   * connection and never answers must not hold a push, or the server's shutdown, forever.
   */
  timeoutMs?: number;
  /** Stops git and its processes the same way, e.g. when the server shuts down. */
  signal?: AbortSignal;
}

/** Local commands finish in seconds; packing a large repository at nice 19 may take minutes. */
export const DEFAULT_GIT_TIMEOUT_MS = 10 * 60_000;
/** After SIGTERM, how long git may take to clean up (its lock files) before SIGKILL. */
const KILL_GRACE_MS = 2000;

export class GitTimeoutError extends GitCommandError {
  constructor(
    args: readonly string[],
    readonly timeoutMs: number,
  ) {
    super(args, null, `no answer within ${Math.round(timeoutMs / 1000)} s; stopped`);
  }
}

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Runs `git --git-dir <gitdir> <args>` with no prompt, no pager and no user configuration. */
export function runGit(gitdir: string, args: readonly string[], options: GitRunOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    // Started by POSIX `nice`, so that git and every process it starts run at the lowest
    // priority from their first instruction (setting it after spawn raced git's own children).
    if (options.signal?.aborted) {
      reject(new GitCommandError(args, null, 'stopped before it started'));
      return;
    }
    const child = options.lowPriority ? spawnGit(gitdir, args, options.env, ['nice', '-n', '19']) : spawnGit(gitdir, args, options.env);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
    let stopped: GitCommandError | undefined;
    const stop = (reason: GitCommandError) => {
      stopped ??= reason;
      stopProcessGroup(child);
    };
    const timer = setTimeout(() => stop(new GitTimeoutError(args, timeoutMs)), timeoutMs);
    timer.unref();
    const onAbort = () => stop(new GitCommandError(args, null, 'stopped: the server is shutting down'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // No `nice` on this machine: the same work at the server's priority.
      if (options.lowPriority && isCode(error, 'ENOENT')) resolve(runGit(gitdir, args, { ...options, lowPriority: false }));
      else reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const stderr = Buffer.concat(err).toString('utf8');
      if (stopped) {
        reject(stopped);
      } else if (code === 0 || (code !== null && options.okCodes?.includes(code))) {
        resolve({ code, stdout: Buffer.concat(out), stderr });
      } else {
        reject(new GitCommandError(args, code, stderr));
      }
    });
    child.stdin!.on('error', () => {});
    child.stdin!.end(options.input);
  });
}

export async function gitText(gitdir: string, args: readonly string[], options: GitRunOptions = {}): Promise<string> {
  return (await runGit(gitdir, args, options)).stdout.toString('utf8');
}

/**
 * `git --git-dir <gitdir> <args>`, or `<prefix…> git …` (e.g. `nice -n 19`), as the leader of a
 * process group of its own, so that stopping it stops the processes it started too (they hold
 * its output pipes open: without them, the run would never end).
 */
export function spawnGit(
  gitdir: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  prefix: readonly string[] = [],
): ChildProcess {
  const command = [...prefix, 'git', '--git-dir', gitdir, ...args];
  return spawn(command[0]!, command.slice(1), {
    env: { ...gitEnvironment(), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
}

/** SIGTERM to a child's process group (spawned `detached`), SIGKILL if it is still there after a grace. */
export function stopProcessGroup(child: ChildProcess): void {
  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  signalGroup('SIGTERM');
  const kill = setTimeout(() => signalGroup('SIGKILL'), KILL_GRACE_MS);
  kill.unref();
  child.once('close', () => clearTimeout(kill));
}

/** The process environment less what would make git read a user's settings or prompt. */
export function gitEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('GIT_')) env[name] = value;
  }
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', LC_ALL: 'C' };
}

let available: Promise<boolean> | undefined;

/** Whether this machine has a `git` binary (the smart HTTP routes need it). */
export function gitAvailable(): Promise<boolean> {
  available ??= new Promise((resolve) => {
    const child = spawn('git', ['--version'], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
  return available;
}

/** An object `CatFile.read` was told not to read: larger than the reader wanted. */
export class ObjectTooLargeError extends Error {
  constructor(
    readonly oid: string,
    readonly size: number,
  ) {
    super(`object ${oid} is ${size} bytes, larger than wanted`);
  }
}

/**
 * A long-lived `git cat-file --batch`: blobs by id, one request at a time, in order.
 * Reading many small blobs this way costs one process, not one per blob.
 *
 * An object's content is gathered piece by piece and joined once, when all of it has come: a
 * push's blob of hundreds of megabytes (a few kilobytes in its pack) joined at every piece took
 * a core for many minutes. One over the size a read allows is let by unkept.
 */
export class CatFile {
  private readonly child: ChildProcess;
  /** Bytes of cat-file's output not yet taken: at most a piece of it, never a whole large object. */
  private buffered: Buffer = Buffer.alloc(0);
  /** The object whose content is coming, with what has come of it. */
  private current: { oid: string; size: number; parts: Buffer[]; received: number; kept: boolean } | undefined;
  private readonly waiting: Array<{
    oid: string;
    maxBytes: number;
    resolve: (content: Buffer | null) => void;
    reject: (err: Error) => void;
  }> = [];
  private failure: Error | undefined;

  constructor(gitdir: string, env?: NodeJS.ProcessEnv) {
    this.child = spawnGit(gitdir, ['cat-file', '--batch'], env);
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      this.drain();
    });
    this.child.stdin!.on('error', () => {});
    const fail = (err: Error) => {
      this.failure = err;
      for (const waiter of this.waiting.splice(0)) waiter.reject(err);
    };
    this.child.on('error', fail);
    this.child.on('close', () => fail(new Error('git cat-file --batch ended')));
  }

  /**
   * The object's content, or null when the repository has no such object; one larger than
   * `maxBytes` is not kept in memory: the read fails with ObjectTooLargeError, which says its size.
   */
  read(oid: string, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer | null> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push({ oid, maxBytes, resolve, reject });
      this.child.stdin!.write(`${oid}\n`);
    });
  }

  close(): void {
    this.child.stdin!.end();
  }

  private drain(): void {
    while (this.waiting.length > 0) {
      if (this.current === undefined) {
        const newline = this.buffered.indexOf(10);
        if (newline < 0) return;
        const header = this.buffered.subarray(0, newline).toString('utf8');
        this.buffered = this.buffered.subarray(newline + 1);
        if (header.endsWith(' missing')) {
          this.waiting.shift()!.resolve(null);
          continue;
        }
        const size = Number(header.split(' ')[2]);
        const { oid, maxBytes } = this.waiting[0]!;
        this.current = { oid, size, parts: [], received: 0, kept: size <= maxBytes };
      }
      const object = this.current;
      // The content and the newline cat-file writes after it.
      const taken = this.buffered.subarray(0, object.size + 1 - object.received);
      this.buffered = this.buffered.subarray(taken.length);
      object.received += taken.length;
      if (object.kept) object.parts.push(taken);
      if (object.received < object.size + 1) return;
      this.current = undefined;
      const waiter = this.waiting.shift()!;
      if (object.kept) waiter.resolve(Buffer.concat(object.parts, object.size + 1).subarray(0, object.size));
      else waiter.reject(new ObjectTooLargeError(object.oid, object.size));
    }
  }
}
