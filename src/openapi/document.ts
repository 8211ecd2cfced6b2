import { EXPORT_FORMATS } from '../export/formats.js';
import { ERROR_CONTEXT_HEADER } from '../errors.js';
import type { TSchema } from 'typebox';
import { AttributeInput, ComponentInput, TagInput } from '../model/schemas.js';
import { DiagramWire, ModelWireBody } from '../model/current-form/seed-aliases.js';
import { RevertBody, VersionBody } from '../history/schemas.js';
import { DraftBody, DraftNameParameter } from '../drafts/schemas.js';
import { WebhookBody } from '../events/schemas.js';
import {
  CURRENT_PATCH_SCHEMAS,
  CURRENT_UPDATE_SCHEMAS,
  CurrentAttribute,
  CurrentComponent,
  CurrentDiagram,
  CurrentTag,
  TemplateBody,
} from '../model/current-form/schemas.js';
import {
  AttributeResponse,
  ComponentResponse,
  ComponentSearchResult,
  CurrentComponentResponse,
  CurrentDiagramResponse,
  DependencySearchResult,
  DiagramResponse,
  DiagramSearchResult,
  DiffResponse,
  ErrorResponse,
  HealthResponse,
  HistoryCommitResponse,
  HistoryEntryResponse,
  MergeConflictError,
  ModelResponse,
  ModelWriteResponse,
  RevertResponse,
  TagResponse,
  TemplateResponse,
  TypeResponse,
  VersionResponse,
} from './responses.js';
import { ROUTES, type RouteDoc } from './routes.js';

/**
 * The OpenAPI 3.1 document of the API as served, built from the route table (routes.ts) and
 * the TypeBox schemas that validate requests (src/model/schemas.ts) and describe stored files
 * (src/model/file-schemas.ts): TypeBox schemas are JSON Schema, which OpenAPI 3.1 takes as is.
 */

/** Schemas named in `components.schemas` and referred to by `$ref` (the document stays small). */
const NAMED = new Map<unknown, string>([
  [TypeResponse, 'Type'],
  [TagResponse, 'Tag'],
  [AttributeResponse, 'Attribute'],
  [ComponentResponse, 'Component'],
  [DiagramResponse, 'Diagram'],
  [ModelResponse, 'Model'],
  [ModelWriteResponse, 'ModelWriteResult'],
  [HealthResponse, 'Health'],
  [TagInput, 'TagInput'],
  [AttributeInput, 'AttributeInput'],
  [ComponentInput, 'ComponentInput'],
  [DiagramWire, 'DiagramInput'],
  [ModelWireBody, 'ModelInput'],
  [ErrorResponse, 'Error'],
  [MergeConflictError, 'MergeConflictError'],
  [CurrentTag, 'CurrentTagInput'],
  [CurrentAttribute, 'CurrentAttributeInput'],
  [CurrentComponent, 'CurrentComponentInput'],
  [CurrentDiagram, 'CurrentDiagramInput'],
  [TemplateBody, 'TemplateInput'],
  [CurrentComponentResponse, 'CurrentComponent'],
  [CurrentDiagramResponse, 'CurrentDiagram'],
  [TemplateResponse, 'TemplateResult'],
  [ComponentSearchResult, 'ComponentSearchResult'],
  [DiagramSearchResult, 'DiagramSearchResult'],
  [DependencySearchResult, 'Dependency'],
  [HistoryEntryResponse, 'HistoryEntry'],
  [HistoryCommitResponse, 'HistoryCommit'],
  [DiffResponse, 'Diff'],
  [CURRENT_UPDATE_SCHEMAS.tag, 'TagUpsert'],
  [CURRENT_UPDATE_SCHEMAS.attribute, 'AttributeUpsert'],
  [CURRENT_UPDATE_SCHEMAS.component, 'CurrentComponentUpsert'],
  [CURRENT_UPDATE_SCHEMAS.diagram, 'CurrentDiagramUpsert'],
  [CURRENT_PATCH_SCHEMAS.tag, 'TagPatch'],
  [CURRENT_PATCH_SCHEMAS.attribute, 'AttributePatch'],
  [CURRENT_PATCH_SCHEMAS.component, 'CurrentComponentPatch'],
  [CURRENT_PATCH_SCHEMAS.diagram, 'CurrentDiagramPatch'],
  [VersionBody, 'VersionInput'],
  [DraftBody, 'DraftInput'],
  [WebhookBody, 'WebhookInput'],
  [VersionResponse, 'Version'],
  [RevertBody, 'RevertInput'],
  [RevertResponse, 'RevertResult'],
]);

