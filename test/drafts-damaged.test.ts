/**
 * A damaged drafts' records file (c4store-drafts.json in the organization's repository, damaged
 * here by hand) refuses every request that names a draft alike, 503 naming the file: reads and
 * writes with ?draft= on every kind of route, the drafts' own routes, the viewer's draft pages
 * and the agents' tools. What names no draft (main) goes on as before, and nothing is written
 * over the file. Real server, real HTTP, real git.
 */
import test from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EventSource } from 'eventsource';
import { Receiver } from './support/events.js';
import { sessionCookie, TestServer, withServer } from './support/server.js';

const API = '/api/external';
const REFUSAL =
  /^The drafts' records \(c4store-drafts\.json in the organization's repository\) cannot be read: .+\. Repair the file, or remove it to keep the drafts with default titles\.$/;

function recordsFile(s: TestServer): string {
  return join(s.gitdir, 'c4store-drafts.json');
}

async function draftHead(s: TestServer, name: string): Promise<string> {
  return (await s.git('rev-parse', `refs/heads/drafts/${name}`)).trim();
}

/** A draft `d1` with a tag and a diagram written into it, and the records file as c4store wrote it. */
async function withDraft(s: TestServer): Promise<string> {
  const opened = await s.post(`${API}/drafts`, { name: 'd1', title: 'Draft one', desc: 'A proposal' });
  if (opened.status !== 201) throw new Error(opened.text);
  const tag = await s.post(`${API}/tags?draft=d1`, { id: 'in-draft', name: 'In draft', color: 'red' });
  if (tag.status !== 201) throw new Error(tag.text);
  const diagram = await s.post(`${API}/diagrams?draft=d1`, { id: 'ctx', name: 'Context', level: 'C1' });
  if (diagram.status !== 201) throw new Error(diagram.text);
  return readFile(recordsFile(s), 'utf8');
}

/** Ways the file can be damaged, each made from the whole file as c4store wrote it. */
function damages(whole: string): Array<[string, string]> {
  const document = JSON.parse(whole) as { drafts: Array<Record<string, unknown>> };
  const [record] = document.drafts;
  const { title: _, ...untitled } = record!;
  return [
    ['cut mid-way', whole.slice(0, Math.floor(whole.length / 2))],
    ['cut before its last bracket', whole.slice(0, whole.lastIndexOf(']'))],
    ['empty', ''],
    ['not JSON', 'drafts:\n  - name: d1\n'],
    ['a list where the map belongs', JSON.stringify(document.drafts)],
    ['a map where the list belongs', JSON.stringify({ drafts: { d1: record } })],
    ['a record that is no object', JSON.stringify({ drafts: ['d1'] })],
    ['a record without its title', JSON.stringify({ drafts: [untitled] })],
    ['a description that is a number', JSON.stringify({ drafts: [{ ...record, desc: 5 }] })],
    ['a name that is no draft name', JSON.stringify({ drafts: [{ ...record, name: '../d1' }] })],
    ['a merge commit that is no commit id', JSON.stringify({ drafts: [{ ...record, mergeCommit: 'main' }] })],
    ['a draft recorded twice', JSON.stringify({ drafts: [record, { ...record, title: 'Another' }] })],
  ];
}

test('each kind of damage refuses a read and a write with ?draft= (503 naming the file) and changes nothing; main is read and written as before', (t) =>
  withServer(async (s) => {
    const whole = await withDraft(s);
    const head = await draftHead(s, 'd1');
    let mainTags = 0;
    for (const [kind, damaged] of damages(whole)) {
      await writeFile(recordsFile(s), damaged);
      const read = await s.get(`${API}/tags?draft=d1`);
      t.is(read.status, 503, `${kind}: ${read.text}`);
      t.regex(read.body.error, REFUSAL, kind);
      const written = await s.post(`${API}/tags?draft=d1`, { name: `Refused ${kind}`, color: 'blue' });
      t.is(written.status, 503, `${kind}: ${written.text}`);
      t.regex(written.body.error, REFUSAL, kind);
      t.is(await draftHead(s, 'd1'), head, `${kind}: the draft did not move`);
      t.is((await s.get(`${API}/drafts/d1`)).status, 503, kind);

      // main names no draft: read and written as ever.
      const mainRead = await s.get(`${API}/tags`);
      t.is(mainRead.status, 200, `${kind}: ${mainRead.text}`);
      t.is(mainRead.body.length, mainTags, kind);
      const mainWrite = await s.post(`${API}/tags`, { name: `On main ${kind}`, color: 'green' });
      t.is(mainWrite.status, 201, `${kind}: ${mainWrite.text}`);
      mainTags++;
      t.is(await readFile(recordsFile(s), 'utf8'), damaged, `${kind}: the damaged file is left as it was`);
    }

    // Repaired: the draft is served and written again, with its own title.
    await writeFile(recordsFile(s), whole);
    const read = await s.get(`${API}/tags?draft=d1`);
    t.is(read.status, 200, read.text);
    t.deepEqual(
      read.body.map((tag: { id: string }) => tag.id),
      ['in-draft'],
    );
    const written = await s.post(`${API}/tags?draft=d1`, { id: 'after-repair', name: 'After repair', color: 'blue' });
    t.is(written.status, 201, written.text);
    t.is((await s.get(`${API}/drafts/d1`)).body.title, 'Draft one');
    t.is((await s.get(`${API}/tags`)).body.length, mainTags);
  }));

