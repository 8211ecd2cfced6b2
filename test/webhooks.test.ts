import test from 'ava';
import { statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { isPrivateAddress } from '../src/events/targets.js';
import { startServer } from '../src/server.js';
import { Receiver } from './support/events.js';
import { cli } from './support/process.js';
import { TestServer } from './support/server.js';

const FAST = { webhooks: { retryDelaysMs: [50, 50, 50], scanMs: 100 }, pollMs: 100 };

async function addTag(server: TestServer, name: string): Promise<string> {
  const reply = await server.post('/api/external/tag', [{ name, color: 'green' }]);
  if (reply.status !== 200) throw new Error(`${reply.status} ${reply.text}`);
  return server.head();
}

function commitOf(body: string): string {
  return JSON.parse(body).data.id;
}

test('a subscription to a loopback address is refused unless the server allows private targets', async (t) => {
  const server = await TestServer.start();
  t.teardown(() => server.close());
  for (const url of [
    'http://127.0.0.1:9/hook',
    'http://localhost/hook',
    'http://[::1]/x',
    'http://169.254.169.254/latest',
    'http://10.1.2.3/',
  ]) {
    const reply = await server.post('/api/external/webhooks', { url });
    t.is(reply.status, 400, url);
    t.regex(reply.body.error, /private or loopback address .*--webhook-allow-private/);
  }
  t.is((await server.post('/api/external/webhooks', { url: 'ftp://example.com/' })).status, 400);
  t.is((await server.post('/api/external/webhooks', { url: 'http://x' }, { key: server.readerKey })).status, 403);
  t.is((await server.get('/api/external/webhooks', { key: server.readerKey })).status, 403);
  const bad = await server.post('/api/external/webhooks', { url: 'https://example.com/', events: ['model.deleted'] });
  t.is(bad.status, 400);
  t.is((await server.get('/api/external/webhooks')).body.length, 0, 'nothing was made');
});

test("a target URL's credentials are used for delivery and never shown: answers, lists, the command line and refusals show them as ***", async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  const receiver = await Receiver.start();
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  const port = new URL(receiver.url).port;
  const target = `http://hook:s3cret-pass@127.0.0.1:${port}/hook?token=tok-123456&verbose`;
  const shown = `http://hook:***@127.0.0.1:${port}/hook?token=***&verbose`;
  const made = await server.post('/api/external/webhooks', { url: target });
  t.is(made.status, 201, made.text);
  t.is(made.body.url, shown);
  t.is((await server.get(`/api/external/webhooks/${made.body.id}`)).body.url, shown);
  t.deepEqual(
    (await server.get('/api/external/webhooks')).body.map((w: { url: string }) => w.url),
    [shown],
  );
  const listed = await cli('webhook', 'list', server.slug, '--data', server.dataDir);
  t.true(listed.includes(shown), listed);
  t.false(listed.includes('s3cret') || listed.includes('tok-123'), listed);

  // Delivered with them: the receiver is given its user and password, and its query.
  await addTag(server, 'one');
  await receiver.until(() => receiver.delivered.length >= 1);
  t.is(receiver.received[0]!.headers.authorization, `Basic ${Buffer.from('hook:s3cret-pass').toString('base64')}`);

  // A refusal that names the URL hides them too.
  const strict = await TestServer.start();
  t.teardown(() => strict.close());
  const loopback = await strict.post('/api/external/webhooks', { url: 'http://bot:s3cret-pass@127.0.0.1:9/hook?key=abcdef' });
  t.is(loopback.status, 400);
  t.true(loopback.body.error.startsWith("Webhook url 'http://bot:***@127.0.0.1:9/hook?key=***' points to a private"), loopback.body.error);
  const removed = await server.request('DELETE', `/api/external/webhooks/${made.body.id}`);
  t.is(removed.body.url, shown);
});

