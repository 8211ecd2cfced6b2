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
 * Refuses a key's request beyond its rate with 429 and `Retry-After`, before the body is read.
 * Runs after authentication (the key is known) and counts requests that are then refused for
 * other reasons too, as hosted APIs do. Counted per process: several processes on one data
 * directory each allow the full rate.
 */
export function rateLimit(limits: RateLimits): Middleware {
  const reads = limits.readsPerMinute ? new RateLimiter(limits.readsPerMinute) : undefined;
  const writes = limits.writesPerMinute ? new RateLimiter(limits.writesPerMinute) : undefined;
  return async (ctx, next) => {
    const reading = ctx.method === 'GET' || ctx.method === 'HEAD';
    const limiter = reading ? reads : writes;
    if (limiter) {
      const waitSeconds = limiter.take(state(ctx).key.id);
      if (waitSeconds > 0) {
        throw new ApiError(
          429,
          `Rate limit exceeded: this key may make ${limiter.perMinute} ${reading ? 'reads' : 'writes'} a minute; retry in ${waitSeconds} s.`,
          { 'Retry-After': String(waitSeconds) },
        );
      }
    }
    await next();
  };
}
