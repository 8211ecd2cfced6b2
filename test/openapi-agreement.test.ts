/**
 * The OpenAPI document and the server agree on the current form's requests (docs/api.md §13,
 * §15): each request below is judged by docs/openapi.json (Ajv, JSON Schema 2020-12, as a
 * generated client or a validating proxy judges it before sending) and sent to a real server
 * over HTTP. The document allows it exactly when the server takes it (2xx); what the document
 * refuses, the server refuses with 400. A client generated from the document thus never builds a
 * request the document calls valid and the server refuses: ids a client chooses, relation ends,
 * the bodies of PATCH, upsert-batch and /template, draft names, version names and webhook bodies.
 *
 * Rules that JSON Schema cannot state (two spellings of one field that must agree, names that
 * must resolve in the model) are said in the schema's description: those requests are listed
 * apart, refused by the server, allowed by the document, and the description that says so is
 * checked to be there.
 */
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API } from './support/current.js';
import { documentObjections } from './support/requests.js';
import { type TestServer, withServer } from './support/server.js';

interface Case {
  method: 'POST' | 'PATCH';
  path: string;
  body: unknown;
}

/** The document's verdict and the server's, for one request: equal, or the test fails naming both. */
async function agree(t: ExecutionContext, s: TestServer, { method, path, body }: Case): Promise<boolean> {
  const objections = documentObjections(method, `${API}${path}`, body);
  const what = `${method} ${path} ${JSON.stringify(body)}`;
  if (objections === undefined) {
    t.fail(`${what}: no such operation in docs/openapi.json`);
    return false;
  }
  const reply = await s.request(method, `${API}${path}`, { body });
  const served = reply.status >= 200 && reply.status < 300;
  if (!served) t.is(reply.status, 400, `${what}: ${reply.text}`);
  t.is(
    objections.length === 0,
    served,
    `${what}: the server answered ${reply.status} ${reply.text}; the document ${objections.length === 0 ? 'allows it' : `refuses it: ${objections.join('; ')}`}`,
  );
  return served;
}

/** Ids a client may choose (docs/api.md §13): one of each edge of the rule. */
const GOOD_IDS = [
  'payment-api',
  'a.b_c-9',
  '0',
  'x'.repeat(100),
  // Device names only alone or before a '.': these are not.
  'console',
  'com10',
  'nul-x',
  'lpt',
  // Only the path segment itself is reserved.
  'upsert-batch.v2',
  '01m80b7wfn8d8mxpp0625bj3q1',
];

/** Ids the rule refuses, each for its own reason, and ids that are not strings. */
const BAD_IDS: unknown[] = [
  'Payment',
  'PAYMENT-API',
  '-x',
  '.x',
  '_x',
  'a..b',
  'a.',
  'a/b',
  'a\\b',
  'a b',
  'a:b',
  'x'.repeat(101),
  '',
  'ä',
  'upsert-batch',
  'con',
  'nul.x',
  'com1',
  'lpt9.yaml',
  'aux.tar.gz',
  'prn.',
  7,
  null,
  ['a'],
];

/** Every way the current form creates a resource with a client's id: one element, with the id given. */
const CREATES: Array<{ name: string; body: (id: unknown) => Case }> = [
  { name: 'POST /components', body: (id) => ({ method: 'POST', path: '/components', body: { id, name: 'C' } }) },
  { name: 'POST /diagrams', body: (id) => ({ method: 'POST', path: '/diagrams', body: { id, name: 'D', level: 'C1' } }) },
  { name: 'POST /tags', body: (id) => ({ method: 'POST', path: '/tags', body: { id, name: 'T', color: 'red' } }) },
  { name: 'POST /attributes', body: (id) => ({ method: 'POST', path: '/attributes', body: { id, name: 'A', type: 'STRING' } }) },
  {
    name: 'PATCH /components/upsert-batch',
    body: (id) => ({ method: 'PATCH', path: '/components/upsert-batch', body: [{ id, name: 'C' }] }),
  },
  { name: 'PATCH /diagrams/upsert-batch', body: (id) => ({ method: 'PATCH', path: '/diagrams/upsert-batch', body: [{ id, name: 'D' }] }) },
  {
    name: 'PATCH /tags/upsert-batch',
    body: (id) => ({ method: 'PATCH', path: '/tags/upsert-batch', body: [{ id, name: 'T', color: 'red' }] }),
  },
  {
    name: 'PATCH /attributes/upsert-batch',
    body: (id) => ({ method: 'PATCH', path: '/attributes/upsert-batch', body: [{ id, name: 'A', type: 'BOOLEAN' }] }),
  },
  { name: 'POST /template (component)', body: (id) => ({ method: 'POST', path: '/template', body: { components: [{ id, name: 'C' }] } }) },
  { name: 'POST /template (diagram)', body: (id) => ({ method: 'POST', path: '/template', body: { diagrams: [{ id, name: 'D' }] } }) },
];

