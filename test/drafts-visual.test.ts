import test from 'ava';
import { renderPng } from '../src/drawing/png.js';
import { sessionCookie, type TestServer, withServer } from './support/server.js';

// The visual diff of a diagram in a draft (CONTRACT §8), drawn by the real server: the API's
// diagram GET with Accept: image/svg+xml (or image/png), and the viewer's .svg and .png addresses, with
// ?draft=&compare=main; a diagram the draft deleted among them.

const API = '/api/external';
const SVG = { headers: { accept: 'image/svg+xml' } };
const PNG = { headers: { accept: 'image/png' } };

/** A PNG answer's bytes (the test server's reply holds its body as text). */
async function pngAt(url: string, headers: Record<string, string>): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const answer = await fetch(url, { headers });
  return { status: answer.status, type: answer.headers.get('content-type'), bytes: Buffer.from(await answer.arrayBuffer()) };
}

const cookieOf = (s: TestServer) => sessionCookie(s.url, s.key);

/** Each element group's mark: data-id → the c4-* class on it, or '' (groups of relations and their labels alike). */
function marksOf(svg: string): Map<string, string> {
  const marks = new Map<string, string>();
  // The drawing's groups are written as <g class="…" …data-id="…"> (src/drawing/svg.ts).
  for (const [, classes, id] of svg.matchAll(/<g class="([^"]*)"[^>]*? data-id="([^"]+)"/g)) {
    const mark = classes.split(' ').find((c) => c.startsWith('c4-')) ?? '';
    if (marks.has(id) && marks.get(id) !== mark) throw new Error(`${id}: two marks`);
    marks.set(id, mark);
  }
  return marks;
}