test('deliveries are signed by the Standard Webhooks scheme, in commit order; the secret is shown once and kept outside the repository', async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  const receiver = await Receiver.start();
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  const created = await server.post('/api/external/webhooks', { url: receiver.url });
  t.is(created.status, 201, created.text);
  const { id, secret } = created.body;
  t.is(created.headers.get('location'), `/api/external/webhooks/${id}`);
  t.regex(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  t.deepEqual(created.body.events, ['model.changed', 'draft.opened', 'draft.updated', 'draft.merged', 'draft.closed']);
  const listed = await server.get('/api/external/webhooks');
  t.is(listed.body.length, 1);
  t.false(JSON.stringify(listed.body).includes(secret), 'the secret is never shown again');
  t.false(JSON.stringify((await server.get(`/api/external/webhooks/${id}`)).body).includes(secret));

  const stored = join(server.dataDir, 'webhooks', server.slug, id, 'subscription.json');
  t.is(statSync(stored).mode & 0o777, 0o600);
  t.true((await readFile(stored, 'utf8')).includes(secret));
  t.is(await server.git('grep', '-l', 'whsec_', 'main').catch(() => ''), '', 'no secret in the model repository');

  const commits = [];
  for (const name of ['one', 'two', 'three']) commits.push(await addTag(server, name));
  await receiver.until(() => receiver.delivered.length >= 3);
  const verifier = new Webhook(secret);
  for (const [i, received] of receiver.received.entries()) {
    const payload = verifier.verify(received.body, received.headers as Record<string, string>) as {
      type: string;
      timestamp: string;
      data: { id: string; resources: Array<{ name: string }> };
    };
    t.is(payload.type, 'model.changed');
    t.is(payload.data.id, commits[i]);
    t.is(payload.data.resources[0].name, ['one', 'two', 'three'][i]);
    t.regex(String(received.headers['webhook-signature']), /^v1,[A-Za-z0-9+/=]+$/);
  }
  t.throws(() =>
    new Webhook(`whsec_${Buffer.alloc(24).toString('base64')}`).verify(
      receiver.received[0].body,
      receiver.received[0].headers as Record<string, string>,
    ),
  );

  const deliveries = await server.get(`/api/external/webhooks/${id}/deliveries`);
  t.is(deliveries.status, 200);
  t.deepEqual(
    deliveries.body.map((d: { commit: string; outcome: string; status: number }) => [d.commit, d.outcome, d.status]),
    commits.toReversed().map((c) => [c, 'delivered', 204]),
  );
  t.is((await server.get(`/api/external/webhooks/${id}`)).body.delivered, commits[2]);
});

test('a receiver that fails twice then succeeds sees the same webhook-id three times, and nothing overtakes it', async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  const receiver = await Receiver.start((n) => (n < 2 ? 500 : 200));
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  const { id } = (await server.post('/api/external/webhooks', { url: receiver.url })).body;
  const first = await addTag(server, 'first');
  const second = await addTag(server, 'second');
  await receiver.until(() => receiver.delivered.length >= 2);
  t.deepEqual(
    receiver.received.map((r) => [commitOf(r.body), r.status]),
    [
      [first, 500],
      [first, 500],
      [first, 200],
      [second, 200],
    ],
  );
  const ids = receiver.received.map((r) => r.headers['webhook-id']);
  t.is(ids[0], ids[1]);
  t.is(ids[1], ids[2]);
  t.not(ids[2], ids[3]);
  const log = (await server.get(`/api/external/webhooks/${id}/deliveries`)).body;
  t.deepEqual(log.map((d: { attempt: number; outcome: string }) => [d.attempt, d.outcome]).toReversed(), [
    [1, 'retrying'],
    [2, 'retrying'],
    [3, 'delivered'],
    [1, 'delivered'],
  ]);
});

test('410 disables a subscription; replay enables it again and delivers from the commit asked, in order', async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  let gone = true;
  const receiver = await Receiver.start(() => (gone ? 410 : 204));
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  const start = await server.head();
  const { id } = (await server.post('/api/external/webhooks', { url: receiver.url })).body;
  const a = await addTag(server, 'a');
  await receiver.until(() => receiver.received.length >= 1);
  let status = (await server.get(`/api/external/webhooks/${id}`)).body;
  for (let i = 0; status.status !== 'disabled' && i < 300; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = (await server.get(`/api/external/webhooks/${id}`)).body;
  }
  t.is(status.status, 'disabled');
  t.regex(status.disabledReason, /410/);
  const b = await addTag(server, 'b');
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(receiver.received.length, 1, 'a disabled subscription receives nothing');

  gone = false;
  const stray = await server.post(`/api/external/webhooks/${id}/replay`, { after: 'ab'.repeat(20) });
  t.is(stray.status, 404);
  const replay = await server.post(`/api/external/webhooks/${id}/replay`, { after: start });
  t.is(replay.status, 200, replay.text);
  t.is(replay.body.status, 'active');
  await receiver.until(() => receiver.delivered.length >= 2);
  t.deepEqual(
    receiver.delivered.map((r) => commitOf(r.body)),
    [a, b],
  );
});