for (const create of CREATES) {
  test(`ids a client chooses: ${create.name} — the document allows an id exactly when the server takes it`, (t) =>
    // A server of its own: ids are unique across the organization, so each good id is taken once here.
    withServer(async (s) => {
      for (const id of GOOD_IDS) t.true(await agree(t, s, create.body(id)), `${create.name} ${id}`);
      for (const id of BAD_IDS) t.false(await agree(t, s, create.body(id)), `${create.name} ${JSON.stringify(id)}`);
    }));
}

test('PATCH /<plural>/{id}: an id in the body is ignored (the path names the resource), by the document too', (t) =>
  withServer(async (s) => {
    t.is((await s.post(`${API}/components`, { id: 'payment-api', name: 'Payment API' })).status, 201);
    t.is((await s.post(`${API}/tags`, { id: 'pci', name: 'PCI', color: 'red' })).status, 201);
    for (const id of ['other', 'Not An Id', 'upsert-batch', 5, null]) {
      t.true(await agree(t, s, { method: 'PATCH', path: '/components/payment-api', body: { id, desc: `sent with ${String(id)}` } }));
      t.true(await agree(t, s, { method: 'PATCH', path: '/tags/pci', body: { id, desc: `sent with ${String(id)}` } }));
    }
    t.is((await s.get(`${API}/components/payment-api`)).body.id, 'payment-api');
  }));

/** Relation ends as the current form takes them: each end in either spelling, one of the two required. */
const GOOD_ENDS: unknown[] = [
  { fromRef: 'a', toRef: 'b' },
  { fromComponentInstance: 'a', toComponentInstance: 'b' },
  { fromRef: 'a', toComponentInstance: 'b', label: 'calls' },
  { fromComponentInstance: 'b', toRef: 'a' },
  { fromRef: 'a', fromComponentInstance: 'a', toRef: 'b', toComponentInstance: 'b' },
];
const BAD_ENDS: unknown[] = [
  {},
  { label: 'no ends' },
  { fromRef: 'a' },
  { toRef: 'b' },
  { fromComponentInstance: 'a' },
  { fromRef: 'a', fromComponentInstance: 'a' },
  { toRef: 'b', toComponentInstance: 'b' },
  { fromRef: 3, toRef: 'b' },
  { fromRef: null, toRef: 'b' },
  { fromRef: 'a', toComponentInstance: ['b'] },
  'a->b',
];

const INSTANCES = [{ ref: 'a' }, { ref: 'b' }];

/** Every current-form write that carries a diagram's relations. */
const RELATION_WRITES: Array<{ name: string; body: (relation: unknown) => Case }> = [
  {
    name: 'POST /diagrams',
    body: (r) => ({ method: 'POST', path: '/diagrams', body: { name: 'D', componentInstances: INSTANCES, relations: [r] } }),
  },
  {
    name: 'PATCH /diagrams/{id}',
    body: (r) => ({ method: 'PATCH', path: '/diagrams/ctx', body: { componentInstances: INSTANCES, relations: [r] } }),
  },
  {
    name: 'PATCH /diagrams/{id} (relations alone)',
    body: (r) => ({ method: 'PATCH', path: '/diagrams/ctx', body: { relations: [r] } }),
  },
  {
    name: 'PATCH /diagrams/upsert-batch',
    body: (r) => ({
      method: 'PATCH',
      path: '/diagrams/upsert-batch',
      body: [{ id: 'ctx', componentInstances: INSTANCES, relations: [r] }],
    }),
  },
  {
    name: 'POST /template',
    body: (r) => ({
      method: 'POST',
      path: '/template',
      body: { diagrams: [{ id: 'ctx', componentInstances: INSTANCES, relations: [{ fromRef: 'a', toRef: 'b' }, r] }] },
    }),
  },
];

