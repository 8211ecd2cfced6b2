/**
 * Worker threads for parsing large YAML bodies. The `yaml` package parses about 0.6 MB/s on
 * a request-sized model (a 4 MB body: 7 s), all of it synchronous: parsed on the request's
 * thread, one large YAML body would stall every other client for seconds. Here it runs on one
 * of a few worker threads, each with its own heap limit, and a parse that runs too long or
 * needs too much memory ends that worker instead of the server.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { moduleBeside, startModuleWorker } from '../threads.js';
import type { Parsed } from './body-parse.js';

export interface YamlPoolOptions {
  /** Workers parsing at once (default: cores − 1, between 1 and 4). More bodies wait their turn. */
  threads?: number;
  /** A parse taking longer is abandoned and its worker ended (default 60 s). */
  timeoutMs?: number;
  /** Heap of each worker (default 1024 MB); a parse needing more ends that worker. */
  maxHeapMb?: number;
}

const WORKER_URL = moduleBeside(import.meta.url, 'yaml-worker');

export class YamlPool {
  private readonly threads: number;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;
  private readonly idle: Worker[] = [];
  private readonly queue: Array<() => void> = [];
  private running = 0;
  private nextId = 0;
  private closed = false;
  private readonly all = new Set<Worker>();

  constructor(options: YamlPoolOptions = {}) {
    this.threads = Math.max(1, options.threads ?? Math.min(4, Math.max(1, availableParallelism() - 1)));
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxHeapMb = options.maxHeapMb ?? 1024;
  }

  async parse(text: string): Promise<Parsed> {
    if (this.running >= this.threads) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.running++;
    try {
      return await this.parseOnWorker(text);
    } finally {
      this.running--;
      this.queue.shift()?.();
    }
  }

  /** Ends every worker; later parses start new ones. */
  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private worker(): Worker {
    const reused = this.idle.pop();
    if (reused) return reused;
    const options = { resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb, stackSizeMb: 4 } };
    const worker = startModuleWorker(WORKER_URL, options);
    worker.unref();
    this.all.add(worker);
    return worker;
  }

  private parseOnWorker(text: string): Promise<Parsed> {
    const worker = this.worker();
    const id = this.nextId++;
    return new Promise<Parsed>((resolve) => {
      let settled = false;
      const finish = (parsed: Parsed, keepWorker: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (keepWorker && !this.closed) {
          this.idle.push(worker);
        } else {
          this.all.delete(worker);
          void worker.terminate();
        }
        resolve(parsed);
      };
      const onMessage = (message: { id: number } & Parsed) => {
        if (message.id !== id) return;
        const { id: _id, ...parsed } = message;
        finish(parsed as Parsed, true);
      };
      const onError = (err: Error & { code?: string }) => {
        finish({
          error: err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? 'Invalid YAML: the document needs too much memory to parse.'
            : `Invalid YAML: ${err.message}`,
        }, false);
      };
      const onExit = () => finish({ error: 'Invalid YAML: the parser stopped unexpectedly.' }, false);
      const timer = setTimeout(() => finish({ error: 'Invalid YAML: the document took too long to parse.' }, false), this.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ id, text });
    });
  }
}
