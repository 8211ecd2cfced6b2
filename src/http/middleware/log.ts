import type { Middleware } from 'koa';

// The shape of an API key (src/store/keys.ts). A client that puts its key into a URL by
// mistake must not find it in the server's log.
const KEY_LIKE = /c4s_[A-Za-z0-9_-]{20,}/g;

// A share link's token (src/share/links.ts) is the path itself: whoever reads the log must not be able to open it.
const SHARE_TOKEN = /(\/share\/)[A-Za-z0-9_-]{43}/g;

/** `text` with anything shaped like an API key replaced by `c4s_[redacted]`, and share tokens by `[redacted]`. */
export function redactKeys(text: string): string {
  return text.replace(KEY_LIKE, 'c4s_[redacted]').replace(SHARE_TOKEN, '$1[redacted]');
}

/**
 * One line per request: method, path (never the query, which may carry a key by mistake, and
 * with key-shaped parts redacted), status, ms, org.
 */
export function requestLog(log: (line: string) => void): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = (performance.now() - started).toFixed(1);
      log(`${ctx.method} ${redactKeys(ctx.path)} ${ctx.status} ${ms}ms ${ctx.state.org?.slug ?? '-'}`);
    }
  };
}
