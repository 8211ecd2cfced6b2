/**
 * The viewer without a browser: the SVG drawing as a pure function, sessions and their
 * cookie, cross-site refusals, the arrange write (one commit through the API's write path),
 * old urls, the drawing for embedding and `?at=`. The browser's side: viewer-browser.test.ts.
 */
import test from 'ava';
import { textAreaHeight } from '../src/layout/layout.js';
import { emptyModel } from '../src/model/files.js';
import type { Diagram, Model } from '../src/model/types.js';
import { KeyStore } from '../src/store/keys.js';
import { Sessions } from '../src/viewer/sessions.js';
import { drawDiagram, GRID_PX, textAreaLines } from '../src/drawing/svg.js';
import { sessionCookie, TestServer, withServer } from './support/server.js';

// ---------------------------------------------------------------------------------------
// The drawing

function smallModel(): { model: Model; diagram: Diagram } {
  const model = emptyModel({ name: 'Acme', slug: 'acme', members: [] });
  model.types.set('t1', { id: 't1', slug: 'container', name: 'Container' });
  model.components.set('c1', {
    id: 'c1',
    name: 'Pay <API> & "co"',
    desc: null,
    state: 'ACTIVE',
    typeId: 't1',
    linksTo: [],
    attributes: [],
    apiContext: 'run 7',
  });
  model.components.set('c2', { id: 'c2', name: 'Ledger', desc: null, state: 'DRAFT', typeId: 't1', linksTo: [], attributes: [] });
  const diagram: Diagram = {
    id: 'd1',
    name: 'Payments',
    desc: null,
    state: 'DRAFT',
    level: 'C2',
    tags: [],
    componentInstances: [
      {
        id: 'box',
        component: null,
        placeholder: 'Payments',
        isContainer: true,
        parent: null,
        position: { x: -10, y: -5 },
        width: 40,
        height: 20,
      },
      { id: 'i1', component: 'c1', placeholder: '', isContainer: false, parent: 'box', position: { x: -8, y: -1 }, width: 16, height: 8 },
      { id: 'i2', component: 'c2', placeholder: '', isContainer: false, parent: null, position: { x: 40, y: 0 }, width: 16, height: 8 },
      {
        id: 'p1',
        component: null,
        placeholder: 'Someone else',
        isContainer: false,
        parent: null,
        position: { x: 40, y: 20 },
        width: 16,
        height: 8,
      },
    ],
    textareas: [{ id: 'ta', position: { x: 0, y: 30 }, width: 10, text: 'a fairly long line of text\nshort' }],
    relations: [{ id: 'r1', fromComponentInstance: 'i1', toComponentInstance: 'i2', label: 'books <entries>', desc: null, linksTo: [] }],
  };
  model.diagrams.set('d1', diagram);
  return { model, diagram };
}

