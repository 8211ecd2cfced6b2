import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** Requests that sent `Expect: 100-continue` and have not been invited to send their body yet. */
const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * The server's `checkContinue` listener. Without one, Node answers `100 Continue` as soon as
 * the headers arrive, so a client (curl, for one) uploads a body that is then refused by its
 * headers alone. With it, the request goes through the app like any other and `100 Continue`
 * is sent only by `inviteBody`, when the body is about to be read; a refusal decided by the
 * headers (404, 405, 401, 403, 413, 415, 429) is the final answer instead, and Node closes the
 * connection after it (the client may then still send the body; see linger.ts).
 */
export function checkContinue(handle: RequestListener): RequestListener {
  return (req, res) => {
    awaitingContinue.add(req);
    handle(req, res);
  };
}

/** Sends `100 Continue` if the client waits for it: the request's body will be read now. */
export function inviteBody(req: IncomingMessage, res: ServerResponse): void {
  if (awaitingContinue.delete(req)) res.writeContinue();
}
