import Type, { type TSchema } from 'typebox';
import { DraftBody, DraftNameParameter, MergeBody } from '../drafts/schemas.js';
import { RevertBody, VersionBody } from '../history/schemas.js';
import {
  CURRENT_PATCH_SCHEMAS,
  CURRENT_SCHEMAS,
  CURRENT_UPDATE_SCHEMAS,
  TemplateBody,
  type WritableKind,
} from '../model/current-form/schemas.js';
import { AttributeBody, ComponentBody, TagBody } from '../model/schemas.js';
import { DiagramWireBody, ModelWireBody } from '../model/current-form/seed-aliases.js';
import { COMPONENT_FILTERS, DIAGRAM_FILTERS, LIST_FILTERS, type ListKind } from '../search/filters.js';
import { ShareLinkBody, ShareLinkCreatedResponse, ShareLinkResponse } from '../share/schemas.js';
import {
  ChangesResponse,
  CreatedWebhookResponse,
  DeliveryResponse,
  ListedWebhookResponse,
  ReplayBody,
  WebhookBody,
  WebhookResponse,
} from '../events/schemas.js';
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
  DraftDetailsResponse,
  DraftMergeResponse,
  DraftResponse,
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

/**
 * Every route the service answers, described once: the OpenAPI document is built from this
 * table, and a test fails for any route of `apiRouter` missing here. A new route adds one line.
 * Paths are the router's (`/tag/:id`), below `/api/external` unless `absolute`.
 */
export interface RouteDoc {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  summary: string;
  tag: string;
  request?: TSchema;
  /** The body may be left out (an empty one is none): the request then means the body `{}`. */
  bodyOptional?: boolean;
  /** The 200 answer; none for a route that only refuses. */
  response?: TSchema;
  /** The 201 answer of a create. */
  created?: TSchema;
  /** May answer 409: an id, ref or name taken, or a delete refused while others refer to it. */
  conflict?: boolean;
  /** The body of its 409 when it is more than the error object (a merge's conflicts). */
  conflictBody?: TSchema;
  /** Query parameters of its own (beyond `?at=`, paging and `?layout=`). */
  query?: QueryParam[];
  /** Answers a `Link: <…>; rel="next"` header while more follow. */
  link?: boolean;
  /** A list GET: `?limit=` and `?cursor=`, the `Link` header. */
  list?: boolean;
  /** GET answers these export media types too (src/export/). */
  exports?: boolean;
  /** GET answers the diagram's drawing too: `image/svg+xml`, `image/png` (src/viewer/svg-response.ts). */
  drawing?: boolean;
  /** Outside `/api/external` and without a key. */
  absolute?: boolean;
  /** Of `main` alone: `?draft=` is refused (400), so it is not offered. */
  mainOnly?: boolean;
  /**
   * What `If-Match` names on this write: the branch written (default: `main`, or the draft of
   * `?draft=`), the draft's head (`draft`), or nothing: a write of no model takes no precondition.
   */
  precondition?: 'branch' | 'draft' | false;
  /** Answers carry no `ETag` (no commit names them), so no 304 either. */
  etag?: false;
  /** A GET whose answer changes beside the commit its ETag names: never 304. */
  revalidates?: false;
  /** Answers a stream of Server-Sent Events (`text/event-stream`). */
  events?: boolean;
  /** A read an editor key alone may make (a reader: 403): webhook subscriptions, whose urls may hold a receiver's secret. */
  editorOnly?: boolean;
}

export interface QueryParam {
  name: string;
  description: string;
  schema?: TSchema;
  required?: boolean;
}

const list = (schema: TSchema) => Type.Array(schema);

/** Share links live beside the model, of main alone: no commit names an answer, no precondition. */
const SHARE_LINK = { mainOnly: true, precondition: false, etag: false } as const;
/** Subscriptions live beside the model: no precondition, and a write's answer names no commit. */
const WEBHOOK_WRITE = { mainOnly: true, precondition: false, etag: false } as const;
/** Subscriptions are seen with an editor key only (docs/api.md §19.3); they change beside the model, so no 304. */
const WEBHOOK_READ = { mainOnly: true, revalidates: false, editorOnly: true } as const;

