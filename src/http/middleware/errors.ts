import type { Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { SchemaError } from '../../model/check-body.js';
import { sendError } from '../respond.js';
import { redactKeys } from './log.js';

/** Our own errors, and Koa's and the router's, in the contract's words. */
export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof SchemaError) return new ApiError(400, err.message);
  const status = (err as { status?: unknown })?.status;
  if (status === 405 || status === 501) return new ApiError(405, 'Method not allowed.');
  if (status === 404) return new ApiError(404, 'Not found.');
  return undefined;
}

export function errors(log: (line: string) => void): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null) {
        if (ctx.status === 404) throw new ApiError(404, 'Not found.');
        if (ctx.status === 405 || ctx.status === 501) throw new ApiError(405, 'Method not allowed.');
      }
    } catch (err) {
      const known = toApiError(err);
      if (!known) log(redactKeys(`error ${ctx.method} ${ctx.path}: ${(err as Error)?.stack ?? String(err)}`));
      const error = known ?? new ApiError(500, 'Internal error.');
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      sendError(ctx, error.status, error.message);
    }
  };
}