test('drawDiagram puts every box at its stored grid position and size, escapes model text, marks placeholders, containers and API changes', (t) => {
  const { model, diagram } = smallModel();
  const svg = drawDiagram(diagram, model);
  t.true(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  for (const i of diagram.componentInstances) {
    const g = new RegExp(
      `<g class="([^"]*)" data-kind="instance" data-id="${i.id}"[^>]*><rect class="body" x="(-?\\d+)" y="(-?\\d+)" width="(\\d+)" height="(\\d+)"`,
    ).exec(svg);
    t.truthy(g, i.id);
    t.deepEqual(g!.slice(2).map(Number), [i.position.x * GRID_PX, i.position.y * GRID_PX, i.width * GRID_PX, i.height * GRID_PX]);
    if (i.isContainer) t.true(g![1].includes('container'));
    if (i.component === null) t.true(g![1].includes('placeholder'));
  }
  // Negative positions: the view starts where the diagram does, two grid units before it.
  t.regex(svg, new RegExp(`viewBox="${-12 * GRID_PX} ${-7 * GRID_PX} `));
  t.false(svg.includes('<API>'));
  t.true(svg.includes('Pay &lt;API&gt; &amp;'));
  t.true(svg.includes('&quot;co&quot;'));
  t.true(svg.includes('books &lt;entries&gt;'));
  t.true(svg.includes('Someone else'));
  // Only the component changed through the API carries the marker.
  t.is(svg.split('class="api-marker"').length - 1, 1);
  t.regex(svg, /<title>Updated through the API \(run 7\)<\/title>/);
  t.false(svg.includes('class="handle"'));
  t.true(drawDiagram(diagram, model, { editable: true }).includes('class="handle"'));
});

test('text areas are drawn line by line as the layout counts their height: one character per grid unit, wrapped at spaces', (t) => {
  const { model, diagram } = smallModel();
  const area = diagram.textareas[0];
  const lines = textAreaLines(area.text, area.width);
  t.deepEqual(lines, ['a fairly', 'long line', 'of text', 'short']);
  t.is(lines.length, textAreaHeight(area.text, area.width));
  const svg = drawDiagram(diagram, model);
  t.true(svg.includes(`<rect class="frame" x="0" y="${30 * GRID_PX}" width="${10 * GRID_PX}" height="${4 * GRID_PX}"`));
  t.deepEqual(textAreaLines('', 5), ['']);
});

test('a session ends after its lifetime, and at once when its key is revoked', async (t) => {
  const s = await TestServer.start();
  try {
    const keys = new KeyStore(s.dataDir);
    const [record] = (await keys.list(s.slug)).filter((r) => r.role === 'editor');
    let now = 1_000;
    const sessions = new Sessions(keys, 60_000, () => now);
    const id = await sessions.open(record);
    t.is((await sessions.resolve(id))?.id, record.id);
    t.is(await sessions.resolve(`${id}x`), null);
    now += 60_000;
    t.is(await sessions.resolve(id), null);
    now = 1_000;
    t.is(await sessions.resolve(id), null, 'an expired session is gone for good');
    const again = await sessions.open(record);
    await keys.revoke(s.slug, record.id);
    t.is(await sessions.resolve(again), null);
  } finally {
    await s.close();
  }
});

// ---------------------------------------------------------------------------------------
// Over HTTP

async function signIn(s: TestServer, key: string, extra: Record<string, string> = {}): Promise<Response> {
  return fetch(`${s.url}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url, ...extra },
    body: new URLSearchParams({ key, next: '/' }),
  });
}

const cookieOf = (s: TestServer, key = s.key) => sessionCookie(s.url, key);

async function oneDiagram(s: TestServer) {
  await s.post('/api/external/component', [
    { ref: 'api', name: 'API' },
    { ref: 'db', name: 'DB' },
  ]);
  const [d] = (
    await s.post('/api/external/diagram', [
      {
        ref: 'd',
        name: 'Context',
        level: 'C2',
        componentInstances: [
          { ref: 'box', isContainer: true, position: { x: 0, y: 0 }, width: 30, height: 20 },
          { ref: 'a', component: 'api', parent: 'box', position: { x: 2, y: 4 }, width: 10, height: 6 },
          { ref: 'b', component: 'db', position: { x: 40, y: 4 }, width: 10, height: 6 },
        ],
        textareas: [{ text: 'note', position: { x: 0, y: 30 }, width: 10 }],
        relations: [{ fromComponentInstance: 'a', toComponentInstance: 'b', label: 'reads' }],
      },
    ])
  ).body;
  const byRef = (ref: string) => d.componentInstances.find((i: { ref?: string }) => i.ref === ref);
  return { d, box: byRef('box'), a: byRef('a'), b: byRef('b') };
}

function arrange(s: TestServer, cookie: string, diagramId: string, body: unknown, headers: Record<string, string> = {}) {
  return s.request('POST', `/orgs/${s.slug}/diagrams/${diagramId}/arrange`, {
    key: null,
    body,
    headers: { cookie, origin: s.url, ...headers },
  });
}

test('sign-in answers a session cookie (HttpOnly, SameSite=Strict, bounded, never the key); pages need it, the API does not take it', (t) =>
  withServer(async (s) => {
    const page = await fetch(`${s.url}/`, { redirect: 'manual' });
    t.is(page.status, 302);
    t.is(page.headers.get('location'), '/sign-in?next=%2F');
    const form = await fetch(`${s.url}/sign-in?next=%2F`);
    t.regex(await form.text(), /<input type="password" id="key" name="key"/);

    const bad = await signIn(s, 'c4s_not-a-key');
    t.is(bad.status, 401);
    t.is(bad.headers.get('set-cookie'), null);
    t.regex(await bad.text(), /This API key is not valid/);

    const good = await signIn(s, s.key);
    t.is(good.status, 303);
    t.is(good.headers.get('location'), '/');
    const cookie = good.headers.get('set-cookie')!;
    t.regex(cookie, /^c4s_session=acme\.[0-9a-f]{16}\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Strict$/);
    t.false(cookie.includes(s.key));
    const session = cookie.split(';')[0];
    const index = await fetch(`${s.url}/`, { headers: { cookie: session } });
    t.is(index.status, 200);
    t.regex(await index.text(), /<h1><bdi>Acme<\/bdi><\/h1>/);
    // The API keeps requiring its key headers.
    t.is((await s.get('/api/external/component', { key: null, headers: { cookie: session } })).status, 401);

    const out = await fetch(`${s.url}/sign-out`, { method: 'POST', redirect: 'manual', headers: { cookie: session, origin: s.url } });
    t.is(out.status, 303);
    t.regex(out.headers.get('set-cookie')!, /^c4s_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
    t.is((await fetch(`${s.url}/`, { redirect: 'manual', headers: { cookie: session } })).status, 302);
  }));

test('the session cookie is Secure when the service is reached over https', async (t) => {
  const s = await TestServer.start({ publicUrl: 'https://c4.example.com' });
  try {
    const answer = await signIn(s, s.key, { origin: 'https://c4.example.com' });
    t.is(answer.status, 303);
    t.regex(answer.headers.get('set-cookie')!, /; Secure$/);
  } finally {
    await s.close();
  }
});

test('cross-site requests from pages are refused: sign-in, sign-out and arrange', (t) =>
  withServer(async (s) => {
    const { d, b } = await oneDiagram(s);
    const cookie = await cookieOf(s);
    const crossSignIn = await signIn(s, s.key, { origin: 'https://evil.example' });
    t.is(crossSignIn.status, 403);
    t.is(crossSignIn.headers.get('set-cookie'), null);
    const before = await s.state();
    const move = { kind: 'instance', id: b.id, position: { x: 50, y: 4 } };
    for (const headers of [{ origin: 'https://evil.example' }, { origin: 'null' }]) {
      const answer = await arrange(s, cookie, d.id, move, headers);
      t.is(answer.status, 403);
      t.deepEqual(answer.body, { error: 'Cross-site request refused.' });
    }
    const noOrigin = await s.request('POST', `/orgs/${s.slug}/diagrams/${d.id}/arrange`, { key: null, body: move, headers: { cookie } });
    t.is(noOrigin.status, 403);
    t.is(await s.state(), before);
    // A cross-site sign-out cannot end a session either.
    t.is((await fetch(`${s.url}/sign-out`, { method: 'POST', headers: { cookie, origin: 'https://evil.example' } })).status, 403);
    t.is((await fetch(`${s.url}/`, { redirect: 'manual', headers: { cookie } })).status, 200);
  }));

test('a drop is one commit through the write path: authored by the key, If-Match checked, sizes 1-100, readers refused', (t) =>
  withServer(async (s) => {
    const { d, box, a, b } = await oneDiagram(s);
    const cookie = await cookieOf(s);
    const head = await s.head();
    const count = await s.commitCount();

    const moved = await arrange(
      s,
      cookie,
      d.id,
      { kind: 'instance', id: b.id, position: { x: 44, y: 8 }, width: 12, height: 7 },
      { 'if-match': `"${head}"` },
    );
    t.is(moved.status, 200);
    t.is(moved.body.commit, await s.head());
    t.is(moved.headers.get('etag'), `"${moved.body.commit}"`);
    t.true(moved.body.svg.startsWith('<svg'));
    t.is(await s.commitCount(), count + 1);
    t.is((await s.git('log', '-1', '--format=%an <%ae>')).trim(), `test pipeline <test-pipeline@${s.slug}>`);
    // Titled as a reviewer says it (issue 24, point 21), not as HTTP.
    t.regex(
      await s.git('log', '-1', '--format=%B'),
      /^Moved and resized 'DB' on 'Context'\n\nupdate diagrams\/\S+ \(Context\)\n\nApi-Context: /,
    );
    t.is((await s.git('diff', '--name-only', 'HEAD~1', 'HEAD')).trim().split('\n').length, 1);
    const served = (await s.get(`/api/external/diagram/${d.id}`)).body;
    t.like(
      served.componentInstances.find((i: { id: string }) => i.id === b.id),
      { position: { x: 44, y: 8 }, width: 12, height: 7 },
    );
    t.is(served.apiContext, undefined, "changed in the service's own interface: no apiContext");

    // The page named a commit that is no longer main.
    const stale = await arrange(s, cookie, d.id, { kind: 'instance', id: b.id, position: { x: 1, y: 1 } }, { 'if-match': `"${head}"` });
    t.is(stale.status, 412);
    t.deepEqual(stale.body, { error: `The model has changed since ${head}.` });

    const before = await s.state();
    for (const [body, error] of [
      [
        { kind: 'instance', id: b.id, position: { x: 1, y: 1 }, width: 0 },
        'Invalid JSON: width: Number must be greater than or equal to 1',
      ],
      [
        { kind: 'instance', id: b.id, position: { x: 1, y: 1 }, height: 101 },
        'Invalid JSON: height: Number must be less than or equal to 100',
      ],
      [{ kind: 'instance', id: b.id, position: { x: 1.5, y: 1 } }, 'Invalid JSON: position.x: Expected integer, received float'],
      [{ kind: 'instance', id: 'nope', position: { x: 1, y: 1 } }, "Component instance with id 'nope' does not exist in this diagram."],
      [
        { kind: 'instance', id: b.id, position: { x: 1, y: 1 }, parent: a.id },
        `Parent '${a.id}' is not a container instance of this diagram.`,
      ],
      [{ kind: 'instance', id: box.id, position: { x: 1, y: 1 }, parent: box.id }, `Container instance '${box.ref}' cannot have a parent.`],
      [
        { kind: 'textarea', id: d.textareas[0].id, position: { x: 1, y: 1 }, height: 3 },
        'A text area has no height: it follows from its text.',
      ],
    ] as const) {
      const answer = await arrange(s, cookie, d.id, body);
      t.is(answer.status, 400, error);
      t.deepEqual(answer.body, { error });
    }
    t.is((await arrange(s, cookie, 'unknown', { kind: 'instance', id: b.id, position: { x: 1, y: 1 } })).status, 404);
    const reader = await cookieOf(s, s.readerKey);
    const refused = await arrange(s, reader, d.id, { kind: 'instance', id: b.id, position: { x: 1, y: 1 } });
    t.is(refused.status, 403);
    t.deepEqual(refused.body, { error: 'This API key may only read.' });
    // A drop where the box already is changes nothing.
    const same = await arrange(s, cookie, d.id, { kind: 'instance', id: b.id, position: { x: 44, y: 8 } });
    t.is(same.status, 200);
    t.is(await s.state(), before);
  }));

test('a drop or a panel save sent again once saved (its answer lost) is answered as saved, with no second commit', (t) =>
  withServer(async (s) => {
    const { d, b } = await oneDiagram(s);
    const cookie = await cookieOf(s);
    const shown = await s.head();
    // What a browser sends again when the instance that made the commit died before answering.
    const drop = { kind: 'instance', id: b.id, position: { x: 44, y: 8 } };
    const first = await arrange(s, cookie, d.id, drop, { 'if-match': `"${shown}"` });
    t.is(first.status, 200);
    const saved = await s.state();
    const again = await arrange(s, cookie, d.id, drop, { 'if-match': `"${shown}"` });
    t.is(again.status, 200, JSON.stringify(again.body));
    t.is(again.body.commit, first.body.commit, 'the commit that holds the drop');
    t.is(again.headers.get('etag'), `"${first.body.commit}"`);
    t.true(again.body.svg.startsWith('<svg'));
    t.is(await s.state(), saved, 'no second commit');
    // A stale page's drop that is not in place yet is still refused.
    const other = await arrange(s, cookie, d.id, { ...drop, position: { x: 45, y: 8 } }, { 'if-match': `"${shown}"` });
    t.is(other.status, 412);
    t.is(await s.state(), saved);

    // The panel's form, likewise (its commit field is its If-Match).
    const componentId = d.componentInstances.find((i: { id: string }) => i.id === b.id).component;
    const save = (name: string) =>
      fetch(`${s.url}/orgs/${s.slug}/components/${componentId}/edit`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: s.url, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ name, desc: '', commit: first.body.commit, next: '/' }),
      });
    t.is((await save('Ledger')).status, 303);
    const renamed = await s.state();
    t.is(JSON.parse(renamed).count, JSON.parse(saved).count + 1, 'the save is one commit');
    const resent = await save('Ledger');
    t.is(resent.status, 303, await resent.text());
    t.is(resent.headers.get('location'), '/');
    t.is(await s.state(), renamed, 'no second commit');
    const stale = await save('Journal');
    t.is(stale.status, 412);
    t.is(await s.state(), renamed);
  }));

test("a draft page's merge or close sent again once done (its answer lost) is answered as done, changing nothing more", (t) =>
  withServer(async (s) => {
    const cookie = await cookieOf(s);
    const form = (path: string, fields: Record<string, string>) =>
      fetch(`${s.url}/orgs/${s.slug}/drafts/${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: s.url, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields),
      });
    for (const name of ['merged', 'closed', 'other']) t.is((await s.post('/api/external/drafts', { name })).status, 201);
    t.is((await s.post('/api/external/tag?draft=merged', [{ name: 'Proposed', color: 'green' }])).status, 200);
    const { head } = (await s.get('/api/external/drafts/merged')).body;

    const merge = await form('merged/merge', { head });
    t.is(merge.status, 303);
    const merged = await s.state();
    const again = await form('merged/merge', { head });
    t.is(again.status, 303, await again.text());
    t.is(again.headers.get('location'), merge.headers.get('location'));
    t.is(await s.state(), merged, 'no second merge');

    const close = await form('closed/close', {});
    t.is(close.status, 303);
    const closedAgain = await form('closed/close', {});
    t.is(closedAgain.status, 303, await closedAgain.text());
    t.is(closedAgain.headers.get('location'), close.headers.get('location'));
    t.is((await s.get('/api/external/drafts/closed')).body.state, 'closed');

    // A merge of another head than the one merged is still refused: that page showed another draft.
    t.is((await s.post('/api/external/tag?draft=other', [{ name: 'Other', color: 'red' }])).status, 200);
    const shown = (await s.get('/api/external/drafts/other')).body.head;
    t.is((await s.post('/api/external/tag?draft=other', [{ name: 'Later', color: 'red' }])).status, 200);
    t.is((await form('other/merge', {})).status, 303, 'merged as it is now: no head given');
    const before = await s.state();
    t.is((await form('other/merge', { head: shown })).status, 409);
    t.is(await s.state(), before);
  }));

