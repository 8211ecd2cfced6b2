import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { ApiError } from '../errors.js';
import type { Static, TSchema } from 'typebox';
import { checkBody } from '../model/check-body.js';
import { ignoredFields } from '../model/ignored-fields.js';

/** Names the fields of a write's body that were ignored, so that a misspelt `descr` does not go unnoticed. */
export const IGNORED_FIELDS_HEADER = 'C4store-Ignored-Fields';

/** A response header stays far below what clients accept (Node's default for all headers: 16 KB). */
const MAX_HEADER_BYTES = 4000;
const MAX_PATH_CHARS = 200;

/** A path as a header can carry it: field names percent-encoded like URL components, long ones cut. */
function headerSafe(path: string): string {
  const encoded = path.split('.').map(encodeURIComponent).join('.');
  return encoded.length > MAX_PATH_CHARS ? `${encoded.slice(0, MAX_PATH_CHARS)}...` : encoded;
}

/**
 * The request body checked against `schema` (a SchemaError when it does not fit). Before the
 * check, so that a refusal carries it too, the response gets `C4store-Ignored-Fields` listing
 * the fields the schema does not know: `0.componentId, 2.descr` (`, ...` when cut short).
 * `known`: the body as clients may send it, when that names more than `schema` checks (the
 * seed's diagrams take `fromRef`/`toRef`, turned into the seed's spelling before the check).
 */
export function checkRequestBody<S extends TSchema>(ctx: Context, schema: S, known: TSchema = schema): Static<S> {
  reportIgnoredFields(ctx, known, ctx.request.body);
  return checkBody(schema, ctx.request.body);
}

/**
 * Sets `C4store-Ignored-Fields` to the fields of `body` that `known` does not declare, for a write
 * whose body is checked further in (the current form's, against its element schemas).
 */
export function reportIgnoredFields(ctx: Context, known: TSchema, body: unknown): void {
  const { paths, more } = ignoredFields(known, body);
  if (paths.length > 0) {
    let header = '';
    let cut = more;
    for (const path of paths) {
      const entry = (header === '' ? '' : ', ') + headerSafe(path);
      if (header.length + entry.length > MAX_HEADER_BYTES) {
        cut = true;
        break;
      }
      header += entry;
    }
    ctx.set(IGNORED_FIELDS_HEADER, cut ? `${header}, ...` : header);
  }
}

/**
 * A small body (a viewer's form) read whole, or a 413 once it passes `limit` bytes. It stops
 * reading there without destroying the request: the answer must still reach a client that is
 * busy writing, and the rest is read and discarded by lingering close (connections/linger.ts).
 */
export function readSmallBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new ApiError(413, 'Request body too large.', { Connection: 'close' });
  if (Number(req.headers['content-length']) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (settle: () => void) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      req.pause();
      settle();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stop(() => reject(tooLarge()));
      else chunks.push(chunk);
    };
    const onEnd = () => stop(() => resolve(Buffer.concat(chunks)));
    const onError = (err: Error) => stop(() => reject(err));
    const onAborted = () => stop(() => reject(new ApiError(400, 'The request body was cut off.')));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
