import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import YAML from 'yaml';
import { ApiError } from '../../errors.js';
import { YAML_TYPES } from '../respond.js';

/**
 * Reads a write's body as JSON or YAML (by Content-Type) into `ctx.request.body`. YAML is
 * parsed with alias expansion limited, so an alias bomb is refused instead of exhausting memory.
 */
export function parseBody(limitBytes: number): Middleware {
  const read = koaBody({
    json: true,
    text: true,
    urlencoded: false,
    multipart: false,
    jsonStrict: false,
    jsonLimit: limitBytes,
    textLimit: limitBytes,
    jsonTypes: ['json', '+json'],
    textTypes: YAML_TYPES,
    parsedMethods: ['POST', 'PUT'] as never,
  });
  return async (ctx, next) => {
    const type = ctx.request.type;
    const yaml = YAML_TYPES.includes(type);
    if (!yaml && type !== 'application/json' && !type.endsWith('+json')) {
      throw new ApiError(415, `Unsupported Content-Type: ${type || '(none)'}.`);
    }
    await read(ctx, async () => {});
    const raw: unknown = ctx.request.body;
    if (yaml) {
      ctx.request.body = parseYaml(typeof raw === 'string' ? raw : '') as typeof ctx.request.body;
    } else if (raw === '' || raw === undefined) {
      throw new ApiError(400, 'Invalid JSON: the request body is empty.');
    }
    await next();
  };
}

function parseYaml(text: string): unknown {
  if (text.trim() === '') throw new ApiError(400, 'Invalid YAML: the request body is empty.');
  const doc = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) throw new ApiError(400, `Invalid YAML: ${doc.errors[0].message}`);
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new ApiError(400, `Invalid YAML: ${(err as Error).message}`);
  }
}
