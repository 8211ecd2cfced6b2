import type { RequestListener, Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionCaps {
  /** Open connections of the whole server. */
  total: number;
  /** Open connections from one client address: below `total`, so one client leaves room for others. */
  perAddress: number;
}

export const DEFAULT_MAX_CONNECTIONS = 1000;
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 100;

/** A connection over a cap gets this long to send its request and read the refusal. */
const REFUSED_GRACE_MS = 2000;

/** Connections over a cap, with the refusal they get. */
const refused = new WeakMap<Socket, string>();

/**
 * Caps the open connections, in total and per client address (every connection counts until
 * it is closed, lingering ones included). A connection over a cap is not served: its first
 * request is answered `503` with `Retry-After` and the connection closed, and one that sends
 * nothing is closed after REFUSED_GRACE_MS. Returns `guard`, which wraps the request listener.
 */
export function capConnections(server: Server, caps: ConnectionCaps): { guard: (handle: RequestListener) => RequestListener } {
  let open = 0;
  const byAddress = new Map<string, number>();
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const fromAddress = byAddress.get(address) ?? 0;
    if (open >= caps.total || fromAddress >= caps.perAddress) {
      refused.set(
        socket,
        open >= caps.total ? 'Too many open connections; retry shortly.' : 'Too many open connections from this address; retry shortly.',
      );
      setTimeout(() => socket.destroy(), REFUSED_GRACE_MS).unref();
      return;
    }
    open++;
    byAddress.set(address, fromAddress + 1);
    socket.once('close', () => {
      open--;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left > 0) byAddress.set(address, left);
      else byAddress.delete(address);
    });
  });
  return {
    guard: (handle) => (req, res) => {
      const refusal = refused.get(req.socket);
      if (refusal === undefined) return handle(req, res);
      const body = JSON.stringify({ error: refusal });
      res.writeHead(503, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        'Retry-After': '1',
        Connection: 'close',
      });
      res.end(body);
    },
  };
}
