/**
 * Draft events over real HTTP (CONTRACT §8, §9): a draft's own change feed (`?draft=`), draft
 * events as frames of the organization's SSE stream and as signed webhooks, in order with the
 * changes of main — whether the draft was opened through the API or by a `git push`.
 */
import test from 'ava';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { Webhook } from 'standardwebhooks';
import { draftNotices, noticesBeforeMerge, readDraftStates } from '../src/events/draft-notices.js';
import { resourcePath } from '../src/model/paths.js';
import { Receiver } from './support/events.js';
import { cli, lastLine, serveProcess } from './support/process.js';
import { run, TestServer } from './support/server.js';

const API = '/api/external';
const FAST = { webhooks: { retryDelaysMs: [50, 50, 50], scanMs: 100 }, pollMs: 100 };
const TYPES = ['change', 'draft.opened', 'draft.updated', 'draft.merged', 'draft.closed'];

interface Frame {
  type: string;
  lastEventId: string;
  data: any;
}

/** A real EventSource on the organization's stream, collecting frames of every type. */
function stream(server: TestServer, path = `${API}/events`) {
  const frames: Frame[] = [];
  const source = new EventSource(server.url + path, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${server.key}` } }),
  });
  const opened = new Promise<void>((resolve) => source.addEventListener('open', () => resolve(), { once: true }));
  for (const type of TYPES) {
    source.addEventListener(type, (event) => frames.push({ type, lastEventId: event.lastEventId, data: JSON.parse(event.data) }));
  }
  const until = async (test: () => boolean, what: string) => {
    const deadline = Date.now() + 30_000;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`waited for ${what}: ${frames.map((f) => f.type).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { frames, opened, until, close: () => source.close() };
}

async function ok(reply: Promise<{ status: number; text: string; body: any }>, status = 200) {
  const answer = await reply;
  if (answer.status !== status) throw new Error(`${answer.status} ${answer.text}`);
  return answer.body;
}

test('?draft= pages a draft own first-parent commits; an unknown draft is 404', async (t) => {
  const server = await TestServer.start();
  t.teardown(() => server.close());
  await ok(server.post(`${API}/drafts`, { name: 'pages' }), 201);
  const start = await server.head();
  for (let i = 0; i < 5; i++) await ok(server.post(`${API}/tag?draft=pages`, [{ name: `d-${i}`, color: 'green' }]));
  await ok(server.post(`${API}/tag`, [{ name: 'on-main', color: 'green' }]));
  const expected = (await server.git('rev-list', '--first-parent', '--reverse', 'drafts/pages')).trim().split('\n');

  const seen: string[] = [];
  let after: string | null = start;
  while (after !== null) {
    const page = await ok(server.get(`${API}/changes?draft=pages&limit=2&after=${after}`));
    seen.push(...page.changes.map((c: { id: string }) => c.id));
    after = page.next;
  }
  t.deepEqual(seen, expected.slice(expected.indexOf(start) + 1), 'the draft commits after its start, none of main');
  t.is(seen.length, 5);
  const last = await ok(server.get(`${API}/changes?draft=pages&after=${seen[3]}`));
  t.like(last.changes[0].resources[0], { kind: 'tag', name: 'd-4', action: 'create' });

  const unknown = await server.get(`${API}/changes?draft=nope`);
  t.is(unknown.status, 404);
  t.is(unknown.body.error, "Draft 'nope' does not exist.");
  t.is((await server.get(`${API}/events?draft=nope`)).status, 404);
  const mainCommit = await server.head();
  const offBranch = await server.get(`${API}/changes?draft=pages&after=${mainCommit}`);
  t.is(offBranch.status, 404);
  t.is(offBranch.body.error, `Commit '${mainCommit}' is not a commit of draft 'pages'.`);
});

test('a draft stream carries the draft commits; the organization stream tells opened, updated, merged and closed in order with the changes', async (t) => {
  const server = await TestServer.start({ events: FAST });
  t.teardown(() => server.close());
  const org = stream(server);
  t.teardown(org.close);
  await org.opened;
  const startHead = await server.head();

  await ok(server.post(`${API}/drafts`, { name: 'payments', title: 'Payments v2' }), 201);
  await org.until(() => org.frames.some((f) => f.type === 'draft.opened'), 'draft.opened');
  const own = stream(server, `${API}/events?draft=payments`);
  t.teardown(own.close);
  await own.opened;

  await ok(server.post(`${API}/components?draft=payments`, { id: 'fraud', name: 'Fraud Check' }), 201);
  const draftHead = (await server.git('rev-parse', 'drafts/payments')).trim();
  await own.until(() => own.frames.length >= 1, 'the draft change');
  t.like(own.frames[0], { type: 'change', lastEventId: draftHead });
  t.like(own.frames[0].data.resources[0], { kind: 'component', id: 'fraud', action: 'create' });
  await org.until(() => org.frames.some((f) => f.type === 'draft.updated'), 'draft.updated');

  await ok(server.request('POST', `${API}/drafts/payments/merge`));
  const mergeCommit = await server.head();
  await org.until(() => org.frames.some((f) => f.type === 'draft.merged'), 'draft.merged');
  await ok(server.post(`${API}/drafts`, { name: 'shelved' }), 201);
  await ok(server.request('DELETE', `${API}/drafts/shelved`));
  await org.until(() => org.frames.some((f) => f.type === 'draft.closed'), 'draft.closed');

  t.deepEqual(
    org.frames.map((f) => `${f.type} ${f.type === 'change' ? f.data.title : f.data.name}`),
    [
      'draft.opened payments',
      'draft.updated payments',
      "change Merged draft 'payments': create 1",
      'draft.merged payments',
      'draft.opened shelved',
      'draft.closed shelved',
    ],
    'the merge commit comes before draft.merged',
  );
  const merged = org.frames.find((f) => f.type === 'draft.merged')!;
  t.like(merged.data, { name: 'payments', state: 'merged', head: draftHead, commit: mergeCommit });
  t.regex(merged.data.time, /^\d{4}-\d\d-\d\dT/);
  // A draft frame's id is the commit of main the client stands at: its resume point.
  t.is(org.frames[0]!.lastEventId, startHead, 'before any change: where the stream began');
  t.is(merged.lastEventId, mergeCommit, 'after the merge change: its commit');

  // As sent: `id:`, `event:` and `data:`. A client that saw only draft frames and was away while
  // main moved is sent what it missed when it reconnects with that id.
  const raw = async (headers: Record<string, string>, until: string) => {
    const abort = new AbortController();
    t.teardown(() => abort.abort());
    const reply = await fetch(`${server.url}${API}/events`, {
      headers: { authorization: `Bearer ${server.key}`, ...headers },
      signal: abort.signal,
    });
    const reader = reply.body!.getReader();
    // The stream is open once its first bytes came; a replay may be in them.
    let text = new TextDecoder().decode((await reader.read()).value);
    return async () => {
      while (text.indexOf(until) === -1 || !text.includes('\n\n', text.indexOf(until))) {
        const { value } = await reader.read();
        text += new TextDecoder().decode(value);
      }
      abort.abort();
      const before = text.lastIndexOf('\n\n', text.indexOf(until));
      return text.slice(before === -1 ? 0 : before + 2).split('\n\n')[0];
    };
  };
  const standing = await server.head();
  const reopened = await raw({}, 'event: draft.opened');
  await ok(server.request('POST', `${API}/drafts/shelved/reopen`));
  const frame = await reopened();
  t.regex(frame, new RegExp(`^id: ${standing}\nevent: draft\\.opened\ndata: \\{.*"name":"shelved".*"reopened":true.*\\}$`));
  await ok(server.post(`${API}/tag`, [{ name: 'while-away', color: 'green' }]));
  const missed = await (await raw({ 'last-event-id': standing }, 'event: change'))();
  t.regex(missed, new RegExp(`^id: ${await server.head()}\nevent: change\ndata: .*"while-away"`));
});

test('a draft opened by git push is told on the stream; a webhook of draft.* receives them signed and in order', async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  const receiver = await Receiver.start();
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  const created = await ok(
    server.post(`${API}/webhooks`, { url: receiver.url, events: ['model.changed', 'draft.opened', 'draft.merged', 'draft.closed'] }),
    201,
  );
  const org = stream(server);
  t.teardown(org.close);
  await org.opened;

  await ok(server.post(`${API}/drafts`, { name: 'api-draft' }), 201);
  await ok(server.post(`${API}/components?draft=api-draft`, { id: 'queue', name: 'Queue' }), 201);
  await ok(server.request('POST', `${API}/drafts/api-draft/merge`));
  const mergeCommit = await server.head();

  // A draft opened by a push, not through the API.
  const parent = await mkdtemp(join(tmpdir(), 'c4store-draft-events-'));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  const remote = new URL(`${server.url}/git/${server.slug}.git`);
  remote.username = 'ci';
  remote.password = server.key;
  const env = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
  const dir = join(parent, 'model');
  const git = (...args: string[]) => run('git', ['-C', dir, '-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', ...args], { env });
  await run('git', ['clone', '-q', remote.href, dir], { env });
  await git('checkout', '-q', '-b', 'drafts/pushed');
  const file = join(dir, resourcePath('component', 'queue'));
  await writeFile(file, (await readFile(file, 'utf8')).replace('name: Queue', 'name: Work Queue'));
  await git('commit', '-q', '-am', 'Rename the queue');
  await git('push', '-q', 'origin', 'drafts/pushed');
  const pushedHead = (await server.git('rev-parse', 'drafts/pushed')).trim();
  await org.until(() => org.frames.some((f) => f.type === 'draft.opened' && f.data.name === 'pushed'), 'the pushed draft');
  t.like(org.frames.find((f) => f.data.name === 'pushed')!.data, { state: 'open', head: pushedHead, commit: pushedHead });
  await ok(server.request('DELETE', `${API}/drafts/pushed`));

  const expected = ['draft.opened api-draft', 'model.changed', 'draft.merged api-draft', 'draft.opened pushed', 'draft.closed pushed'];
  await receiver.until(() => receiver.delivered.length >= expected.length, 30_000, 'five deliveries');
  const signer = new Webhook(created.secret);
  const payloads = receiver.delivered.map((r) => signer.verify(r.body, r.headers as Record<string, string>) as any);
  t.deepEqual(
    payloads.map((p) => (p.type === 'model.changed' ? p.type : `${p.type} ${p.data.name}`)),
    expected,
    'no draft.updated: the subscription did not ask for it',
  );
  t.is(payloads[1].data.id, mergeCommit);
  t.like(payloads[2].data, { name: 'api-draft', state: 'merged', commit: mergeCommit });
  t.is(payloads[2].timestamp, payloads[2].data.time);
  const ids = receiver.delivered.map((r) => r.headers['webhook-id']);
  t.is(new Set(ids).size, ids.length, 'each event has its own webhook-id');
  t.regex(String(ids[0]), /^msg_draft_[0-9a-f]{32}_/);

  const log = await ok(server.get(`${API}/webhooks/${created.id}/deliveries`));
  t.true(log.some((d: { commit: string }) => d.commit === pushedHead));
  // Nothing more follows (the state remembers what was delivered).
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(receiver.delivered.length, expected.length);
});

test('two processes on one data directory: draft events made through one reach the stream of the other; each webhook event is delivered once', async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'c4store-draft-events-'));
  const key = lastLine(await cli('org', 'create', 'acme', '--data', data));
  const receiver = await Receiver.start();
  t.teardown(() => receiver.close());
  await cli(
    'webhook',
    'add',
    'acme',
    receiver.url,
    '--event',
    'draft.opened',
    '--event',
    'draft.closed',
    '--webhook-allow-private',
    '--data',
    data,
  );
  const servers = await Promise.all([serveProcess(data, '--webhook-allow-private'), serveProcess(data, '--webhook-allow-private')]);
  t.teardown(() => Promise.all(servers.map((s) => s.stop())));
  const onFirst = stream({ url: servers[0].url, key } as TestServer);
  t.teardown(onFirst.close);
  await onFirst.opened;

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${servers[1].url}${API}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  };
  await call('POST', '/drafts', { name: 'elsewhere' });
  await call('DELETE', '/drafts/elsewhere');
  await onFirst.until(() => onFirst.frames.some((f) => f.type === 'draft.closed'), 'the other process draft events');
  t.deepEqual(
    onFirst.frames.map((f) => `${f.type} ${f.data.name}`),
    ['draft.opened elsewhere', 'draft.closed elsewhere'],
  );

  await receiver.until(() => receiver.received.length >= 2);
  // Time for a second delivery of anything, were there one.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  t.deepEqual(
    receiver.received.map((r) => JSON.parse(r.body).type),
    ['draft.opened', 'draft.closed'],
    'each once, in order, by one of the processes',
  );
});