/** A schema as the document writes it: a `$ref` when named, arrays of named items likewise. */
function schemaRef(schema: TSchema): unknown {
  const name = NAMED.get(schema);
  if (name) return { $ref: `#/components/schemas/${name}` };
  const items = (schema as { type?: string; items?: TSchema }).type === 'array' ? (schema as { items: TSchema }).items : undefined;
  if (items && NAMED.has(items)) return { type: 'array', items: schemaRef(items) };
  return plain(schema);
}

const JSON_TYPE = 'application/json';
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];
const ERROR = { $ref: '#/components/schemas/Error' };

/** Plain JSON: TypeBox keeps its own markers in non-enumerable and symbol keys, which this drops. */
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema));

function content(schema: unknown) {
  return Object.fromEntries([JSON_TYPE, ...YAML_TYPES].map((type) => [type, { schema }]));
}

/** The error answers, each described once in `components.responses`. */
const ERRORS: Record<number, string> = {
  400: 'Invalid request: body, query or `?at=`.',
  401: '`Missing API key.` or `Invalid API key.`',
  403: '`This API key may only read.` (a write, or a read of webhook subscriptions, with a reader key).',
  404: 'Not found: the path, the id, or the commit of `?at=`.',
  405: '`Method not allowed.`',
  409: 'Conflict: an id, ref or version name already taken, a delete of something still referred to (without `cascade=true`), a write to a draft that is merged or closed, a merge of a draft that conflicts (`conflicts` beside `error`) or whose result would break a model rule, or the most webhooks or share links an organization may hold reached.',
  412: '`If-Match` names a commit the branch written is no longer at, or `If-None-Match` the one it is at.',
  413: '`Request body too large.`',
  415: '`Unsupported Content-Type: <type>.`',
  429: "The key's rate of reads or writes a minute is spent (`c4store serve --reads-per-minute`/`--writes-per-minute`); retry after `Retry-After` seconds.",
  500: '`Internal error.`',
  507: "`The server's disk is full: the request was not carried out. Retry once space is freed.`",
  503: 'Too many writes waiting for this organization, too many connections from one address, or the instance stopping (each with `Retry-After`); or the model in git is invalid (writes; a read when no valid commit can be served), or a data file damaged: the text says which.',
};
const errorResponse = (status: number) => ({ $ref: `#/components/responses/Error${status}` });
/** docs/api.md §10: a write names the fields of its body it ignored, refused or not. */
const IGNORED_FIELDS = {
  description:
    'The fields of the body its schema does not know, which the write ignored, as schema errors write paths (`0.descr, 2.componentInstances.1.colour`); at most 100, then `, ...`. Absent when there are none.',
  schema: { type: 'string' },
};
/** What a refusal of a model rule concerns, beside its exact text (docs/api.md §5.4). */
const ERROR_CONTEXT = {
  [ERROR_CONTEXT_HEADER]: {
    description:
      "What a refusal of a model rule concerns where its text alone does not say, e.g. `attribute 'Team', element 0 'Mobile App'`: " +
      '`%` and every character outside printable ASCII percent-encoded as UTF-8 (`decodeURIComponent` gives it back). ' +
      "Absent when there is nothing to add; `error` is the rule's text exactly either way.",
    schema: { type: 'string' },
  },
};
/** Headers an error answer carries besides its body. */
const ERROR_HEADERS: Record<number, Record<string, unknown>> = {
  400: { 'C4store-Ignored-Fields': IGNORED_FIELDS, ...ERROR_CONTEXT },
  412: { 'C4store-Ignored-Fields': IGNORED_FIELDS },
  401: { 'WWW-Authenticate': { description: '`Bearer` (`Basic` on the git paths).', schema: { type: 'string' } } },
  405: { Allow: { description: 'The methods the path takes.', schema: { type: 'string' } } },
  409: { 'C4store-Ignored-Fields': IGNORED_FIELDS, ...ERROR_CONTEXT },
  429: { 'Retry-After': { description: 'Seconds until the key may try again.', schema: { type: 'integer' } } },
  503: {
    'Retry-After': { description: 'Seconds to wait before trying again, where waiting helps.', schema: { type: 'integer' } },
    ...ERROR_CONTEXT,
  },
};
/** A read served from the last valid commit while `main` names an invalid one (docs/api.md §1.4). */
const WARNING = {
  description: '`199 - "Serving commit <id>, the last valid one: …"` while the newest commit of `main` breaks a rule.',
  schema: { type: 'string' },
};

