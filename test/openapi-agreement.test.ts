/**
 * The OpenAPI document and the server agree on the current form's requests (docs/api.md §13,
 * §15): each request below is judged by docs/openapi.json (Ajv, JSON Schema 2020-12, as a
 * generated client or a validating proxy judges it before sending) and sent to a real server
 * over HTTP. The document allows it exactly when the server takes it (2xx); what the document
 * refuses, the server refuses with 400. A client generated from the document thus never builds a
 * request the document calls valid and the server refuses: ids a client chooses, in the bodies
 * of POST, PATCH, upsert-batch and /template.
 */
import test, { type ExecutionContext } from 'ava';
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
