/**
 * Share links: made by an editor key on a diagram, they open its page, SVG and PNG without a
 * session or key; listed without their token; revoked, they answer 404 at once, in every
 * process of the data directory.
 */
import { createHash } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import test from 'ava';
import YAML from 'yaml';
import { startServer } from '../src/server.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { resourcePath } from '../src/model/files.js';
import { cloneFor, gitIn } from './support/git-clone.js';
import { TestServer, withServer } from './support/server.js';

const API = '/api/external';

async function shopDiagram(s: TestServer): Promise<{ id: string; url: string }> {
  const made = await s.post(`${API}/component`, [
    { ref: 'api', name: 'Shop API', desc: 'Takes orders.', apiContext: 'pipeline run 42 by ci-bot@internal' },
    { ref: 'db', name: 'Orders DB' },
  ]);
  if (made.status !== 200) throw new Error(made.text);
  const diagrams = await s.post(`${API}/diagram`, [
    {
      ref: 'shop',
      name: 'Shop containers',
      level: 'C2',
      componentInstances: [
        { ref: 'a', component: 'api', position: { x: 0, y: 0 }, width: 12, height: 6 },
        { ref: 'b', component: 'db', position: { x: 30, y: 0 }, width: 12, height: 6 },
      ],
      relations: [{ fromComponentInstance: 'a', toComponentInstance: 'b', label: 'reads' }],
    },
    {
      ref: 'secret',
      name: 'Secret plans',
      level: 'C1',
      componentInstances: [{ ref: 'x', component: 'api', position: { x: 0, y: 0 }, width: 10, height: 5 }],
    },
  ]);
  if (diagrams.status !== 200) throw new Error(diagrams.text);
  return diagrams.body[0];
}

/** A GET as anyone on the internet: no cookie, no key. */
async function anonymous(url: string, headers: Record<string, string> = {}) {
  const answer = await fetch(url, { headers, redirect: 'manual' });
  const body = Buffer.from(await answer.arrayBuffer());
  return { status: answer.status, headers: answer.headers, body, text: body.toString('utf8') };
}

