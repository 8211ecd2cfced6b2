/**
 * Worker threads for parsing large YAML bodies. The `yaml` package parses about 0.6 MB/s on
 * a request-sized model (a 4 MB body: 7 s), all of it synchronous: parsed on the request's
 * thread, one large YAML body would stall every other client for seconds. Here it runs on one
 * of a few worker threads, each with its own heap limit, and a parse that runs too long or
 * needs too much memory ends that worker instead of the server.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { moduleBeside, WorkerPool } from '../threads.js';
import type { Parsed } from './body-parse.js';
import { DEFAULT_BODY_LIMIT } from '../limits/limits.js';
import { FairQueue } from './fair-queue.js';

export interface YamlPoolOptions {
  /**
   * Workers parsing large bodies at once (default: cores − 1, between 1 and 4), plus one for
   * bodies up to SMALL_BODY_BYTES. More bodies wait their organization's turn.
   */
  threads?: number;
  /** A parse taking longer is abandoned and its worker ended (default 60 s). */
  timeoutMs?: number;
  /** Heap of each worker (default 1024 MB); a parse needing more ends that worker. */
  maxHeapMb?: number;
}

const WORKER_URL = moduleBeside(import.meta.url, 'yaml-worker');
/** A worker not loaded after this long (or the parse timeout, if longer) is given up. */
const STARTUP_TIMEOUT_MS = 60_000;

/** Bodies up to this size (~0.1 s of parsing) go to the small bodies' worker. */
export const SMALL_BODY_BYTES = 64 * 1024;

export class YamlPool {
  private readonly timeoutMs: number;
  private readonly workers: WorkerPool;
  /** Bodies over SMALL_BODY_BYTES: `threads` workers, organizations served in turn. */
  private readonly large: FairQueue;
  /**
   * Smaller bodies have a worker of their own, so that a write of a few tens of KB never waits
   * behind a multi-second parse of a large body, whoever sent it; they too take turns.
   */
  private readonly small = new FairQueue(1);

  constructor(options: YamlPoolOptions = {}) {
    const threads = Math.max(1, options.threads ?? Math.min(4, Math.max(1, availableParallelism() - 1)));
    this.large = new FairQueue(threads);
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.workers = new WorkerPool(WORKER_URL, {
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 1024, stackSizeMb: 4 },
      keep: threads + 1,
      ready: (worker) => this.untilLoaded(worker),
    });
  }

  /**
   * Parses on a worker; `owner` (the organization) decides whose turn it is when all are busy.
   * `limit`: the body limit, which the value is held to with what its aliases repeat.
   */
  async parse(text: string, owner = '', limit = DEFAULT_BODY_LIMIT): Promise<Parsed> {
    const lane = text.length <= SMALL_BODY_BYTES ? this.small : this.large;
    await lane.acquire(owner);
    try {
      return await this.parseOnWorker(text, limit);
    } finally {
      lane.release();
    }
  }

  /** Parses waiting for a worker, over all organizations. */
  get queued(): number {
    return this.small.queued + this.large.queued;
  }

  /** Ends every worker; later parses start new ones. */
  close(): Promise<void> {
    return this.workers.close();
  }

  /**
   * A new worker loads its module first (from source, through tsx, seconds on a busy machine):
   * that time is not the parse's, so a parse's timeout starts once the worker says it is ready.
   */
  private untilLoaded(worker: Worker): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (loaded: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onFailure);
        worker.off('exit', onFailure);
        resolve(loaded);
      };
      const onMessage = (message: { ready?: boolean }) => {
        if (message?.ready === true) done(true);
      };
      const onFailure = () => done(false);
      const timer = setTimeout(onFailure, Math.max(this.timeoutMs, STARTUP_TIMEOUT_MS));
      timer.unref();
      worker.on('message', onMessage);
      worker.on('error', onFailure);
      worker.on('exit', onFailure);
    });
  }

  private async parseOnWorker(text: string, limit: number): Promise<Parsed> {
    const outcome = await this.workers.run<{ id: number } & Parsed>({ text, limit }, this.timeoutMs);
    switch (outcome.kind) {
      case 'answer': {
        const { id: _id, ...parsed } = outcome.message;
        return parsed as Parsed;
      }
      case 'error':
        return {
          error:
            outcome.error.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? 'Invalid YAML: the document needs too much memory to parse.'
              : `Invalid YAML: ${outcome.error.message}`,
        };
      case 'exit':
        return { error: 'Invalid YAML: the parser stopped unexpectedly.' };
      case 'timeout':
        return { error: 'Invalid YAML: the document took too long to parse.' };
    }
  }
}
