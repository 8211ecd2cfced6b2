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

/** The refusal of a read while the key's clients leave more than `bytesPerKey` unread (the API's and /mcp's). */
export function tooManyUnreadBytes(): ApiError {
  return new ApiError(503, "Too many response bytes are waiting for this key's clients to read them; retry shortly.", {
    'Retry-After': '1',
  });
}
export const DEFAULT_SEND_TIMEOUT = 60_000;

/**
 * Slow readers: a client that stops reading its answer keeps the answer's bytes in memory.
 * Each response body is counted against its key until it has been handed over (or the
 * connection is gone), and cut off, connection closed, when it takes longer than the send
 * timeout. A body is counted once however many of the key's responses carry it: answers
 * served from a snapshot share one buffer (respond.ts), so sixteen clients reading the same
 * model hold it once, while sixteen paused readers of freshly built pages hold sixteen.
 */
export function boundSends(bounds: SendBounds): Middleware {
  const held = new Map<string, { bytes: number; bodies: Map<Buffer, number> }>();
  return async (ctx, next) => {
    await next();
    const body = ctx.body;
    if (!Buffer.isBuffer(body) || ctx.method === 'HEAD') return;
    const key = state(ctx).key.id;
    const mine = held.get(key) ?? { bytes: 0, bodies: new Map<Buffer, number>() };
    const added = mine.bodies.has(body) ? 0 : body.length;
    // Writes have been done by now: their (small) answers are counted, never refused.
    if (ctx.method === 'GET' && mine.bytes > 0 && mine.bytes + added > bounds.bytesPerKey) {
      throw tooManyUnreadBytes();
    }
    mine.bodies.set(body, (mine.bodies.get(body) ?? 0) + 1);
    mine.bytes += added;
    held.set(key, mine);
    const socket = ctx.req.socket;
    const timer = setTimeout(() => socket.destroy(), bounds.timeoutMs);
    ctx.res.once('close', () => {
      clearTimeout(timer);
      const count = (mine.bodies.get(body) ?? 1) - 1;
      if (count > 0) {
        mine.bodies.set(body, count);
        return;
      }
      mine.bodies.delete(body);
      mine.bytes -= body.length;
      if (mine.bodies.size === 0) held.delete(key);
    });
  };
}
