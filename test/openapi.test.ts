import test from 'ava';
import { Validator } from '@seriousme/openapi-schema-validator';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { apiRouter, type AppDependencies } from '../src/http/app.js';
import { openapiDocument, openapiPath } from '../src/openapi/document.js';
import { ROUTES, routeKey } from '../src/openapi/routes.js';
import { requestOutsideDocument } from './support/requests.js';
import { withServer } from './support/server.js';

const COMMITTED = join(import.meta.dirname, '..', 'docs', 'openapi.json');

/** Every method and path of the key-checked API, read from the router itself. */
function routerRoutes(): string[] {
  const router = apiRouter({ publicUrl: 'http://x', bodyLimit: 1 } as unknown as AppDependencies);
  const routes = new Set<string>();
  for (const layer of router.stack) {
    for (const method of layer.methods) {
      if (method !== 'HEAD' && typeof layer.path === 'string') routes.add(`${method} ${layer.path}`);
    }
  }
  return [...routes];
}

test('the document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)', async (t) => {
  const validator = new Validator();
  const result = await validator.validate(openapiDocument());
  t.true(result.valid, JSON.stringify(result.errors, null, 2));
  t.is(validator.version, '3.1');
});

test('every route of apiRouter has an OpenAPI entry, and every entry a route', (t) => {
  const documented = new Set(ROUTES.filter((r) => !r.absolute).map(routeKey));
  const served = routerRoutes();
  t.true(served.length >= 15);
  const missing = served.filter((route) => !documented.has(route));
  t.deepEqual(missing, [], `add these routes to src/openapi/routes.ts: ${missing.join(', ')}`);
  t.deepEqual(
    [...documented].filter((route) => !served.includes(route)),
    [],
    'documented routes the router does not serve',
  );
  const paths = openapiDocument().paths as Record<string, Record<string, unknown>>;
  for (const route of ROUTES) t.truthy(paths[openapiPath(route)]?.[route.method.toLowerCase()], routeKey(route));
});

test('docs/openapi.json is the document as built (run npm run build when this fails)', async (t) => {
  const committed = JSON.parse(await readFile(COMMITTED, 'utf8'));
  t.deepEqual(committed, openapiDocument());
});

test('GET /api/external/openapi.json needs no key and serves the committed document', async (t) => {
  await withServer(async (s) => {
    const reply = await s.get('/api/external/openapi.json', { key: null });
    t.is(reply.status, 200);
    t.regex(reply.headers.get('content-type') ?? '', /^application\/json/);
    t.deepEqual(reply.body, JSON.parse(await readFile(COMMITTED, 'utf8')));
    // Keys, YAML, paging, ?at= and the error object are all described.
    const doc = reply.body;
    t.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'bearer']);
    t.is(doc.components.securitySchemes.apiKey.name, 'x-api-key');
    const listTags = doc.paths['/api/external/tag'].get;
    t.deepEqual(listTags.parameters.map((p: { name: string }) => p.name).sort(), ['If-None-Match', 'at', 'cursor', 'draft', 'limit']);
    t.truthy(listTags.responses[200].content['application/yaml']);
    t.truthy(listTags.responses[200].headers.Link);
    t.deepEqual(doc.components.schemas.Error.required, ['error']);
    t.truthy(doc.paths['/api/external/model'].get.responses[200].content['text/vnd.likec4']);
    t.truthy(doc.paths['/api/external/model'].post.requestBody.content['application/yaml']);
  });
});

