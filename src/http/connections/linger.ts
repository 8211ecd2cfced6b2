import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface LingerSettings {
  /** Longest time a connection is kept reading after its answer went out (ms). */
  ms: number;
  /** Most bytes read and discarded after the answer went out. */
  bytes: number;
}

export const DEFAULT_LINGER_MS = 5_000;

/** The request a connection is answering now. */
const currentRequest = new WeakMap<Socket, IncomingMessage>();

function hasUnreadBody(req: IncomingMessage | undefined): req is IncomingMessage {
  return (
    req !== undefined && !req.complete && (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)
  );
}

/**
 * Whether an answer to `req` may leave the connection open: its body, not read to the end, is
 * declared small enough to be read and discarded after the answer. Otherwise the answer says
 * `Connection: close` and the connection lingers.
 */
export function canDrainAfterAnswer(req: IncomingMessage, settings: LingerSettings): boolean {
  if (!hasUnreadBody(req)) return true;
  const declared = Number(req.headers['content-length']);
  return req.headers['transfer-encoding'] === undefined && Number.isFinite(declared) && declared <= settings.bytes;
}

/**
 * Lingering close, as nginx and Apache do it. An answer that goes out before the request's body
 * has fully arrived (a refusal decided by the headers, or a body cut off at the limit) must
 * still reach a client that is busy writing: if the server closed at once, the client's next
 * write would fail (EPIPE, or a reset that discards the answer unread) and many clients report
 * only that. So:
 * - an answer with `Connection: close` is followed by a half-close (FIN after the answer), and
 *   the connection keeps reading and discarding until the client is done, at most `ms`, and at
 *   most `bytes` from the moment the answer was decided (discardAtMost); then it is closed;
 * - an answer on a kept-alive connection (body declared at most `bytes`) lets Node read and
 *   discard the rest of the body as it does; if that takes longer than `ms` the connection
 *   is closed.
 * Either way the connection stays counted in the connection caps until it is closed.
 */
export function lingerBeforeClose(server: Server, settings: LingerSettings): void {
  const watch = (req: IncomingMessage, res: ServerResponse) => {
    // Held from the start: once a request is destroyed (a reader that stopped early), Node
    // sets its `socket` to null, and these listeners run outside Koa's error handling, where
    // a throw ends the process.
    const socket = req.socket;
    currentRequest.set(socket, req);
    res.once('finish', () => {
      if (!hasUnreadBody(req) || socket.destroyed) return;
      const done = () => {
        clearTimeout(timer);
        req.off('end', done);
        socket.off('close', done);
      };
      const timer = setTimeout(() => {
        done();
        if (!req.complete) socket.destroy();
      }, settings.ms);
      req.once('end', done);
      socket.once('close', done);
    });
  };
  server.prependListener('request', watch);
  server.prependListener('checkContinue', watch);
  server.prependListener('checkExpectation', watch);
  server.on('connection', (socket: Socket) => {
    // Node calls destroySoon() once an answer with `Connection: close` is written.
    const closeNow = socket.destroySoon.bind(socket);
    socket.destroySoon = () => {
      const req = currentRequest.get(socket);
      if (!hasUnreadBody(req)) return closeNow();
      linger(socket, req, settings);
    };
  });
}

function linger(socket: Socket, req: IncomingMessage, settings: LingerSettings): void {
  socket.end();
  const stop = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(stop, settings.ms);
  // The client has sent all it meant to: nothing left to read, so the close is clean.
  if (req.complete) {
    stop();
    return;
  }
  req.once('end', stop);
  socket.once('close', stop);
}

/**
 * Reads and discards the rest of `req`'s body from now on, closing the connection once more
 * than `bytes` have come: the byte bound of lingering. Counted chunk by chunk as the parser
 * hands them over, so no burst gets past it.
 */
export function discardAtMost(req: IncomingMessage, bytes: number): void {
  const socket = req.socket;
  if (socket === null || req.destroyed) return;
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > bytes) socket.destroy();
  });
  req.resume();
}
