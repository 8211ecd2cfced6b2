import test from 'ava';
import { apiRouter, type AppDependencies } from '../src/http/app.js';
import { isErrorLine, withServer } from './support/server.js';

/** Every method and path the API router serves, read from the router itself. */
function everyRoute(): Array<{ method: string; path: string }> {
  // The route functions only capture their dependencies; building the router reads none.
  const router = apiRouter({ publicUrl: 'http://x', bodyLimit: 1 } as unknown as AppDependencies);
  const routes: Array<{ method: string; path: string }> = [];
  for (const layer of router.stack) {
    for (const method of layer.methods) {
      if (method !== 'HEAD' && typeof layer.path === 'string') routes.push({ method, path: layer.path });
    }
  }
  return routes;
}

function oddCases(path: string): string[] {
  const alternate = (text: string) => Array.from(text, (c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join('');
  const capitalize = (text: string) => text.replace(/\/([a-z])/g, (_, c: string) => `/${c.toUpperCase()}`);
  return [
    path.toUpperCase(),
    alternate(path),
    capitalize(path),
    path.replace('/api/', '/API/'),
    path.replace(/\/([a-z]+)$/, (m) => m.toUpperCase()),
  ].filter((variant) => variant !== path);
}

test('every route in odd letter cases answers 401 or 404, never reaching a handler', async (t) => {
  const routes = everyRoute();
  t.true(routes.length >= 15, `routes found: ${routes.length}`);
  await withServer(async (s) => {
    const seen = new Set<number>();
    for (const { method, path } of routes) {
      const concrete = path.replace(/:id\b/, '01j0000000000000000000000a');
      for (const variant of oddCases(concrete)) {
        for (const key of [s.key, s.readerKey, null]) {
          const body = method === 'GET' ? undefined : [];
          const reply = await s.request(method, variant, { key, body });
          seen.add(reply.status);
          t.true(
            [401, 404].includes(reply.status),
            `${method} ${variant} (${key === null ? 'no key' : 'key'}): ${reply.status} ${reply.text}`,
          );
          t.deepEqual(Object.keys(reply.body ?? {}), ['error']);
        }
      }
    }
    t.deepEqual(
      s.logs.filter((line) => isErrorLine(line)),
      [],
      'no handler crashed',
    );
    t.true(seen.has(404));
  });
});

test('the exact paths still work with a key and refuse without one', async (t) => {
  await withServer(async (s) => {
    t.is((await s.get('/api/external/tag')).status, 200);
    t.is((await s.get('/api/external/tag', { key: null })).status, 401);
    t.is((await s.get('/api/external/tag/')).status, 200);
    t.is((await s.get('/api/external/tag/', { key: null })).status, 401);
  });
});
