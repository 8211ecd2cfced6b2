import type { Middleware } from 'koa';

/** One line per request: method, path (never the query, which may carry a key by mistake), status, ms, org. */
export function requestLog(log: (line: string) => void): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = (performance.now() - started).toFixed(1);
      log(`${ctx.method} ${ctx.path} ${ctx.status} ${ms}ms ${ctx.state.org?.slug ?? '-'}`);
    }
  };
}