test('a diagram in a draft compared with main: added, removed and changed elements carry their class, on the draft layout', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/component`, [
      { ref: 'web', name: 'Web' },
      { ref: 'api', name: 'API' },
      { ref: 'db', name: 'SQL' },
    ]);
    const instances = [
      { ref: 'w', component: 'web', position: { x: 0, y: 0 }, width: 10, height: 5 },
      { ref: 'a', component: 'api', position: { x: 20, y: 0 }, width: 10, height: 5 },
      { ref: 'd', component: 'db', position: { x: 40, y: 0 }, width: 10, height: 5 },
    ];
    const relations = [
      { ref: 'wa', fromComponentInstance: 'w', toComponentInstance: 'a', label: 'calls' },
      { ref: 'ad', fromComponentInstance: 'a', toComponentInstance: 'd', label: 'SQL' },
    ];
    const [diagram] = (
      await s.post(`${API}/diagram`, [{ ref: 'c2', name: 'Payments C2', level: 'C2', componentInstances: instances, relations }])
    ).body;
    const id = (ref: string) => [...diagram.componentInstances, ...diagram.relations].find((e: { ref: string }) => e.ref === ref).id;

    await s.post(`${API}/drafts`, { name: 'payments-v2' });
    // The draft: Web moves, API is renamed, SQL goes (with its relation), Fraud Check comes.
    await s.post(`${API}/component?draft=payments-v2`, [
      { ref: 'api', name: 'Payments API' },
      { ref: 'fraud', name: 'Fraud Check' },
    ]);
    const reply = await s.post(`${API}/diagram?draft=payments-v2`, [
      {
        ref: 'c2',
        name: 'Payments C2',
        level: 'C2',
        componentInstances: [
          { ref: 'w', component: 'web', position: { x: 0, y: 12 } },
          { ref: 'a', component: 'api' },
          { ref: 'f', component: 'fraud', position: { x: 40, y: 12 }, width: 10, height: 5 },
        ],
        relations: [relations[0], { ref: 'af', fromComponentInstance: 'a', toComponentInstance: 'f', label: 'checks' }],
      },
    ]);
    t.is(reply.status, 200, reply.text);
    const drafted = reply.body[0];
    const newId = (ref: string) => [...drafted.componentInstances, ...drafted.relations].find((e: { ref: string }) => e.ref === ref).id;

    const api = await s.get(`${API}/diagram/${diagram.id}?draft=payments-v2&compare=main`, SVG);
    t.is(api.status, 200, api.text);
    t.is(api.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
    // It draws main as well as the draft, so the draft's head is no validator of it.
    t.is(api.headers.get('etag'), null);
    const marks = marksOf(api.text);
    t.deepEqual(Object.fromEntries(marks), {
      [id('w')]: 'c4-changed',
      [id('a')]: 'c4-changed',
      [id('d')]: 'c4-removed',
      [newId('f')]: 'c4-added',
      [id('wa')]: '',
      [id('ad')]: 'c4-removed',
      [newId('af')]: 'c4-added',
    });
    // On the draft's layout; the removed box where it stood, still named.
    t.regex(api.text, new RegExp(`data-id="${id('w')}" data-x="0" data-y="12"`));
    t.regex(api.text, new RegExp(`class="box [^"]*\\bc4-removed" data-kind="instance" data-id="${id('d')}" data-x="40" data-y="0"`));
    t.regex(api.text, />SQL<\/text>/);
    t.regex(api.text, /\.c4-diagram \.c4-removed\{opacity:/);

    // The viewer's address draws the same.
    const cookie = await cookieOf(s);
    const viewer = await fetch(`${s.url}/orgs/${s.slug}/diagrams/${diagram.id}.svg?draft=payments-v2&compare=main`, {
      headers: { cookie },
    });
    t.is(viewer.status, 200);
    t.deepEqual(marksOf(await viewer.text()), marks);

    // The draft's page links to the diagram's history in the draft: the draft's commit is there, not on main's.
    const draftHead = (await s.git('rev-parse', 'drafts/payments-v2')).trim();
    const page = await (await fetch(`${s.url}/orgs/${s.slug}/diagrams/${diagram.id}?draft=payments-v2`, { headers: { cookie } })).text();
    t.regex(
      page,
      new RegExp(`href="/orgs/${s.slug}/diagrams/${diagram.id}/history\\?draft=payments-v2">History of this diagram in the draft<`),
    );
    const inDraft = await fetch(`${s.url}/orgs/${s.slug}/diagrams/${diagram.id}/history?draft=payments-v2`, { headers: { cookie } });
    t.is(inDraft.status, 200);
    const inDraftText = await inDraft.text();
    t.regex(inDraftText, /History of <bdi>Payments C2<\/bdi> in draft 'payments-v2'/);
    t.true(inDraftText.includes(`?at=${draftHead}`));
    const onMain = await (await fetch(`${s.url}/orgs/${s.slug}/diagrams/${diagram.id}/history`, { headers: { cookie } })).text();
    t.false(onMain.includes(`?at=${draftHead}`));
    t.is((await fetch(`${s.url}/orgs/${s.slug}/diagrams/${diagram.id}/history?draft=nope`, { headers: { cookie } })).status, 404);

    // Without compare: the draft's drawing, unmarked; main's, unchanged.
    const marked = /class="[^"]*c4-(added|removed|changed)/;
    t.notRegex((await s.get(`${API}/diagram/${diagram.id}?draft=payments-v2`, SVG)).text, marked);
    t.notRegex((await s.get(`${API}/diagram/${diagram.id}`, SVG)).text, marked);
    t.regex((await s.get(`${API}/diagram/${diagram.id}`, SVG)).text, new RegExp(`data-id="${id('d')}"`));

    const bad = await s.get(`${API}/diagram/${diagram.id}?draft=payments-v2&compare=other`, SVG);
    t.is(bad.status, 400);
    t.is((await s.get(`${API}/diagram/${diagram.id}?compare=main`, SVG)).status, 400);
    // Asked of the diagram's JSON (either form) or an export, compare is refused: no drawing, no comparison.
    for (const path of [`${API}/diagram/${diagram.id}`, `${API}/diagrams/${diagram.id}`]) {
      for (const accept of ['application/json', 'text/vnd.mermaid']) {
        const asked = await s.get(`${path}?draft=payments-v2&compare=main`, { headers: { accept } });
        t.is(asked.status, 400, `${path} ${accept}`);
        t.is(asked.body.error, 'compare=main is a drawing: ask for the visual diff with Accept: image/svg+xml or image/png.');
      }
    }

    // The PNG of the visual diff is its SVG rasterized, marks and all (not the draft's plain drawing).
    const key = { authorization: `Bearer ${s.key}`, accept: 'image/png' };
    const png = await pngAt(`${s.url}${API}/diagram/${diagram.id}?draft=payments-v2&compare=main`, key);
    t.is(png.status, 200);
    t.is(png.type, 'image/png');
    t.true(png.bytes.equals(await renderPng(api.text)), 'the marked SVG, rasterized');
    const plain = await pngAt(`${s.url}${API}/diagram/${diagram.id}?draft=payments-v2`, key);
    t.false(plain.bytes.equals(png.bytes), "not the draft's unmarked drawing");
    const viewerPng = await pngAt(`${s.url}/orgs/${s.slug}/diagrams/${diagram.id}.png?draft=payments-v2&compare=main`, { cookie });
    t.is(viewerPng.status, 200);
    t.true(viewerPng.bytes.equals(png.bytes));
    t.is((await s.get(`${API}/diagram/${diagram.id}?draft=payments-v2&compare=other`, PNG)).status, 400);
  }));