test('relation ends: the document allows a relation exactly when the server takes it, on every write that carries one', (t) =>
  withServer(async (s) => {
    t.is((await s.post(`${API}/diagrams`, { id: 'ctx', name: 'Ctx', componentInstances: INSTANCES })).status, 201);
    for (const write of RELATION_WRITES) {
      for (const end of GOOD_ENDS) t.true(await agree(t, s, write.body(end)), `${write.name} ${JSON.stringify(end)}`);
      for (const end of BAD_ENDS) t.false(await agree(t, s, write.body(end)), `${write.name} ${JSON.stringify(end)}`);
    }
  }));

/** The description the document gives the schema at `pointer` (below `components.schemas`). */
function description(pointer: string[]): string {
  const document = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'docs', 'openapi.json'), 'utf8'));
  let node = document.components.schemas;
  for (const step of pointer) node = node?.[step];
  return typeof node?.description === 'string' ? node.description : '';
}

const RELATION = ['CurrentDiagramInput', 'properties', 'relations', 'items', 'properties'];
const INSTANCE = ['CurrentDiagramInput', 'properties', 'componentInstances', 'items', 'properties'];

test('rules JSON Schema cannot state are in the descriptions: the server refuses these, the document allows them and says why', (t) =>
  withServer(async (s) => {
    const type = async (slug: string) => (await s.get(`${API}/types`)).body.find((x: { slug: string }) => x.slug === slug).id;
    t.is((await s.post(`${API}/components`, { id: 'payment-api', name: 'Payment API' })).status, 201);
    t.is((await s.post(`${API}/components`, { id: 'ledger-db', name: 'Ledger DB' })).status, 201);
    const cases: Array<{ request: Case; error: string | RegExp; says: string[]; words: RegExp }> = [
      {
        request: {
          method: 'POST',
          path: '/diagrams',
          body: { name: 'D', componentInstances: INSTANCES, relations: [{ fromRef: 'a', fromComponentInstance: 'b', toRef: 'b' }] },
        },
        error: /^relations\.0\.fromRef 'a' and fromComponentInstance 'b' differ\./,
        says: [...RELATION, 'fromRef'],
        words: /`fromComponentInstance` is another spelling of this field: sent both, they must be equal/,
      },
      {
        request: {
          method: 'POST',
          path: '/diagrams',
          body: { name: 'D', componentInstances: INSTANCES, relations: [{ fromRef: 'zz', toRef: 'b' }] },
        },
        error: /^Component instance 'zz' does not exist in this diagram\./,
        says: [...RELATION, 'fromRef'],
        words: /component instance of this diagram .* one the diagram does not have is 400/,
      },
      {
        request: {
          method: 'POST',
          path: '/diagrams',
          body: { name: 'D', componentInstances: INSTANCES, relations: [{ id: 'nope', fromRef: 'a', toRef: 'b' }] },
        },
        error: /^Relation with id 'nope' does not exist in this diagram\./,
        says: [...RELATION, 'id'],
        words: /an id the diagram does not have is 400/,
      },
      {
        request: {
          method: 'POST',
          path: '/diagrams',
          body: { name: 'D', componentInstances: [{ componentId: 'payment-api', component: 'ledger-db' }] },
        },
        error: /^componentId 'payment-api' and component 'ledger-db' differ\./,
        says: [...INSTANCE, 'componentId'],
        words: /`component` is another spelling of this field: sent both, they must be equal/,
      },
      {
        request: {
          method: 'POST',
          path: '/diagrams',
          body: {
            name: 'D',
            componentInstances: [
              { ref: 'box', isContainer: true },
              { ref: 'c', parentId: 'box', parent: 'c' },
            ],
          },
        },
        error: /^parent 'c' and parentId 'box' differ\./,
        says: [...INSTANCE, 'parentId'],
        words: /`parent` is another spelling of this field: sent both, they must be equal/,
      },
      {
        request: {
          method: 'POST',
          path: '/diagrams',
          body: {
            name: 'D',
            componentInstances: [
              { ref: 'box', isContainer: true },
              { ref: 'inner', isContainer: true, parentId: 'box' },
            ],
          },
        },
        error: /^Container instance 'inner' cannot have a parent\./,
        says: [...INSTANCE, 'isContainer'],
        words: /cannot have a parent/,
      },
      {
        request: { method: 'POST', path: '/components', body: { name: 'C', typeId: await type('container'), typeSlug: 'person' } },
        error: /name different types\./,
        says: ['CurrentComponentInput', 'properties', 'typeId'],
        words: /both must name one type/,
      },
      {
        request: { method: 'POST', path: '/attributes', body: { name: 'Tier', type: 'LIST' } },
        error: /^A LIST attribute needs a list of values\./,
        says: ['CurrentAttributeInput', 'properties', 'list'],
        words: /required when `type` is `LIST`/,
      },
      {
        request: { method: 'POST', path: '/attributes', body: { name: 'Tier', type: 'STRING', list: ['a'] } },
        error: /^Only a LIST attribute may have a list; this one is STRING\./,
        says: ['CurrentAttributeInput', 'properties', 'list'],
        words: /refused for any other type/,
      },
      {
        request: { method: 'POST', path: '/attributes', body: { name: 'Tier', type: 'LIST', list: ['a', 'a'] } },
        error: /^Duplicate list values are not allowed, got several of: a/,
        says: ['CurrentAttributeInput', 'properties', 'list'],
        words: /each option at most once/,
      },
      {
        request: { method: 'PATCH', path: '/components/upsert-batch', body: [{ id: 'new-one', desc: 'no name' }] },
        error: 'Invalid JSON: 0.name: Required',
        says: ['CurrentComponentUpsert'],
        words: /Any other element creates a resource, and needs what creating one needs/,
      },
    ];
    for (const { request, error, says, words } of cases) {
      const what = `${request.method} ${request.path} ${JSON.stringify(request.body)}`;
      t.deepEqual(documentObjections(request.method, `${API}${request.path}`, request.body), [], `${what}: the document allows it`);
      const reply = await s.request(request.method, `${API}${request.path}`, { body: request.body });
      t.is(reply.status, 400, `${what}: ${reply.text}`);
      if (typeof error === 'string') t.is(reply.body.error, error, what);
      else t.regex(reply.body.error, error, what);
      t.regex(description(says), words, `${what}: the description at ${says.join('.')}`);
    }
  }));

