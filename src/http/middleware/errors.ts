import type { Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { SchemaError } from '../../model/check-body.js';
import { sendError } from '../respond.js';
import { redactKeys } from './log.js';

/** Koa's, the body reader's and the router's own errors, in the contract's words. */
function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof SchemaError) return new ApiError(400, err.message);
  const e = err as { status?: unknown; type?: unknown; message?: unknown };
  if (e?.type === 'entity.too.large' || e?.status === 413) return new ApiError(413, 'Request body too large.');
  if (e?.type === 'encoding.unsupported' || e?.status === 415) return new ApiError(415, `Unsupported Content-Encoding.`);
  if (e?.status === 405 || e?.status === 501) return new ApiError(405, 'Method not allowed.');
  if (e?.status === 404) return new ApiError(404, 'Not found.');
  if (e?.status === 400 && err instanceof SyntaxError) return new ApiError(400, `Invalid JSON: ${err.message}`);
  if (e?.type === 'request.aborted') return new ApiError(400, 'Request aborted.');
  if (typeof (e as { code?: unknown })?.code === 'string' && (e as { code: string }).code.startsWith('Z_')) {
    return new ApiError(400, 'The request body could not be decompressed.');
  }
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