/** A diagram's drawing (src/drawing/svg.ts), answered for `Accept: image/svg+xml`. */
const DRAWING = {
  'image/svg+xml': { schema: { type: 'string', description: 'The diagram drawn as an SVG document (`Accept: image/svg+xml`).' } },
  'image/png': {
    schema: { type: 'string', contentMediaType: 'image/png', description: 'The drawing as PNG (`Accept: image/png`, `?scale=` 0.25–4).' },
  },
};

const ETAG = { description: 'The commit the answer reads or wrote, quoted.', schema: { type: 'string' } };
const LOCATION = { description: 'The address of what was made (docs/api.md §1.4).', schema: { type: 'string' } };
/** Every answer (src/http/middleware/private-answers.ts); shared caches must not keep it. */
const PRIVATE = {
  'Cache-Control': {
    description: '`private, no-cache`: for the asking client only; revalidate with `If-None-Match`.',
    schema: { type: 'string' },
  },
  Vary: { description: '`Accept, Authorization, x-api-key, Cookie`.', schema: { type: 'string' } },
};

function operation(route: RouteDoc) {
  const write = route.method !== 'GET';
  const parameters: object[] = [];
  const ownDraft = route.query?.some((q) => q.name === 'draft') ?? false;
  const takesDraft = !route.absolute && !route.path.startsWith('/drafts') && !route.mainOnly && !ownDraft;
  if (takesDraft) {
    parameters.push({
      name: 'draft',
      in: 'query',
      required: false,
      description: 'Read or write the model of this draft (its branch `drafts/<name>`) instead of `main`.',
      schema: plain(DraftNameParameter),
    });
  }
  const revalidates = !write && !route.absolute && route.etag !== false && route.revalidates !== false && !route.events;
  if (!write && !route.absolute && !route.events) {
    parameters.push({
      name: 'at',
      in: 'query',
      required: false,
      description: 'Serve the model as of this revision: a full or abbreviated (4+ hex digits) commit id, a version name, or `main`.',
      schema: { type: 'string' },
    });
  }
  if (revalidates) {
    parameters.push({
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: 'An ETag: 304 when the model is still at that commit.',
      schema: { type: 'string' },
    });
  }
  if (route.list) {
    parameters.push({
      name: 'limit',
      in: 'query',
      required: false,
      description:
        'Page size; with it (or `cursor`) the answer is one page and a `Link: <…>; rel="next"` header while more follow. Without either, the whole list.',
      schema: { type: 'integer', minimum: 1, maximum: 1000 },
    });
    parameters.push({
      name: 'cursor',
      in: 'query',
      required: false,
      description: 'The id after which the page starts (from the `Link` header).',
      schema: { type: 'string' },
    });
  }
  for (const [, name] of route.path.matchAll(/:([A-Za-z]+)/g)) {
    // A draft's name (`/drafts/{name}`) has its rule; ids and commits are looked up as given.
    const schema = route.path.startsWith('/drafts/:name') && name === 'name' ? plain(DraftNameParameter) : { type: 'string' };
    parameters.push({ name, in: 'path', required: true, schema });
  }
  if (route.drawing) {
    parameters.push({
      name: 'scale',
      in: 'query',
      required: false,
      description: 'With `Accept: image/png`: pixels per SVG unit, 0.25 to 4 (default 1).',
      schema: { type: 'number', minimum: 0.25, maximum: 4 },
    });
    parameters.push({
      name: 'compare',
      in: 'query',
      required: false,
      description:
        "With `?draft=<name>` and `Accept: image/svg+xml` or `image/png`: the draft's visual diff against `main` (what the draft adds, removes and changes marked `c4-added`, `c4-removed`, `c4-changed`; no `ETag`). Without `?draft=`, or on a JSON or export answer: 400.",
      schema: { enum: ['main'] },
    });
  }
  if (route.events) {
    parameters.push({
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description:
        'The `id` of the last event received (a commit of the branch): the stream first replays every change after it. Wins over `?after=`; one not on the branch is 404.',
      schema: { type: 'string' },
    });
  }
  for (const q of route.query ?? []) {
    parameters.push({
      name: q.name,
      in: 'query',
      required: q.required ?? false,
      description: q.description,
      schema: plain(q.schema ?? { type: 'string' }),
    });
  }
  const precondition = write ? (route.precondition ?? 'branch') : false;
  if (write && precondition !== false) {
    parameters.push({
      name: 'layout',
      in: 'query',
      required: false,
      description: '`auto` lays out afresh every element the request gives no position.',
      schema: { enum: ['auto'] },
    });
    parameters.push({
      name: 'If-Match',
      in: 'header',
      required: false,
      description:
        (precondition === 'draft'
          ? "Refuse (412) unless the draft's head is still at this commit."
          : 'Refuse (412) unless the branch written is still at this commit: `main`, or with `?draft=` the draft’s head.') +
        ' Compared strongly (RFC 9110 §13.1.1): the ETag as answered, `"<commit>"`; a weak tag (`W/"…"`) matches no commit.',
      schema: { type: 'string' },
    });
    parameters.push({
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description:
        precondition === 'draft'
          ? "Refuse (412) if the draft's head is at this commit (`*`: always refused, a head always has a commit)."
          : 'Refuse (412) if the branch written is at this commit (`*`: always refused, a branch always has a commit).',
      schema: { type: 'string' },
    });
  }

  const tagged = !route.absolute && route.etag !== false;
  const headers: Record<string, unknown> = tagged ? { ETag: ETAG, ...PRIVATE } : { ...PRIVATE };
  if (!write && !route.absolute) headers.Warning = WARNING;
  if (route.list) headers.Link = { description: '`<path?limit=…&cursor=…>; rel="next"` while more follow.', schema: { type: 'string' } };
  if (route.link) headers.Link = { description: '`<path?…&before=…>; rel="next"` after a full page.', schema: { type: 'string' } };
  if (write && route.request !== undefined) headers['C4store-Ignored-Fields'] = IGNORED_FIELDS;
  const responses: Record<string, unknown> = {};
  if (route.response) {
    const ok: Record<string, unknown> = { ...content(schemaRef(route.response)) };
    if (route.exports) {
      for (const format of Object.values(EXPORT_FORMATS)) ok[format.mediaType] = { schema: { type: 'string' } };
    }
    if (route.drawing) Object.assign(ok, DRAWING);
    responses[200] = {
      description: 'Success',
      headers,
      content: route.path === '/api/external/openapi.json' ? { [JSON_TYPE]: { schema: { type: 'object' } } } : ok,
    };
  }
  if (route.events) {
    responses[200] = {
      description: 'The stream: `id`, `event` and `data` lines per change (docs/api.md §19.2), keep-alive comments between.',
      headers: {
        ETag: { description: 'The commit of the branch the stream starts after, quoted.', schema: { type: 'string' } },
        'Cache-Control': { description: '`no-store`: a stream is never kept.', schema: { type: 'string' } },
      },
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    };
  }
  if (route.absolute && route.path === '/healthz') responses[503] = errorResponse(503);
  if (route.created)
    responses[201] = {
      description: 'Created',
      headers: {
        ...(route.etag === false ? {} : { ETag: ETAG }),
        Location: LOCATION,
        ...PRIVATE,
        ...(route.request !== undefined ? { 'C4store-Ignored-Fields': IGNORED_FIELDS } : {}),
      },
      content: content(schemaRef(route.created)),
    };
  if (!route.absolute) {
    // RFC 9110 §15.4.5: a 304 carries the ETag a 200 would (and the same cache headers).
    if (revalidates)
      responses[304] = { description: 'Not modified (`If-None-Match` names the current commit).', headers: { ETag: ETAG, ...PRIVATE } };
    responses[400] = errorResponse(400);
    responses[401] = errorResponse(401);
    responses[404] = errorResponse(404);
    responses[405] = errorResponse(405);
    responses[429] = errorResponse(429);
    responses[503] = errorResponse(503);
  }
  if (route.editorOnly) responses[403] = errorResponse(403);
  if (write) {
    responses[403] = errorResponse(403);
    // CONTRACT §8: a write to a draft that is merged or closed is 409, on every write `?draft=` takes.
    if (route.conflict || takesDraft)
      responses[409] =
        route.conflictBody === undefined
          ? errorResponse(409)
          : {
              description:
                'The draft is not open, or the merge conflicts (`conflicts` names each field both sides changed; settle them with `resolutions`) or would break a model rule.',
              content: content(schemaRef(route.conflictBody)),
            };
    if (precondition !== false) responses[412] = errorResponse(412);
    responses[413] = errorResponse(413);
    responses[415] = errorResponse(415);
    responses[507] = errorResponse(507);
  }
  responses[500] = errorResponse(500);

  return {
    operationId: operationId(route),
    summary: route.summary,
    tags: [route.tag],
    ...(route.absolute ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.request ? { requestBody: { required: route.bodyOptional !== true, content: content(schemaRef(route.request)) } } : {}),
    responses,
  };
}