test('an editor makes a link; it opens the page, the SVG and the PNG without session or key; revoked, 404 at once', (t) =>
  withServer(async (s) => {
    const d = await shopDiagram(s);
    const made = await s.request('POST', `${API}/diagram/${d.id}/share-links`);
    t.is(made.status, 201, made.text);
    const token = /\/share\/([^/.]+)$/.exec(made.body.url)![1]!;
    t.regex(token, /^[A-Za-z0-9_-]{43}$/);
    t.like(made.body, {
      diagramId: d.id,
      label: '',
      createdBy: 'test pipeline',
      url: `${s.url}/share/${token}`,
      svgUrl: `${s.url}/share/${token}.svg`,
      pngUrl: `${s.url}/share/${token}.png`,
    });
    t.is(made.headers.get('location'), `/api/external/share-links/${made.body.id}`);

    const page = await anonymous(made.body.url);
    t.is(page.status, 200);
    t.true(page.text.includes('<h1><bdi>Shop containers</bdi></h1>'));
    t.true(page.text.includes('Takes orders.'), 'the panels show descriptions');
    t.false(page.text.includes('Secret plans'), 'no other diagram, not even its name');
    t.false(page.text.includes('/orgs/'), 'no address inside the organization');
    t.false(page.text.includes('Sign out'));
    t.is(page.headers.get('referrer-policy'), 'no-referrer');
    t.false(page.headers.get('content-security-policy')!.includes('frame-ancestors'), 'wikis may frame it');
    t.true(page.text.includes(`href="/share/${token}.svg"`));
    // Nor a component's API context, which the signed-in page shows in its drawing's API marker.
    t.false(page.text.includes('pipeline run 42'), 'no API context on the page');
    t.true(page.text.includes('<title>Updated through the API</title>'));

    const svg = await anonymous(made.body.svgUrl);
    t.is(svg.status, 200);
    t.is(svg.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
    t.is(svg.headers.get('cache-control'), 'no-cache');
    t.is(svg.headers.get('x-content-type-options'), 'nosniff');
    t.true(svg.text.includes('Shop API'));
    t.false(svg.text.includes('pipeline run 42'), 'no API context in the shared SVG');
    const signedIn = await s.get(`${API}/diagram/${d.id}`, { headers: { accept: 'image/svg+xml' } });
    t.true(signedIn.text.includes('<title>Updated through the API (pipeline run 42 by ci-bot@internal)</title>'));
    const etag = svg.headers.get('etag')!;
    t.is(etag, `"${await s.head()}"`);
    t.is((await anonymous(made.body.svgUrl, { 'if-none-match': etag })).status, 304);
    const png = await anonymous(made.body.pngUrl);
    t.is(png.status, 200);
    t.is(png.headers.get('content-type'), 'image/png');
    t.true(png.body.subarray(1, 4).equals(Buffer.from('PNG')));

    // The link follows the diagram: a change shows on the next request.
    t.is((await s.request('PATCH', `${API}/components/api`, { body: { name: 'Shop v2' } })).status, 200);
    t.true((await anonymous(made.body.svgUrl)).text.includes('Shop v2'));
    t.is((await anonymous(made.body.svgUrl, { 'if-none-match': etag })).status, 200);
    // `?at=` is not a share link's business: always the tip.
    t.true((await anonymous(`${made.body.svgUrl}?at=${etag.slice(1, -1)}`)).text.includes('Shop v2'));

    // The server's log never holds a token: it is the key to the drawing.
    t.true(
      s.logs.some((line) => {
        const entry = JSON.parse(line) as { url?: string; path?: string; status?: number };
        return (entry.url ?? entry.path ?? '').startsWith('/share/[redacted].svg') && entry.status === 200;
      }),
      s.logs.filter((line) => line.includes('/share/')).join('\n'),
    );
    t.false(s.logs.some((line) => line.includes(token)));
    // Nor a token cut short by one character, nor a second one after a dot segment.
    const origin = new URL(made.body.url).origin;
    await anonymous(`${origin}/share/${token.slice(0, 42)}`);
    await new Promise<void>((resolve) => {
      const raw = request(`${origin}/share/x/../${token}.png`, () => resolve());
      raw.on('error', () => resolve());
      raw.end();
    });
    t.false(
      s.logs.some((line) => line.includes(token.slice(0, 20))),
      s.logs.filter((line) => line.includes('/share/')).join('\n'),
    );

    const revoked = await s.request('DELETE', `${API}/share-links/${made.body.id}`);
    t.is(revoked.status, 200);
    t.deepEqual(Object.keys(revoked.body).sort(), ['created', 'createdBy', 'diagramId', 'expires', 'id', 'label']);
    for (const url of [made.body.url, made.body.svgUrl, made.body.pngUrl]) t.is((await anonymous(url)).status, 404, url);
    t.is((await anonymous(made.body.svgUrl, { 'if-none-match': etag })).status, 404);
    const again = await s.request('DELETE', `${API}/share-links/${made.body.id}`);
    t.is(again.status, 404);
    t.deepEqual(again.body, { error: `Share link with id '${made.body.id}' does not exist.` });
  }));

test('links are listed without their token, per organization and per diagram; readers list, only editors make and revoke', (t) =>
  withServer(async (s) => {
    const d = await shopDiagram(s);
    const first = await s.post(`${API}/diagram/${d.id}/share-links`, { label: 'README' });
    t.is(first.status, 201);
    // The current form names the diagram by ref too.
    const second = await s.post(`${API}/diagrams/shop/share-links`, { label: 'Confluence: Shop' });
    t.is(second.status, 201, second.text);
    t.is(second.body.diagramId, d.id);
    t.not(first.body.url, second.body.url);

    const all = await s.get(`${API}/share-links`, { key: s.readerKey });
    t.is(all.status, 200);
    t.deepEqual(
      all.body.map((l: any) => l.label),
      ['README', 'Confluence: Shop'],
    );
    for (const link of all.body) t.deepEqual(Object.keys(link).sort(), ['created', 'createdBy', 'diagramId', 'expires', 'id', 'label']);
    t.is((await s.get(`${API}/diagrams/shop/share-links`)).body.length, 2);
    t.is((await s.get(`${API}/share-links/${first.body.id}`)).body.label, 'README');

    // Readers read only; refusals change nothing.
    t.is((await s.request('POST', `${API}/diagram/${d.id}/share-links`, { key: s.readerKey })).status, 403);
    t.is((await s.request('DELETE', `${API}/share-links/${first.body.id}`, { key: s.readerKey })).status, 403);
    t.is((await s.request('POST', `${API}/diagram/${d.id}/share-links`, { key: null })).status, 401);
    t.is((await s.request('GET', `${API}/share-links`, { key: null })).status, 401);
    const missing = await s.request('POST', `${API}/diagram/nope/share-links`);
    t.is(missing.status, 404);
    t.deepEqual(missing.body, { error: "Diagram with id 'nope' does not exist." });
    const long = await s.post(`${API}/diagram/${d.id}/share-links`, { label: 'x'.repeat(201) });
    t.is(long.status, 400);
    t.deepEqual(long.body, { error: 'Invalid JSON: label: String must contain at most 200 character(s)' });
    t.is((await s.get(`${API}/share-links`)).body.length, 2);

    // Only hashes on disk, readable by the server's user alone, outside the model repository.
    const file = join(s.dataDir, 'share-links.yaml');
    const text = await readFile(file, 'utf8');
    for (const url of [first.body.url, second.body.url]) t.false(text.includes(url.split('/share/')[1]));
    t.is((await stat(file)).mode & 0o777, 0o600);
    t.false((await s.git('ls-tree', '-r', '--name-only', 'main')).includes('share'));
    t.is((await s.git('log', '--format=%s', '-1')).trim().includes('share'), false, 'a link is no commit');

    // Another organization sees none of them and cannot revoke them.
    await new Orgs(s.dataDir).create('other', { name: 'Other', members: [], author: { name: 't', email: 't@t' } });
    const { key: otherKey } = await new KeyStore(s.dataDir).create('other');
    t.deepEqual((await s.get(`${API}/share-links`, { key: otherKey })).body, []);
    t.is((await s.request('DELETE', `${API}/share-links/${first.body.id}`, { key: otherKey })).status, 404);
    t.is((await anonymous(first.body.url)).status, 200);
    // Links kept before their commit was: the time they were made stands in for it.
    const kept = await readFile(file, 'utf8');
    t.regex(kept, /^ {4}commit: [0-9a-f]{40}$/m);
    // Edited by hand as docs/deploy.md says: the seal line deleted with the change.
    const edited = kept.replace(/^# c4store seal: .*\n/, '').replace(/^ {4}commit: [0-9a-f]{40}\n/gm, '');
    await writeFile(file, edited, { mode: 0o600 });
    t.is((await anonymous(first.body.url)).status, 200);
    // A deleted diagram's links open nothing.
    await s.request('DELETE', `${API}/diagram/${d.id}`);
    t.is((await anonymous(first.body.url)).status, 404);
    // Nor the diagram made again under the same id: the old links were made for another one.
    const again = await s.post(`${API}/diagrams`, { id: d.id, name: 'Internal M&A roadmap', level: 'C1' });
    t.is(again.status, 201, again.text);
    for (const url of [first.body.url, first.body.svgUrl, first.body.pngUrl]) t.is((await anonymous(url)).status, 404, url);
    const fresh = await s.post(`${API}/diagram/${d.id}/share-links`, { label: 'new' });
    t.is((await anonymous(fresh.body.url)).status, 200);
    t.is((await anonymous(first.body.url)).status, 404);
  }));

test('tokens that are not links, and a link revoked by another process of the same data directory, answer 404', async (t) => {
  const s = await TestServer.start();
  const other = await startServer({ dataDir: s.dataDir, port: 0, log: () => {} });
  try {
    const d = await shopDiagram(s);
    const made = await s.request('POST', `${API}/diagram/${d.id}/share-links`);
    const token = made.body.url.split('/share/')[1];
    const elsewhere = `${other.url}/share/${token}`;
    t.is((await anonymous(`${elsewhere}.svg`)).status, 200, 'made in one process, open in the other');
    // One character changed: the first (all six of its bits count; a 32-byte token's last holds
    // only four, and one in sixteen tokens already ends in the 'A' this once put there).
    const changed = `${token[0] === 'A' ? 'B' : 'A'}${token.slice(1)}`;
    for (const bad of ['x', changed, `${token}x`, `${token}.gif`, `${token}.svg.svg`])
      t.is((await anonymous(`${s.url}/share/${encodeURIComponent(bad)}`)).status, 404, bad);
    const revoked = await fetch(`${other.url}${API}/share-links/${made.body.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${s.key}` },
    });
    t.is(revoked.status, 200);
    t.is((await anonymous(made.body.url)).status, 404, 'revoked in the other process: gone here at once');
  } finally {
    await other.close();
    await s.close();
  }
});

