import test from 'ava';
import YAML from 'yaml';
import { KeyStore } from '../src/store/keys.js';
import { TestServer, withServer, type Reply } from './support/server.js';

/**
 * The HTTP surface shared by every endpoint: authentication and roles, routing errors,
 * body parsing, ETags and conditional requests, `?at=`, paging, YAML and the request log.
 * Tests run serially: several compare the ETag with the tip of `main`.
 */

let s: TestServer;

test.before(async () => {
  s = await TestServer.start();
});

test.after.always(async () => {
  await s?.close();
});

const API = '/api/external';

/** Every GET endpoint (single reads get an id of an existing resource in their own test). */
const LISTS = ['/tag', '/attribute', '/attributes', '/component', '/diagram', '/model', '/type', '/types'];

/** Every write the API has, with a body that changes nothing. */
const WRITES: Array<[method: string, path: string, body: unknown]> = [
  ['POST', '/tag', []],
  ['PUT', '/attribute', []],
  ['POST', '/attribute', []],
  ['PUT', '/attributes', []],
  ['POST', '/attributes', []],
  ['PUT', '/component', []],
  ['POST', '/component', []],
  ['POST', '/diagram', []],
  ['POST', '/model', {}],
];

/** A request sent with exactly these headers: the harness adds none (no key, no Content-Type). */
async function bare(method: string, path: string, headers: Record<string, string>, body?: Uint8Array): Promise<Reply> {
  const response = await fetch(s.url + path, { method, headers, body });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  const parsed = text === '' ? undefined : type.includes('yaml') ? YAML.parse(text) : JSON.parse(text);
  return { status: response.status, headers: response.headers, text, body: parsed };
}

function etag(reply: Reply): string | null {
  return reply.headers.get('etag');
}

function assertError(t: import('ava').ExecutionContext, reply: Reply, status: number, error: string) {
  t.is(reply.status, status, reply.text);
  t.deepEqual(reply.body, { error });
}

// ---------------------------------------------------------------------------------------
// Health and authentication
// ---------------------------------------------------------------------------------------

test.serial('GET /healthz needs no key', async (t) => {
  const reply = await s.get('/healthz', { key: null });
  t.is(reply.status, 200);
  t.deepEqual(reply.body, { ok: true });
  t.regex(reply.headers.get('content-type') ?? '', /^application\/json/);
});

test.serial('no key: 401 Missing API key.', async (t) => {
  for (const path of LISTS) assertError(t, await s.get(API + path, { key: null }), 401, 'Missing API key.');
  for (const [method, path, body] of WRITES) {
    assertError(t, await s.request(method, API + path, { key: null, body }), 401, 'Missing API key.');
  }
  // Empty header values are no key either.
  assertError(t, await bare('GET', `${API}/tag`, { 'x-api-key': '' }), 401, 'Missing API key.');
});

test.serial('unknown and malformed keys: 401 Invalid API key.', async (t) => {
  const before = await s.state();
  const unknown = `c4s_${'A'.repeat(43)}`;
  const cases: Array<Record<string, string>> = [
    { authorization: `Bearer ${unknown}` },
    { 'x-api-key': unknown },
    { 'x-api-key': 'not-a-key' },
    { authorization: `Basic ${Buffer.from(`user:${s.key}`).toString('base64')}` },
    { authorization: s.key }, // no scheme
    { authorization: 'Bearer' },
    { authorization: `Bearer ${s.key} extra` },
    // Two different keys, even when both are valid.
    { authorization: `Bearer ${s.key}`, 'x-api-key': s.readerKey },
    { authorization: `Bearer ${s.readerKey}`, 'x-api-key': s.key },
    { authorization: `Bearer ${s.key}`, 'x-api-key': unknown },
  ];
  for (const headers of cases) {
    assertError(t, await bare('GET', `${API}/tag`, headers), 401, 'Invalid API key.');
    assertError(
      t,
      await bare(
        'POST',
        `${API}/tag`,
        { ...headers, 'content-type': 'application/json' },
        Buffer.from(JSON.stringify([{ name: 'sneaky', color: 'red' }])),
      ),
      401,
      'Invalid API key.',
    );
  }
  t.is(await s.state(), before);
});

test.serial('a revoked key is refused at once', async (t) => {
  const keys = new KeyStore(s.dataDir);
  const { key, record } = await keys.create(s.slug, { label: 'short-lived' });
  t.is((await s.get(`${API}/tag`, { key })).status, 200);
  t.is((await s.post(`${API}/tag`, [], { key })).status, 200);
  await keys.revoke(s.slug, record.id);
  assertError(t, await s.get(`${API}/tag`, { key }), 401, 'Invalid API key.');
  assertError(t, await bare('GET', `${API}/tag`, { 'x-api-key': key }), 401, 'Invalid API key.');
  assertError(t, await s.post(`${API}/tag`, [{ name: 'late', color: 'red' }], { key }), 401, 'Invalid API key.');
  // The other keys are unaffected.
  t.is((await s.get(`${API}/tag`)).status, 200);
  t.is((await s.get(`${API}/tag`, { key: s.readerKey })).status, 200);
});

