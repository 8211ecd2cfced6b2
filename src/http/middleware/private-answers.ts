import type { Middleware } from 'koa';

/**
 * Every answer may depend on the key that asked (which organization, which role), and keys
 * travel in `x-api-key` and viewer cookies, which shared caches do not treat as credentials: a
 * reverse proxy's default cache would otherwise hand one organization's model to another's key.
 * So answers are for the asking client only (`private`), revalidated before each reuse
 * (`no-cache`: the ETag and `If-None-Match` → 304 keep reuse cheap), and `Vary` names every
 * header a key or the answer's form comes in. An answer that chose its own `Cache-Control`
 * (the viewer's pages: `no-store`) keeps it. Runs outside the errors middleware: refusals too.
 */
export const PRIVATE_CACHE_CONTROL = 'private, no-cache';
export const PRIVATE_VARY = ['Accept', 'Authorization', 'x-api-key', 'Cookie'] as const;

export const privateAnswers: Middleware = async (ctx, next) => {
  try {
    await next();
  } finally {
    // git over HTTP and streamed answers may have sent their headers already.
    if (!ctx.headerSent) {
      if (!ctx.res.hasHeader('Cache-Control')) ctx.set('Cache-Control', PRIVATE_CACHE_CONTROL);
      for (const name of PRIVATE_VARY) ctx.vary(name);
    }
  }
};
