/**
 * A query parameter a route does not take is refused (400) rather than ignored: ignored, a
 * misspelt one changes what the request means without a word (a write's `?drfat=` landed on
 * main). What each route takes is what docs/openapi.json lists for it; the seed's reads ignore
 * what they are given, as they always did. Over real HTTP, checked against the published document.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { API, no } from './support/current.js';
import { withServer } from './support/server.js';

interface Operation {
  parameters?: Array<{ name: string; in: string }>;
}
const DOCUMENT = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'docs', 'openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const SEED_READS = /^\/api\/external\/(type|tag|attribute|component|diagram)(\/\{id\})?$/;

/** Every operation of the API in the document, its path's parameters filled with a name nothing has. */
const operations = Object.entries(DOCUMENT.paths)
  .filter(([path]) => path.startsWith(`${API}/`) && path !== `${API}/openapi.json`)
  .flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template: path,
      path: path.replace(/\{[^}]+\}/g, 'nothing-here'),
      query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
    })),
  );

const unknown = (name: string) => (body: unknown) =>
  String((body as { error?: string } | undefined)?.error).startsWith(`Unknown query parameter '${name}'`);

test('a write with a misspelt ?draft= is refused and changes neither main nor the draft', async (t) => {
  await withServer(async (s) => {
    t.is((await s.post(`${API}/drafts`, { name: 'review' })).status, 201);
    const draftHead = await s.git('rev-parse', 'refs/heads/drafts/review');
    const misspelt = (method: string, path: string) => `Unknown query parameter 'drfat': ${method} ${API}/${path} takes layout, draft.`;
    await no(t, s, 'POST', `${API}/tags?drfat=review`, { name: 'Core', color: 'blue' }, 400, misspelt('POST', 'tags'));
    await no(t, s, 'PUT', `${API}/component?drfat=review`, [{ name: 'Ledger' }], 400, misspelt('PUT', 'component'));
    t.is(await s.git('rev-parse', 'refs/heads/drafts/review'), draftHead);
  });
});

test('the extensions refuse a parameter they do not take, naming those they do', async (t) => {
  await withServer(async (s) => {
    const history = await s.get(`${API}/history?resurce=x`);
    t.is(history.status, 400);
    t.deepEqual(history.body, {
      error: `Unknown query parameter 'resurce': GET ${API}/history takes limit, before, since, until, resource, at, draft.`,
    });
    const changes = await s.get(`${API}/changes?aftr=x`);
    t.is(changes.status, 400);
    t.deepEqual(changes.body, { error: `Unknown query parameter 'aftr': GET ${API}/changes takes after, limit, draft, at.` });
    const replay = await s.post(`${API}/webhooks/wh_0/replay?force=true`, {});
    t.is(replay.status, 400);
    t.deepEqual(replay.body, { error: `Unknown query parameter 'force': POST ${API}/webhooks/wh_0/replay takes no query parameters.` });
    const links = await s.get(`${API}/share-links?draft=review`);
    t.deepEqual([links.status, links.body], [400, { error: 'Share links belong to main: ?draft= does not apply to them.' }]);
  });
});

test('every operation of the document refuses an unknown parameter and takes each one it lists; the seed reads take anything', async (t) => {
  await withServer(async (s) => {
    const head = await s.head();
    for (const { method, template, path, query } of operations) {
      const seedRead = method === 'GET' && SEED_READS.test(template);
      const refused = await s.request(method, `${path}?not-a-parameter=1`);
      if (seedRead) t.false(unknown('not-a-parameter')(refused.body), `${method} ${template}: a seed read ignores it`);
      else {
        t.is(refused.status, 400, `${method} ${template}`);
        t.true(unknown('not-a-parameter')(refused.body), `${method} ${template}: ${refused.text}`);
      }
      for (const name of query) {
        const taken = await s.request(method, `${path}?${name}=nothing-here`);
        t.false(unknown(name)(taken.body), `${method} ${template} takes ?${name}=: ${taken.text}`);
      }
    }
    t.is(await s.head(), head, 'nothing was written');
    t.true(operations.length > 50);
  });
});
