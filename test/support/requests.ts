import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * Requests checked against the committed OpenAPI document (docs/openapi.json), as a validating
 * proxy (Stoplight Prism) or a generated client would check them before sending: every request
 * the server accepts (2xx) must be one the document allows — its body against the operation's
 * request schema, each query parameter declared by the operation and valid against its schema.
 * A request the server takes and the document refuses is a client that cannot be generated.
 * Checked with Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect), not with the TypeBox schemas the
 * document is built from, so the document as published is what is tested.
 */

const DOCUMENT_FILE = join(import.meta.dirname, '..', '..', 'docs', 'openapi.json');

interface Parameter {
  name: string;
  in: string;
  schema?: Record<string, unknown>;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: unknown }> };
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

let loaded: { document: Document; ajv: Ajv2020; templates: Array<{ path: string; pattern: RegExp; params: number }> } | undefined;

function load() {
  if (loaded) return loaded;
  const document = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Document;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(document, 'openapi.json');
  // A literal path (`/components/upsert-batch`) before a template that also matches it (`/components/{id}`).
  const templates = Object.keys(document.paths)
    .map((path) => ({
      path,
      pattern: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
      params: (path.match(/\{/g) ?? []).length,
    }))
    .sort((a, b) => a.params - b.params);
  loaded = { document, ajv, templates };
  return loaded;
}

const validators = new Map<string, ValidateFunction>();

/** The validator of the document's schema at a JSON pointer. */
function validatorAt(pointer: string[]): ValidateFunction {
  const ref = `openapi.json#/${pointer.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
  let validate = validators.get(ref);
  if (validate === undefined) {
    validate = load().ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate;
}

/** A query value as the parameter's schema types it (as Prism coerces query strings). */
function typed(value: string, schema: Record<string, unknown> | undefined): unknown {
  if (schema?.type === 'integer' || schema?.type === 'number') return value.trim() === '' ? value : Number(value);
  if (schema?.type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}

const errorsOf = (validate: ValidateFunction) =>
  (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message}`)
    .join('; ');

/** The document's operation for a method and path, with the path template it is listed under. */
function operationOf(method: string, path: string): { template: string; operation: Operation } | undefined {
  const { document, templates } = load();
  const verb = method.toLowerCase();
  const template = templates.find((t) => t.pattern.test(path) && document.paths[t.path][verb] !== undefined);
  return template === undefined ? undefined : { template: template.path, operation: document.paths[template.path][verb] };
}

/**
 * What the document says against this request, whatever the server answered: each path and query
 * parameter, and the body against the operation's request schema. Empty when the document allows
 * the request; undefined when it has no such operation.
 */
export function documentObjections(method: string, url: string, body: unknown): string[] | undefined {
  const [path, queryText = ''] = url.split('?');
  const found = operationOf(method, path);
  if (found === undefined) return undefined;
  const { template, operation } = found;
  const verb = method.toLowerCase();
  const problems: string[] = [];
  const parameters = operation.parameters ?? [];
  // Each `{name}` of the template against its segment of the path, decoded as the server reads it.
  const segments = path.replace(/\/$/, '').split('/');
  template.split('/').forEach((part, i) => {
    const name = /^\{(.+)\}$/.exec(part)?.[1];
    const index = parameters.findIndex((p) => p.in === 'path' && p.name === name);
    if (name === undefined || index < 0) return;
    const validate = validatorAt(['paths', template, verb, 'parameters', String(index), 'schema']);
    if (!validate(decoded(segments[i] ?? ''))) problems.push(`path parameter '${name}': ${errorsOf(validate)}`);
  });
  const declared = new Map(parameters.flatMap((p, index) => (p.in === 'query' ? [[p.name, index] as const] : [])));
  for (const [name, value] of new URLSearchParams(queryText)) {
    const index = declared.get(name);
    if (index === undefined) {
      problems.push(`query parameter '${name}' is not declared`);
      continue;
    }
    const validate = validatorAt(['paths', template, verb, 'parameters', String(index), 'schema']);
    if (!validate(typed(value, parameters[index].schema))) problems.push(`query parameter '${name}': ${errorsOf(validate)}`);
  }
  if (body !== undefined) {
    if (operation.requestBody === undefined) problems.push('a body, where the operation takes none');
    else {
      const validate = validatorAt(['paths', template, verb, 'requestBody', 'content', 'application/json', 'schema']);
      if (!validate(body)) problems.push(`body: ${errorsOf(validate)}`);
    }
  }
  return problems;
}

/** A path segment as the server reads it (one that is no valid percent-encoding, as it is). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Why the document would refuse this accepted request, or undefined when it allows it. */
export function requestOutsideDocument(method: string, url: string, status: number, body: unknown): string | undefined {
  if (status < 200 || status >= 300) return undefined;
  const problems = documentObjections(method, url, body);
  if (problems === undefined) return `${method} ${url.split('?')[0]} → ${status}: the OpenAPI document has no such operation`;
  if (problems.length === 0) return undefined;
  return `${method} ${url} → ${status}: accepted by the server, refused by docs/openapi.json: ${problems.join('; ')}`;
}

/** Whether TestServer checks the requests of this test process (each test file runs in its own). */
export const requestChecks = { on: false };

/** Turns the check on for every request of this test file's TestServers. */
export function checkRequestsAgainstOpenApi(): void {
  requestChecks.on = true;
}
