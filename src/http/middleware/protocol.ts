import type { Middleware } from 'koa';
import { ApiError } from '../../errors.js';

/**
 * Refusals HTTP/1.1 requires of a server. Two Node makes by itself, before any handler runs,
 * with a bodiless answer: a request without `Host` (RFC 9112 §3.2: 400) and an `Expect`
 * other than `100-continue` (RFC 9110 §10.1.1: 417). The server hands both to the app instead
 * (server.ts: `requireHostHeader: false`, a `checkExpectation` listener), so that they are
 * answered here in the contract's form, with the headers every answer carries. HTTP/1.0 has
 * neither rule: it has no `Host` requirement, and Node ignores its `Expect`. The third Node
 * lets through: a request that names its Host twice (RFC 9112 §3.2: 400, whatever the version).
 */
export const protocolRequirements: Middleware = async (ctx, next) => {
  // Node keeps the first of two and drops the other; which one a proxy in front went by is anyone's guess.
  if (hostLines(ctx.req.rawHeaders) > 1) throw new ApiError(400, 'Bad request: a request names its Host once.');
  if (ctx.req.httpVersion === '1.1') {
    if (ctx.req.headers.host === undefined) throw new ApiError(400, 'Bad request: an HTTP/1.1 request must name its Host.');
    // An empty `Expect` lists no expectation (RFC 9110 §5.6.1), though Node hands it here too.
    const expect = ctx.req.headers.expect?.trim() || undefined;
    // Node's own test of an `Expect` it takes for 100-continue (its `checkContinue` event).
    if (expect !== undefined && !/(?:^|\W)100-continue(?:$|\W)/i.test(expect)) {
      throw new ApiError(417, `Expectation '${expect}' cannot be met: the only one this server knows is 100-continue.`);
    }
  }
  await next();
};

function hostLines(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'host') count++;
  return count;
}
