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