test('a draft opened while no server runs is still delivered to a webhook once one starts; a kill -9 repeats nothing but the event just answered', async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'c4store-draft-events-'));
  lastLine(await cli('org', 'create', 'acme', '--data', data));
  const gitdir = join(data, 'orgs', 'acme.git');
  const receiver = await Receiver.start();
  t.teardown(() => receiver.close());
  await cli('webhook', 'add', 'acme', receiver.url, '--event', 'draft.opened', '--webhook-allow-private', '--data', data);
  // The branch made by git itself, with no server running (as a push would, but nobody listening).
  await run('git', ['--git-dir', gitdir, 'update-ref', 'refs/heads/drafts/offline', 'main']);
  let server = await serveProcess(data, '--webhook-allow-private');
  t.teardown(() => server.stop('SIGKILL'));
  await receiver.until(() => receiver.delivered.length >= 1);
  await server.stop('SIGKILL');
  server = await serveProcess(data, '--webhook-allow-private');
  await run('git', ['--git-dir', gitdir, 'update-ref', 'refs/heads/drafts/second', 'main']);
  // Wait for the second draft itself: the one answered just before the kill may be delivered again first.
  await receiver.until(() => receiver.delivered.some((r) => JSON.parse(r.body).data.name === 'second'), 30_000, 'the second draft');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const names = receiver.delivered.map((r) => JSON.parse(r.body).data.name as string);
  // One answered just before the kill may come again (same webhook-id); nothing else repeats.
  t.deepEqual(
    names.filter((name, i) => i === 0 || names[i - 1] !== name),
    ['offline', 'second'],
  );
  t.like(JSON.parse(receiver.delivered[0].body), { type: 'draft.opened', data: { name: 'offline', state: 'open' } });
});

