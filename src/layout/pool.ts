/**
 * Automatic layout on worker threads (issue 15.1). A layout is pure and synchronous: on the
 * request's thread, a large diagram held every other
 * organization's requests for as long as it took. Here it runs on one of a few workers, each
 * with its own heap limit; one that takes longer than the timeout is ended, and the write that
 * asked for it is refused and changes nothing.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { ApiError } from '../errors.js';
import { askWorker, moduleBeside, startModuleWorker } from '../threads.js';
import type { LayoutInput, LayoutResult } from './layout.js';

export interface LayoutPoolOptions {
  /** Layouts running at once in the process (default: cores − 1, between 1 and 2). More wait their turn. */
  threads?: number;
  /** A layout taking longer is cancelled and its worker ended (default 30 s). */
  timeoutMs?: number;
  /** Heap of each worker (default 1024 MB). */
  maxHeapMb?: number;
}

export const DEFAULT_LAYOUT_TIMEOUT = 30_000;

const WORKER_URL = moduleBeside(import.meta.url, 'layout-worker');

/**
 * Idle workers, shared by every pool of the process: a worker that has laid out once has the
 * layout compiled (its first layout costs more), and a process running many servers (the
 * tests) need not pay that for each.
 */
const idle: Worker[] = [];
const MAX_IDLE = 2;
/** Layouts running, and the ones waiting for a worker, across the process. */
const shared = { running: 0, queue: [] as Array<() => void> };

export class LayoutPool {
  private readonly threads: number;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;
  private readonly all = new Set<Worker>();
  private nextId = 0;
  private closed = false;

  constructor(options: LayoutPoolOptions = {}) {
    this.threads = Math.max(1, options.threads ?? Math.min(2, Math.max(1, availableParallelism() - 1)));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_LAYOUT_TIMEOUT;
    this.maxHeapMb = options.maxHeapMb ?? 1024;
  }

  /** The layout of `input`, computed on a worker. */
  async layout(input: LayoutInput): Promise<LayoutResult> {
    if (shared.running >= this.threads) await new Promise<void>((resolve) => shared.queue.push(resolve));
    shared.running++;
    try {
      return await this.onWorker(input);
    } finally {
      shared.running--;
      shared.queue.shift()?.();
    }
  }

  /** Ends the layouts under way (idle workers stay, unreferenced, for the next pool). */
  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.all];
    this.all.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private worker(): Worker {
    const reused = idle.pop();
    if (reused) {
      this.all.add(reused);
      return reused;
    }
    const worker = startModuleWorker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb, stackSizeMb: 4 } });
    worker.unref();
    this.all.add(worker);
    return worker;
  }

  private async onWorker(input: LayoutInput): Promise<LayoutResult> {
    const worker = this.worker();
    const outcome = await askWorker<{ id: number; result?: LayoutResult; error?: string }>(
      worker,
      this.nextId++,
      { input },
      this.timeoutMs,
    );
    this.all.delete(worker);
    if (outcome.kind === 'answer' && !this.closed && idle.length < MAX_IDLE) idle.push(worker);
    else void worker.terminate();
    const failed = (why: string) => new Error(`Automatic layout failed: ${why}`);
    switch (outcome.kind) {
      case 'answer':
        if (outcome.message.result) return outcome.message.result;
        throw failed(outcome.message.error ?? 'no result');
      case 'error':
        throw failed(outcome.error.message);
      case 'exit':
        throw failed('the layout worker stopped');
      case 'timeout':
        throw new ApiError(
          503,
          `Automatic layout took longer than ${this.timeoutMs / 1000} s and was cancelled; nothing was changed. ` +
            'Give the elements of large diagrams positions, or add them in several requests.',
        );
    }
  }
}