test('moving a container carries its children; a box dropped out of it loses its parent; text areas move and resize', (t) =>
  withServer(async (s) => {
    const { d, box, a } = await oneDiagram(s);
    const cookie = await cookieOf(s);
    t.is((await arrange(s, cookie, d.id, { kind: 'instance', id: box.id, position: { x: 5, y: 3 } })).status, 200);
    let served = (await s.get(`/api/external/diagram/${d.id}`)).body;
    const find = (id: string) => served.componentInstances.find((i: { id: string }) => i.id === id);
    t.deepEqual(find(a.id).position, { x: 7, y: 7 });
    t.is((await arrange(s, cookie, d.id, { kind: 'instance', id: a.id, position: { x: 60, y: 40 }, parent: null })).status, 200);
    served = (await s.get(`/api/external/diagram/${d.id}`)).body;
    t.is(find(a.id).parent, null);
    const area = d.textareas[0];
    t.is((await arrange(s, cookie, d.id, { kind: 'textarea', id: area.id, position: { x: -3, y: 31 }, width: 20 })).status, 200);
    served = (await s.get(`/api/external/diagram/${d.id}`)).body;
    t.like(served.textareas[0], { id: area.id, position: { x: -3, y: 31 }, width: 20, text: 'note' });
  }));

test('a container dropped at the edge of the positions a diagram holds is refused when it would carry a child beyond it', (t) =>
  withServer(async (s) => {
    const { d, box, a } = await oneDiagram(s);
    const cookie = await cookieOf(s);
    const before = await s.state();
    // The child sits 2 units right of its container's corner: at x 1,000,000 it would be at 1,000,002.
    const refused = await arrange(s, cookie, d.id, { kind: 'instance', id: box.id, position: { x: 1_000_000, y: 0 } });
    t.is(refused.status, 400);
    t.deepEqual(refused.body, {
      error: `Moving '${box.ref}' there would carry its child '${a.ref}' to x 1000002, beyond the ±1000000 a position may hold: nothing was moved.`,
    });
    t.is(await s.state(), before);
    // As far as its children stay within bounds, it moves, and the diagram is written back as read.
    t.is((await arrange(s, cookie, d.id, { kind: 'instance', id: box.id, position: { x: 999_998, y: 0 } })).status, 200);
    const served = (await s.get(`/api/external/diagram/${d.id}`)).body;
    t.deepEqual(served.componentInstances.find((i: { id: string }) => i.id === a.id).position, { x: 1_000_000, y: 4 });
    t.is((await s.post('/api/external/diagram', [served])).status, 200);
  }));