test('draft notices: what happened between two looks at the draft refs (pure)', (t) => {
  const [a, b] = ['a'.repeat(40), 'b'.repeat(40)];
  const told = (before: Record<string, string>, after: Record<string, string>, merges: Record<string, string> = {}) =>
    draftNotices(before, after, new Map(Object.entries(merges)), 'now').map((n) => `${n.type} ${n.data.name} -> ${n.leadsTo}`);
  t.deepEqual(told({}, {}), []);
  t.deepEqual(told({}, { x: `open ${a}` }), [`draft.opened x -> open ${a}`]);
  t.deepEqual(told({ x: `open ${a}` }, { x: `open ${b}` }), [`draft.updated x -> open ${b}`]);
  t.deepEqual(told({ x: `open ${a}` }, { x: `closed ${a}` }), [`draft.closed x -> closed ${a}`]);
  t.deepEqual(told({}, { x: `closed ${a}` }), [`draft.opened x -> open ${a}`, `draft.closed x -> closed ${a}`]);
  t.deepEqual(told({ x: `open ${a}` }, { x: `merged ${a}` }, { x: b }), [`draft.merged x -> merged ${a}`]);
  // Written to, then merged or closed between two looks: the update is told first (it was lost).
  t.deepEqual(told({ x: `open ${a}` }, { x: `merged ${b}` }), [`draft.updated x -> open ${b}`, `draft.merged x -> merged ${b}`]);
  t.deepEqual(told({ x: `open ${a}` }, { x: `closed ${b}` }), [`draft.updated x -> open ${b}`, `draft.closed x -> closed ${b}`]);
  const [update] = draftNotices({ x: `open ${a}` }, { x: `merged ${b}` }, new Map(), 'now');
  t.like(update.data, { state: 'open', head: b, commit: b });
  t.deepEqual(
    noticesBeforeMerge({ x: `open ${a}` }, { x: `merged ${b}` }, new Map([['x', 'c'.repeat(40)]]), { id: 'c'.repeat(40), title: '' }).map(
      (n) => n.type,
    ),
    ['draft.updated'],
    'before its merge commit',
  );
  t.deepEqual(told({ x: `open ${a}` }, {}), ['draft.closed x -> null'], 'a branch removed by hand');
  t.deepEqual(told({ x: `closed ${a}` }, {}), [], 'a closed draft removed: nothing more to tell');
  t.deepEqual(told({ x: `closed ${a}` }, { x: `closed ${b}` }), []);
  const [reopened] = draftNotices({ x: `closed ${a}` }, { x: `open ${a}` }, new Map(), 'now');
  t.like(reopened, { type: 'draft.opened', data: { name: 'x', state: 'open', head: a, commit: a, reopened: true } });
  const [merged] = draftNotices({ x: `open ${a}` }, { x: `merged ${a}` }, new Map([['x', b]]), 'now');
  t.like(merged.data, { state: 'merged', head: a, commit: b, time: 'now' });
  // Taking in the first of two notices leaves the second to tell.
  const [first] = draftNotices({}, { x: `closed ${a}` }, new Map());
  t.deepEqual(told({ x: first.leadsTo! }, { x: `closed ${a}` }), [`draft.closed x -> closed ${a}`]);
  // Before a draft's merge commit: its opening not told yet, not its merge, nor other drafts.
  const before = (id: string) =>
    noticesBeforeMerge({ y: `open ${a}` }, { x: `merged ${a}`, y: `closed ${a}` }, new Map([['x', b]]), { id, title: 'a change' }).map(
      (n) => `${n.type} ${n.data.name}`,
    );
  t.deepEqual(before(b), ['draft.opened x']);
  t.deepEqual(before(a), [], 'not a merge commit');
  t.deepEqual(
    noticesBeforeMerge({ x: `open ${a}` }, { x: `merged ${a}` }, new Map([['x', b]]), { id: b, title: '' }),
    [],
    'its opening was told',
  );
  // Main moved, the draft's ref not yet: found by the merge commit's title, still open.
  const early = noticesBeforeMerge({}, { x: `open ${a}` }, new Map(), { id: b, title: "Merged draft 'x': create 1" });
  t.deepEqual(
    early.map((n) => `${n.type} ${n.data.name}`),
    ['draft.opened x'],
  );
  t.deepEqual(noticesBeforeMerge({}, {}, new Map(), { id: b, title: "Merged draft 'gone': create 1" }), []);
});

