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
  /**
   * Parses waiting for a worker, one queue per organization. The next turn goes to the
   * organization whose last parse started longest ago (or never): one organization's stream of
   * large bodies then delays another's body by at most the parses already running, not by
   * everything it queued first.
   */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** When each organization's latest parse started, as a count of parses started. */
  private readonly lastStarted = new Map<string, number>();
  private started = 0;
  private running = 0;
  private nextId = 0;
  private closed = false;
  private readonly all = new Set<Worker>();

  constructor(options: YamlPoolOptions = {}) {
    this.threads = Math.max(1, options.threads ?? Math.min(4, Math.max(1, availableParallelism() - 1)));
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxHeapMb = options.maxHeapMb ?? 1024;
  }

  /** Parses on a worker; `owner` (the organization) decides whose turn it is when all are busy. */
  async parse(text: string, owner = ''): Promise<Parsed> {
    if (this.running < this.threads) this.running++;
    else await new Promise<void>((resolve) => this.enqueue(owner, resolve));
    this.lastStarted.set(owner, ++this.started);
    try {
      return await this.parseOnWorker(text);
    } finally {
      this.handOver();
    }
  }

  /** Parses waiting, over all organizations. */
  get queued(): number {
    let count = 0;
    for (const queue of this.waiting.values()) count += queue.length;
    return count;
  }

  private enqueue(owner: string, resolve: () => void): void {
    const queue = this.waiting.get(owner);
    if (queue) queue.push(resolve);
    else this.waiting.set(owner, [resolve]);
  }

  /**
   * A finished parse passes its slot straight to the organization whose turn it is (its oldest
   * parse); `running` stays as it is, so a parse arriving meanwhile cannot take the slot as well.
   */
  private handOver(): void {
    let owner: string | undefined;
    for (const candidate of this.waiting.keys()) {
      if (owner === undefined || (this.lastStarted.get(candidate) ?? 0) < (this.lastStarted.get(owner) ?? 0)) owner = candidate;
    }
    if (owner === undefined) {
      this.running--;
      if (this.running === 0) this.lastStarted.clear();
      return;
    }
    const queue = this.waiting.get(owner)!;
    const resolve = queue.shift()!;
    if (queue.length === 0) this.waiting.delete(owner);
    resolve();
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
