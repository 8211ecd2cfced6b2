import type { Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { RateLimiter } from '../rate/limiter.js';
import { state } from '../resource.js';

export interface RateLimits {
  /** GET and HEAD requests a minute per key; 0 or absent: unlimited. */
  readsPerMinute?: number;
  /** Other requests (writes) a minute per key; 0 or absent: unlimited. */
  writesPerMinute?: number;
}

/**
 * One key's rates, counted over every way in: the API, git over HTTP (a fetch reads, a push
 * writes) and the viewer's pages and writes. A key beyond its rate gets 429 and `Retry-After`,
 * before any body is read; requests then refused for other reasons count too, as hosted APIs
 * do. Counted per process: several processes on one data directory each allow the full rate.
 */
export class KeyRates {
  private readonly reads: RateLimiter | undefined;
  private readonly writes: RateLimiter | undefined;

  constructor(limits: RateLimits) {
    this.reads = limits.readsPerMinute ? new RateLimiter(limits.readsPerMinute) : undefined;
    this.writes = limits.writesPerMinute ? new RateLimiter(limits.writesPerMinute) : undefined;
  }

  /** Counts one request of `keyId`; throws the 429 beyond its rate. */
  take(keyId: string, reading: boolean, headers: Record<string, string> = {}): void {
    this.ask(keyId, reading, true, headers);
  }

  /**
   * Throws the 429 when `keyId` is beyond its rate, counting nothing: for a request that reads
   * nothing of the model and only asks whether a read would be taken (a live page's check of its
   * stream), which must neither spend the key's reads nor be a way around their limit.
   */
  check(keyId: string, reading: boolean): void {
    this.ask(keyId, reading, false, {});
  }

  private ask(keyId: string, reading: boolean, taking: boolean, headers: Record<string, string>): void {
    const limiter = reading ? this.reads : this.writes;
    if (!limiter) return;
    const waitSeconds = taking ? limiter.take(keyId) : limiter.peek(keyId);
    if (waitSeconds > 0) {
      throw new ApiError(
        429,
        `Rate limit exceeded: this key may make ${limiter.perMinute} ${reading ? 'reads' : 'writes'} a minute; retry in ${waitSeconds} s.`,
        { ...headers, 'Retry-After': String(waitSeconds) },
      );
    }
  }
}

export function isReading(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** The API's: runs after authentication (the key is known). */
export function rateLimit(rates: KeyRates): Middleware {
  return async (ctx, next) => {
    rates.take(state(ctx).key.id, isReading(ctx.method));
    await next();
  };
}
