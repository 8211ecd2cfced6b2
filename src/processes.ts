/**
 * Child processes of one module of this project, for work whose failure must not take the
 * server with it. A worker thread shares the process: a native library that aborts on a bug of
 * its own (resvg: a Rust panic is "fatal runtime error", exit 134, from any thread) ends every
 * request of every organization. A child that dies ends only its own task.
 *
 * `ProcessPool` has WorkerPool's contract (threads.ts): one task at a time per child, the
 * outcome told as answer, error, exit or timeout, a child that did not answer killed; children
 * kept between tasks are ended once idle too long, and never keep the server running (they
 * leave when it does).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { askPeer, type WorkerOutcome } from './threads.js';

/**
 * Starts `url` (a file of moduleBeside) in a child process that talks over IPC with the
 * structured clone (Buffers and typed arrays travel as bytes, not JSON). From source, tsx is
 * registered in it; built, the module is a file of its own beside dist/cli.js. None of this
 * process's own flags are passed on (a profiler's, the test runner's).
 */
export function startModuleProcess(url: URL, maxOldGenerationSizeMb: number): ChildProcess {
  const fromSource = url.pathname.endsWith('.ts');
  return fork(fileURLToPath(url), [], {
    execArgv: [...(fromSource ? [`--import=${import.meta.resolve('tsx')}`] : []), `--max-old-space-size=${maxOldGenerationSizeMb}`],
    serialization: 'advanced',
    // What a dying child says (a panic's message) reaches the server's own standard error.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
}

/** askWorker (threads.ts) for a child process: its answer, an error, its exit, or `timeoutMs`. */
export function askProcess<R extends { id: number }>(
  child: ChildProcess,
  id: number,
  task: object,
  timeoutMs: number,
): Promise<WorkerOutcome<R>> {
  if (child.exitCode !== null || child.signalCode !== null || !child.connected) return Promise.resolve({ kind: 'exit' });
  return askPeer(child, (message, failed) => child.send(message, (error) => error && failed(error)), id, task, timeoutMs);
}

export interface ProcessPoolOptions {
  maxOldGenerationSizeMb: number;
  /** Children kept idle between tasks (their module loaded); more are ended when done. */
  keep: number;
  /**
   * An idle child is ended after this long (ms): what its native code allocated stays with the
   * process (resvg's pictures left a renderer at ~250 MB resident), and a new one costs ~0.1 s.
   */
  idleMs: number;
}

export class ProcessPool {
  private readonly idle: ChildProcess[] = [];
  private readonly idleTimers = new Map<ChildProcess, NodeJS.Timeout>();
  private nextId = 0;

  constructor(
    private readonly url: URL,
    private readonly options: ProcessPoolOptions,
  ) {}

  async run<R extends { id: number }>(task: object, timeoutMs: number): Promise<WorkerOutcome<R>> {
    const kept = this.idle.pop();
    const outcome = await this.runOn<R>(kept ?? this.start(), task, timeoutMs);
    // A kept child can have died while idle before this process heard of it (killed from
    // outside, by the OOM killer): the task then met a dead channel, seen as the child's exit or
    // as the send's error (EPIPE). Once more, on a new child; a task that kills its child itself
    // fails there too.
    if (kept !== undefined && (outcome.kind === 'exit' || outcome.kind === 'error')) return this.runOn<R>(this.start(), task, timeoutMs);
    return outcome;
  }

  private async runOn<R extends { id: number }>(child: ChildProcess, task: object, timeoutMs: number): Promise<WorkerOutcome<R>> {
    clearTimeout(this.idleTimers.get(child));
    this.idleTimers.delete(child);
    // Waiting for the answer keeps this process alive; an idle child does not.
    child.channel?.ref();
    let outcome: WorkerOutcome<R> = { kind: 'exit' };
    try {
      outcome = await askProcess<R>(child, this.nextId++, task, timeoutMs);
    } finally {
      if (outcome.kind === 'answer' && child.connected && this.idle.length < this.options.keep) {
        child.channel?.unref();
        this.idle.push(child);
        this.idleTimers.set(child, setTimeout(() => child.kill('SIGKILL'), this.options.idleMs).unref());
      } else {
        child.kill('SIGKILL');
      }
    }
    return outcome;
  }

  private start(): ChildProcess {
    const child = startModuleProcess(this.url, this.options.maxOldGenerationSizeMb);
    child.unref();
    // A child that ends while idle (its idle time up, or killed from outside) is not handed the next task.
    child.once('exit', () => {
      const at = this.idle.indexOf(child);
      if (at >= 0) this.idle.splice(at, 1);
      clearTimeout(this.idleTimers.get(child));
      this.idleTimers.delete(child);
    });
    // Without a listener, a failed spawn (EAGAIN) would be thrown as an uncaught 'error' event.
    child.on('error', () => {});
    return child;
  }
}
