import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import YAML from 'yaml';
import { documentObjections } from './requests.js';

/**
 * Judges a real exchange with the server by the committed OpenAPI document (docs/openapi.json)
 * itself, as a generated client or a validating proxy reads it: the operation exists, the
 * status is one it declares, the answer's media type is one that status declares and its body
 * fits that media type's schema (Ajv, JSON Schema 2020-12), the headers the server sends are
 * declared where a client reads them, and a request the server took is one the document allows
 * (its query parameters, its body, the conditional headers it sent).
 */

const DOCUMENT_FILE = join(import.meta.dirname, '..', '..', 'docs', 'openapi.json');

type Json = Record<string, any>;

export interface Exchange {
  method: string;
  /** Path and query, as sent. */
  url: string;
  /** The request's headers as sent (lower-case names). */
  requestHeaders: Record<string, string>;
  /** The request's body as a value (parsed from JSON or YAML), if any. */
  requestBody?: unknown;
  /** Whether the request had a body at all (an empty one is none). */
  sentBody: boolean;
  status: number;
  headers: Headers;
  /** The answer's bytes. */
  bytes: Buffer;
}

let loaded:
  | { document: Json; ajv: Ajv2020; strict: Ajv2020; templates: Array<{ path: string; pattern: RegExp; params: number }> }
  | undefined;

function load() {
  if (loaded) return loaded;
  const document = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(document, 'openapi.json');
  // Answers hold no field their schema does not name: a generated client's types would drop it.
  const strict = new Ajv2020({ strict: false, allErrors: true });
  strict.addSchema(closed(structuredClone(document)) as Json, 'openapi.json');
  const templates = Object.keys(document.paths)
    .map((path) => ({
      path,
      pattern: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      params: (path.match(/\{/g) ?? []).length,
    }))
    // A literal path (`/components/upsert-batch`) before a template that also matches it.
    .sort((a, b) => a.params - b.params);
  loaded = { document, ajv, strict, templates };
  return loaded;
}

export function openapi(): Json {
  return load().document;
}

/** Every object schema of `node` with its properties named and no word on others: closed to others. */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) {
    for (const child of node) closed(child);
  } else if (node !== null && typeof node === 'object') {
    const schema = node as Json;
    if (schema.properties !== undefined && typeof schema.properties === 'object' && schema.additionalProperties === undefined)
      schema.additionalProperties = false;
    for (const value of Object.values(schema)) closed(value);
  }
  return node;
}

const validators = new Map<string, ValidateFunction>();