test('a removed subscription receives nothing more; an unknown one is 404', async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  const receiver = await Receiver.start();
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  const { id } = (await server.post('/api/external/webhooks', { url: receiver.url })).body;
  await addTag(server, 'x');
  await receiver.until(() => receiver.delivered.length >= 1);
  const removed = await server.request('DELETE', `/api/external/webhooks/${id}`);
  t.is(removed.status, 200);
  t.is(removed.body.id, id);
  await addTag(server, 'y');
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(receiver.received.length, 1);
  t.is((await server.get(`/api/external/webhooks/${id}`)).status, 404);
  t.is((await server.request('DELETE', `/api/external/webhooks/${id}`)).status, 404);
  // Not a subscription's id at all: 404 too, never a 500.
  for (const name of ['foo', 'wh_zz', 'create.lock'])
    t.is((await server.request('DELETE', `/api/external/webhooks/${name}`)).status, 404, name);
  t.is((await server.get('/api/external/webhooks/nope/deliveries')).status, 404);
});

test('a receiver that never answers does not slow writes', async (t) => {
  const server = await TestServer.start({
    webhookAllowPrivate: true,
    events: { ...FAST, webhooks: { ...FAST.webhooks, timeoutMs: 60_000 } },
  });
  const receiver = await Receiver.start(() => new Promise<number>(() => {}));
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  for (let i = 0; i < 10; i++) t.is((await server.post('/api/external/webhooks', { url: receiver.url })).status, 201);
  // Writes answer while every subscription's first delivery hangs: none waits for a receiver.
  for (let i = 0; i < 5; i++) await addTag(server, `t${i}`);
  t.is((await server.get('/api/external/changes?limit=1000')).body.changes.length, 6);
});

test('receivers that never answer do not hold up another subscription of the organization; at most 20 subscriptions', async (t) => {
  const server = await TestServer.start({
    webhookAllowPrivate: true,
    events: { ...FAST, webhooks: { ...FAST.webhooks, timeoutMs: 600_000 } },
  });
  const dead = await Receiver.start(() => new Promise<number>(() => {}));
  const healthy = await Receiver.start();
  t.teardown(async () => {
    await server.close();
    await dead.close();
    await healthy.close();
  });
  for (let i = 0; i < 19; i++) t.is((await server.post('/api/external/webhooks', { url: dead.url })).status, 201);
  t.is((await server.post('/api/external/webhooks', { url: healthy.url })).status, 201);
  const over = await server.post('/api/external/webhooks', { url: healthy.url });
  t.is(over.status, 409);
  t.deepEqual(over.body, { error: 'An organization may have at most 20 webhooks: delete one first.' });
  const commit = await addTag(server, 'while 19 receivers hang');
  // The 19 hang (their answer never comes, their timeout is ten minutes); the healthy one is served.
  await healthy.until(() => healthy.delivered.length === 1, 30_000, 'the healthy delivery');
  t.is(commitOf(healthy.delivered[0]!.body), commit);
});

test('which addresses count as private: loopback, private, link-local, CGNAT, unique-local, multicast, IPv4 inside IPv6', (t) => {
  const blocked = ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1'];
  const blocked6 = ['::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:1'];
  // Every spelling of an embedded IPv4 address, 6to4, site-local, Teredo, local-use NAT64 (a probe found the first three let through).
  const spelled = [
    '::127.0.0.1',
    '0:0:0:0:0:ffff:7f00:1',
    '::ffff:0:127.0.0.1',
    '2002:7f00:1::',
    '2002:a00:1:1::5',
    'fec0::1',
    '2001:0:4136:e378::1',
    '64:ff9b:1::a00:1',
    '0:0:0:0:0:0:0:1',
    'FE80::1%eth0',
  ];
  for (const address of [...blocked, ...blocked6, ...spelled]) t.true(isPrivateAddress(address), address);
  for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1', '2a00:1450::1'])
    t.false(isPrivateAddress(address), address);
});

