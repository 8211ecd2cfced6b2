import type { Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { state } from '../resource.js';

export interface SendBounds {
  /**
   * Bytes of one key's responses that its clients have not taken yet (still in this process,
   * not yet handed to the kernel). A read that would go beyond is answered 503; one response
   * is always allowed, however large, so every resource can be read.
   */
  bytesPerKey: number;
  /** A response not handed to the client completely this long after it began is cut off (ms). */
  timeoutMs: number;
}

export const DEFAULT_SEND_BYTES_PER_KEY = 32 * 1024 * 1024;
export const DEFAULT_SEND_TIMEOUT = 60_000;

/**
 * Slow readers: a client that stops reading its answer keeps the answer's bytes in memory.
 * Each response is counted against its key until it has been handed over (or the connection
 * is gone), and cut off, connection closed, when it takes longer than the send timeout.
 */
export function boundSends(bounds: SendBounds): Middleware {
  const inFlight = new Map<string, number>();
  return async (ctx, next) => {
    await next();
    const body = ctx.body;
    if (!Buffer.isBuffer(body) || ctx.method === 'HEAD') return;
    const key = state(ctx).key.id;
    const held = inFlight.get(key) ?? 0;
    // Writes have been done by now: their (small) answers are counted, never refused.
    if (ctx.method === 'GET' && held > 0 && held + body.length > bounds.bytesPerKey) {
      throw new ApiError(503, "Too many response bytes are waiting for this key's clients to read them; retry shortly.", {
        'Retry-After': '1',
      });
    }
    inFlight.set(key, held + body.length);
    const socket = ctx.req.socket;
    const timer = setTimeout(() => socket.destroy(), bounds.timeoutMs);
    ctx.res.once('close', () => {
      clearTimeout(timer);
      const left = (inFlight.get(key) ?? 0) - body.length;
      if (left > 0) inFlight.set(key, left);
      else inFlight.delete(key);
    });
  };
}
