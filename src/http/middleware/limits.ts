import type { Middleware } from 'koa';
import { checkWriteSize, type Limits } from '../../limits/limits.js';

/** Refuses a write asking for more elements than the limit, before it waits for the lock. */
export function limitWriteSize(limits: Limits): Middleware {
  return async (ctx, next) => {
    checkWriteSize(ctx.request.body, limits);
    await next();
  };
}