test('a damaged subscription is its own problem: the others are delivered, it is listed as damaged and can be removed; a cut delivery line loses no record', async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  const receiver = await Receiver.start();
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  const broken = (await server.post('/api/external/webhooks', { url: `${receiver.url}?broken` })).body.id as string;
  const healthy = (await server.post('/api/external/webhooks', { url: receiver.url })).body.id as string;
  const dir = (id: string) => join(server.dataDir, 'webhooks', server.slug, id);
  await writeFile(join(dir(broken), 'state.json'), '{"cursor": "74bea01');
  await writeFile(join(dir(healthy), 'deliveries.jsonl'), '{"id":"dl_x","webhookId":"ms');
  const first = await addTag(server, 'one');
  const second = await addTag(server, 'two');
  await receiver.until(() => receiver.delivered.length >= 2);
  t.deepEqual(
    receiver.delivered.map((r) => commitOf(r.body)),
    [first, second],
  );
  const deliveries = (await server.get(`/api/external/webhooks/${healthy}/deliveries`)).body as Array<{ commit: string }>;
  t.deepEqual(
    deliveries.map((d) => d.commit),
    [second, first],
    'both records listed, the cut line aside',
  );
  const listed = (await server.get('/api/external/webhooks')).body as Array<{ id: string; status: string; disabledReason: string | null }>;
  const damaged = listed.find((w) => w.id === broken);
  t.is(damaged?.status, 'damaged');
  t.regex(
    damaged?.disabledReason ?? '',
    new RegExp(
      `^Webhook ${broken} of '${server.slug}': its state\\.json cannot be read \\(.+\\); repair the file, or remove the webhook\\.$`,
    ),
  );
  t.is((await server.get(`/api/external/webhooks/${broken}`)).status, 503);
  // The command line lists what the API lists, in the same order: the readable ones oldest
  // first, then the damaged ones by id, whichever of their files is damaged.
  const unreadable = (await server.post('/api/external/webhooks', { url: `${receiver.url}?unreadable` })).body.id as string;
  await writeFile(join(dir(unreadable), 'subscription.json'), '{"url":');
  const byApi = ((await server.get('/api/external/webhooks')).body as Array<{ id: string; status: string }>).map(
    (w) => `${w.id} ${w.status}`,
  );
  const byCli = (await cli('webhook', 'list', server.slug, '--data', server.dataDir))
    .trim()
    .split('\n')
    .map((line) => {
      const [id, , , , status] = line.split('\t');
      return `${id} ${status!.startsWith('damaged: ') ? 'damaged' : 'active'}`;
    });
  t.deepEqual(byApi, [`${healthy} active`, ...[broken, unreadable].sort().map((id) => `${id} damaged`)]);
  t.deepEqual(byCli, byApi);
  t.is((await server.request('DELETE', `/api/external/webhooks/${unreadable}`)).status, 200);
  t.is((await server.request('DELETE', `/api/external/webhooks/${broken}`)).status, 200);
  // JSON of another shape is damage too: listed as such, and removable.
  for (const [file, text] of [
    ['subscription.json', '{"url":5}'],
    ['state.json', 'null'],
  ]) {
    const other = (await server.post('/api/external/webhooks', { url: `${receiver.url}?${file}` })).body.id as string;
    await writeFile(join(dir(other), file), text);
    // It still holds its place toward the 20: with the healthy one, 18 more, then 409.
    const made: string[] = [];
    for (let i = 0; i < 19; i++) {
      const reply = await server.post('/api/external/webhooks', { url: `${receiver.url}?n=${i}` });
      if (reply.status === 201) made.push(reply.body.id);
      else t.is(reply.status, 409);
    }
    t.is(made.length, 18, file);
    for (const id of made) await server.request('DELETE', `/api/external/webhooks/${id}`);
    const seen = (await server.get('/api/external/webhooks')).body as Array<{ id: string; status: string }>;
    t.is(seen.find((w) => w.id === other)?.status, 'damaged', file);
    t.is((await server.request('DELETE', `/api/external/webhooks/${other}`)).status, 200, file);
  }
  t.deepEqual(
    ((await server.get('/api/external/webhooks')).body as Array<{ id: string }>).map((w) => w.id),
    [healthy],
  );
  t.false(
    server.logs.some((line) => line.includes('"level":"error"')),
    'no request failed',
  );
});