test.serial('x-api-key and Authorization: Bearer both work on every endpoint', async (t) => {
  const head = await s.head();
  const forms: Array<Record<string, string>> = [
    { authorization: `Bearer ${s.key}` },
    { authorization: `bearer ${s.key}` },
    { 'x-api-key': s.key },
    { authorization: `Bearer ${s.key}`, 'x-api-key': s.key }, // the same key twice is fine
  ];
  for (const headers of forms) {
    for (const path of LISTS) {
      const reply = await bare('GET', API + path, headers);
      t.is(reply.status, 200, `GET ${path} ${JSON.stringify(Object.keys(headers))}: ${reply.text}`);
    }
    for (const [method, path, body] of WRITES) {
      const reply = await bare(method, API + path, { ...headers, 'content-type': 'application/json' }, Buffer.from(JSON.stringify(body)));
      t.is(reply.status, 200, `${method} ${path}: ${reply.text}`);
      t.is(etag(reply), `"${head}"`);
    }
  }
  // Writes that change nothing make no commit.
  t.is(await s.head(), head);
});

test.serial('a reader key reads everything and may not write, whatever the body', async (t) => {
  const tag = (await s.post(`${API}/tag`, [{ name: 'for readers', color: 'gray' }])).body[0];
  const before = await s.state();
  for (const path of [...LISTS, `/tag/${tag.id}`]) {
    t.is((await s.get(API + path, { key: s.readerKey })).status, 200, path);
    t.is((await bare('GET', API + path, { 'x-api-key': s.readerKey })).status, 200, path);
  }
  const bodies: Array<{ raw: string; type?: string }> = [
    { raw: JSON.stringify([{ name: 'x', color: 'red' }]), type: 'application/json' },
    { raw: '{ not json', type: 'application/json' },
    { raw: '[]', type: 'text/plain' },
    { raw: 'a: [', type: 'application/yaml' },
    { raw: '' },
  ];
  for (const [method, path] of WRITES) {
    for (const { raw, type } of bodies) {
      const headers: Record<string, string> = { authorization: `Bearer ${s.readerKey}` };
      if (type) headers['content-type'] = type;
      assertError(t, await bare(method, API + path, headers, Buffer.from(raw)), 403, 'This API key may only read.');
      assertError(
        t,
        await bare(method, API + path, { ...headers, authorization: '', 'x-api-key': s.readerKey }, Buffer.from(raw)),
        403,
        'This API key may only read.',
      );
    }
  }
  t.is(await s.state(), before);
});

// ---------------------------------------------------------------------------------------
// Routing, content types, body parsing
// ---------------------------------------------------------------------------------------

test.serial('unknown paths: 404 Not found.', async (t) => {
  for (const path of ['/nope', '/api', '/api/external', `${API}/nope`, `${API}/tagz`, `${API}/tag/x/y`, '/healthz/x']) {
    // /tags: the current form (issue 11)
    assertError(t, await s.get(path), 404, 'Not found.');
  }
  assertError(t, await s.post(`${API}/nope`, []), 404, 'Not found.');
});

test.serial("unknown pages a browser asks for: the viewer's 404 page; API, git and agents' paths keep JSON", async (t) => {
  const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
  for (const path of ['/nope', '/orgs/demo/nope', '/favicon.ico/x']) {
    const page = await s.get(path, { key: null, headers: browser });
    t.is(page.status, 404, path);
    t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
    t.regex(page.text, /<h1>404<\/h1><p>There is no page at this address\.<\/p><p><a href="\/">/);
  }
  for (const path of [`${API}/nope`, '/api/nope', '/git/nope', '/mcp/nope', '/healthz/x']) {
    assertError(t, await s.get(path, { key: null, headers: browser }), 404, 'Not found.');
  }
  // Any other client (curl's */*, JSON) and any other method keep the contract's error.
  assertError(t, await s.get('/nope', { key: null, headers: { accept: '*/*' } }), 404, 'Not found.');
  assertError(t, await s.post('/nope', [], { headers: browser }), 404, 'Not found.');
});

test.serial('known path, wrong method: 405 Method not allowed.', async (t) => {
  const before = await s.state();
  const cases: Array<[string, string, string]> = [
    ['DELETE', '/tag', 'HEAD, GET, POST'],
    ['PUT', '/tag', 'HEAD, GET, POST'],
    ['PATCH', '/tag', 'HEAD, GET, POST'],
    ['PROPFIND', '/tag', 'HEAD, GET, POST'], // a method the router does not know at all
    ['PUT', '/diagram', 'HEAD, GET, POST'],
    ['DELETE', '/diagram', 'HEAD, GET, POST'],
    ['PATCH', '/attribute', 'HEAD, GET, PUT, POST'],
    ['DELETE', '/attributes', 'HEAD, GET, PUT, POST'],
    ['PATCH', '/component', 'HEAD, GET, PUT, POST'],
    ['PUT', '/model', 'HEAD, GET, POST'],
    ['POST', '/type', 'HEAD, GET'],
    ['PUT', '/types', 'HEAD, GET'],
    ['POST', '/tag/01m80azw30dwevft1dergadsbr', 'HEAD, GET, DELETE'], // DELETE: issue 11
  ];
  for (const [method, path, allow] of cases) {
    for (const key of [s.key, s.readerKey, null]) {
      const reply = await s.request(method, API + path, { body: [], key });
      assertError(t, reply, 405, 'Method not allowed.');
      t.is(reply.headers.get('allow'), allow, `${method} ${path}`);
    }
  }
  const health = await s.request('POST', '/healthz', { key: null });
  assertError(t, health, 405, 'Method not allowed.');
  t.is(health.headers.get('allow'), 'HEAD, GET');
  t.is(await s.state(), before);
});