test("a link's page reached with a slash after the token links its own SVG and PNG", (t) =>
  withServer(async (s) => {
    const d = await shopDiagram(s);
    const made = await s.request('POST', `${API}/diagram/${d.id}/share-links`);
    // Wikis and chat tools append a slash to addresses pasted into them.
    const page = await anonymous(`${made.body.url}/`);
    t.is(page.status, 200);
    const links = [...page.text.matchAll(/href="(\/share\/[^"]+\.(?:svg|png))"/g)].map((m) => m[1]!);
    t.deepEqual(links, [new URL(made.body.svgUrl).pathname, new URL(made.body.pngUrl).pathname]);
    for (const link of links) t.is((await anonymous(s.url + link)).status, 200, link);
  }));

test('a link to a diagram deleted and made again under its id stays ended however often the new one changes since (1,001 pushed commits)', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const d = await shopDiagram(s);
  const made = await s.request('POST', `${API}/diagram/${d.id}/share-links`);
  await s.request('DELETE', `${API}/diagram/${d.id}`);
  t.is((await s.post(`${API}/diagrams`, { id: d.id, name: 'Internal M&A roadmap', level: 'C1' })).status, 201);
  t.is((await anonymous(made.body.url)).status, 404);

  // The new diagram changed more often than one page of its history holds.
  const dir = await cloneFor(t, s, 'c4store-share-continuity-');
  const path = resourcePath('diagram', d.id);
  const stored = await readFile(join(dir, path), 'utf8');
  t.regex(stored, /^desc: null$/m);
  const main = await gitIn(dir, ['rev-parse', 'origin/main']);
  const commits = Array.from({ length: 1001 }, (_, n) => {
    const content = stored.replace(/^desc: null$/m, `desc: Revision ${n + 1}`);
    return [
      'commit refs/heads/main',
      `mark :${n + 1}`,
      `committer Ada <ada@example.com> ${1_700_000_000 + n} +0000`,
      'data 7',
      'revised',
      `from ${n === 0 ? main : `:${n}`}`,
      `M 100644 inline ${path}`,
      `data ${Buffer.byteLength(content)}`,
      content,
    ].join('\n');
  });
  await gitIn(dir, ['fast-import', '--quiet', '--force'], `${commits.join('\n')}\n`);
  await gitIn(dir, ['push', '-q', 'origin', 'main']);
  t.is((await s.get(`${API}/diagram/${d.id}`)).body.desc, 'Revision 1001');

  for (const url of [made.body.url, made.body.svgUrl]) t.is((await anonymous(url)).status, 404, url);
});

