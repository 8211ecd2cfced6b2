import Type, { type TSchema } from 'typebox';
import { AttributeBody, ComponentBody, DiagramBody, ModelBody, TagBody } from '../model/schemas.js';
import {
  AttributeResponse, ComponentResponse, DiagramResponse, HealthResponse, ModelResponse, ModelWriteResponse, TagResponse, TypeResponse,
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
  response: TSchema;
  /** A list GET: `?limit=` and `?cursor=`, the `Link` header. */
  list?: boolean;
  /** GET answers these export media types too (src/export/). */
  exports?: boolean;
  /** Outside `/api/external` and without a key. */
  absolute?: boolean;
}

const list = (schema: TSchema) => Type.Array(schema);

function resource(tag: string, path: string, item: TSchema): RouteDoc[] {
  return [
    { method: 'GET', path, summary: `List ${tag.toLowerCase()}`, tag, response: list(item), list: true },
    { method: 'GET', path: `${path}/:id`, summary: `One ${tag.toLowerCase().replace(/s$/, '')} by id`, tag, response: item },
  ];
}

export const ROUTES: RouteDoc[] = [
  { method: 'GET', path: '/healthz', summary: 'Liveness', tag: 'Service', response: HealthResponse, absolute: true },
  { method: 'GET', path: '/api/external/openapi.json', summary: 'This document', tag: 'Service', response: Type.Object({}), absolute: true },

  ...resource('Types', '/type', TypeResponse),
  ...resource('Types', '/types', TypeResponse),

  ...resource('Tags', '/tag', TagResponse),
  { method: 'POST', path: '/tag', summary: 'Create or update tags (element with id updates)', tag: 'Tags', request: TagBody, response: list(TagResponse) },

  ...['/attribute', '/attributes'].flatMap((path): RouteDoc[] => [
    ...resource('Attributes', path, AttributeResponse),
    { method: 'PUT', path, summary: 'Create attributes (no id)', tag: 'Attributes', request: AttributeBody, response: list(AttributeResponse) },
    { method: 'POST', path, summary: 'Create or update attributes (full overwrite)', tag: 'Attributes', request: AttributeBody, response: list(AttributeResponse) },
  ]),

  ...resource('Components', '/component', ComponentResponse),
  { method: 'PUT', path: '/component', summary: 'Create components (an existing id updates)', tag: 'Components', request: ComponentBody, response: list(ComponentResponse) },
  { method: 'POST', path: '/component', summary: 'Create or update components (full overwrite)', tag: 'Components', request: ComponentBody, response: list(ComponentResponse) },

  { method: 'GET', path: '/diagram', summary: 'List diagrams', tag: 'Diagrams', response: list(DiagramResponse), list: true },
  { method: 'GET', path: '/diagram/:id', summary: 'One diagram by id, or exported by Accept', tag: 'Diagrams', response: DiagramResponse, exports: true },
  { method: 'POST', path: '/diagram', summary: 'Create or update diagrams (nested elements replaced)', tag: 'Diagrams', request: DiagramBody, response: list(DiagramResponse) },

  { method: 'GET', path: '/model', summary: 'The whole model, or exported by Accept', tag: 'Model', response: ModelResponse, exports: true },
  { method: 'POST', path: '/model', summary: 'Components and diagrams in one request and one commit', tag: 'Model', request: ModelBody, response: ModelWriteResponse },
];

/** `METHOD /full/path` of a route, the key tests compare the router against. */
export const routeKey = (route: Pick<RouteDoc, 'method' | 'path' | 'absolute'>) =>
  `${route.method} ${route.absolute ? '' : '/api/external'}${route.path}`;
