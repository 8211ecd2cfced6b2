import type { Middleware } from 'koa';
import { canDrainAfterAnswer, discardAtMost, type LingerSettings } from '../connections/linger.js';

/**
 * An answer given before the request's body was read to its end keeps the connection open when
 * the rest of the body is declared small enough to be read and discarded (the client can go on
 * using the connection); otherwise it says `Connection: close`, and the connection lingers
 * (connections/linger.ts). Runs outside the errors middleware, so it sees every answer.
 */
export function closeAfterUnreadBody(settings: LingerSettings): Middleware {
  return async (ctx, next) => {
    await next();
    if (!canDrainAfterAnswer(ctx.req, settings)) {
      ctx.set('Connection', 'close');
      discardAtMost(ctx.req, settings.bytes);
    }
  };
}
