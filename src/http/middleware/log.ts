import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import pino, { type Logger } from 'pino';

// The shape of an API key (src/store/keys.ts). A client that puts its key into a URL by
// mistake must not find it in the server's log.
const KEY_LIKE = /c4s_[A-Za-z0-9_-]{20,}/g;

// A share link's token (src/share/links.ts) is the path itself: whoever reads the log must not be
// able to open it, nor come near it. Everything after `/share/` goes (a token cut short, or
// several, `/share/<token>/../<token>`), but the drawing's suffix.
const SHARE_TOKEN = /(\/share\/)[^?#\s"]*?(\.svg|\.png)?(?=[?#\s"]|$)/g;

/** `text` with anything shaped like an API key replaced by `c4s_[redacted]`, and share tokens by `[redacted]`. */
export function redactKeys(text: string): string {
  return text.replace(KEY_LIKE, 'c4s_[redacted]').replace(SHARE_TOKEN, '$1[redacted]$2');
}

/**
 * The server's logger: one JSON object a line (pino), with the level as a word, the time in ISO
 * 8601, and the process id and host name, so the lines of several instances can be told apart.
 * `sink` receives each line without its newline (tests keep them); by default they go to stdout.
 */
export function createLogger(sink?: (line: string) => void): Logger {
  const destination = sink ? { write: (line: string) => sink(line.endsWith('\n') ? line.slice(0, -1) : line) } : process.stdout;
  return pino(
    {
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** A request id a client or a proxy sent is kept when it looks like one: no spaces, no control characters, not huge. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The request's id: its `X-Request-Id` when acceptable, else a new UUID. */
export function requestIdOf(ctx: Context): string {
  const given = ctx.get(REQUEST_ID_HEADER);
  return ACCEPTABLE_REQUEST_ID.test(given) && !given.includes('c4s_') ? given : randomUUID();
}

/**
 * Notes the route of `router` that serves the request, as the router wrote it
 * (`/api/external/tag/:id`), before the router runs: a request refused on the way (401, 429)
 * still counts under the route it asked for. Placed before each router's own middleware.
 */
export function noteRoute(router: Router): Middleware {
  return async (ctx, next) => {
    if (ctx.state.route === undefined) {
      const layer = router.match(ctx.path, ctx.method).pathAndMethod.findLast((l) => l.methods.length > 0);
      if (layer) ctx.state.route = layer.path;
    }
    await next();
  };
}

/**
 * What logs and metrics group a request by: its route, `/git/*` for git over HTTP, undefined
 * when nothing serves the path (the log line still has the path; metrics count it as `unmatched`).
 */
export function routeOf(ctx: Context): string | undefined {
  const noted = ctx.state.route as string | undefined;
  if (noted !== undefined) return noted;
  return ctx.path.startsWith('/git/') ? '/git/*' : undefined;
}

/**
 * One JSON line per request: its id (echoed in `X-Request-Id`), method, route, path (never the
 * query, which may carry a key by mistake, and with key-shaped parts redacted), status, duration,
 * organization and key id (never the key).
 *
 * Written once Koa has handed the answer to the socket, not before: the line (~0.06 ms of a
 * write's ~3 ms) is not on the client's way. In the same turn of the event loop (a next tick of
 * the middleware's end, which comes after Koa's response in the same run of microtasks), so the
 * line is there before anything else can run, a client of the same process included.
 */
export function requestLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const requestId = requestIdOf(ctx);
    ctx.state.requestId = requestId;
    ctx.set(REQUEST_ID_HEADER, requestId);
    try {
      await next();
    } finally {
      process.nextTick(() => {
        const path = redactKeys(ctx.path);
        try {
          logger.info(
            {
              requestId,
              method: ctx.method,
              route: routeOf(ctx),
              path,
              status: ctx.status,
              ms: Math.round((performance.now() - started) * 10) / 10,
              org: ctx.state.org?.slug,
              keyId: ctx.state.key?.id,
            },
            `${ctx.method} ${path} ${ctx.status}`,
          );
        } catch {
          // The answer is out. A line that cannot be written (standard output on a full disk, a
          // closed pipe) is lost, as it would be anyway: thrown here, outside any request, it
          // would end the process.
        }
      });
    }
  };
}