test.serial('unsupported Content-Type on a write: 415', async (t) => {
  const before = await s.state();
  const auth = { authorization: `Bearer ${s.key}` };
  const body = Buffer.from(JSON.stringify([{ name: 'x', color: 'red' }]));
  for (const [method, path] of WRITES) {
    assertError(
      t,
      await bare(method, API + path, { ...auth, 'content-type': 'text/plain' }, body),
      415,
      'Unsupported Content-Type: text/plain.',
    );
    assertError(
      t,
      await bare(method, API + path, { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body),
      415,
      'Unsupported Content-Type: application/x-www-form-urlencoded.',
    );
    assertError(t, await bare(method, API + path, auth, body), 415, 'Unsupported Content-Type: (none).');
  }
  assertError(
    t,
    await bare('POST', `${API}/tag`, { ...auth, 'content-type': 'text/plain; charset=utf-8' }, body),
    415,
    'Unsupported Content-Type: text/plain.',
  );
  t.is(await s.state(), before);
});

test.serial('a body over the limit: 413 Request body too large.', async (t) => {
  const small = await TestServer.start({ bodyLimit: 1000 });
  try {
    const before = await small.state();
    const big = [{ name: 'x'.repeat(2000), color: 'red' }];
    assertError(t, await small.post(`${API}/tag`, big), 413, 'Request body too large.');
    assertError(t, await small.post(`${API}/tag`, big, { yaml: true }), 413, 'Request body too large.');
    assertError(t, await small.put(`${API}/attribute`, [{ name: 'y'.repeat(2000), type: 'STRING' }]), 413, 'Request body too large.');
    assertError(t, await small.post(`${API}/model`, { components: [{ name: 'z'.repeat(2000) }] }), 413, 'Request body too large.');
    t.is(await small.state(), before);
    // Just under the limit is accepted.
    const fits = await small.post(`${API}/tag`, [{ name: 'x'.repeat(900), color: 'red' }]);
    t.is(fits.status, 200, fits.text);
    t.is(await small.commitCount(), JSON.parse(before).count + 1);
  } finally {
    await small.close();
  }
});

test.serial('malformed JSON: 400 Invalid JSON: <parser message>', async (t) => {
  const before = await s.state();
  for (const raw of ['[{', '{"name": }', '[1,]', 'nope', '[{"name":"a","color":"red"}] trailing']) {
    const reply = await s.request('POST', `${API}/tag`, { raw, headers: { 'content-type': 'application/json' } });
    t.is(reply.status, 400, raw);
    t.deepEqual(Object.keys(reply.body), ['error']);
    t.true(reply.body.error.startsWith('Invalid JSON: '), reply.body.error);
    t.true(reply.body.error.length > 'Invalid JSON: '.length);
  }
  const model = await s.request('POST', `${API}/model`, { raw: '{"components": [', headers: { 'content-type': 'application/json' } });
  t.is(model.status, 400);
  t.true(model.body.error.startsWith('Invalid JSON: '), model.body.error);
  assertError(
    t,
    await s.request('POST', `${API}/tag`, { raw: '', headers: { 'content-type': 'application/json' } }),
    400,
    'Invalid JSON: the request body is empty.',
  );
  t.is(await s.state(), before);
});

test.serial('malformed YAML: 400 Invalid YAML: <parser message>', async (t) => {
  const before = await s.state();
  for (const type of ['application/yaml', 'application/x-yaml', 'text/yaml']) {
    for (const raw of ['[{', 'a: b: c', '- name: x\n color: red\n  - y', 'a: 1\na: 2']) {
      const reply = await s.request('POST', `${API}/model`, { raw, headers: { 'content-type': type } });
      t.is(reply.status, 400, `${type} ${JSON.stringify(raw)}: ${reply.text}`);
      t.true(reply.body.error.startsWith('Invalid YAML: '), reply.body.error);
    }
  }
  assertError(
    t,
    await s.request('POST', `${API}/tag`, { raw: '  \n', headers: { 'content-type': 'application/yaml' } }),
    400,
    'Invalid YAML: the request body is empty.',
  );
  assertError(
    t,
    await s.request('POST', `${API}/tag`, {
      raw: '- name: a\n  color: red\n---\n- name: b\n  color: red\n',
      headers: { 'content-type': 'application/yaml' },
    }),
    400,
    "Invalid YAML: a body is one document, and this one holds several (a second '---').",
  );
  t.is(await s.state(), before);
});

test.serial('a YAML alias bomb is refused and the server keeps answering', async (t) => {
  const before = await s.state();
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  const names = 'abcdefghij';
  for (let i = 1; i < names.length; i++) {
    const prev = names[i - 1];
    lines.push(`${names[i]}: &${names[i]} [${Array(9).fill(`*${prev}`).join(',')}]`);
  }
  const bomb = `${lines.join('\n')}\n`;
  for (const path of ['/model', '/tag', '/component']) {
    const started = Date.now();
    const reply = await s.request('POST', API + path, { raw: bomb, headers: { 'content-type': 'application/yaml' } });
    t.is(reply.status, 400, reply.text);
    t.true(reply.body.error.startsWith('Invalid YAML: '), reply.body.error);
    t.true(Date.now() - started < 5000);
  }
  // The same structure as a sequence of tag objects.
  const tagBomb = `- &a {name: x, color: red}\n- &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n${Array.from(
    { length: 8 },
    (_, i) =>
      `- &c${i} [${Array(10)
        .fill(i === 0 ? '*b' : `*c${i - 1}`)
        .join(',')}]`,
  ).join('\n')}\n`;
  const reply = await s.request('POST', `${API}/tag`, { raw: tagBomb, headers: { 'content-type': 'application/yaml' } });
  t.is(reply.status, 400, reply.text);
  t.deepEqual((await s.get('/healthz', { key: null })).body, { ok: true });
  t.is((await s.get(`${API}/tag`)).status, 200);
  t.is(await s.state(), before);
});

test.serial('errors come as YAML when the client accepts YAML', async (t) => {
  for (const accept of ['application/yaml', 'application/x-yaml', 'text/yaml']) {
    const cases: Array<[Reply, number, string]> = [
      [await s.get(`${API}/tag`, { key: null, headers: { accept } }), 401, 'Missing API key.'],
      [await s.get(`${API}/nope`, { headers: { accept } }), 404, 'Not found.'],
      [await s.request('DELETE', `${API}/tag`, { headers: { accept } }), 405, 'Method not allowed.'],
      [
        await s.post(`${API}/tag`, [{ name: 1, color: 'red' }], { headers: { accept } }),
        400,
        'Invalid JSON: 0.name: Expected string, received number',
      ],
      [await s.post(`${API}/tag`, [], { key: s.readerKey, headers: { accept } }), 403, 'This API key may only read.'],
    ];
    for (const [reply, status, error] of cases) {
      t.is(reply.status, status);
      t.regex(reply.headers.get('content-type') ?? '', /^application\/yaml/);
      t.deepEqual(YAML.parse(reply.text), { error });
    }
  }
  // Without a YAML Accept, errors are JSON.
  const json = await s.get(`${API}/nope`, { headers: { accept: '*/*' } });
  t.regex(json.headers.get('content-type') ?? '', /^application\/json/);
  t.deepEqual(JSON.parse(json.text), { error: 'Not found.' });
});

// ---------------------------------------------------------------------------------------
// ETag, conditional requests, ?at=
// ---------------------------------------------------------------------------------------

test.serial('ETag is the commit of main on every GET and every write', async (t) => {
  let head = await s.head();
  for (const path of LISTS) t.is(etag(await s.get(API + path)), `"${head}"`, path);
  const write = await s.post(`${API}/tag`, [{ name: 'etag', color: 'blue' }]);
  t.is(write.status, 200);
  const newHead = await s.head();
  t.not(newHead, head);
  t.is(etag(write), `"${newHead}"`);
  head = newHead;
  t.is(etag(await s.get(`${API}/tag/${write.body[0].id}`)), `"${head}"`);
  for (const path of LISTS) t.is(etag(await s.get(API + path)), `"${head}"`, path);
  const attribute = await s.put(`${API}/attribute`, [{ name: 'etag attr', type: 'STRING' }]);
  t.is(etag(attribute), `"${await s.head()}"`);
  const model = await s.post(`${API}/model`, { components: [{ name: 'etag comp' }] });
  t.is(etag(model), `"${await s.head()}"`);
  // A write that changes nothing answers with the current commit.
  const same = await s.post(`${API}/tag`, [{ id: write.body[0].id, name: 'etag', color: 'blue' }]);
  t.is(same.status, 200);
  t.is(etag(same), `"${await s.head()}"`);
});

test.serial('HEAD answers like GET without a body', async (t) => {
  const head = await s.head();
  const reply = await s.request('HEAD', `${API}/tag`);
  t.is(reply.status, 200);
  t.is(reply.text, '');
  t.is(etag(reply), `"${head}"`);
  t.is((await s.request('HEAD', `${API}/tag`, { key: null })).status, 401);
  t.is((await s.request('HEAD', `${API}/tag`, { headers: { 'if-none-match': `"${head}"` } })).status, 304);
});

test.serial('If-None-Match with the current ETag: 304', async (t) => {
  const tag = (await s.post(`${API}/tag`, [{ name: 'cached', color: 'green' }])).body[0];
  const head = await s.head();
  for (const path of [...LISTS, `/tag/${tag.id}`, '/tag?limit=1']) {
    const first = await s.get(API + path);
    t.is(first.status, 200, path);
    t.is(etag(first), `"${head}"`);
    const again = await s.get(API + path, { headers: { 'if-none-match': `"${head}"` } });
    t.is(again.status, 304, path);
    t.is(again.text, '');
    t.is(etag(again), `"${head}"`);
    t.is(again.headers.get('vary'), 'Accept, Authorization, x-api-key, Cookie');
    t.is((await s.get(API + path, { headers: { 'if-none-match': `"${'0'.repeat(40)}"` } })).status, 200, path);
  }
  // Weak comparison, lists of tags and `*` (RFC 9110 §13.1.2); YAML clients too.
  for (const header of [`W/"${head}"`, `"${'0'.repeat(40)}", "${head}"`, '*']) {
    t.is((await s.get(`${API}/tag`, { headers: { 'if-none-match': header } })).status, 304, header);
  }
  t.is((await s.get(`${API}/tag`, { headers: { 'if-none-match': `"${head}"`, accept: 'application/yaml' } })).status, 304);
  // `fetch` adds `Cache-Control: no-cache` to a request with If-None-Match; a plain client does not.
  t.is((await s.get(`${API}/tag`, { headers: { 'if-none-match': `"${head}"`, 'cache-control': 'max-age=0' } })).status, 304);
  // An old ETag after a change: the full new list.
  await s.post(`${API}/tag`, [{ name: 'newer', color: 'green' }]);
  const changed = await s.get(`${API}/tag`, { headers: { 'if-none-match': `"${head}"` } });
  t.is(changed.status, 200);
  t.true(changed.body.some((x: { name: string }) => x.name === 'newer'));
});

test.serial('If-Match: an old commit is 412 and changes nothing; the current one writes', async (t) => {
  const old = await s.head();
  await s.post(`${API}/tag`, [{ name: 'moves main', color: 'red' }]);
  const before = await s.state();
  const current = await s.head();
  const ifMatchOld = { headers: { 'if-match': `"${old}"` } };
  assertError(t, await s.post(`${API}/tag`, [{ name: 'stale', color: 'red' }], ifMatchOld), 412, `The model has changed since ${old}.`);
  assertError(
    t,
    await s.put(`${API}/attribute`, [{ name: 'stale', type: 'STRING' }], ifMatchOld),
    412,
    `The model has changed since ${old}.`,
  );
  assertError(t, await s.post(`${API}/model`, { components: [{ name: 'stale' }] }, ifMatchOld), 412, `The model has changed since ${old}.`);
  // A list (RFC 9110): one of them must be where main is. A weak tag matches nothing: named as sent.
  const oldList = { headers: { 'if-match': `"${old}", W/"abc"` } };
  assertError(
    t,
    await s.post(`${API}/tag`, [{ name: 'stale', color: 'red' }], oldList),
    412,
    `The model has changed since ${old}, W/"abc".`,
  );
  // A tag that names nothing (an empty ETag, a `W/` without one, as a client whose ETag variable
  // was empty sends them) names no commit either: the write was meant to be conditional, so 412.
  for (const sent of ['""', 'W/""', 'W/', `"", W/`]) {
    const headers = { 'if-match': sent };
    assertError(t, await s.post(`${API}/tag`, [{ name: 'lost', color: 'red' }], { headers }), 412, `The model has changed since ${sent}.`);
    assertError(t, await s.post(`${API}/tags`, { name: 'lost', color: 'red' }, { headers }), 412, `The model has changed since ${sent}.`);
  }
  t.is(await s.state(), before);
  const ok = await s.post(`${API}/tag`, [{ name: 'fresh', color: 'red' }], { headers: { 'if-match': `"${old}", "${current}"` } });
  t.is(ok.status, 200, ok.text);
  t.is(await s.commitCount(), JSON.parse(before).count + 1);
  t.is(etag(ok), `"${await s.head()}"`);
});

test('If-Match with a weak tag never matches (RFC 9110 §13.1.1: strong comparison): 412 on every write that takes If-Match, nothing changed', (t) =>
  withServer(async (s) => {
    const [tag] = (await s.post(`${API}/tag`, [{ name: 'kept', color: 'red' }])).body;
    const base = await s.head();
    await s.post(`${API}/tag`, [{ name: 'later', color: 'red' }]);
    t.is((await s.post(`${API}/drafts`, { name: 'weak' })).status, 201);
    t.is((await s.post(`${API}/tag?draft=weak`, [{ name: 'in the draft', color: 'red' }])).status, 200);
    const main = await s.head();
    const draft = (await s.git('rev-parse', 'refs/heads/drafts/weak')).trim();
    const refs = async () => s.git('for-each-ref', '--format=%(refname) %(objectname)');
    const before = { state: await s.state(), refs: await refs() };
    // Each write names, weakly, the very commit it would start from: main's, or with ?draft= the draft's head.
    const writes: Array<[method: string, path: string, body: unknown, at: string]> = [
      ['POST', '/tag', [{ name: 'weak', color: 'red' }], main],
      ['PUT', '/attribute', [{ name: 'weak', type: 'STRING' }], main],
      ['POST', '/model', { components: [{ name: 'weak' }] }, main],
      ['POST', '/tags', { name: 'weak', color: 'red' }, main],
      ['PATCH', `/tags/${tag.id}`, { name: 'weak' }, main],
      ['DELETE', `/tags/${tag.id}`, undefined, main],
      ['POST', '/revert', { commit: base }, main],
      ['POST', '/versions', { name: 'v-weak' }, main],
      ['POST', '/tag?draft=weak', [{ name: 'weak', color: 'red' }], draft],
      ['POST', '/revert?draft=weak', { commit: base }, draft],
      ['POST', '/drafts/weak/merge', {}, main],
      ['POST', '/drafts/weak/update', {}, draft],
    ];
    for (const [method, path, body, at] of writes) {
      const reply = await s.request(method, `${API}${path}`, { body, headers: { 'if-match': `W/"${at}"` } });
      assertError(t, reply, 412, `The model has changed since W/"${at}".`);
    }
    t.deepEqual({ state: await s.state(), refs: await refs() }, before, 'nothing changed');
    // The same tag strong: written.
    const strong = await s.post(`${API}/tag`, [{ name: 'strong', color: 'red' }], { headers: { 'if-match': `"${main}"` } });
    t.is(strong.status, 200, strong.text);
  }));

test.serial('If-None-Match on a write: the current commit and * are 412 and change nothing; an old commit writes', async (t) => {
  const old = await s.head();
  await s.post(`${API}/tag`, [{ name: 'moves main again', color: 'red' }]);
  const current = await s.head();
  const before = await s.state();
  const stillAt = `The model is still at ${current}.`;
  for (const tags of [`"${current}"`, `W/"${current}"`, `"${old}", "${current}"`]) {
    const headers = { 'if-none-match': tags };
    assertError(t, await s.post(`${API}/tag`, [{ name: 'unchanged since', color: 'red' }], { headers }), 412, stillAt);
    assertError(t, await s.post(`${API}/model`, { components: [{ name: 'unchanged since' }] }, { headers }), 412, stillAt);
    assertError(t, await s.post(`${API}/versions`, { name: 'v-none-match' }, { headers }), 412, stillAt);
  }
  const star = 'If-None-Match: * is never true of a write: the branch written always has a commit.';
  assertError(t, await s.put(`${API}/component`, [{ name: 'create only?' }], { headers: { 'if-none-match': '*' } }), 412, star);
  // If-Match is checked first (RFC 9110 §13.2.2).
  assertError(
    t,
    await s.post(`${API}/tag`, [{ name: 'both', color: 'red' }], { headers: { 'if-match': `"${old}"`, 'if-none-match': `"${current}"` } }),
    412,
    `The model has changed since ${old}.`,
  );
  t.is(await s.state(), before);
  t.false((await s.get(`${API}/versions`)).body.some((v: { name: string }) => v.name === 'v-none-match'));
  // Someone changed the model since the client's commit: the write goes ahead.
  const ok = await s.post(`${API}/tag`, [{ name: 'changed since', color: 'red' }], { headers: { 'if-none-match': `"${old}"` } });
  t.is(ok.status, 200, ok.text);
  t.is(await s.commitCount(), JSON.parse(before).count + 1);
});

test.serial('?at= serves the model as of an older commit', async (t) => {
  const old = await s.head();
  const oldTags = (await s.get(`${API}/tag`)).body;
  const created = (await s.post(`${API}/tag`, [{ name: 'after the snapshot', color: 'purple' }])).body[0];
  const now = await s.get(`${API}/tag`);
  t.is(now.body.length, oldTags.length + 1);

  const then = await s.get(`${API}/tag?at=${old}`);
  t.is(then.status, 200);
  t.deepEqual(then.body, oldTags);
  t.is(etag(then), `"${old}"`);
  const thenModel = await s.get(`${API}/model?at=${old}`);
  t.deepEqual(thenModel.body.tags, oldTags);
  assertError(t, await s.get(`${API}/tag/${created.id}?at=${old}`), 404, `Tag with id '${created.id}' does not exist.`);
  t.is((await s.get(`${API}/tag/${created.id}?at=${await s.head()}`)).status, 200);

  for (const bad of ['a'.repeat(40), '0123456789abcdef0123456789abcdef01234567', 'garbage', '']) {
    assertError(t, await s.get(`${API}/tag?at=${bad}`), 404, `Commit '${bad}' does not exist.`);
  }
  // A tree is an object but not a commit.
  const tree = (await s.git('rev-parse', `${old}^{tree}`)).trim();
  assertError(t, await s.get(`${API}/tag?at=${tree}`), 404, `Commit '${tree}' does not exist.`);
  assertError(t, await s.get(`${API}/type?at=garbage`), 404, `Commit 'garbage' does not exist.`);
});

// ---------------------------------------------------------------------------------------
// Single reads, types, paging
// ---------------------------------------------------------------------------------------

test.serial('single reads of every kind, and 404 for unknown ids', async (t) => {
  const tag = (await s.post(`${API}/tag`, [{ name: 'single', color: 'yellow' }])).body[0];
  const attribute = (await s.put(`${API}/attribute`, [{ name: 'single attr', type: 'NUMBER' }])).body[0];
  const model = (
    await s.post(`${API}/model`, {
      components: [{ ref: 'single-comp', name: 'Single', typeSlug: 'container' }],
      diagrams: [{ name: 'Single diagram', level: 'C2', componentInstances: [{ component: 'single-comp' }] }],
    })
  ).body;
  const type = (await s.get(`${API}/type`)).body[0];
  const cases: Array<[string, string, unknown]> = [
    ['tag', 'Tag', tag],
    ['attribute', 'Attribute', attribute],
    ['attributes', 'Attribute', attribute],
    ['component', 'Component', model.components[0]],
    ['diagram', 'Diagram', model.diagrams[0]],
    ['type', 'Type', type],
    ['types', 'Type', type],
  ];
  for (const [path, kind, resource] of cases) {
    const id = (resource as { id: string }).id;
    const reply = await s.get(`${API}/${path}/${id}`);
    t.is(reply.status, 200, path);
    t.deepEqual(reply.body, resource, path);
    const list = (await s.get(`${API}/${path}`)).body as Array<{ id: string }>;
    t.deepEqual(
      list.find((x) => x.id === id),
      resource,
      path,
    );
    for (const unknown of ['nope', '01m80azw30dwevft1dergadszz']) {
      assertError(t, await s.get(`${API}/${path}/${unknown}`), 404, `${kind} with id '${unknown}' does not exist.`);
    }
  }
  // A tag id is not a component id.
  assertError(t, await s.get(`${API}/component/${tag.id}`), 404, `Component with id '${tag.id}' does not exist.`);
});

test.serial('GET /type and /types: the six default types', async (t) => {
  for (const path of ['/type', '/types']) {
    const reply = await s.get(API + path);
    t.is(reply.status, 200);
    t.deepEqual(
      reply.body.map((x: { slug: string }) => x.slug),
      ['person', 'software-system', 'container', 'component', 'database', 'queue'],
    );
    t.deepEqual(
      reply.body.map((x: { name: string }) => x.name),
      ['Person', 'Software System', 'Container', 'Component', 'Database', 'Queue'],
    );
    for (const type of reply.body) {
      t.deepEqual(Object.keys(type), ['id', 'slug', 'name']);
      t.regex(type.id, /^[0-9a-z]{26}$/);
    }
  }
  t.deepEqual((await s.get(`${API}/type`)).body, (await s.get(`${API}/types`)).body);
  t.deepEqual((await s.get(`${API}/model`)).body.types, (await s.get(`${API}/type`)).body);
});

test.serial('paging: ?limit= and the Link header yield every item once, in creation order', async (t) => {
  await s.post(
    `${API}/tag`,
    Array.from({ length: 5 }, (_, i) => ({ name: `page ${i}`, color: 'gray' })),
  );
  const all = (await s.get(`${API}/tag`)).body as Array<{ id: string }>;
  t.true(all.length >= 7);
  t.deepEqual(
    all.map((x) => x.id),
    [...all.map((x) => x.id)].sort(),
    'creation order is id order',
  );

  const first = await s.get(`${API}/tag?limit=2`);
  t.is(first.status, 200);
  t.is(first.body.length, 2);
  t.is(first.headers.get('link'), `</api/external/tag?limit=2&cursor=${all[1].id}>; rel="next"`);

  const seen: Array<{ id: string }> = [];
  let path: string | undefined = `${API}/tag?limit=2`;
  let pages = 0;
  while (path !== undefined) {
    const reply = await s.get(path);
    t.is(reply.status, 200);
    t.true(reply.body.length >= 1 && reply.body.length <= 2);
    seen.push(...reply.body);
    const link = reply.headers.get('link');
    if (link === null) {
      path = undefined;
    } else {
      const match = /^<([^>]+)>; rel="next"$/.exec(link);
      t.truthy(match, link);
      path = match![1];
      t.regex(path, /^\/api\/external\/tag\?limit=2&cursor=[0-9a-z]{26}$/);
    }
    t.true(++pages <= all.length);
  }
  t.deepEqual(seen, all);
  t.is(pages, Math.ceil(all.length / 2));

  // A page size that divides the list: the last full page has no Link.
  const whole = await s.get(`${API}/tag?limit=${all.length}`);
  t.deepEqual(whole.body, all);
  t.is(whole.headers.get('link'), null);

  // Paging keeps ?at= in the next link.
  const at = await s.head();
  const pagedAt = await s.get(`${API}/tag?limit=3&at=${at}`);
  t.is(pagedAt.headers.get('link'), `</api/external/tag?limit=3&cursor=${all[2].id}&at=${at}>; rel="next"`);
  t.is(etag(pagedAt), `"${at}"`);

  // Other lists page as well.
  const types = await s.get(`${API}/types?limit=4`);
  t.is(types.body.length, 4);
  t.regex(types.headers.get('link') ?? '', /^<\/api\/external\/types\?limit=4&cursor=[0-9a-z]{26}>; rel="next"$/);
  const rest = await s.get(/^<([^>]+)>/.exec(types.headers.get('link')!)![1]);
  t.deepEqual(
    rest.body.map((x: { slug: string }) => x.slug),
    ['database', 'queue'],
  );
});

test.serial('paging: an invalid limit or cursor is 400', async (t) => {
  for (const limit of ['0', '-1', '1.5', 'abc', '', '1001', '1e3x', '1e2', '0x10', '+5', ' 5']) {
    const asked = `${API}/tag?limit=${encodeURIComponent(limit)}`;
    assertError(t, await s.get(asked), 400, `Invalid limit '${limit}': use a whole number from 1 to 1000.`);
  }
  assertError(t, await s.get(`${API}/tag?limit=1&limit=2`), 400, `Query parameter 'limit' is given more than once.`);
  assertError(t, await s.get(`${API}/tag?limit=2&cursor=..%2F..`), 400, `Invalid cursor '../..'.`);
  t.is((await s.get(`${API}/tag?limit=1000`)).status, 200);
});

// ---------------------------------------------------------------------------------------
// YAML responses, request log
// ---------------------------------------------------------------------------------------

test.serial('YAML responses parse to the same data as JSON', async (t) => {
  await s.put(`${API}/attribute`, [{ name: 'yaml list', type: 'LIST', list: ['yes', 'no', 'null', '1.0'] }]);
  await s.post(`${API}/tag`, [{ name: 'yes', desc: '2024-01-01', color: 'red', apiContext: '12:30' }]);
  for (const path of [...LISTS, '/tag?limit=3']) {
    const json = await s.get(API + path);
    for (const accept of ['application/yaml', 'application/x-yaml', 'text/yaml', 'application/yaml, application/json;q=0.5']) {
      const yaml = await s.get(API + path, { headers: { accept } });
      t.is(yaml.status, 200);
      t.regex(yaml.headers.get('content-type') ?? '', /^application\/yaml/);
      t.deepEqual(YAML.parse(yaml.text), json.body, `${path} as ${accept}`);
      t.is(etag(yaml), etag(json));
      t.is(yaml.headers.get('vary'), 'Accept, Authorization, x-api-key, Cookie', 'one URL, two representations: caches must key on Accept');
    }
  }
  // A write answered as YAML.
  const written = await s.request('POST', `${API}/tag`, {
    raw: '- name: from yaml\n  color: orange\n',
    headers: { 'content-type': 'application/x-yaml', accept: 'text/yaml' },
  });
  t.is(written.status, 200, written.text);
  const parsed = YAML.parse(written.text);
  t.is(parsed[0].name, 'from yaml');
  t.deepEqual((await s.get(`${API}/tag/${parsed[0].id}`)).body, parsed[0]);
});

test.serial('the request log: one JSON line per request with its id, never a key', async (t) => {
  const from = s.logs.length;
  await s.get(`${API}/tag`);
  await s.get(`${API}/tag?api_key=${s.key}`, { key: null, headers: { 'x-api-key': s.readerKey } });
  await s.get(`${API}/tag`, { key: null });
  await s.post(`${API}/tag`, [{ name: 'logged', color: 'red' }]);
  await s.get(`${API}/nope`);
  const health = await s.get('/healthz', { key: null, headers: { 'x-request-id': 'lb-7f3a' } });
  t.is(health.headers.get('x-request-id'), 'lb-7f3a', 'a request id sent is echoed');
  const lines = s.logs.slice(from);
  t.is(lines.length, 6, lines.join('\n'));
  const parsed = lines.map((line) => JSON.parse(line));
  t.deepEqual(
    parsed.map(({ method, route, path, status, org }) => [method, route, path, status, org]),
    [
      ['GET', '/api/external/tag', '/api/external/tag', 200, 'acme'],
      ['GET', '/api/external/tag', '/api/external/tag', 200, 'acme'],
      ['GET', '/api/external/tag', '/api/external/tag', 401, undefined],
      ['POST', '/api/external/tag', '/api/external/tag', 200, 'acme'],
      ['GET', undefined, '/api/external/nope', 404, undefined],
      ['GET', '/healthz', '/healthz', 200, undefined],
    ],
  );
  for (const entry of parsed) {
    t.is(entry.level, 'info');
    t.is(typeof entry.ms, 'number');
  }
  const keys = await new KeyStore(s.dataDir).list('acme');
  t.is(parsed[0].keyId, keys.find((k) => k.role === 'editor')!.id, 'the key id, never the key');
  t.is(parsed[1].keyId, keys.find((k) => k.role === 'reader')!.id);
  t.is(parsed[5].requestId, 'lb-7f3a');
  t.regex(parsed[0].requestId, /^[0-9a-f-]{36}$/, 'made when none is sent');
  for (const line of s.logs) {
    t.false(line.includes(s.key), line);
    t.false(line.includes(s.readerKey), line);
    t.false(line.includes('c4s_'), line);
  }
});
