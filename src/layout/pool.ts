/**
 * Automatic layout on worker threads (issue 15.1). A layout is pure and synchronous: on the
 * request's thread, a large diagram held every other
 * organization's requests for as long as it took. Here it runs on one of a few workers, each
 * with its own heap limit; one that takes longer than the timeout is ended, and the write that
 * asked for it is refused and changes nothing.
 */
import { availableParallelism } from 'node:os';
import { ApiError } from '../errors.js';
import { Semaphore } from '../semaphore.js';
import { moduleBeside, WorkerPool } from '../threads.js';
import type { LayoutInput, LayoutResult } from './layout.js';

export interface LayoutPoolOptions {
  /** Layouts of this pool (one per server) running at once (default: cores − 1, between 1 and 2). More wait their turn. */
  threads?: number;
  /** A layout taking longer is cancelled and its worker ended (default 30 s). */
  timeoutMs?: number;
  /** Heap of each worker (default 1024 MB). */
  maxHeapMb?: number;
}

export const DEFAULT_LAYOUT_TIMEOUT = 30_000;

const WORKER_URL = moduleBeside(import.meta.url, 'layout-worker');

/**
 * The process's layout workers, shared by every LayoutPool of the process (the tests start
 * many servers in one): idle ones are kept for the next pool; the pool's `threads` bounds how
 * many of its own layouts run at once.
 */
const workers = new Map<number, WorkerPool>();
function workersWithHeap(maxHeapMb: number): WorkerPool {
  let pool = workers.get(maxHeapMb);
  if (pool === undefined) {
    pool = new WorkerPool(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: maxHeapMb, stackSizeMb: 4 }, keep: 2 });
    workers.set(maxHeapMb, pool);
  }
  return pool;
}

export class LayoutPool {
  private readonly timeoutMs: number;
  private readonly workers: WorkerPool;
  private readonly turns: Semaphore;
  /** Aborted by close(): ends the layouts under way. */
  private readonly closing = new AbortController();

  constructor(options: LayoutPoolOptions = {}) {
    this.turns = new Semaphore(Math.max(1, options.threads ?? Math.min(2, Math.max(1, availableParallelism() - 1))));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_LAYOUT_TIMEOUT;
    this.workers = workersWithHeap(options.maxHeapMb ?? 1024);
  }

  /** The layout of `input`, computed on a worker. */
  layout(input: LayoutInput): Promise<LayoutResult> {
    return this.turns.run(() => this.onWorker(input));
  }

  /** Ends the layouts under way (idle workers stay, unreferenced, for the next pool). */
  async close(): Promise<void> {
    this.closing.abort();
  }

  private async onWorker(input: LayoutInput): Promise<LayoutResult> {
    const outcome = await this.workers.run<{ id: number; result?: LayoutResult; error?: string }>(
      { input },
      this.timeoutMs,
      this.closing.signal,
    );
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