/** Draft names (docs/api.md §17): one of each edge of the rule. */
const GOOD_DRAFT_NAMES = ['payments-v2', '0', 'a.b_c-9', 'x'.repeat(63), 'a.lockx', 'mainline', 'v1.2'];
const BAD_DRAFT_NAMES: unknown[] = [
  'main',
  'Payments',
  '-x',
  '.x',
  '_x',
  'a..b',
  'a.',
  'a.lock',
  'x'.repeat(64),
  '',
  'a/b',
  'a b',
  'ä',
  7,
  null,
];

test('draft names: the document allows a name exactly when the server opens the draft', (t) =>
  withServer(async (s) => {
    for (const name of GOOD_DRAFT_NAMES) t.true(await agree(t, s, { method: 'POST', path: '/drafts', body: { name } }), name);
    for (const name of BAD_DRAFT_NAMES)
      t.false(await agree(t, s, { method: 'POST', path: '/drafts', body: { name } }), JSON.stringify(name));
  }));

/**
 * Where a request names a draft that may exist (`?draft=` on reads and writes, `/drafts/{name}`),
 * the document states the rule of every draft name: what it refuses, the server refuses (400,
 * `Invalid draft name`); what it allows is a draft, or one that does not exist (404). `main`
 * names no draft, yet is a name: 404.
 */