test('every way to a draft is refused alike while its records are damaged: API routes of both forms, drafts routes, viewer pages, agent tools', (t) =>
  withServer(async (s) => {
    const whole = await withDraft(s);
    const head = await draftHead(s, 'd1');
    const base = (await s.get(`${API}/drafts/d1`)).body.base as string;
    const cookie = await sessionCookie(s.url, s.key);
    const agent = new Client({ name: 'damage-test', version: '1.0.0' });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${s.key}` } } }),
    );
    t.teardown(() => agent.close());

    await writeFile(recordsFile(s), whole.slice(0, whole.length - 20));
    const api: Array<[string, string, unknown?]> = [
      ['GET', `${API}/tag?draft=d1`],
      ['GET', `${API}/tags/in-draft?draft=d1`],
      ['GET', `${API}/model?draft=d1`],
      ['GET', `${API}/diagrams/ctx?draft=d1`],
      ['GET', `${API}/history?draft=d1`],
      ['GET', `${API}/changes?draft=d1`],
      ['GET', `${API}/events?draft=d1`],
      ['POST', `${API}/tag?draft=d1`, [{ name: 'Seed form', color: 'red' }]],
      ['PUT', `${API}/component?draft=d1`, [{ name: 'Put' }]],
      ['PATCH', `${API}/tags/in-draft?draft=d1`, { name: 'Patched' }],
      ['DELETE', `${API}/tags/in-draft?draft=d1`],
      ['POST', `${API}/template?draft=d1`, { components: [{ id: 'tpl', name: 'Template' }] }],
      ['POST', `${API}/revert?draft=d1`, { commit: base }],
      ['GET', `${API}/drafts`],
      ['GET', `${API}/drafts/d1/diff`],
      ['POST', `${API}/drafts/d1/merge`, {}],
      ['POST', `${API}/drafts/d1/update`, {}],
      ['DELETE', `${API}/drafts/d1`],
      ['POST', `${API}/drafts`, { name: 'd2' }],
    ];
    for (const [method, path, body] of api) {
      const reply = await s.request(method, path, body === undefined ? {} : { body });
      t.is(reply.status, 503, `${method} ${path}: ${reply.text}`);
      t.regex(reply.body.error, REFUSAL, `${method} ${path}`);
    }
    const drawing = await s.get(`${API}/diagram/ctx?draft=d1&compare=main`, { headers: { accept: 'image/svg+xml' } });
    t.is(drawing.status, 503, drawing.text);

    for (const page of [
      '/orgs/acme/diagrams/ctx?draft=d1',
      '/orgs/acme/diagrams/ctx/history?draft=d1',
      '/orgs/acme/drafts',
      '/orgs/acme/drafts/d1',
    ]) {
      const answer = await fetch(`${s.url}${page}`, { headers: { cookie } });
      t.is(answer.status, 503, page);
      t.true((await answer.text()).includes('c4store-drafts.json'), page);
    }

    for (const [name, args] of [
      ['get_model', { draft: 'd1' }],
      ['history', { draft: 'd1' }],
      ['draft_diff', { draft: 'd1' }],
      ['write_model', { draft: 'd1', components: [{ name: 'From an agent' }] }],
    ] as const) {
      const answer = await agent.callTool({ name, arguments: args });
      t.true(answer.isError, name);
      t.regex((answer.content as Array<{ text: string }>)[0]!.text, REFUSAL, name);
    }

    t.is(await draftHead(s, 'd1'), head, 'the draft did not move');
    t.deepEqual(
      (await s.git('for-each-ref', '--format=%(refname)', 'refs/heads/drafts', 'refs/drafts-closed', 'refs/drafts-merged')).trim(),
      'refs/heads/drafts/d1',
    );
    t.is(await readFile(recordsFile(s), 'utf8'), whole.slice(0, whole.length - 20), 'nothing was written over the file');

    // What names no draft goes on: main through the API, the viewer and the agents.
    const mainBefore = await s.head();
    t.is((await s.post(`${API}/components`, { id: 'on-main', name: 'On main' })).status, 201);
    t.not(await s.head(), mainBefore);
    t.is((await s.get(`${API}/model`)).status, 200);
    t.is((await fetch(`${s.url}/orgs/acme/components/on-main`, { headers: { cookie } })).status, 200);
    const mainModel = await agent.callTool({ name: 'get_model', arguments: {} });
    t.falsy(mainModel.isError);
    t.true((mainModel.content as Array<{ text: string }>)[0]!.text.includes('On main'));
  }));

test("main's event stream and webhooks go on while the records are damaged; a merge they cannot place waits for the repair, holding back no other draft", async (t) => {
  const s = await TestServer.start({ webhookAllowPrivate: true, events: { webhooks: { retryDelaysMs: [50], scanMs: 100 }, pollMs: 100 } });
  const receiver = await Receiver.start();
  t.teardown(async () => {
    await s.close();
    await receiver.close();
  });
  await withDraft(s);
  t.is((await s.request('POST', `${API}/drafts/d1/merge`)).status, 200);
  t.is((await s.post(`${API}/drafts`, { name: 'd2' })).status, 201);
  const d2Head = await draftHead(s, 'd2');
  const whole = await readFile(recordsFile(s), 'utf8');
  await writeFile(recordsFile(s), whole.slice(0, whole.length - 20));

  // A merged draft exists and its merge commit cannot be read: main's stream opens, a webhook is made.
  const created = await s.post(`${API}/webhooks`, { url: receiver.url });
  t.is(created.status, 201, created.text);
  const frames: Array<{ type: string; data: any }> = [];
  const source = new EventSource(`${s.url}${API}/events`, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${s.key}` } }),
  });
  t.teardown(() => source.close());
  for (const type of ['change', 'draft.opened', 'draft.merged']) {
    source.addEventListener(type, (event) => frames.push({ type, data: JSON.parse(event.data) }));
  }
  await new Promise<void>((resolve, reject) => {
    source.addEventListener('open', () => resolve(), { once: true });
    source.addEventListener('error', () => reject(new Error('the stream did not open')), { once: true });
  });
  const until = async (what: string, done: () => boolean) => {
    const deadline = Date.now() + 20_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`waited for ${what}: ${frames.map((f) => f.type).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const delivered = () => receiver.delivered.map((r) => JSON.parse(r.body) as { type: string; data: any });

  t.is((await s.post(`${API}/components`, { id: 'while-damaged', name: 'While damaged' })).status, 201);
  const changed = await s.head();
  await until('the change', () => frames.some((f) => f.type === 'change' && f.data.id === changed));
  await receiver.until(() => delivered().some((p) => p.type === 'model.changed' && p.data.id === changed));

  // d2 merged behind the service's back (its refs moved by hand, as an older process would), and
  // d3 opened by hand: d3 is told; d2's merge waits, for its merge commit is in the damaged file.
  await s.git('update-ref', 'refs/drafts-merged/d2', d2Head);
  await s.git('update-ref', '-d', 'refs/heads/drafts/d2');
  await s.git('update-ref', 'refs/heads/drafts/d3', changed);
  await until('d3 opened', () => frames.some((f) => f.type === 'draft.opened' && f.data.name === 'd3'));
  await receiver.until(() => delivered().some((p) => p.type === 'draft.opened' && p.data.name === 'd3'));
  await new Promise((resolve) => setTimeout(resolve, 600));
  t.false(
    frames.some((f) => f.type === 'draft.merged'),
    'no merge told with a commit it cannot know',
  );
  t.false(delivered().some((p) => p.type === 'draft.merged'));

  // Repaired, with d2's merge commit: its merge is told, with that commit.
  const records = JSON.parse(whole) as { drafts: Array<Record<string, unknown>> };
  for (const record of records.drafts)
    if (record.name === 'd2') Object.assign(record, { mergedAt: new Date().toISOString(), mergeCommit: changed });
  await writeFile(recordsFile(s), JSON.stringify(records));
  await s.git('update-ref', 'refs/heads/drafts/d4', changed);
  await until('d2 merged', () => frames.some((f) => f.type === 'draft.merged'));
  t.like(frames.find((f) => f.type === 'draft.merged')!.data, { name: 'd2', state: 'merged', head: d2Head, commit: changed });
  await receiver.until(() => delivered().some((p) => p.type === 'draft.merged'));
  t.like(delivered().find((p) => p.type === 'draft.merged')!.data, { name: 'd2', commit: changed });
});
