import { Transform } from 'node:stream';

/**
 * Every push over HTTP is atomic: all its ref updates happen, or none does (CONTRACT §1.3: a
 * refused push changes nothing).
 *
 * The pre-receive hook checks a push's updates together (a version tag may name the commit the
 * same push brings to `main`), but receive-pack then moves each ref in a transaction of its own,
 * unless the client asked for `atomic`, which git's client does only with `git push --atomic`.
 * `main` moved by an API write while the pack was on its way (or between the hook and the move)
 * is refused at that last step ("cannot lock ref … is at … but expected …") while the tag of the
 * same push was made, on a commit that never reached `main`; a draft of the same push was
 * opened. So the capability is asked for on the client's behalf: receive-pack advertises it to
 * every client, and reports each ref of a failed atomic push as refused.
 */

/** The most a pkt-line may carry (git's LARGE_PACKET_DATA_MAX). */
const MAX_PAYLOAD = 65516;
/**
 * How much of a body is held while looking for its first command: shallow lines of 53 bytes
 * before it, and the command itself. Past this, the body is let through unchanged rather than
 * held (a request of 256 MB of shallow lines is no push worth waiting for).
 */
const MAX_HEAD = 1024 * 1024;

/**
 * The request body of `git-receive-pack` with `atomic` among the capabilities of its first command
 * (or of its `push-cert` line). Everything else, the pack included, passes as it came; a body
 * that is no well-formed request passes unchanged, for receive-pack to refuse.
 */
export function atomicPushRequest(): Transform {
  let head: Buffer | null = Buffer.alloc(0);
  const release = (transform: Transform, body: Buffer) => {
    head = null;
    transform.push(body);
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (head === null) {
        done(null, chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const rewritten = withAtomic(head);
      if (rewritten !== undefined) release(this, rewritten);
      else if (head.length > MAX_HEAD) release(this, head);
      done();
    },
    flush(done) {
      if (head !== null && head.length > 0) release(this, head);
      done();
    },
  });
}

/**
 * `body` with `atomic` asked for, or `body` itself when there is nothing to ask it of;
 * undefined while the line that carries the capabilities has not all come.
 */
export function withAtomic(body: Buffer): Buffer | undefined {
  let at = 0;
  for (;;) {
    if (body.length < at + 4) return undefined;
    const hex = body.subarray(at, at + 4).toString('latin1');
    if (!/^[0-9a-f]{4}$/i.test(hex)) return body;
    const length = Number.parseInt(hex, 16);
    // A flush (no commands: nothing to update) or a length no pkt-line has.
    if (length < 4) return body;
    if (body.length < at + length) return undefined;
    const payload = body.subarray(at + 4, at + length);
    // A shallow clone's push names its shallow commits before its commands.
    if (payload.subarray(0, 8).toString('latin1') === 'shallow ') {
      at += length;
      continue;
    }
    const replaced = payloadWithAtomic(payload);
    if (replaced === payload || replaced.length > MAX_PAYLOAD) return body;
    const line = Buffer.concat([Buffer.from((replaced.length + 4).toString(16).padStart(4, '0')), replaced]);
    return Buffer.concat([body.subarray(0, at), line, body.subarray(at + length)]);
  }
}

/** `old new ref\0caps\n` (or `push-cert\0caps\n`) with `atomic` among the caps. */
function payloadWithAtomic(payload: Buffer): Buffer {
  const newline = payload[payload.length - 1] === 0x0a ? 1 : 0;
  const line = payload.subarray(0, payload.length - newline);
  const nul = line.indexOf(0);
  const command = nul < 0 ? line : line.subarray(0, nul);
  const capabilities = nul < 0 ? '' : line.subarray(nul + 1).toString('latin1');
  if (capabilities.split(' ').includes('atomic')) return payload;
  const asked = capabilities === '' ? 'atomic' : `${capabilities} atomic`;
  return Buffer.concat([command, Buffer.from(`\0${asked}`, 'latin1'), payload.subarray(payload.length - newline)]);
}
