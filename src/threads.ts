/**
 * Starts a worker thread on a module of this project. Built, the module is a file of its own
 * next to dist/cli.js (scripts/build.mjs bundles each worker as an entry point); from source,
 * it is the .ts file (see moduleBeside), and Node 20 does not run tsx's `--import` hooks in
 * workers, so they are registered first.
 */
import type { EventEmitter } from 'node:events';
import { type ResourceLimits, Worker, type WorkerOptions } from 'node:worker_threads';
import { Semaphore } from './semaphore.js';

export function startModuleWorker(url: URL, options: WorkerOptions = {}): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  return new Worker(
    `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})` +
      `.then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`,
    { ...options, eval: true },
  );
}

/** `./<name>.ts` beside `callerUrl` when running from source, else `./<name>.js`. */
export function moduleBeside(callerUrl: string, name: string): URL {
  return new URL(`./${name}${callerUrl.endsWith('.ts') ? '.ts' : '.js'}`, callerUrl);
}

/** How one task given to a worker ended. */
export type WorkerOutcome<R> =
  | { kind: 'answer'; message: R }
  | { kind: 'error'; error: Error & { code?: string } }
  | { kind: 'exit' }
  | { kind: 'timeout' };

/**
 * Posts `{ id, ...task }` to `worker` and waits for whichever comes first: its answer (the
 * message carrying that id), an error, its exit, or `timeoutMs`. The listeners are removed
 * either way; what becomes of the worker is the caller's choice.
 */
export function askWorker<R extends { id: number }>(
  worker: Worker,
  id: number,
  task: object,
  timeoutMs: number,
): Promise<WorkerOutcome<R>> {
  return askPeer(worker, (message) => worker.postMessage(message), id, task, timeoutMs);
}

/**
 * askWorker for anything that answers with `message` events and ends with `error` or `exit`
 * (a worker thread, a child process: processes.ts); `post` sends, and reports a failure to send.
 */
export function askPeer<R extends { id: number }>(
  peer: EventEmitter,
  post: (message: object, failed: (error: Error) => void) => void,
  id: number,
  task: object,
  timeoutMs: number,
): Promise<WorkerOutcome<R>> {
  return new Promise((resolve) => {
    const finish = (outcome: WorkerOutcome<R>) => {
      clearTimeout(timer);
      peer.off('message', onMessage);
      peer.off('error', onError);
      peer.off('exit', onExit);
      resolve(outcome);
    };
    const onMessage = (message: R) => {
      if (message.id === id) finish({ kind: 'answer', message });
    };
    const onError = (error: Error) => finish({ kind: 'error', error });
    const onExit = () => finish({ kind: 'exit' });
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    peer.on('message', onMessage);
    peer.on('error', onError);
    peer.on('exit', onExit);
    post({ id, ...task }, onError);
  });
}

export interface WorkerPoolOptions {
  resourceLimits: ResourceLimits;
  /** Workers kept idle between tasks (their module loaded); more are ended when done. */
  keep: number;
  /** Tasks running at once; more wait their turn, first come first served. Default: no limit (the caller takes turns). */
  slots?: number;
  /**
   * Resolves true once a newly started worker can take tasks (e.g. it has said so), false if it
   * never will: such a worker is ended and its task's outcome is `exit`. Default: at once.
   */
  ready?: (worker: Worker) => Promise<boolean>;
}

/**
 * Worker threads of one module, shared by the tasks given to them (the drawing, the layout,
 * the PNG and the YAML pools). A task takes an idle worker or starts one, unreferenced so that
 * it never keeps the process alive; a worker that answered goes back idle (up to `keep`), one
 * that failed, stopped, ran out of time or was aborted is ended. What an outcome means is the
 * caller's to say.
 */
export class WorkerPool {
  private readonly idle: Worker[] = [];
  private readonly busy = new Set<Worker>();
  private readonly readiness = new WeakMap<Worker, Promise<boolean>>();
  private readonly slots: Semaphore | undefined;
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly url: URL,
    private readonly options: WorkerPoolOptions,
  ) {
    this.slots = options.slots === undefined ? undefined : new Semaphore(options.slots);
  }

  /**
   * Gives `task` to a worker; `signal` ends the worker (outcome `exit`), as does close(). A task
   * given as a function is made once a slot is free, so tasks waiting for one hold no copy of their data.
   */
  run<R extends { id: number }>(task: object | (() => object), timeoutMs: number, signal?: AbortSignal): Promise<WorkerOutcome<R>> {
    const onWorker = () => this.onWorker<R>(typeof task === 'function' ? task() : task, timeoutMs, signal);
    return this.slots ? this.slots.run(onWorker) : onWorker();
  }

  /** Ends every worker, busy or idle; tasks given later start new ones, which are not kept. */
  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.busy, ...this.idle];
    this.busy.clear();
    this.idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private start(): Worker {
    const worker = startModuleWorker(this.url, { resourceLimits: this.options.resourceLimits });
    worker.unref();
    if (this.options.ready) this.readiness.set(worker, this.options.ready(worker));
    return worker;
  }

  private async onWorker<R extends { id: number }>(task: object, timeoutMs: number, signal?: AbortSignal): Promise<WorkerOutcome<R>> {
    const worker = this.idle.pop() ?? this.start();
    this.busy.add(worker);
    const abort = () => void worker.terminate();
    if (signal?.aborted) abort();
    signal?.addEventListener('abort', abort);
    let outcome: WorkerOutcome<R> = { kind: 'exit' };
    try {
      if ((await this.readiness.get(worker)) !== false) outcome = await askWorker<R>(worker, this.nextId++, task, timeoutMs);
    } finally {
      signal?.removeEventListener('abort', abort);
      this.busy.delete(worker);
      if (outcome.kind === 'answer' && !this.closed && !signal?.aborted && this.idle.length < this.options.keep) this.idle.push(worker);
      else void worker.terminate();
    }
    return outcome;
  }
}