test('the current form, search and history are described with their statuses, parameters and schemas', (t) => {
  const doc = openapiDocument() as { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };
  const op = (method: string, path: string) => doc.paths[`/api/external${path}`][method];
  const params = (o: { parameters: Array<{ name: string }> }) => o.parameters.map((p) => p.name).sort();
  const create = op('post', '/tags');
  t.deepEqual(
    Object.keys(create.responses).filter((s) => /^2|409/.test(s)),
    ['201', '409'],
  );
  t.is(create.requestBody.content['application/yaml'].schema.$ref, '#/components/schemas/CurrentTagInput');
  t.is(op('post', '/attributes').responses[201].content['application/json'].schema.$ref, '#/components/schemas/Attribute');
  t.is(op('patch', '/components/{id}').requestBody.content['application/json'].schema.$ref, '#/components/schemas/CurrentComponentPatch');
  t.deepEqual(doc.components.schemas.CurrentComponentPatch.required ?? [], []);
  t.deepEqual(op('patch', '/diagrams/upsert-batch').responses[200].content['text/yaml'].schema.items, {
    $ref: '#/components/schemas/CurrentDiagram',
  });
  t.true(params(op('delete', '/components/{id}')).includes('cascade'));
  t.truthy(op('delete', '/component/{id}').responses[409]);
  // Types cannot be deleted: no operation a client generator would offer.
  t.falsy(doc.paths['/api/external/types/{id}'].delete);
  t.truthy(doc.paths['/api/external/types/{id}'].get);
  t.deepEqual(params(op('get', '/search/components')), [
    'If-None-Match',
    'at',
    'attributeId',
    'attributeValue',
    'draft',
    'name',
    'state',
    'tagId',
    'typeId',
  ]);
  t.true(op('get', '/search/dependencies').parameters.find((p: { name: string }) => p.name === 'componentId').required);
  t.deepEqual(params(op('get', '/history')), ['If-None-Match', 'at', 'before', 'draft', 'limit', 'resource', 'since', 'until']);
  t.truthy(op('get', '/history').responses[200].headers.Link);
  t.deepEqual(op('get', '/history/{commit}').parameters.find((p: { in: string }) => p.in === 'path').name, 'commit');
  t.true(op('get', '/diff').parameters.find((p: { name: string }) => p.name === 'from').required);
  t.deepEqual(
    Object.keys(op('post', '/versions').responses).filter((s) => /^2|409|412/.test(s)),
    ['201', '409', '412'],
  );
  t.is(op('post', '/revert').responses[200].content['application/json'].schema.$ref, '#/components/schemas/RevertResult');
  t.deepEqual(doc.components.schemas.HistoryEntry.required.sort(), [
    'apiContext',
    'author',
    'id',
    'parents',
    'resources',
    'summary',
    'time',
  ]);
});

test('partial updates are requests the document allows: upsert-batch of every kind, template and PATCH (a validating client sends them)', (t) => {
  const allowed: Array<[string, string, unknown]> = [
    [
      'PATCH',
      '/components/upsert-batch',
      [
        { id: 'ledger-db', desc: 'Double-entry ledger' },
        { ref: 'fraud', name: 'Fraud check' },
      ],
    ],
    ['PATCH', '/diagrams/upsert-batch', [{ id: 'payments-c2', state: 'ACTIVE' }]],
    ['PATCH', '/tags/upsert-batch', [{ id: 'pci', color: 'red' }]],
    ['PATCH', '/attributes/upsert-batch', [{ id: 'tier', required: true }]],
    ['POST', '/template', { components: [{ id: 'web-shop', desc: 'Storefront' }], diagrams: [{ id: 'shop-c1', relations: [] }] }],
    ['PATCH', '/components/payment-api', { state: 'ACTIVE', desc: null }],
    ['POST', '/diagram', [{ name: 'D', level: 'C1', relations: [{ fromRef: 'a', toComponentInstance: 'b' }] }]],
    ['POST', '/model', { diagrams: [{ name: 'D', level: 'C1', relations: [{ fromRef: 'a', toRef: 'b' }] }] }],
  ];
  for (const [method, path, body] of allowed)
    t.is(requestOutsideDocument(method, `/api/external${path}`, 200, body), undefined, `${method} ${path}`);
  // … and what the service refuses, the document refuses too.
  const refused: Array<[string, string, unknown]> = [
    ['PATCH', '/components/upsert-batch', [{ id: 7 }]],
    ['PATCH', '/components/upsert-batch', { id: 'x' }],
    ['POST', '/template', { components: [{ state: 'LIVE' }] }],
    ['POST', '/diagram', [{ name: 'D', level: 'C1', relations: [{ toRef: 'b' }] }]],
    ['POST', '/components', { desc: 'no name' }],
  ];
  for (const [method, path, body] of refused)
    t.regex(
      requestOutsideDocument(method, `/api/external${path}`, 200, body) ?? '',
      /refused by docs\/openapi\.json: body: /,
      `${method} ${path}`,
    );
  t.regex(requestOutsideDocument('GET', '/api/external/components?nmae=x', 200, undefined) ?? '', /query parameter 'nmae' is not declared/);
  t.is(requestOutsideDocument('GET', '/api/external/components?name=x&state=ACTIVE&limit=5', 200, undefined), undefined);
  t.regex(requestOutsideDocument('GET', '/api/external/components?limit=5000', 200, undefined) ?? '', /query parameter 'limit'/);
});