test('a merged draft whose record names no merge commit (a look between its ref moving and its record being written, or a record lost): its draft.merged names the merge commit, found on main', async (t) => {
  const s = await TestServer.start();
  try {
    t.is((await s.post(`${API}/drafts`, { name: 'ledger' })).status, 201);
    t.is((await s.post(`${API}/components?draft=ledger`, { id: 'ledger', name: 'Ledger' })).status, 201);
    const head = (await s.git('rev-parse', 'drafts/ledger')).trim();
    t.is((await s.post(`${API}/components`, { id: 'db', name: 'DB' })).status, 201);
    t.is((await s.post(`${API}/drafts/ledger/merge`, {})).status, 200);
    const mergeCommit = await s.head();
    // The records as a merge leaves them between moving the draft's ref and writing its record.
    const file = join(s.gitdir, 'c4store-drafts.json');
    const records = JSON.parse(await readFile(file, 'utf8')) as { drafts: Array<Record<string, unknown>> };
    for (const record of records.drafts) {
      delete record.mergedAt;
      delete record.mergeCommit;
    }
    await writeFile(file, JSON.stringify(records));
    const look = await readDraftStates(s.gitdir);
    t.is(look.states.ledger, `merged ${head}`);
    t.is(look.mergeCommits.get('ledger'), mergeCommit);
    const [merged] = draftNotices({ ledger: `open ${head}` }, look.states, look.mergeCommits);
    t.like(merged, { type: 'draft.merged', data: { head, commit: mergeCommit } });
  } finally {
    await s.close();
  }
});