test('a diagram the draft deleted: its visual diff draws it as main had it, every element marked removed; the draft page shows it deleted', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/component`, [
      { ref: 'web', name: 'Web' },
      { ref: 'api', name: 'API' },
    ]);
    const [diagram] = (
      await s.post(`${API}/diagram`, [
        {
          ref: 'c2',
          name: 'Payments C2',
          level: 'C2',
          componentInstances: [
            { ref: 'w', component: 'web', position: { x: 0, y: 0 }, width: 10, height: 5 },
            { ref: 'a', component: 'api', position: { x: 20, y: 0 }, width: 10, height: 5 },
          ],
          relations: [{ ref: 'wa', fromComponentInstance: 'w', toComponentInstance: 'a', label: 'calls' }],
          textareas: [{ text: 'Legacy', position: { x: 0, y: 10 } }],
        },
      ])
    ).body;
    const elements = [...diagram.componentInstances, ...diagram.relations, ...diagram.textareas].map((e: { id: string }) => e.id);
    t.is(elements.length, 4);
    const mainSvg = (await s.get(`${API}/diagram/${diagram.id}`, SVG)).text;
    await s.post(`${API}/drafts`, { name: 'drop' });
    const deleted = await s.request('DELETE', `${API}/diagrams/${diagram.id}?draft=drop`);
    t.is(deleted.status, 200, deleted.text);
    t.is((await s.get(`${API}/diagram/${diagram.id}?draft=drop`)).status, 404, 'the draft has it no more');

    const everyRemoved = Object.fromEntries(elements.map((id: string) => [id, 'c4-removed']));
    const cookie = await cookieOf(s);
    /** Every way of asking for its visual diff draws it so: the API's two forms by id and by ref, the viewer's .svg; the PNGs are that SVG rasterized. */
    const drawnAsRemoved = async (when: string) => {
      const api = await s.get(`${API}/diagram/${diagram.id}?draft=drop&compare=main`, SVG);
      t.is(api.status, 200, `${when}: ${api.text}`);
      t.is(api.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
      t.is(api.headers.get('etag'), null);
      t.deepEqual(Object.fromEntries(marksOf(api.text)), everyRemoved, when);
      // Where main had each element, named as main had it.
      t.regex(api.text, new RegExp(`data-id="${diagram.componentInstances[1].id}" data-x="20" data-y="0"`));
      t.regex(api.text, />calls<\/tspan>/);
      for (const path of [`${API}/diagram/c2`, `${API}/diagrams/${diagram.id}`, `${API}/diagrams/c2`]) {
        const other = await s.get(`${path}?draft=drop&compare=main`, SVG);
        t.is(other.status, 200, `${when} ${path}: ${other.text}`);
        t.is(other.text, api.text, `${when} ${path}`);
      }
      const viewer = await fetch(`${s.url}/orgs/${s.slug}/diagrams/${diagram.id}.svg?draft=drop&compare=main`, { headers: { cookie } });
      t.is(viewer.status, 200, when);
      t.is(await viewer.text(), api.text, when);

      const rasterized = await renderPng(api.text);
      const pngs = [
        await pngAt(`${s.url}${API}/diagram/${diagram.id}?draft=drop&compare=main`, {
          authorization: `Bearer ${s.key}`,
          accept: 'image/png',
        }),
        await pngAt(`${s.url}${API}/diagrams/c2?draft=drop&compare=main`, { authorization: `Bearer ${s.key}`, accept: 'image/png' }),
        await pngAt(`${s.url}/orgs/${s.slug}/diagrams/${diagram.id}.png?draft=drop&compare=main`, { cookie }),
      ];
      for (const png of pngs) {
        t.is(png.status, 200, when);
        t.is(png.type, 'image/png');
        t.true(png.bytes.equals(rasterized), `${when}: the marked SVG, rasterized`);
      }
    };
    await drawnAsRemoved('open');
    t.notDeepEqual(Object.fromEntries(marksOf(mainSvg)), everyRemoved, "main's own drawing carries no marks");

    // Without compare, the draft has no such diagram; nor has it a page; an id neither had is not found.
    const missing = `Diagram with id '${diagram.id}' does not exist.`;
    t.deepEqual((await s.get(`${API}/diagram/${diagram.id}?draft=drop`, SVG)).body, { error: missing });
    t.is((await s.get(`${API}/diagrams/${diagram.id}?draft=drop`, PNG)).status, 404);
    for (const path of [
      `${diagram.id}.svg?draft=drop`,
      `${diagram.id}.png?draft=drop`,
      `${diagram.id}?draft=drop&compare=main`,
      'nope.svg?draft=drop&compare=main',
    ]) {
      t.is((await fetch(`${s.url}/orgs/${s.slug}/diagrams/${path}`, { headers: { cookie } })).status, 404, path);
    }
    t.deepEqual((await s.get(`${API}/diagram/nope?draft=drop&compare=main`, SVG)).body, {
      error: "Diagram with id 'nope' does not exist.",
    });
    // A compare other than main is refused as such, for a diagram the draft deleted too (it was 404).
    const badCompare = { error: "Invalid compare 'other': the only value is 'main'." };
    for (const path of [`${API}/diagram/${diagram.id}`, `${API}/diagrams/c2`]) {
      for (const accept of [SVG, PNG]) {
        const refused = await s.get(`${path}?draft=drop&compare=other`, accept);
        t.is(refused.status, 400, path);
        t.deepEqual(refused.body, badCompare, path);
      }
    }
    for (const path of [`${diagram.id}.svg?draft=drop&compare=other`, `${diagram.id}.png?draft=drop&compare=other`]) {
      t.is((await fetch(`${s.url}/orgs/${s.slug}/diagrams/${path}`, { headers: { cookie } })).status, 400, path);
    }
    // A draft that did not delete it: main's drawing is no visual diff of it.
    await s.post(`${API}/drafts`, { name: 'other' });
    t.deepEqual(
      Object.fromEntries(marksOf((await s.get(`${API}/diagram/${diagram.id}?draft=other&compare=main`, SVG)).text)),
      Object.fromEntries(elements.map((id: string) => [id, ''])),
    );

    /** The draft page: the deletion in the changes, and the diagram among those it compares, marked deleted. */
    const pageShowsDeleted = async (deletes: string) => {
      const page = await fetch(`${s.url}/orgs/${s.slug}/drafts/drop`, { headers: { cookie } });
      t.is(page.status, 200);
      const html = await page.text();
      t.regex(html, /<li>removed diagram <bdi>Payments C2<\/bdi><\/li>/);
      const figure = new RegExp(
        `<section class="diff-figure deleted" data-diagram="${diagram.id}"><h3><a href="/orgs/${s.slug}/diagrams/${diagram.id}\\?at=([0-9a-f]{40})"><bdi>Payments C2</bdi></a> <span class="deleted-mark">deleted</span></h3>` +
          '.*?<div class="panel as-is">(.*?)</div><div class="panel changes">(.*?)<p class="marks-in-words">(.*?)</p>.*?<div class="panel to-be">(.*?)</div></section>',
        's',
      ).exec(html);
      t.truthy(figure, 'the deleted diagram is among the compared ones');
      const [, at, asIs, changes, words, toBe] = figure!;
      t.is(at, (await s.get(`${API}/drafts/drop`)).body.changes.from, 'its name links to it as main had it');
      t.deepEqual(Object.fromEntries(marksOf(asIs!)), Object.fromEntries(elements.map((id: string) => [id, ''])));
      t.deepEqual(Object.fromEntries(marksOf(changes!)), everyRemoved);
      t.is(
        words,
        `${deletes}: everything on it is marked removed. Removed: box <bdi>Web</bdi>, box <bdi>API</bdi>, relation <bdi>calls</bdi>, text area.`,
      );
      t.regex(toBe!, /^<p>Not in the draft: (the draft deletes|its merge deleted) this diagram\.<\/p>$/);
      const linked = await fetch(`${s.url}/orgs/${s.slug}/diagrams/${diagram.id}?at=${at}`, { headers: { cookie } });
      t.is(linked.status, 200);
    };
    await pageShowsDeleted('The draft deletes this diagram');

    // Merged, and main moved on: still what its merge brought into main.
    t.is((await s.post(`${API}/drafts/drop/merge`, {})).status, 200);
    t.is((await s.get(`${API}/diagram/${diagram.id}`)).status, 404);
    t.is((await s.post(`${API}/component`, [{ ref: 'later', name: 'Later' }])).status, 200);
    await drawnAsRemoved('merged');
    await pageShowsDeleted('Its merge deleted this diagram from main');
  }));

test('a merged draft is still drawn with what its merge brought, after main moves on: the visual diff and the draft page', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/component`, [
      { ref: 'web', name: 'Web' },
      { ref: 'api', name: 'API' },
    ]);
    // Payments C2 with the given boxes and the relation Web → API, in the seed form.
    const c2 = (componentInstances: unknown[]) => [
      {
        ref: 'c2',
        name: 'Payments C2',
        level: 'C2',
        componentInstances,
        relations: [{ ref: 'wa', fromComponentInstance: 'w', toComponentInstance: 'a', label: 'calls' }],
      },
    ];
    const [diagram] = (
      await s.post(
        `${API}/diagram`,
        c2([
          { ref: 'w', component: 'web', position: { x: 0, y: 0 }, width: 10, height: 5 },
          { ref: 'a', component: 'api', position: { x: 20, y: 0 }, width: 10, height: 5 },
        ]),
      )
    ).body;
    const id = (ref: string) => [...diagram.componentInstances, ...diagram.relations].find((e: { ref: string }) => e.ref === ref).id;
    await s.post(`${API}/drafts`, { name: 'fraud' });
    await s.post(`${API}/component?draft=fraud`, [{ ref: 'fraud', name: 'Fraud Check' }]);
    const drafted = (
      await s.post(
        `${API}/diagram?draft=fraud`,
        c2([
          { ref: 'w', component: 'web', position: { x: 0, y: 12 } },
          { ref: 'a', component: 'api' },
          { ref: 'f', component: 'fraud', position: { x: 40, y: 0 }, width: 10, height: 5 },
        ]),
      )
    ).body[0];
    const fraudBox = drafted.componentInstances.find((i: { ref: string }) => i.ref === 'f').id;
    const expected = { [id('w')]: 'c4-changed', [id('a')]: '', [fraudBox]: 'c4-added', [id('wa')]: '' };
    const compare = `${API}/diagram/${diagram.id}?draft=fraud&compare=main`;
    t.deepEqual(Object.fromEntries(marksOf((await s.get(compare, SVG)).text)), expected);

    t.is((await s.post(`${API}/drafts/fraud/merge`, {})).status, 200);
    // After the merge main moves the API box: not the draft's work.
    const moved = await s.post(
      `${API}/diagram`,
      c2([
        { ref: 'w', component: 'web' },
        { ref: 'a', component: 'api', position: { x: 20, y: 30 } },
        { ref: 'f', component: 'fraud' },
      ]),
    );
    t.is(moved.status, 200, moved.text);
    t.regex((await s.get(`${API}/diagram/${diagram.id}`, SVG)).text, new RegExp(`data-id="${id('a')}" data-x="20" data-y="30"`));

    const svg = (await s.get(compare, SVG)).text;
    t.deepEqual(Object.fromEntries(marksOf(svg)), expected);
    t.regex(svg, new RegExp(`data-id="${id('a')}" data-x="20" data-y="0"`), 'drawn as the merge left it');

    const cookie = await cookieOf(s);
    const page = await fetch(`${s.url}/orgs/${s.slug}/drafts/fraud`, { headers: { cookie } });
    t.is(page.status, 200);
    const html = await page.text();
    t.regex(html, /class="draft-state">merged</);
    t.regex(html, /<li>added component <bdi>Fraud Check<\/bdi><\/li>/);
    t.regex(html, /<h2>What its merge brought into main<\/h2><ul class="changes">/);
    t.regex(html, /0 commits of main between its start and its merge/);
    const figure = /<section class="diff-figure" data-diagram="([^"]+)">.*?<div class="panel changes">(.*?)<\/div>/s.exec(html);
    t.is(figure?.[1], diagram.id);
    t.deepEqual(Object.fromEntries(marksOf(figure![2])), expected);
  }));