test('a link given a lifetime (at most 365 days) ends by itself, listed; expired it answers as revoked; one given none lasts until revoked', (t) =>
  withServer(async (s) => {
    const d = await shopDiagram(s);
    const DAY = 24 * 3600 * 1000;
    const lifetime = (link: { created: string; expires: string }) => (Date.parse(link.expires) - Date.parse(link.created)) / DAY;
    const week = await s.post(`${API}/diagram/${d.id}/share-links`, { label: 'sprint review', expiresInDays: 7 });
    t.is(week.status, 201, week.text);
    t.is(lifetime(week.body), 7);
    const plain = await s.request('POST', `${API}/diagram/${d.id}/share-links`);
    t.is(plain.status, 201, plain.text);
    t.is(plain.body.expires, null, 'without a lifetime: until revoked');
    const longest = await s.post(`${API}/diagram/${d.id}/share-links`, { expiresInDays: 365 });
    t.is(lifetime(longest.body), 365);
    for (const [days, error] of [
      [366, 'Invalid JSON: expiresInDays: Number must be less than or equal to 365'],
      [0, 'Invalid JSON: expiresInDays: Number must be greater than or equal to 1'],
      [1.5, 'Invalid JSON: expiresInDays: Expected integer, received float'],
    ] as const) {
      const refused = await s.post(`${API}/diagram/${d.id}/share-links`, { expiresInDays: days });
      t.is(refused.status, 400, String(days));
      t.deepEqual(refused.body, { error });
    }
    const listed = (await s.get(`${API}/share-links`)).body;
    t.deepEqual(
      listed.map((l: any) => l.expires),
      [week.body.expires, plain.body.expires, longest.body.expires],
    );
    t.is((await s.get(`${API}/share-links/${week.body.id}`)).body.expires, week.body.expires);

    // The week went by (the file edited by hand, as docs/deploy.md says: the seal line deleted).
    const file = join(s.dataDir, 'share-links.yaml');
    const past = new Date(Date.now() - DAY).toISOString();
    const text = (await readFile(file, 'utf8'))
      .replace(/^# c4store seal: .*\n/, '')
      .replace(`expires: ${week.body.expires}`, `expires: ${past}`);
    t.not(text, await readFile(file, 'utf8'));
    await writeFile(file, text, { mode: 0o600 });
    for (const url of [week.body.url, week.body.svgUrl, week.body.pngUrl]) {
      const answer = await anonymous(url);
      t.is(answer.status, 404, answer.text);
      t.true(answer.text.includes('This share link does not exist or was revoked.'));
    }
    t.is((await anonymous(plain.body.url)).status, 200, 'a link without a lifetime still opens');
    t.is((await anonymous(longest.body.svgUrl)).status, 200);
    t.deepEqual(
      (await s.get(`${API}/share-links`)).body.map((l: any) => [l.id, l.expires]),
      [
        [week.body.id, past],
        [plain.body.id, null],
        [longest.body.id, longest.body.expires],
      ],
    );
  }));

test('expired links hold no place among the 1,000 an organization may hold, and are dropped 30 days after they ended', (t) =>
  withServer(async (s) => {
    const d = await shopDiagram(s);
    const made = await s.post(`${API}/diagram/${d.id}/share-links`, { label: 'first' });
    const file = join(s.dataDir, 'share-links.yaml');
    const [first] = (YAML.parse((await readFile(file, 'utf8')).replace(/^# c4store seal: .*\n/, '')) as { links: any[] }).links;
    const DAY = 24 * 3600 * 1000;
    // The file as if the organization had made 1,000 links: 998 open, one ended yesterday, one 31 days ago.
    const link = (n: number, expires: string) => ({
      ...first,
      id: n.toString(16).padStart(16, '0'),
      label: `link ${n}`,
      hash: createHash('sha256').update(`token ${n}`).digest('hex'),
      expires,
    });
    const open = new Date(Date.now() + DAY).toISOString();
    const links = [
      ...Array.from({ length: 998 }, (_, n) => link(n + 1, open)),
      link(1001, new Date(Date.now() - DAY).toISOString()),
      link(1002, new Date(Date.now() - 31 * DAY).toISOString()),
    ];
    await writeFile(file, YAML.stringify({ links }), { mode: 0o600 });
    t.is((await s.get(`${API}/share-links`)).body.length, 1000);
    t.is((await anonymous(made.body.url)).status, 404, 'the first link is no longer in the file');

    const more = await s.post(`${API}/diagram/${d.id}/share-links`, { label: 'one more' });
    t.is(more.status, 201, 'the two expired links hold no place: 998 open ones, and one more');
    const listed = (await s.get(`${API}/share-links`)).body.map((l: any) => l.label);
    t.is(listed.length, 1000);
    t.true(listed.includes('link 1001'), 'an expired link stays listed');
    t.false(listed.includes('link 1002'), 'one ended more than 30 days ago is dropped at the next write');
    t.is((await s.post(`${API}/diagram/${d.id}/share-links`, { label: 'and another' })).status, 201);
    const full = await s.post(`${API}/diagram/${d.id}/share-links`, { label: 'too many' });
    t.is(full.status, 409);
    t.deepEqual(full.body, { error: 'An organization holds at most 1,000 share links: revoke some first.' });
  }));
