/**
 * Starts a worker thread on a module of this project. Built, the module is a file of its own
 * next to dist/cli.js (scripts/build.mjs bundles each worker as an entry point); from source,
 * it is the .ts file (see moduleBeside), and Node 20 does not run tsx's `--import` hooks in
 * workers, so they are registered first.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

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
  return new Promise((resolve) => {
    const finish = (outcome: WorkerOutcome<R>) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      resolve(outcome);
    };
    const onMessage = (message: R) => {
      if (message.id === id) finish({ kind: 'answer', message });
    };
    const onError = (error: Error) => finish({ kind: 'error', error });
    const onExit = () => finish({ kind: 'exit' });
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage({ id, ...task });
  });
}