test('a webhook busy with a change while a draft is opened and merged gets its opening before the merge commit', async (t) => {
  // Each delivery answered after 400 ms: the draft is opened, written and merged while the
  // subscription is still delivering the change before, so one look at the refs sees it merged.
  const receiver = await Receiver.start(async () => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    return 204;
  });
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  const created = await ok(server.post(`${API}/webhooks`, { url: receiver.url }), 201);
  await ok(server.post(`${API}/tag`, [{ name: 'before', color: 'green' }]));
  await ok(server.post(`${API}/drafts`, { name: 'quick' }), 201);
  await ok(server.post(`${API}/tag?draft=quick`, [{ name: 'in-draft', color: 'green' }]));
  await ok(server.request('POST', `${API}/drafts/quick/merge`));
  const signer = new Webhook(created.secret);
  const deadline = Date.now() + 30_000;
  while (!receiver.delivered.some((r) => r.body.includes('"draft.merged"')) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  const told = receiver.delivered.map((r) => {
    const payload = signer.verify(r.body, r.headers as Record<string, string>) as { type: string; data: { title?: string; name?: string } };
    return `${payload.type} ${payload.data.title ?? payload.data.name}`;
  });
  t.deepEqual(told.slice(-4), [
    'model.changed POST /api/external/tag: create 1',
    'draft.opened quick',
    "model.changed Merged draft 'quick': create 1",
    'draft.merged quick',
  ]);
});