test('a revoked key ends its sessions at once: pages send to sign-in, drops are refused', (t) =>
  withServer(async (s) => {
    const { d, b } = await oneDiagram(s);
    const cookie = await cookieOf(s);
    t.is((await fetch(`${s.url}/`, { redirect: 'manual', headers: { cookie } })).status, 200);
    const keys = new KeyStore(s.dataDir);
    const editor = (await keys.list(s.slug)).find((r) => r.role === 'editor')!;
    await keys.revoke(s.slug, editor.id);
    t.is((await fetch(`${s.url}/`, { redirect: 'manual', headers: { cookie } })).status, 302);
    const refused = await arrange(s, cookie, d.id, { kind: 'instance', id: b.id, position: { x: 1, y: 1 } });
    t.is(refused.status, 401);
  }));

test("old diagram urls redirect to the organization's; another organization's page asks for its key", (t) =>
  withServer(async (s) => {
    const { d } = await oneDiagram(s);
    t.is(d.url, `${s.url}/orgs/${s.slug}/diagrams/${d.id}`);
    const anonymous = await fetch(`${s.url}/diagrams/${d.id}`, { redirect: 'manual' });
    t.is(anonymous.headers.get('location'), `/sign-in?next=${encodeURIComponent(`/diagrams/${d.id}`)}`);
    const cookie = await cookieOf(s);
    const old = await fetch(`${s.url}/diagrams/${d.id}`, { redirect: 'manual', headers: { cookie } });
    t.is(old.status, 301);
    t.is(old.headers.get('location'), `/orgs/${s.slug}/diagrams/${d.id}`);
    t.is(
      (await fetch(`${s.url}/diagrams/${d.id}.svg?at=x`, { redirect: 'manual', headers: { cookie } })).headers.get('location'),
      `/orgs/${s.slug}/diagrams/${d.id}.svg?at=x`,
    );
    t.is((await fetch(`${s.url}/diagrams/unknown`, { redirect: 'manual', headers: { cookie } })).status, 404);
    const page = await fetch(d.url, { headers: { cookie } });
    t.is(page.status, 200);
    t.regex(page.headers.get('content-security-policy')!, /script-src 'self'; .*frame-ancestors 'none'/);
    const html = await page.text();
    t.regex(html, /<h1><bdi>Context<\/bdi><\/h1>/);
    t.regex(html, /data-editable="true"/);
    const other = await fetch(`${s.url}/orgs/other/diagrams/${d.id}`, { headers: { cookie } });
    t.is(other.status, 403);
    t.regex(await other.text(), /belongs to organization &#39;other&#39;/);
  }));

test('the drawing alone: /orgs/<slug>/diagrams/<id>.svg and the API with Accept: image/svg+xml, as of ?at=<commit>', (t) =>
  withServer(async (s) => {
    const { d, b } = await oneDiagram(s);
    const first = await s.head();
    const cookie = await cookieOf(s);
    await arrange(s, cookie, d.id, { kind: 'instance', id: b.id, position: { x: 70, y: 4 } });
    const boxAt = (svg: string) => Number(new RegExp(`data-id="${b.id}" data-x="(-?\\d+)"`).exec(svg)![1]);

    const now = await fetch(`${d.url}.svg`, { headers: { cookie } });
    t.is(now.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
    t.is(now.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'");
    t.is(boxAt(await now.text()), 70);
    const then = await fetch(`${d.url}.svg?at=${first}`, { headers: { cookie } });
    t.is(then.headers.get('etag'), `"${first}"`);
    t.is(boxAt(await then.text()), 40);

    const api = await s.get(`/api/external/diagram/${d.id}`, { headers: { accept: 'image/svg+xml' } });
    t.is(api.status, 200);
    t.is(api.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
    t.is(boxAt(api.text), 70);
    t.is(boxAt((await s.get(`/api/external/diagram/${d.id}?at=${first}`, { headers: { accept: 'image/svg+xml' } })).text), 40);
    t.is((await s.get(`/api/external/diagram/${d.id}`, { key: null, headers: { accept: 'image/svg+xml' } })).status, 401);
    t.is((await s.get(`/api/external/diagram/${d.id}`)).body.id, d.id, 'JSON stays the default');
    // The page as of an older commit shows that layout and cannot be arranged.
    const old = await (await fetch(`${d.url}?at=${first}`, { headers: { cookie } })).text();
    t.regex(old, /data-editable="false"/);
    t.is(boxAt(old), 40);
  }));

test('the index lists diagrams by level and finds components; a component page shows its details and diagrams', (t) =>
  withServer(async (s) => {
    const { d } = await oneDiagram(s);
    const attribute = (
      await s.put('/api/external/attribute', [
        { name: 'Owner', type: 'USERLIST' },
        { name: 'Docs', type: 'LINK' },
      ])
    ).body;
    const [api] = (
      await s.post('/api/external/component', [
        {
          ref: 'api',
          name: 'API',
          desc: 'Serves <everything>',
          apiContext: 'ci',
          attributes: [
            { id: attribute[0].id, value: 'ada@example.com' },
            { id: attribute[1].id, value: 'https://docs.example/api' },
          ],
        },
      ])
    ).body;
    const cookie = await cookieOf(s);
    const index = await (await fetch(`${s.url}/`, { headers: { cookie } })).text();
    t.regex(index, /<h3>C2<\/h3>/);
    t.true(index.includes(`href="/orgs/${s.slug}/diagrams/${d.id}"`));
    t.true(index.includes('><bdi>DB</bdi></a>'));
    const found = await (await fetch(`${s.url}/?q=everything`, { headers: { cookie } })).text();
    t.true(found.includes('><bdi>API</bdi></a>'));
    t.false(found.includes('><bdi>DB</bdi></a>'));
    const page = await (await fetch(`${s.url}/orgs/${s.slug}/components/${api.id}`, { headers: { cookie } })).text();
    t.true(page.includes('Serves &lt;everything&gt;'));
    t.true(page.includes('Updated through the API (<bdi>ci</bdi>): later API updates may overwrite changes made here'));
    t.true(page.includes('<span class="person"><bdi>ada@example.com</bdi></span>'));
    t.true(page.includes('<a href="https://docs.example/api"'));
    t.true(page.includes(`href="/orgs/${s.slug}/diagrams/${d.id}"><bdi>Context</bdi></a>`));
  }));

test("the panel edits a component's name and description: one commit, no apiContext after, a stale page or a reader changes nothing", (t) =>
  withServer(async (s) => {
    const { d } = await oneDiagram(s);
    const [api] = (await s.post('/api/external/component', [{ ref: 'api', name: 'API', apiContext: 'ci' }])).body;
    const cookie = await cookieOf(s);
    const page = await (await fetch(d.url, { headers: { cookie } })).text();
    const commit = /data-commit="([0-9a-f]{40})"/.exec(page)![1];
    t.true(page.includes(`action="/orgs/${s.slug}/components/${api.id}/edit"`));
    const edit = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${s.url}/orgs/${s.slug}/components/${api.id}/edit`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: s.url, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(form),
      });
    const count = await s.commitCount();
    const saved = await edit({
      commit,
      next: `/orgs/${s.slug}/diagrams/${d.id}#c-${api.id}`,
      name: ' Payments API ',
      desc: 'Takes\r\npayments.',
    });
    t.is(saved.status, 303);
    t.is(saved.headers.get('location'), `/orgs/${s.slug}/diagrams/${d.id}#c-${api.id}`);
    t.is(await s.commitCount(), count + 1);
    t.is((await s.git('log', '-1', '--format=%s')).trim(), "Renamed 'API' to 'Payments API' and changed its description");
    const stored = (await s.get(`/api/external/component/${api.id}`)).body;
    t.like(stored, { name: 'Payments API', desc: 'Takes\npayments.', ref: 'api' });
    t.is(stored.apiContext, undefined);

    const before = await s.state();
    const stale = await edit({ commit, name: 'Other' });
    t.is(stale.status, 412);
    t.regex(await stale.text(), /The model changed since this page was loaded: reload the page/);
    t.is((await edit({ commit: await s.head(), name: '  ' })).status, 400);
    t.is((await edit({ name: 'Other' }, { origin: 'https://evil.example' })).status, 403);
    const reader = await cookieOf(s, s.readerKey);
    t.is((await edit({ name: 'Other' }, { cookie: reader })).status, 403);
    t.is(await s.state(), before);
    const readerPage = await (await fetch(d.url, { headers: { cookie: reader } })).text();
    t.false(readerPage.includes('/edit"'));
  }));

test('a diagram page links its history; the history page lists the commits that changed it, each showing it as it was', (t) =>
  withServer(async (s) => {
    const { d, b } = await oneDiagram(s);
    const created = await s.head();
    const cookie = await cookieOf(s);
    await arrange(s, cookie, d.id, { kind: 'instance', id: b.id, position: { x: 70, y: 4 } });
    const moved = await s.head();
    await s.post('/api/external/tag', [{ name: 'unrelated', color: 'red' }]);

    const page = await (await fetch(d.url, { headers: { cookie } })).text();
    t.true(page.includes(`href="/orgs/${s.slug}/diagrams/${d.id}/history"`));
    const history = await fetch(`${d.url}/history`, { headers: { cookie } });
    t.is(history.status, 200);
    const html = await history.text();
    const links = [...html.matchAll(new RegExp(`href="/orgs/${s.slug}/diagrams/${d.id}\\?at=([0-9a-f]{40})"`, 'g'))].map((m) => m[1]);
    t.deepEqual(links, [moved, created], 'newest first; the unrelated commit is not listed');
    t.regex(html, /test pipeline/);
    t.is((await fetch(`${s.url}/orgs/${s.slug}/diagrams/nope/history`, { headers: { cookie } })).status, 404);
    t.is((await fetch(`${d.url}/history`, { redirect: 'manual' })).status, 302, 'pages need a session');
  }));

/** The first change the viewer's stream sends after `after` (its id), or the refusal it answered with. */
async function viewerStreamAfter(
  s: TestServer,
  cookie: string,
  after: string,
): Promise<{ status: number; first?: string; error?: string }> {
  const response = await fetch(`${s.url}/orgs/${s.slug}/events?after=${encodeURIComponent(after)}`, { headers: { cookie } });
  if (response.status !== 200) return { status: response.status, error: ((await response.json()) as { error: string }).error };
  const reader = response.body!.getReader();
  let text = '';
  let id: RegExpExecArray | null = null;
  while (!(id = /^id: (\w+)$/m.exec(text))) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  return { status: 200, first: id[1] };
}

test("the viewer's stream resumes from the commits the API's does: an abbreviation, a version", (t) =>
  withServer(async (s) => {
    await s.post('/api/external/tag', [{ name: 'a', color: 'green' }]);
    const first = await s.head();
    t.is((await s.post('/api/external/versions', { name: 'v1' })).status, 201);
    await s.post('/api/external/tag', [{ name: 'b', color: 'green' }]);
    const second = await s.head();
    const cookie = await cookieOf(s);
    t.deepEqual(await viewerStreamAfter(s, cookie, first), { status: 200, first: second });
    t.deepEqual(await viewerStreamAfter(s, cookie, first.slice(0, 7)), { status: 200, first: second });
    t.deepEqual(await viewerStreamAfter(s, cookie, 'v1'), { status: 200, first: second });
    // An unknown commit is refused as the API's stream refuses it, not as if it were off main.
    const unknown = 'ab'.repeat(20);
    t.deepEqual(await viewerStreamAfter(s, cookie, unknown), { status: 404, error: `Commit '${unknown}' does not exist.` });
    const api = await fetch(`${s.url}/api/external/events?after=${unknown}`, { headers: { authorization: `Bearer ${s.key}` } });
    t.deepEqual(await api.json(), { error: `Commit '${unknown}' does not exist.` });
  }));

test("the viewer's script and style are sent with their types and nosniff: a browser never takes them for another kind", (t) =>
  withServer(async (s) => {
    for (const [name, type] of [
      ['viewer.js', /^(text|application)\/javascript/],
      ['live.js', /^(text|application)\/javascript/],
      ['viewer.css', /^text\/css/],
    ] as const) {
      const answer = await fetch(`${s.url}/viewer/${name}`);
      t.is(answer.status, 200, name);
      t.regex(answer.headers.get('content-type') ?? '', type, name);
      t.is(answer.headers.get('x-content-type-options'), 'nosniff', name);
      await answer.arrayBuffer();
    }
  }));

/** A form of the viewer's pages posted as the browser posts it (same origin, the session's cookie). */
function postForm(s: TestServer, cookie: string, path: string, fields: Record<string, string>) {
  return fetch(`${s.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: s.url, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
}

/** The hidden fields of the page's form whose action is `action`. */
async function formFields(s: TestServer, cookie: string, page: string, action: string): Promise<Record<string, string>> {
  const html = await (await fetch(`${s.url}${page}`, { headers: { cookie } })).text();
  const form = html.split('<form ').find((f) => f.startsWith(`method="post" action="${action}"`));
  if (form === undefined) throw new Error(`no form posting to ${action}`);
  const fields = [...form.slice(0, form.indexOf('</form>')).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)];
  return Object.fromEntries(fields.map((m) => [m[1]!, m[2]!]));
}

test("a share link's make and revoke sent again (their answers lost) answer as the first did: one link, then revoked, no error page", (t) =>
  withServer(async (s) => {
    const { d } = await oneDiagram(s);
    const cookie = await cookieOf(s);
    const page = `/orgs/${s.slug}/diagrams/${d.id}`;
    const make = { ...(await formFields(s, cookie, page, `${page}/share-links`)), label: 'README' };

    const first = await postForm(s, cookie, `${page}/share-links`, make);
    t.is(first.status, 201);
    const url = /id="share-url" readonly value="([^"]+)"/.exec(await first.text())?.[1];
    t.regex(url ?? '', /\/share\/[A-Za-z0-9_-]{43}$/);
    // The browser (or the balancer, docs/deploy.md) sends the very form again.
    const again = await postForm(s, cookie, `${page}/share-links`, make);
    t.is(again.status, 201);
    t.is(/id="share-url" readonly value="([^"]+)"/.exec(await again.text())?.[1], url, 'the same link, shown again');
    const listed = (await s.get('/api/external/share-links')).body;
    t.is(listed.length, 1, 'one link, not two');
    t.is((await fetch(url!)).status, 200);

    // The form sent once more with another label (back, edited, sent): not a resend, refused.
    const edited = await postForm(s, cookie, `${page}/share-links`, { ...make, label: 'wiki' });
    t.is(edited.status, 409);
    t.regex(await edited.text(), /reload the page/);
    t.is((await s.get('/api/external/share-links')).body.length, 1);

    const revoke = `/orgs/${s.slug}/share-links/${listed[0].id}/revoke`;
    const revokeForm = await formFields(s, cookie, page, revoke);
    const revoked = await postForm(s, cookie, revoke, revokeForm);
    t.is(revoked.status, 303);
    const revokedAgain = await postForm(s, cookie, revoke, revokeForm);
    t.is(revokedAgain.status, 303, 'a revoke sent again is answered as revoked, not with a 404 page');
    t.is(revokedAgain.headers.get('location'), revoked.headers.get('location'));
    t.is((await fetch(url!)).status, 404);
    t.deepEqual((await s.get('/api/external/share-links')).body, []);

    // The make form sent again after its link was revoked does not bring the link back.
    const late = await postForm(s, cookie, `${page}/share-links`, make);
    t.is(late.status, 409);
    t.regex(await late.text(), /was revoked since/);
    t.is((await fetch(url!)).status, 404);
    t.deepEqual((await s.get('/api/external/share-links')).body, []);
    // A link that never was is still not found.
    t.is((await postForm(s, cookie, `/orgs/${s.slug}/share-links/0123456789abcdef/revoke`, revokeForm)).status, 404);
    // A token that is not one: refused, nothing made.
    const bad = await postForm(s, cookie, `${page}/share-links`, { ...make, token: 'short' });
    t.is(bad.status, 400);
    t.deepEqual((await s.get('/api/external/share-links')).body, []);
  }));

test("the page's share form chooses when the link ends (never unless told); the made page and the list show it", (t) =>
  withServer(async (s) => {
    const { d } = await oneDiagram(s);
    const cookie = await cookieOf(s);
    const page = `/orgs/${s.slug}/diagrams/${d.id}`;
    const html = await (await fetch(`${s.url}${page}`, { headers: { cookie } })).text();
    t.regex(
      html,
      /<select id="share-expiry" name="expiresInDays"><option value="never" selected>never \(until revoked\)<\/option>.*<option value="90">90 days<\/option>.*<\/select>/,
    );
    const form = await formFields(s, cookie, page, `${page}/share-links`);

    const made = await postForm(s, cookie, `${page}/share-links`, { ...form, label: 'sprint', expiresInDays: '7' });
    t.is(made.status, 201);
    const [link] = (await s.get('/api/external/share-links')).body;
    t.is((Date.parse(link.expires) - Date.parse(link.created)) / 86_400_000, 7);
    const shown = `expires <time datetime="${link.expires}">${link.expires.slice(0, 19).replace('T', ' ')}</time>`;
    t.true((await made.text()).includes(shown), 'the made page says when it ends');
    t.true((await (await fetch(`${s.url}${page}`, { headers: { cookie } })).text()).includes(shown), 'so does the list');

    for (const [days, error] of [
      ['400', 'Invalid JSON: expiresInDays: Number must be less than or equal to 365'],
      ['soon', 'Invalid JSON: expiresInDays: Expected integer, received string'],
    ]) {
      const refused = await postForm(s, cookie, `${page}/share-links`, {
        ...(await formFields(s, cookie, page, `${page}/share-links`)),
        expiresInDays: days!,
      });
      t.is(refused.status, 400, days);
      t.true((await refused.text()).includes(error!), days);
    }
    t.is((await s.get('/api/external/share-links')).body.length, 1, 'nothing more made');

    const lasting = await postForm(s, cookie, `${page}/share-links`, {
      ...(await formFields(s, cookie, page, `${page}/share-links`)),
      label: 'wiki',
      expiresInDays: 'never',
    });
    t.is(lasting.status, 201);
    const wiki = (await s.get('/api/external/share-links')).body.find((l: any) => l.label === 'wiki');
    t.is(wiki.expires, null, 'never: until revoked');
    t.true((await lasting.text()).includes('until the link is revoked'), 'the made page says so');
  }));