function validatorAt(pointer: string[], strict = false): ValidateFunction {
  const ref = `openapi.json#/${pointer.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
  const key = `${strict}:${ref}`;
  let validate = validators.get(key);
  if (validate === undefined) {
    validate = (strict ? load().strict : load().ajv).compile({ $ref: ref });
    validators.set(key, validate);
  }
  return validate;
}

const errorsOf = (validate: ValidateFunction) =>
  (validate.errors ?? [])
    .slice(0, 4)
    .map(
      (e) =>
        `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` '${e.params.additionalProperty}'` : ''}`,
    )
    .join('; ');

/** The path template of the document that `path` falls under for `method` (or for any method). */
export function templateOf(method: string | undefined, path: string): string | undefined {
  const { document, templates } = load();
  const verb = method?.toLowerCase();
  return templates.find((t) => t.pattern.test(path) && (verb === undefined || document.paths[t.path][verb] !== undefined))?.path;
}

/** `operationId` of the operation a request falls under. */
export function operationIdOf(method: string, path: string): string | undefined {
  const template = templateOf(method, path);
  return template === undefined ? undefined : openapi().paths[template][method.toLowerCase()].operationId;
}

/** Headers a client reads from answers: each one sent must be declared by the response it came with. */
const READ_HEADERS = ['etag', 'location', 'link', 'retry-after', 'warning', 'www-authenticate', 'allow', 'c4store-ignored-fields'];

const JSON_OR_YAML = /^(application\/json|application\/yaml|application\/x-yaml|text\/yaml)$/;

/** What the document says against this exchange; empty when it describes it truly. */
export function judge(x: Exchange): string[] {
  const { document } = load();
  const path = x.url.split('?')[0];
  const what = `${x.method} ${x.url} → ${x.status}`;
  const problems: string[] = [];
  const verb = x.method.toLowerCase();
  const template = templateOf(x.method, path);
  if (template === undefined) {
    const anyTemplate = templateOf(undefined, path);
    if (x.status === 405) {
      if (anyTemplate === undefined) return [`${what}: 405 on a path the document does not have`];
      const documented = Object.keys(document.paths[anyTemplate]).map((m) => m.toUpperCase());
      const allowed = (x.headers.get('allow') ?? '')
        .split(',')
        .map((m) => m.trim())
        .filter((m) => m !== '' && m !== 'HEAD');
      if ([...allowed].sort().join() !== [...documented].sort().join())
        problems.push(`${what}: Allow '${x.headers.get('allow')}', the document's methods ${documented.join(', ')}`);
      return problems;
    }
    if (x.status === 404 && anyTemplate === undefined) return [];
    return [`${what}: no operation in the document`];
  }
  const pointerOp = ['paths', template, verb];
  const operation = document.paths[template][verb];
  let base = [...pointerOp, 'responses', String(x.status)];
  let response = operation.responses[String(x.status)];
  if (response === undefined && operation.responses.default !== undefined) {
    base = [...pointerOp, 'responses', 'default'];
    response = operation.responses.default;
  }
  if (response === undefined)
    return [`${what}: status ${x.status} not declared (declared: ${Object.keys(operation.responses).join(', ')})`];
  if (typeof response.$ref === 'string') {
    const name = response.$ref.replace('#/components/responses/', '');
    base = ['components', 'responses', name];
    response = document.components.responses[name];
  }
  // The body.
  const type = (x.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (x.bytes.length > 0) {
    const content = response.content as Json | undefined;
    if (content === undefined) problems.push(`${what}: a body of ${type}, where the document declares none`);
    else if (content[type] === undefined)
      problems.push(`${what}: Content-Type ${type} not declared (declared: ${Object.keys(content).join(', ')})`);
    else if (JSON_OR_YAML.test(type) && content[type].schema !== undefined) {
      const text = x.bytes.toString('utf8');
      let value: unknown;
      try {
        value = type === 'application/json' ? JSON.parse(text) : YAML.parse(text);
      } catch (error) {
        problems.push(`${what}: the ${type} body does not parse: ${(error as Error).message}`);
      }
      if (value !== undefined) {
        const validate = validatorAt([...base, 'content', type, 'schema']);
        if (!validate(value))
          problems.push(`${what}: the body does not fit the ${type} schema: ${errorsOf(validate)} — ${text.slice(0, 300)}`);
        else {
          const strictly = validatorAt([...base, 'content', type, 'schema'], true);
          if (!strictly(value))
            problems.push(`${what}: the body has fields its ${type} schema does not name: ${errorsOf(strictly)} — ${text.slice(0, 300)}`);
        }
      }
    }
  } else if (x.method !== 'HEAD' && response.content !== undefined && x.status !== 200) {
    problems.push(`${what}: no body, where the document declares ${Object.keys(response.content).join(', ')}`);
  }
  // The headers.
  const declared = new Map(Object.entries((response.headers ?? {}) as Json).map(([name, h]) => [name.toLowerCase(), h as Json]));
  for (const name of READ_HEADERS) {
    const value = x.headers.get(name);
    if (value === null) continue;
    const header = declared.get(name);
    if (header === undefined) {
      problems.push(`${what}: sends ${name}: ${value.slice(0, 80)}, which the response does not declare`);
      continue;
    }
    if (header.schema?.type === 'integer' && !/^\d+$/.test(value)) problems.push(`${what}: ${name} '${value}' is no integer`);
  }
  const etag = x.headers.get('etag');
  if (etag !== null && !/^"[0-9a-f]{40}"$/.test(etag)) problems.push(`${what}: ETag ${etag} is no quoted commit`);
  if (x.status >= 200 && x.status < 300 && declared.has('etag') && etag === null && x.bytes.length > 0 && !type.startsWith('image/'))
    problems.push(`${what}: declares ETag, sends none`);
  // The request, when the server took it.
  if ((x.status >= 200 && x.status < 300) || x.status === 304 || x.status === 412) {
    const objections = documentObjections(x.method, x.url, x.status === 412 ? undefined : x.requestBody) ?? [];
    for (const o of objections) problems.push(`${what}: the server took a request the document refuses: ${o}`);
    if (!x.sentBody && operation.requestBody?.required === true && x.status !== 412)
      problems.push(`${what}: the server took it without a body, which the document requires`);
    const headerParams = new Set(
      ((operation.parameters ?? []) as Json[]).filter((p) => p.in === 'header').map((p) => String(p.name).toLowerCase()),
    );
    for (const name of ['if-match', 'if-none-match', 'last-event-id']) {
      if (x.requestHeaders[name] !== undefined && !headerParams.has(name))
        problems.push(`${what}: the server took a request with ${name}, which the operation does not declare`);
    }
  }
  return problems;
}