/** Where the parameters every route may take come in a route's list: after its own, as the list GETs' refusals name them. */
const SHARED_QUERY_ORDER = ['scale', 'compare', 'layout', 'limit', 'cursor', 'at', 'draft'];

/**
 * The query parameters `route` takes, as its operation in the document lists them (the server
 * refuses any other: src/http/middleware/known-parameters.ts): its own first, then the shared ones.
 */
export function queryParameterNames(route: RouteDoc): string[] {
  const own = (route.query ?? []).map((q) => q.name);
  const shared = (operation(route).parameters as Array<{ name: string; in: string }> | undefined)
    ?.filter((p) => p.in === 'query' && !own.includes(p.name))
    .map((p) => p.name)
    .sort((a, b) => SHARED_QUERY_ORDER.indexOf(a) - SHARED_QUERY_ORDER.indexOf(b));
  return [...own, ...(shared ?? [])];
}

function operationId(route: RouteDoc): string {
  const words = `${route.method.toLowerCase()} ${route.path}`.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
}

/** `/tag/:id` → `/api/external/tag/{id}`. */
export function openapiPath(route: Pick<RouteDoc, 'path' | 'absolute'>): string {
  return `${route.absolute ? '' : '/api/external'}${route.path}`.replace(/:([A-Za-z]+)/g, '{$1}');
}

/** The API's version, which the document carries; raise it when the API changes. */
export const API_VERSION = '0.1.0';

export function openapiDocument(version = API_VERSION): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const path = openapiPath(route);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'c4store external API',
      version,
      description:
        'A git-backed store for C4 architecture models. Every write is one git commit. ' +
        'Bodies and answers are JSON, or YAML with `Content-Type`/`Accept: application/yaml`. See docs/api.md.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { apiKey: [] }],
    tags: [...new Set(ROUTES.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <API key>`' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: '`x-api-key: <API key>`' },
      },
      responses: Object.fromEntries(
        Object.entries(ERRORS).map(([status, description]) => [
          `Error${status}`,
          { description, ...(ERROR_HEADERS[Number(status)] ? { headers: ERROR_HEADERS[Number(status)] } : {}), content: content(ERROR) },
        ]),
      ),
      schemas: Object.fromEntries(Array.from(NAMED, ([schema, name]) => [name, plain(schema)])),
    },
  };
}

let served: Buffer | undefined;

/** The document as `GET /api/external/openapi.json` sends it, built once. */
export function openapiJson(): Buffer {
  served ??= Buffer.from(`${JSON.stringify(openapiDocument(), null, 2)}\n`);
  return served;
}