function resource(tag: string, path: string, item: TSchema, filters?: ListKind, oneBy = 'id'): RouteDoc[] {
  const query = filters === undefined ? undefined : listFilters(filters);
  return [
    { method: 'GET', path, summary: `List ${tag.toLowerCase()}`, tag, response: list(item), list: true, query },
    { method: 'GET', path: `${path}/:id`, summary: `One ${tag.toLowerCase().replace(/s$/, '')} by ${oneBy}`, tag, response: item },
  ];
}

const PLURAL = { tag: '/tags', attribute: '/attributes', component: '/components', diagram: '/diagrams' } as const;

const CASCADE: QueryParam = {
  name: 'cascade',
  schema: Type.Boolean({ default: false }),
  description: '`true` also removes what refers to it; without it a delete of something referred to is refused (409).',
};

/**
 * The current form's routes of one kind (src/http/routes/current.ts). `/attributes` shares its
 * GETs and POST with the seed's forms, which the table lists with those.
 */
function currentForm(kind: WritableKind, tag: string, item: TSchema, seedItem: TSchema): RouteDoc[] {
  const path = PLURAL[kind];
  const name = kind;
  return [
    ...(kind === 'attribute'
      ? []
      : ([
          {
            method: 'GET',
            path,
            summary: `List ${tag.toLowerCase()} (current form), all or those matching every filter given`,
            tag,
            response: list(item),
            list: true,
            query: listFilters(kind),
          },
          {
            method: 'POST',
            path,
            summary: `Create one ${name}`,
            tag,
            request: CURRENT_SCHEMAS[kind],
            created: item,
            conflict: true,
          },
          {
            method: 'GET',
            path: `${path}/:id`,
            summary: kind === 'diagram' ? 'One diagram by id or ref, its drawing or an export by Accept' : `One ${name} by id or ref`,
            tag,
            response: item,
            drawing: kind === 'diagram',
            exports: kind === 'diagram',
          },
        ] satisfies RouteDoc[])),
    {
      method: 'PATCH',
      path: `${path}/upsert-batch`,
      summary: `Create or partially update ${tag.toLowerCase()} by id or ref`,
      tag,
      request: Type.Array(CURRENT_UPDATE_SCHEMAS[kind]),
      response: list(item),
      conflict: true,
    },
    {
      method: 'PATCH',
      path: `${path}/:id`,
      summary: `Update one ${name} partially (by id or ref)`,
      tag,
      request: CURRENT_PATCH_SCHEMAS[kind],
      response: item,
      conflict: true,
    },
    {
      method: 'DELETE',
      path: `${path}/:id`,
      summary: `Delete one ${name}, answering it`,
      tag,
      response: item,
      conflict: true,
      query: [CASCADE],
    },
    {
      method: 'DELETE',
      path: `/${kind}/:id`,
      summary: `Delete one ${name}, answering it in the seed's shape`,
      tag,
      response: seedItem,
      conflict: true,
      query: [CASCADE],
    },
  ];
}

const FILTER_TEXTS: Record<string, string> = {
  name: 'Part of the name, any case.',
  typeId: 'The type: its id or its slug.',
  tagId: 'Carries this tag: its id or its ref.',
  attributeId: 'Holds a value for this attribute: its id or its ref.',
  attributeValue: "With `attributeId`: the attribute's value, as text.",
  componentId: 'The component (its id or its ref).',
  state: '`DRAFT`, `ACTIVE` or `ARCHIVED`.',
  level: '`C0`–`C4`, `D1`, `P0`, or `null` for none.',
};

function searchFilters(names: readonly string[], required = false): QueryParam[] {
  return names.map((name) => ({ name, required, description: FILTER_TEXTS[name] ?? `Equal to \`${name}\`.` }));
}

/** A list's filters (src/search/filters.ts); a parameter the list does not take is refused (400). */
const listFilters = (kind: ListKind) => searchFilters(LIST_FILTERS[kind]);