test('an organization removed and made again under its slug while the server runs: its changes are listed, streamed and delivered; the old one’s subscriptions neither count nor stop the process', async (t) => {
  const { rm } = await import('node:fs/promises');
  const { Orgs } = await import('../src/service/orgs.js');
  const { KeyStore } = await import('../src/store/keys.js');
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  const oldReceiver = await Receiver.start();
  const newReceiver = await Receiver.start();
  t.teardown(async () => {
    await server.close();
    await oldReceiver.close();
    await newReceiver.close();
  });
  t.is((await server.post('/api/external/webhooks', { url: oldReceiver.url })).status, 201);
  await addTag(server, 'old');
  await oldReceiver.until(() => oldReceiver.delivered.length >= 1);
  t.is((await server.get('/api/external/changes')).status, 200, 'the feed holds the old chain');

  await rm(server.gitdir, { recursive: true, force: true });
  await new Orgs(server.dataDir).create(server.slug, { name: 'New owner', author: { name: 'test', email: 'test@test' } });
  const { key } = await new KeyStore(server.dataDir).create(server.slug, { label: 'new owner' });
  const as = { key };

  // The old subscription is the old organization's: not listed, not counted.
  t.deepEqual((await server.get('/api/external/webhooks', as)).body, []);
  const made: string[] = [];
  for (let i = 0; i < 20; i++) {
    const reply = await server.post('/api/external/webhooks', { url: `${newReceiver.url}?n=${i}` }, as);
    t.is(reply.status, 201, reply.text);
    made.push(reply.body.id);
  }
  t.is((await server.post('/api/external/webhooks', { url: newReceiver.url }, as)).status, 409);
  for (const id of made.slice(1)) t.is((await server.request('DELETE', `/api/external/webhooks/${id}`, { key })).status, 200);

  const written = await server.post('/api/external/tag', [{ name: 'new', color: 'green' }], as);
  t.is(written.status, 200, written.text);
  const head = await server.head();
  const changes = await server.get('/api/external/changes', as);
  t.is(changes.status, 200);
  t.is(changes.body.changes.at(-1).id, head, "the new organization's commit is in its feed");
  await newReceiver.until(() => newReceiver.delivered.some((r) => commitOf(r.body) === head));
  t.is(oldReceiver.received.length, 1, 'nothing of the new organization went to the old one’s receiver');
  t.is((await server.get('/healthz', { key: null })).status, 200, 'the process lives');
});

test('concurrent subscriptions stop at 20: counted and made under one lock', async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  t.teardown(() => server.close());
  const replies = await Promise.all(
    Array.from({ length: 26 }, (_, i) => server.post('/api/external/webhooks', { url: `http://127.0.0.1:9/h${i}` })),
  );
  t.is(replies.filter((r) => r.status === 201).length, 20);
  t.is(replies.filter((r) => r.status === 409).length, 6);
  t.is((await server.get('/api/external/webhooks')).body.length, 20);
});

test('a graceful stop lets a delivery in flight have its answer and records it: the next holder goes on after it, not sending it again beside it', async (t) => {
  let answering: () => void = () => {};
  const started = new Promise<void>((resolve) => (answering = resolve));
  // A receiver that takes a second over each event.
  const receiver = await Receiver.start(async () => {
    answering();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return 204;
  });
  t.teardown(() => receiver.close());
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  t.teardown(() => server.close());
  const created = await server.post('/api/external/webhooks', { url: receiver.url });
  t.is(created.status, 201);
  const commit = await addTag(server, 'in flight');
  await started;
  t.is(await server.server.shutdown({ delayMs: 0, timeoutMs: 10_000 }), 0);
  t.is(receiver.delivered.length, 1, 'answered before the server stopped');
  const state = JSON.parse(await readFile(join(server.dataDir, 'webhooks', server.slug, created.body.id, 'state.json'), 'utf8'));
  t.is(state.cursor, commit, 'recorded as delivered: the next holder starts after it');
  const lines = (await readFile(join(server.dataDir, 'webhooks', server.slug, created.body.id, 'deliveries.jsonl'), 'utf8'))
    .trim()
    .split('\n');
  t.like(JSON.parse(lines.at(-1)!), { commit, outcome: 'delivered', status: 204 });
});