test('draft names in ?draft= and /drafts/{name}: the document refuses a name exactly when the server does (400)', (t) =>
  withServer(async (s) => {
    for (const name of GOOD_DRAFT_NAMES) t.is((await s.post(`${API}/drafts`, { name })).status, 201, name);
    const names = [...GOOD_DRAFT_NAMES, 'not-opened', ...BAD_DRAFT_NAMES.filter((name): name is string => typeof name === 'string')];
    for (const name of names) {
      const query = `draft=${encodeURIComponent(name)}`;
      const segment = encodeURIComponent(name);
      const requests: Array<[method: string, path: string, body?: unknown]> = [
        ['GET', `/tag?${query}`],
        ['GET', `/components?${query}`],
        ['POST', `/tag?${query}`, [{ name: 'In a draft', color: 'red' }]],
        ['GET', `/history?${query}`],
        ['GET', `/changes?${query}`],
        // An empty segment is another path (the list of drafts).
        ...(name === ''
          ? []
          : ([
              ['GET', `/drafts/${segment}`],
              ['GET', `/drafts/${segment}/diff`],
              ['POST', `/drafts/${segment}/reopen`],
            ] as Array<[string, string]>)),
      ];
      for (const [method, path, body] of requests) {
        const what = `${method} ${path}`;
        const objections = documentObjections(method, `${API}${path}`, body);
        if (objections === undefined) {
          t.fail(`${what}: no such operation in docs/openapi.json`);
          continue;
        }
        const reply = await s.request(method, `${API}${path}`, { body });
        const refused = reply.status === 400;
        if (refused) t.regex(reply.body.error, /^Invalid draft name /, what);
        t.is(
          objections.length > 0,
          refused,
          `${what}: the server answered ${reply.status} ${reply.text}; the document ${objections.length === 0 ? 'allows it' : `refuses it: ${objections.join('; ')}`}`,
        );
      }
    }
  }));

/** Version names (docs/api.md §7.4): the service's own rule, then git's rules for a tag's name. */
const GOOD_VERSION_NAMES = [
  'v1',
  'V2.0',
  'release/2026-11',
  'rc.1/final',
  'a_b',
  'a-',
  'x'.repeat(200),
  'Main',
  'mainline',
  'X_HEADS',
  'abc',
  'abcg',
  '0123456789abcdefg',
  'v1.lockx',
  'tags',
  'refsx/a',
  'originals/v1',
  'drafts',
];
const BAD_VERSION_NAMES: unknown[] = [
  'main',
  'HEAD',
  'FETCH_HEAD',
  'AUTO_MERGE',
  'CHERRY_PICK_HEAD',
  'deadbeef',
  'DEADBEEF',
  'DeadBeef',
  'refs/tags/v1',
  'tags/v1',
  'heads/main',
  'remotes/origin/main',
  'origin',
  'origin/main',
  'drafts/review',
  'Origin/main',
  '1234',
  'a..b',
  'a//b',
  'a.lock',
  'b/',
  'c.',
  'd/.e',
  'f.lock/g',
  '-a',
  '.a',
  '/a',
  '_a',
  'x'.repeat(201),
  '',
  'a b',
  'a:b',
  'a@{1}',
  'ä',
  7,
  null,
];

test('version names: the document allows a name exactly when the server makes the version', (t) =>
  withServer(async (s) => {
    for (const name of GOOD_VERSION_NAMES) t.true(await agree(t, s, { method: 'POST', path: '/versions', body: { name } }), name);
    for (const name of BAD_VERSION_NAMES)
      t.false(await agree(t, s, { method: 'POST', path: '/versions', body: { name } }), JSON.stringify(name));
  }));

/** A public address (TEST-NET-3): the server takes it without resolving a name. */
const HOOK = 'https://203.0.113.7/';