export const ROUTES: RouteDoc[] = [
  { method: 'GET', path: '/healthz', summary: 'Liveness', tag: 'Service', response: HealthResponse, absolute: true },
  {
    method: 'GET',
    path: '/api/external/openapi.json',
    summary: 'This document',
    tag: 'Service',
    response: Type.Object({}),
    absolute: true,
    etag: false,
  },

  ...resource('Types', '/type', TypeResponse, undefined, 'id or slug'),
  ...resource('Types', '/types', TypeResponse, 'type', 'id or slug'),

  ...resource('Tags', '/tag', TagResponse),
  {
    method: 'POST',
    path: '/tag',
    summary: 'Create or update tags (element with id updates)',
    tag: 'Tags',
    request: TagBody,
    response: list(TagResponse),
  },

  ...['/attribute', '/attributes'].flatMap((path): RouteDoc[] => [
    ...resource('Attributes', path, AttributeResponse, path === '/attributes' ? 'attribute' : undefined),
    {
      method: 'PUT',
      path,
      summary: 'Create attributes (no id)',
      tag: 'Attributes',
      request: AttributeBody,
      response: list(AttributeResponse),
    },
    path === '/attributes'
      ? {
          method: 'POST',
          path,
          tag: 'Attributes',
          conflict: true,
          summary: 'An array: create or update attributes (full overwrite, 200); one object: create one attribute (the current form, 201)',
          request: Type.Union([AttributeBody, CURRENT_SCHEMAS.attribute]),
          response: list(AttributeResponse),
          created: AttributeResponse,
        }
      : {
          method: 'POST',
          path,
          summary: 'Create or update attributes (full overwrite)',
          tag: 'Attributes',
          request: AttributeBody,
          response: list(AttributeResponse),
        },
  ]),

  ...resource('Components', '/component', ComponentResponse),
  {
    method: 'PUT',
    path: '/component',
    summary: 'Create components (an existing id updates)',
    tag: 'Components',
    request: ComponentBody,
    response: list(ComponentResponse),
  },
  {
    method: 'POST',
    path: '/component',
    summary: 'Create or update components (full overwrite)',
    tag: 'Components',
    request: ComponentBody,
    response: list(ComponentResponse),
  },

  { method: 'GET', path: '/diagram', summary: 'List diagrams', tag: 'Diagrams', response: list(DiagramResponse), list: true },
  {
    method: 'GET',
    path: '/diagram/:id',
    summary: 'One diagram by id or ref, its drawing or an export by Accept',
    tag: 'Diagrams',
    response: DiagramResponse,
    exports: true,
    drawing: true,
  },
  {
    method: 'POST',
    path: '/diagram',
    summary: 'Create or update diagrams (nested elements replaced)',
    tag: 'Diagrams',
    request: DiagramWireBody,
    response: list(DiagramResponse),
  },

  ...['/diagram/:id/share-links', '/diagrams/:id/share-links'].flatMap((path): RouteDoc[] => [
    {
      method: 'POST',
      path,
      summary: 'Make a read-only share link to the diagram (editor keys; no commit)',
      tag: 'Share links',
      request: ShareLinkBody,
      bodyOptional: true,
      created: ShareLinkCreatedResponse,
      conflict: true,
      ...SHARE_LINK,
    },
    {
      method: 'GET',
      path,
      summary: "The diagram's share links, without their tokens",
      tag: 'Share links',
      response: Type.Array(ShareLinkResponse),
      ...SHARE_LINK,
    },
  ]),
  {
    method: 'GET',
    path: '/share-links',
    summary: "The organization's share links",
    tag: 'Share links',
    response: Type.Array(ShareLinkResponse),
    ...SHARE_LINK,
  },
  { method: 'GET', path: '/share-links/:id', summary: 'One share link', tag: 'Share links', response: ShareLinkResponse, ...SHARE_LINK },
  {
    method: 'DELETE',
    path: '/share-links/:id',
    summary: 'Revoke a share link: it answers 404 at once',
    tag: 'Share links',
    response: ShareLinkResponse,
    ...SHARE_LINK,
  },

  ...currentForm('tag', 'Tags', TagResponse, TagResponse),
  ...currentForm('attribute', 'Attributes', AttributeResponse, AttributeResponse),
  ...currentForm('component', 'Components', CurrentComponentResponse, ComponentResponse),
  ...currentForm('diagram', 'Diagrams', CurrentDiagramResponse, DiagramResponse),
  {
    method: 'POST',
    path: '/template',
    tag: 'Model',
    conflict: true,
    request: TemplateBody,
    response: TemplateResponse,
    summary: 'Components and diagrams in the current form, one commit; an element with a known id or ref updates it partially',
  },

  {
    method: 'GET',
    path: '/search/components',
    summary: 'Components matching every filter given (at least one)',
    tag: 'Search',
    response: list(ComponentSearchResult),
    query: searchFilters(COMPONENT_FILTERS),
  },
  {
    method: 'GET',
    path: '/search/diagrams',
    summary: 'Diagrams matching every filter given (at least one)',
    tag: 'Search',
    response: list(DiagramSearchResult),
    query: searchFilters(DIAGRAM_FILTERS),
  },
  {
    method: 'GET',
    path: '/components/:id/dependencies',
    summary: 'The components directly related to a component (by id or ref)',
    tag: 'Components',
    response: list(DependencySearchResult),
  },
  {
    method: 'GET',
    path: '/search/dependencies',
    summary: 'The components directly related to a component',
    tag: 'Search',
    response: list(DependencySearchResult),
    query: searchFilters(['componentId'], true),
  },

  {
    method: 'GET',
    path: '/history',
    summary: 'The commits of `main`, newest first',
    tag: 'History',
    response: list(HistoryEntryResponse),
    link: true,
    query: [
      {
        name: 'limit',
        description: 'At most this many entries (1–1000, default 50); a full page answers a `Link` to the next.',
        schema: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
      },
      { name: 'before', description: 'Start below this commit, version or abbreviation (exclusive; from the `Link` header).' },
      { name: 'since', description: 'Only commits at or after this ISO 8601 time.' },
      { name: 'until', description: 'Only commits at or before this ISO 8601 time.' },
      { name: 'resource', description: 'Only commits that touched the resource with this id.' },
    ],
  },
  {
    method: 'GET',
    path: '/history/:commit',
    summary: 'One commit and what it changed against its first parent',
    tag: 'History',
    response: HistoryCommitResponse,
  },
  {
    method: 'GET',
    path: '/diff',
    summary: 'What changed in the model between two commits or versions',
    tag: 'History',
    response: DiffResponse,
    query: [
      { name: 'from', description: 'The commit, abbreviation or version to compare from.', required: true },
      { name: 'to', description: 'The commit, abbreviation or version to compare to (default `main`).' },
    ],
  },
  ...['/version', '/versions'].flatMap((path): RouteDoc[] => [
    // A version is made beside main, which does not move: the list changes under the same ETag.
    {
      method: 'GET',
      path,
      summary: 'The named versions (git tags)',
      tag: 'History',
      response: list(VersionResponse),
      mainOnly: true,
      revalidates: false,
    },
    {
      method: 'POST',
      path,
      summary: 'Name the current `main` (an annotated git tag)',
      tag: 'History',
      request: VersionBody,
      created: VersionResponse,
      conflict: true,
      mainOnly: true,
    },
  ]),
  {
    method: 'POST',
    path: '/revert',
    summary: 'One new commit restoring the model as of a commit or version',
    tag: 'History',
    request: RevertBody,
    response: RevertResponse,
  },
  {
    method: 'POST',
    path: '/drafts',
    summary: 'Open a draft: the branch drafts/<name> from main',
    tag: 'Drafts',
    request: DraftBody,
    created: DraftResponse,
    conflict: true,
    precondition: false,
  },
  {
    method: 'GET',
    path: '/drafts',
    summary: 'The drafts in one state',
    tag: 'Drafts',
    response: list(DraftResponse),
    revalidates: false,
    query: [{ name: 'state', description: '`open` (default), `merged` or `closed`.' }],
  },
  {
    method: 'GET',
    path: '/drafts/:name',
    summary: 'One draft, with its changes, how far behind main it is and its conflicts',
    tag: 'Drafts',
    response: DraftDetailsResponse,
    revalidates: false,
  },
  {
    method: 'GET',
    path: '/drafts/:name/diff',
    summary: 'The draft against main at its base (a merged draft: what its merge brought into main)',
    tag: 'Drafts',
    response: DiffResponse,
  },
  {
    method: 'POST',
    path: '/drafts/:name/merge',
    summary: 'Merge the draft into main (one merge commit)',
    tag: 'Drafts',
    request: MergeBody,
    bodyOptional: true,
    response: DraftMergeResponse,
    conflict: true,
    conflictBody: MergeConflictError,
  },
  {
    method: 'POST',
    path: '/drafts/:name/update',
    summary: 'Merge main into the draft (it catches up)',
    tag: 'Drafts',
    request: MergeBody,
    bodyOptional: true,
    response: DraftMergeResponse,
    conflict: true,
    conflictBody: MergeConflictError,
    precondition: 'draft',
  },
  {
    method: 'DELETE',
    path: '/drafts/:name',
    summary: 'Close the draft (its branch is kept as refs/drafts-closed/<name>)',
    tag: 'Drafts',
    response: DraftResponse,
    conflict: true,
    precondition: false,
  },
  {
    method: 'POST',
    path: '/drafts/:name/reopen',
    summary: 'Reopen a closed draft',
    tag: 'Drafts',
    response: DraftResponse,
    conflict: true,
    precondition: false,
  },

  {
    method: 'GET',
    path: '/changes',
    summary: 'The change feed: commits of `main` after a commit, oldest first, with the resources each touched',
    tag: 'Events',
    response: ChangesResponse,
    query: [
      { name: 'after', description: 'Start after this commit of `main` (default: from the first commit); 404 when it is not on `main`.' },
      {
        name: 'limit',
        description: 'At most this many changes (1–1000, default 100).',
        schema: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
      },
      {
        name: 'draft',
        description: "A draft's changes: the first-parent commits of its branch (404 when there is no such draft).",
        schema: DraftNameParameter,
      },
    ],
  },
  {
    method: 'GET',
    path: '/events',
    summary:
      'Live changes as Server-Sent Events (`text/event-stream`), with draft.opened/updated/merged/closed frames; `Last-Event-ID` or `?after=` replays what came after it first',
    tag: 'Events',
    events: true,
    query: [
      { name: 'after', description: 'Replay from after this commit of `main` (as `Last-Event-ID`).' },
      { name: 'draft', description: "A draft's commits instead (404 when there is no such draft).", schema: DraftNameParameter },
      { name: 'at', description: 'Checked as on every read (404 for an unknown commit); the stream is of the tip all the same.' },
    ],
  },
  {
    method: 'POST',
    path: '/webhooks',
    summary: 'Subscribe a url to the changes (Standard Webhooks); the answer holds its secret, shown once',
    tag: 'Events',
    request: WebhookBody,
    created: CreatedWebhookResponse,
    conflict: true,
    ...WEBHOOK_WRITE,
  },
  {
    method: 'GET',
    path: '/webhooks',
    summary: "The organization's webhook subscriptions (a damaged one as such)",
    tag: 'Events',
    response: list(ListedWebhookResponse),
    ...WEBHOOK_READ,
  },
  {
    method: 'GET',
    path: '/webhooks/:id',
    summary: 'One webhook subscription',
    tag: 'Events',
    response: WebhookResponse,
    ...WEBHOOK_READ,
  },
  {
    method: 'DELETE',
    path: '/webhooks/:id',
    summary: 'Remove a webhook subscription, answering it (a damaged one too)',
    tag: 'Events',
    response: ListedWebhookResponse,
    ...WEBHOOK_WRITE,
  },
  {
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    summary: "A subscription's delivery attempts, newest first",
    tag: 'Events',
    response: list(DeliveryResponse),
    ...WEBHOOK_READ,
    query: [
      {
        name: 'limit',
        description: 'At most this many (1–1000, default 100).',
        schema: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
      },
    ],
  },
  {
    method: 'POST',
    path: '/webhooks/:id/replay',
    summary: 'Deliver every change after a commit again, in order (enables a disabled subscription)',
    tag: 'Events',
    request: ReplayBody,
    response: WebhookResponse,
    ...WEBHOOK_WRITE,
  },

  {
    method: 'GET',
    path: '/model',
    summary: 'The whole model, or exported by Accept',
    tag: 'Model',
    response: ModelResponse,
    exports: true,
  },
  {
    method: 'POST',
    path: '/model',
    summary: 'Components and diagrams in one request and one commit',
    tag: 'Model',
    request: ModelWireBody,
    response: ModelWriteResponse,
  },
];

/** `METHOD /full/path` of a route, the key tests compare the router against. */
export const routeKey = (route: Pick<RouteDoc, 'method' | 'path' | 'absolute'>) =>
  `${route.method} ${route.absolute ? '' : '/api/external'}${route.path}`;
