/**
 * Leaving a load balancer's pool without dropping anything. A stop runs in three steps:
 *
 * 1. draining: `/healthz` answers 503, so the balancer stops choosing this instance; requests
 *    that still arrive are served as usual, each answer with `Connection: close` (clients and
 *    the balancer reconnect, to another instance). This lasts `delayMs`, long enough for the
 *    balancer's health checks to notice (HAProxy: `inter` × `fall`).
 * 2. no new connections: the listening socket closes, idle connections are closed. Closing it at
 *    once instead would reset connections still in the kernel's accept queue, requests sent on
 *    them included: the balancer would answer those 502.
 * 3. in flight: requests already received, writes among them, run to their answer, for at most
 *    `timeoutMs`; whatever is left then is cut off. Answers that never end by themselves (live
 *    event streams) are ended at step 2: their clients resume elsewhere, missing nothing.
 */
import type { RequestListener, Server, ServerResponse } from 'node:http';

export interface DrainTimes {
  /** How long the instance keeps serving while it tells the balancer it is leaving (step 1). */
  delayMs: number;
  /** How long requests in flight may still take once it stopped accepting (step 3). */
  timeoutMs: number;
}

/** How each endless answer ends cleanly (endWhenStopping). */
const endless = new WeakMap<ServerResponse, () => void>();
/** The drain tracking each answer (Drain.track). */
const drainOf = new WeakMap<ServerResponse, Drain>();

/**
 * Marks `res` as an answer that never ends by itself (a live event stream): a stop ends it with
 * `end` once it no longer accepts connections, rather than waiting out its timeout for it and
 * then counting it as cut off.
 */
export function endWhenStopping(res: ServerResponse, end: () => void): void {
  endless.set(res, end);
  // A stream that begins once the stop has ended the others (its request came just before) ends now.
  if (drainOf.get(res)?.endedEndless) end();
}

export const DEFAULT_DRAIN_DELAY_MS = 5_000;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

export class Drain {
  private readonly answering = new Set<ServerResponse>();
  private whenIdle: (() => void) | undefined;
  private started = false;
  /** From step 2 on: endless answers are ended, those that begin later too. */
  endedEndless = false;

  /** True from the first step on: `/healthz` answers 503. */
  get draining(): boolean {
    return this.started;
  }

  get requestsInFlight(): number {
    return this.answering.size;
  }

  /** Wraps the server's request listener: counts requests until their answer is done or abandoned. */
  track(handle: RequestListener): RequestListener {
    return (req, res) => {
      this.answering.add(res);
      drainOf.set(res, this);
      res.once('close', () => {
        this.answering.delete(res);
        if (this.answering.size === 0) this.whenIdle?.();
      });
      if (this.started) res.setHeader('Connection', 'close');
      handle(req, res);
    };
  }

  /**
   * Runs the three steps on `server`; resolves with the number of requests cut off at the
   * timeout (0 when everything in flight got its answer).
   */
  async run(server: Server, times: DrainTimes): Promise<number> {
    this.started = true;
    for (const res of this.answering) if (!res.headersSent) res.setHeader('Connection', 'close');
    if (times.delayMs > 0) await sleep(times.delayMs);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    this.endedEndless = true;
    for (const res of this.answering) endless.get(res)?.();
    const idle = new Promise<void>((resolve) => {
      this.whenIdle = resolve;
      if (this.answering.size === 0) resolve();
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), times.timeoutMs)));
    const outcome = await Promise.race([idle, timedOut]);
    clearTimeout(timer);
    const cutOff = outcome === 'timeout' ? this.answering.size : 0;
    // Keep-alive connections whose last answer went out before the drain began, lingering reads.
    server.closeAllConnections();
    await closed;
    return cutOff;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
