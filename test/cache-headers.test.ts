/**
 * Answers are private to the key that asked (issue 24, point 12): `Cache-Control: private,
 * no-cache` and `Vary: Accept, Authorization, x-api-key, Cookie` on every answer, refusals and
 * 304s included, with ETag revalidation kept; every 201 names what it made in `Location`.
 */
import test from 'ava';
import { API, ok } from './support/current.js';
import { type Reply, withServer } from './support/server.js';

function varyOf(reply: Reply): string[] {
  return (reply.headers.get('vary') ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .sort();
}

function assertPrivate(t: import('ava').ExecutionContext, reply: Reply, what: string): void {
  t.is(reply.headers.get('cache-control'), 'private, no-cache', what);
  t.deepEqual(varyOf(reply), ['accept', 'authorization', 'cookie', 'x-api-key'], what);
}

test('every API answer is private and varies by every key header, refusals and 304s too', (t) =>
  withServer(async (s) => {
    const byHeader = await s.get(`${API}/components`, { key: null, headers: { 'x-api-key': s.key } });
    t.is(byHeader.status, 200);
    assertPrivate(t, byHeader, 'GET with x-api-key');
    const etag = byHeader.headers.get('etag')!;
    const revalidated = await s.get(`${API}/components`, { headers: { 'if-none-match': etag } });
    t.is(revalidated.status, 304, 'ETag revalidation still works');
    assertPrivate(t, revalidated, '304');
    t.is(revalidated.headers.get('etag'), etag);
    assertPrivate(t, await s.get(`${API}/components`, { yaml: true }), 'YAML');
    assertPrivate(t, await s.get(`${API}/components`, { key: null }), '401 without a key');
    assertPrivate(t, await s.get(`${API}/components/ghost`), '404');
    assertPrivate(t, await s.post(`${API}/tags`, { name: 'x', color: 'red' }, { key: s.readerKey }), '403');
    assertPrivate(t, await s.get(`${API}/export?format=mermaid`), 'an export');
    assertPrivate(t, await s.get('/healthz'), '/healthz with a key');
    // The viewer's pages keep their stricter no-store, and still vary by the cookie.
    const page = await s.get('/sign-in', { key: null });
    t.is(page.headers.get('cache-control'), 'no-store');
    t.true(varyOf(page).includes('cookie'));
  }));

test('every 201 carries Location, and it answers with what was made', (t) =>
  withServer(async (s) => {
    const made: Array<[path: string, body: unknown]> = [
      [`${API}/tags`, { name: 'PCI', color: 'red' }],
      [`${API}/attributes`, { name: 'Tier', type: 'NUMBER' }],
      [`${API}/components`, { id: 'ledger.db', name: 'Ledger DB' }],
      [`${API}/diagrams`, { name: 'Context', level: 'C1' }],
    ];
    for (const [path, body] of made) {
      const reply = await s.post(path, body);
      t.is(reply.status, 201, reply.text);
      const location = reply.headers.get('location');
      t.is(location, `${path}/${reply.body.id}`);
      const fetched = await s.get(location!);
      t.is(fetched.status, 200, location!);
      t.is(fetched.body.id, reply.body.id);
    }
    const version = await s.post(`${API}/versions`, { name: 'v1.0' });
    t.is(version.status, 201);
    t.is(version.headers.get('location'), `${API}/model?at=v1.0`);
    const atVersion = await s.get(version.headers.get('location')!);
    t.is(atVersion.status, 200);
    t.is(atVersion.headers.get('etag'), `"${await s.head()}"`);
    await ok(t, s, 'DELETE', `${API}/components/ledger.db`, undefined);
  }));

test("a diagram's SVG and PNG revalidate by ETag like every GET; a draft's visual diff, drawing main too, has none", (t) =>
  withServer(async (s) => {
    await ok(t, s, 'POST', `${API}/diagrams`, { id: 'ctx', name: 'Context', level: 'C1' }, { status: 201 });
    for (const [path, accept] of [
      [`${API}/diagram/ctx`, 'image/svg+xml'],
      [`${API}/diagrams/ctx`, 'image/png'],
    ] as const) {
      const headers = { accept };
      const first = await s.get(path, { headers });
      t.is(first.status, 200, path);
      const etag = first.headers.get('etag');
      t.is(etag, `"${await s.head()}"`, path);
      for (const tag of [etag!, `W/${etag}`, '*']) {
        t.is((await s.get(path, { headers: { ...headers, 'if-none-match': tag } })).status, 304, `${path} ${tag}`);
      }
      t.is((await s.get(path, { headers: { ...headers, 'if-none-match': '"0000"' } })).status, 200, path);
    }
    t.is((await s.post(`${API}/drafts`, { name: 'wider' })).status, 201);
    const compared = await s.get(`${API}/diagram/ctx?draft=wider&compare=main`, { headers: { accept: 'image/svg+xml' } });
    t.is(compared.status, 200, compared.text);
    t.is(compared.headers.get('etag'), null);
  }));