const GOOD_WEBHOOKS: unknown[] = [
  { url: `${HOOK}hook` },
  { url: 'http://203.0.113.7:8080/h?x=1', events: ['model.changed'] },
  { url: 'HTTPS://203.0.113.7/Hook' },
  { url: HOOK, events: ['draft.merged', 'draft.merged'] },
  { url: 'https://user:secret@203.0.113.7/h' },
  { url: HOOK + 'p'.repeat(2048 - HOOK.length) },
];
const BAD_WEBHOOKS: unknown[] = [
  { url: HOOK, events: [] },
  { url: HOOK, events: ['nope'] },
  { url: HOOK, events: 'model.changed' },
  { url: 'ftp://203.0.113.7/x' },
  { url: 'file:///etc/passwd' },
  { url: 'javascript:alert(1)' },
  { url: 'ws://203.0.113.7/' },
  { url: '203.0.113.7/hook' },
  { url: 'https:203.0.113.7/x' },
  { url: ` ${HOOK}` },
  { url: '' },
  { url: HOOK + 'p'.repeat(2049 - HOOK.length) },
  { url: 7 },
  { url: null },
  {},
];

test('webhook subscriptions: the document allows a body exactly when the server makes the subscription', (t) =>
  withServer(async (s) => {
    for (const body of GOOD_WEBHOOKS) {
      t.true(await agree(t, s, { method: 'POST', path: '/webhooks', body }), JSON.stringify(body));
      // At most 20 subscriptions: each made is removed again.
      for (const made of (await s.get(`${API}/webhooks`)).body as Array<{ id: string }>)
        t.is((await s.request('DELETE', `${API}/webhooks/${made.id}`)).status, 200);
    }
    for (const body of BAD_WEBHOOKS) t.false(await agree(t, s, { method: 'POST', path: '/webhooks', body }), JSON.stringify(body));
  }));

test('what the document refuses of draft names, version names and webhooks, the server refuses in its own words, not as a schema failure', (t) =>
  withServer(async (s) => {
    const cases: Array<[path: string, body: unknown, error: string]> = [
      [
        '/drafts',
        { name: 'Bad Name' },
        "Invalid draft name 'Bad Name': use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit (at most 63).",
      ],
      ['/drafts', { name: 'main' }, "Invalid draft name 'main': it names the main branch; choose another."],
      ['/drafts', { name: 7 }, 'Invalid JSON: name: Expected string, received number'],
      [
        '/versions',
        { name: 'a..b' },
        "Invalid version name 'a..b': use 1 to 200 ASCII letters, digits, '.', '-', '_' and '/', starting with a letter or digit (no '..', no '.lock' at the end).",
      ],
      ['/versions', { name: 'b/' }, "Invalid version name 'b/': git does not accept it as a tag name."],
      ['/webhooks', { url: HOOK, events: [] }, "A webhook needs at least one event type in 'events'."],
      [
        '/webhooks',
        { url: HOOK, events: ['nope'] },
        "Invalid JSON: events.0: Invalid enum value. Expected 'model.changed' | 'draft.opened' | 'draft.updated' | 'draft.merged' | 'draft.closed', received 'nope'",
      ],
      ['/webhooks', { url: 'ftp://203.0.113.7/x' }, "Invalid webhook url 'ftp://203.0.113.7/x': use http:// or https://."],
      ['/webhooks', { url: HOOK + 'p'.repeat(2049 - HOOK.length) }, 'Webhook url is too long (at most 2048 characters).'],
    ];
    for (const [path, body, error] of cases) {
      const reply = await s.post(`${API}${path}`, body);
      t.is(reply.status, 400, `${path} ${JSON.stringify(body)}`);
      t.is(reply.body.error, error, `${path} ${JSON.stringify(body)}`);
    }
  }));

test('webhook urls JSON Schema cannot judge: the server refuses these, the document allows them and says why', (t) =>
  withServer(async (s) => {
    const cases: Array<{ url: string; error: RegExp; words: RegExp }> = [
      { url: 'http://', error: /^Invalid webhook url 'http:\/\/'\.$/, words: /a url that is no URL \(`http:\/\/`\) .* is 400/ },
      { url: 'http://127.0.0.1/hook', error: /points to a private or loopback address/, words: /no private or loopback address/ },
    ];
    for (const { url, error, words } of cases) {
      t.deepEqual(documentObjections('POST', `${API}/webhooks`, { url }), [], `${url}: the document allows it`);
      const reply = await s.post(`${API}/webhooks`, { url });
      t.is(reply.status, 400, reply.text);
      t.regex(reply.body.error, error);
      t.regex(description(['WebhookInput', 'properties', 'url']), words);
    }
  }));
