/**
 * A key's rates count every way in (issue 24, Low): git over HTTP and the viewer's pages share
 * the count of the key's API requests, so neither is a way around the limit.
 */
import test from 'ava';
import { sessionCookie, TestServer } from './support/server.js';

function basic(key: string): string {
  return `Basic ${Buffer.from(`anyone:${key}`).toString('base64')}`;
}

test('git over HTTP counts against the key: reads for a fetch, 429 with Retry-After beyond', async (t) => {
  const s = await TestServer.start({ readsPerMinute: 3, writesPerMinute: 2 });
  try {
    const refs = () => fetch(`${s.url}/git/${s.slug}.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic(s.key) } });
    t.is((await s.get('/api/external/tag')).status, 200, 'one API read');
    for (let i = 0; i < 2; i++) t.is((await refs()).status, 200);
    const refused = await refs();
    t.is(refused.status, 429);
    t.truthy(refused.headers.get('retry-after'));
    t.regex(((await refused.json()) as { error: string }).error, /^Rate limit exceeded: this key may make 3 reads a minute/);
    // The same count: the API is beyond it too.
    t.is((await s.get('/api/external/tag')).status, 429);
    // A push is a write: counted apart.
    const push = await fetch(`${s.url}/git/${s.slug}.git/info/refs?service=git-receive-pack`, { headers: { authorization: basic(s.key) } });
    t.is(push.status, 200);
  } finally {
    await s.close();
  }
});

test("the viewer's pages count against the signed-in key", async (t) => {
  const s = await TestServer.start({ readsPerMinute: 2 });
  try {
    const cookie = await sessionCookie(s.url, s.key);
    const page = () => fetch(`${s.url}/`, { redirect: 'manual', headers: { cookie } });
    for (let i = 0; i < 2; i++) t.is((await page()).status, 200);
    t.is((await page()).status, 429);
    t.is((await s.get('/api/external/tag')).status, 429, 'one count for the key');
  } finally {
    await s.close();
  }
});

test("a live page's HEAD check of its stream does not spend the key's reads: a page left open cannot exhaust them, real reads still do", async (t) => {
  const s = await TestServer.start({ readsPerMinute: 3 });
  try {
    const cookie = await sessionCookie(s.url, s.key);
    // As static/live.js asks, each time its stream was refused: from the commit the page shows.
    const check = () =>
      fetch(`${s.url}/orgs/${s.slug}/events?after=${encodeURIComponent('main')}`, {
        method: 'HEAD',
        redirect: 'manual',
        headers: { cookie },
      });
    for (let i = 0; i < 20; i++) t.is((await check()).status, 200, `check ${i + 1}`);
    const page = () => fetch(`${s.url}/`, { redirect: 'manual', headers: { cookie } });
    for (let i = 0; i < 3; i++) t.is((await page()).status, 200, `read ${i + 1}`);
    t.is((await page()).status, 429, 'real reads still count');
    t.is((await s.get('/api/external/tag')).status, 429, 'one count for the key');
    // Beyond the rate, the check says so (and when to come back), still taking nothing.
    const told = await check();
    t.is(told.status, 429);
    t.truthy(told.headers.get('retry-after'));
  } finally {
    await s.close();
  }
});