test('a lease left by an earlier run of the server under the same process id (a container restarted: PID 1 again) is taken over at once', async (t) => {
  const receiver = await Receiver.start();
  t.teardown(() => receiver.close());
  // Leases never go stale by age here: only the holder being gone frees one.
  const settings = { ...FAST, webhooks: { ...FAST.webhooks, leaseStaleMs: 600_000 } };
  const server = await TestServer.start({ webhookAllowPrivate: true, events: settings });
  t.teardown(() => server.close());
  const created = await server.post('/api/external/webhooks', { url: receiver.url });
  t.is(created.status, 201);
  const first = await addTag(server, 'first run');
  const deadline = Date.now() + 30_000;
  while ((await server.get(`/api/external/webhooks/${created.body.id}`)).body.delivered !== first) {
    if (Date.now() > deadline) throw new Error('the first run never recorded its delivery');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await server.server.close();
  // What the earlier run left when it was killed: a fresh lease naming this host and process id
  // (the next run of a container's server is PID 1 again, on the same host name).
  const lease = join(server.dataDir, 'webhooks', server.slug, created.body.id, 'lease');
  await writeFile(lease, JSON.stringify({ pid: process.pid, host: hostname(), token: 'of-the-earlier-run' }));

  const again = await startServer({ dataDir: server.dataDir, port: 0, log: () => {}, webhookAllowPrivate: true, events: settings });
  t.teardown(() => again.close());
  const written = await fetch(`${again.url}/api/external/tag`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ name: 'second run', color: 'green' }]),
  });
  t.is(written.status, 200);
  const names = () => receiver.delivered.flatMap((r) => JSON.parse(r.body).data.resources.map((x: { name: string }) => x.name));
  await receiver.until(() => names().includes('second run'), 60_000, 'the delivery of the second run');
  t.deepEqual(names(), ['first run', 'second run']);
});

test('a subscription disabled after its last attempt counts that attempt in pendingAttempts, as the delivery log does', async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  t.teardown(() => server.close());
  const failing = await Receiver.start(() => 500);
  const gone = await Receiver.start(() => 410);
  t.teardown(async () => {
    await failing.close();
    await gone.close();
  });
  const ids = await Promise.all(
    [failing, gone].map(async (receiver) => (await server.post('/api/external/webhooks', { url: receiver.url })).body.id as string),
  );
  await addTag(server, 'never delivered');
  for (const id of ids) {
    let status = (await server.get(`/api/external/webhooks/${id}`)).body;
    for (const deadline = Date.now() + 30_000; status.status !== 'disabled' && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await server.get(`/api/external/webhooks/${id}`)).body;
    }
    t.is(status.status, 'disabled');
    const attempts = (await server.get(`/api/external/webhooks/${id}/deliveries`)).body;
    t.is(status.pendingAttempts, attempts.length, `${status.disabledReason}: every failed attempt counted`);
  }
  t.is(failing.received.length, FAST.webhooks.retryDelaysMs.length + 1);
  t.is(gone.received.length, 1);
});

test('main set back behind a subscription (an older backup restored): it is disabled saying why, not left waiting unseen; replay goes on', async (t) => {
  const server = await TestServer.start({ webhookAllowPrivate: true, events: FAST });
  const receiver = await Receiver.start();
  t.teardown(async () => {
    await server.close();
    await receiver.close();
  });
  const backup = await server.head();
  const { id } = (await server.post('/api/external/webhooks', { url: receiver.url })).body;
  const lost = await addTag(server, 'after the backup');
  await receiver.until(() => receiver.delivered.length === 1);
  // The organization restored from the backup (docs/deploy.md), then written to again.
  await server.git('update-ref', 'refs/heads/main', backup);
  const written = await addTag(server, 'after the restore');
  let status = (await server.get(`/api/external/webhooks/${id}`)).body;
  for (const deadline = Date.now() + 30_000; status.status !== 'disabled' && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = (await server.get(`/api/external/webhooks/${id}`)).body;
  }
  t.like(status, {
    status: 'disabled',
    delivered: lost,
    disabledReason: `Its last delivered commit ${lost} is no longer on main (history restored or rewritten): replay from a commit of main.`,
  });
  t.is((await server.post(`/api/external/webhooks/${id}/replay`, { after: backup })).status, 200);
  await receiver.until(() => receiver.delivered.length === 2);
  t.is(commitOf(receiver.delivered[1]!.body), written);
});