test('429 on every operation behind a key, with Retry-After; the drawing and the list filters are described', (t) => {
  const doc = openapiDocument() as { paths: Record<string, Record<string, any>>; components: { responses: Record<string, any> } };
  for (const route of ROUTES) {
    const responses = doc.paths[openapiPath(route)][route.method.toLowerCase()].responses;
    if (route.absolute) t.falsy(responses[429], routeKey(route));
    else t.deepEqual(responses[429], { $ref: '#/components/responses/Error429' }, routeKey(route));
  }
  t.truthy(doc.components.responses.Error429.headers['Retry-After']);
  for (const path of ['/diagram/{id}', '/diagrams/{id}']) {
    t.truthy(doc.paths[`/api/external${path}`].get.responses[200].content['image/svg+xml'], path);
  }
  const params = (path: string) => doc.paths[`/api/external${path}`].get.parameters.map((p: { name: string }) => p.name).sort();
  t.deepEqual(params('/components'), [
    'If-None-Match',
    'at',
    'attributeId',
    'attributeValue',
    'cursor',
    'draft',
    'limit',
    'name',
    'state',
    'tagId',
    'typeId',
  ]);
  t.deepEqual(params('/diagrams'), ['If-None-Match', 'at', 'componentId', 'cursor', 'draft', 'level', 'limit', 'name', 'state', 'tagId']);
  t.deepEqual(params('/types'), ['If-None-Match', 'at', 'cursor', 'draft', 'limit', 'name']);
  t.deepEqual(params('/type'), ['If-None-Match', 'at', 'cursor', 'draft', 'limit']);
  t.deepEqual(doc.paths['/api/external/components/{id}/dependencies'].get.responses[200].content['application/json'].schema, {
    type: 'array',
    items: { $ref: '#/components/schemas/Dependency' },
  });
});

test('no operation lists a parameter twice, each declares a success, and what is declared of ETag, 304 and If-Match is what a server does', async (t) => {
  const paths = openapiDocument().paths as Record<
    string,
    Record<string, { parameters?: Array<{ in: string; name: string }>; responses: Record<string, any> }>
  >;
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const names = (operation.parameters ?? []).map((p) => `${p.in}:${p.name}`);
      t.deepEqual(names, [...new Set(names)], `${method} ${path}: a parameter twice`);
      t.true(
        Object.keys(operation.responses).some((status) => status.startsWith('2')),
        `${method} ${path}: no success declared`,
      );
    }
  }
  const events = paths['/api/external/events']!.get!;
  t.truthy(events.responses['200'].content['text/event-stream']);
  t.falsy(events.responses['304']);
  const shareLinks = paths['/api/external/share-links']!.get!;
  t.falsy(shareLinks.responses['200'].headers.ETag);
  t.false((shareLinks.parameters ?? []).some((p) => p.name === 'draft'));
  t.false((paths['/api/external/drafts']!.post!.parameters ?? []).some((p) => p.name === 'If-Match'));
  await withServer(async (s) => {
    const listed = await s.get('/api/external/share-links');
    t.is(listed.status, 200);
    t.is(listed.headers.get('etag'), null, 'as declared: no ETag');
    const tags = await s.get('/api/external/tags');
    const again = await s.get('/api/external/drafts', { headers: { 'if-none-match': tags.headers.get('etag')! } });
    t.is(again.status, 200, 'as declared: no 304 for drafts');
  });
});
