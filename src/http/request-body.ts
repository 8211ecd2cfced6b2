import type { Context } from 'koa';
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
 */
export function checkRequestBody<S extends TSchema>(ctx: Context, schema: S): Static<S> {
  const { paths, more } = ignoredFields(schema, ctx.request.body);
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
  return checkBody(schema, ctx.request.body);
}
