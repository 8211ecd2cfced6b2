import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { ErrorResponse } from '../../src/openapi/responses.js';
import { ROUTES, type RouteDoc } from '../../src/openapi/routes.js';

/**
 * Checks every reply the HTTP tests receive against the schema the OpenAPI document gives for
 * its route (src/openapi/routes.ts, the same table the document is built from): a 200 against
 * the route's response schema, a 201 against its created schema, any error against the error object. Replies of routes the table
 * does not know (unknown paths) are checked as errors only.
 */

const compiled = new WeakMap<TSchema, Validator>();
const validator = (schema: TSchema) => {
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = Compile(schema) as Validator));
  return v;
};

const matchers = ROUTES.map((route) => ({
  route,
  pattern: new RegExp(`^${route.absolute ? '' : '/api/external'}${route.path.replace(/:[A-Za-z]+/g, '[^/]+')}/?$`),
}));

function routeOf(method: string, path: string): RouteDoc | undefined {
  const bare = path.split('?')[0];
  return matchers.find((m) => m.route.method === method && m.pattern.test(bare))?.route;
}

/** Why `body` does not fit the documented answer, or undefined when it does. */
export function undocumented(method: string, path: string, status: number, contentType: string, body: unknown): string | undefined {
  if (!/json|yaml/.test(contentType) || body === undefined) return undefined;
  let schema: TSchema | undefined;
  if (status >= 400) schema = ErrorResponse;
  else if (status === 200) schema = routeOf(method.toUpperCase(), path)?.response;
  else if (status === 201) schema = routeOf(method.toUpperCase(), path)?.created;
  if (schema === undefined || path.split('?')[0] === '/api/external/openapi.json') return undefined;
  const v = validator(schema);
  if (v.Check(body)) return undefined;
  const errors = [...v.Errors(body)].slice(0, 3).map((e) => `${(e as { instancePath?: string }).instancePath ?? ''} ${e.message}`);
  return `${method} ${path} → ${status}: the body does not match its OpenAPI schema: ${errors.join('; ')}`;
}
