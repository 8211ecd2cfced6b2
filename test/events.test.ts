import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { TestServer } from './support/server.js';
import { listen } from './support/events.js';

/**
 * The stream on a socket of its own, read by hand (or not at all): paused once the headers came,
 * so that the test decides when and how much the client reads.
 */
async function rawStream(t: ExecutionContext, server: TestServer, headers = ''): Promise<Socket> {
  const { port } = new URL(server.url);
  const socket = connect({ port: Number(port), host: '127.0.0.1' });
  t.teardown(() => socket.destroy());
  socket.write(`GET /api/external/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\n${headers}\r\n`);
  await once(socket, 'data');
  socket.pause();
  return socket;
}

async function addTags(server: TestServer, names: string[]): Promise<string[]> {
  const commits: string[] = [];
  for (const name of names) {
    const reply = await server.post('/api/external/tag', [{ name, color: 'green' }]);
    if (reply.status !== 200) throw new Error(`tag ${name}: ${reply.status} ${reply.text}`);
    commits.push(await server.head());
  }
  return commits;
}

test('the change feed pages through every commit of main once, oldest first, with the resources each touched', async (t) => {
  const server = await TestServer.start();
  t.teardown(() => server.close());
  await addTags(
    server,
    Array.from({ length: 23 }, (_, i) => `tag-${i}`),
  );
  const expected = (await server.git('rev-list', '--first-parent', '--reverse', 'main')).trim().split('\n');
  const seen: string[] = [];
  let after: string | null | undefined;
  let pages = 0;
  do {
    const reply = await server.get(`/api/external/changes?limit=7${after ? `&after=${after}` : ''}`);
    t.is(reply.status, 200, reply.text);
    pages++;
    seen.push(...reply.body.changes.map((c: { id: string }) => c.id));
    after = reply.body.next;
    if (after !== null) t.is(after, reply.body.changes.at(-1).id);
  } while (after !== null);
  t.deepEqual(seen, expected, 'no gap, no repeat, oldest first');
  t.is(pages, Math.ceil(expected.length / 7));

  const last = await server.get(`/api/external/changes?after=${expected.at(-3)}`);
  t.deepEqual(
    last.body.changes.map((c: { id: string }) => c.id),
    expected.slice(-2),
  );
  t.is(last.body.next, null);
  const change = last.body.changes[1];
  t.is(change.title, 'POST /api/external/tag: create 1');
  t.is(change.author.name, 'test pipeline');
  t.regex(change.time, /^\d{4}-\d{2}-\d{2}T/);
  t.is(typeof change.apiContext, 'string');
  t.is(change.resources.length, 1);
  t.like(change.resources[0], { kind: 'tag', name: 'tag-22', action: 'create' });

  const atTip = await server.get(`/api/external/changes?after=${expected.at(-1)}`);
  t.deepEqual(atTip.body, { changes: [], next: null });

  // The same commits as the history tells them (git log), oldest first; an empty apiContext is "" in both.
  await server.post('/api/external/tag', [{ name: 'no context', color: 'red', apiContext: '' }]);
  const history = (await server.get('/api/external/history?limit=1000')).body.toReversed();
  const all = (await server.get('/api/external/changes?limit=1000')).body.changes;
  t.is(history.at(-1).apiContext, '');
  t.deepEqual(
    all,
    history.map((h: any) => ({
      id: h.id,
      time: h.time,
      author: h.author,
      title: h.summary,
      apiContext: h.apiContext,
      resources: h.resources.map(({ kind, id, name, action }: any) => ({ kind, id, name, action })),
    })),
  );
});

test('the change feed refuses a cursor that is not on main, and bad limits', async (t) => {
  const server = await TestServer.start();
  t.teardown(() => server.close());
  const tree = (await server.git('rev-parse', 'main^{tree}')).trim();
  const stray = (await server.git('commit-tree', tree, '-m', 'not on main')).trim();
  const reply = await server.get(`/api/external/changes?after=${stray}`);
  t.is(reply.status, 404);
  t.deepEqual(reply.body, { error: `Commit '${stray}' is not a commit of main.` });
  const unknown = await server.get(`/api/external/changes?after=${'ab'.repeat(20)}`);
  t.is(unknown.status, 404);
  t.is((await server.get('/api/external/changes?limit=0')).status, 400);
  t.is((await server.get('/api/external/changes?limit=1001')).status, 400);
  const draft = await server.get('/api/external/changes?draft=next');
  t.deepEqual([draft.status, draft.body], [404, { error: "Draft 'next' does not exist." }]);
  t.is((await server.get('/api/external/changes', { key: null })).status, 401);
  t.is((await server.get('/api/external/changes', { key: server.readerKey })).status, 200, 'readers read the feed');
});

test('deletes and updates carry their action and the name the resource had', async (t) => {
  const server = await TestServer.start();
  t.teardown(() => server.close());
  const created = await server.post('/api/external/tag', [{ name: 'Old', color: 'green' }]);
  const id = created.body[0].id;
  const start = await server.head();
  await server.post('/api/external/tag', [{ id, name: 'New', color: 'green' }]);
  const deleted = await server.request('DELETE', `/api/external/tags/${id}`);
  t.is(deleted.status, 200, deleted.text);
  const reply = await server.get(`/api/external/changes?after=${start}`);
  t.deepEqual(
    reply.body.changes.map((c: { resources: unknown[] }) => c.resources),
    [[{ kind: 'tag', id, name: 'New', action: 'update' }], [{ kind: 'tag', id, name: 'New', action: 'delete' }]],
  );
});

test('SSE: live changes arrive in order; a client that reconnects with Last-Event-ID gets what it missed first', async (t) => {
  const server = await TestServer.start({ events: { stream: { heartbeatMs: 100 } } });
  t.teardown(() => server.close());
  const live = listen(server.url, server.key);
  t.teardown(() => live.close());
  await live.opened;
  const first = await addTags(server, ['a', 'b', 'c']);
  const events = await live.until(3);
  t.deepEqual(
    events.map((e) => e.id),
    first,
  );
  t.deepEqual(
    events.map((e) => e.change.id),
    first,
  );
  t.is(events[0].change.resources[0].name, 'a');
  // Announced as they land, described from the commits' objects: as git log tells them.
  const history = (await server.get('/api/external/history?limit=3')).body.toReversed();
  t.deepEqual(
    events.map((e) => e.change),
    history.map((h: any) => ({
      id: h.id,
      time: h.time,
      author: h.author,
      title: h.summary,
      apiContext: h.apiContext,
      resources: h.resources.map(({ kind, id, name, action }: any) => ({ kind, id, name, action })),
    })),
  );
  live.close();

  // Away for two writes, then back with the last id it saw.
  const missed = await addTags(server, ['d', 'e']);
  const back = listen(server.url, server.key, '/api/external/events', { 'last-event-id': first.at(-1)! });
  t.teardown(() => back.close());
  await back.until(2);
  const later = await addTags(server, ['f']);
  const all = await back.until(3);
  t.deepEqual(
    all.map((e) => e.id),
    [...missed, ...later],
    'the missed ones first, then live, no repeats',
  );
});

test('SSE: a change larger than the unread bound reaches a client that reads, live and replayed; a resume across it misses nothing', async (t) => {
  const maxUnreadBytes = 16 * 1024;
  const server = await TestServer.start({ events: { stream: { heartbeatMs: 1000, maxUnreadBytes } } });
  t.teardown(() => server.close());
  const before = await server.head();
  const live = listen(server.url, server.key);
  t.teardown(() => live.close());
  await live.opened;
  const bigCommit = async (prefix: string) => {
    const tags = Array.from({ length: 300 }, (_, i) => ({ name: `${prefix} ${i} ${'x'.repeat(60)}`, color: 'green' }));
    const reply = await server.post('/api/external/tag', tags);
    if (reply.status !== 200) throw new Error(reply.text);
    return server.head();
  };
  const commits = [await bigCommit('a'), await bigCommit('b'), await bigCommit('c')];
  const events = await live.until(3);
  t.deepEqual(
    events.map((e) => e.id),
    commits,
  );
  t.true(JSON.stringify(events[0].change).length > 2 * maxUnreadBytes, 'one event is larger than the bound');
  t.is(events[0].change.resources.length, 300);
  live.close();
  // From before all three: the replay goes at the reader's pace and ends with all of them.
  const back = listen(server.url, server.key, '/api/external/events', { 'last-event-id': before });
  t.teardown(() => back.close());
  t.deepEqual(
    (await back.until(3)).map((e) => e.id),
    commits,
  );
});

test('SSE: a client that stops reading is cut off once it leaves more than the bound unread; one that reads is not', async (t) => {
  const server = await TestServer.start({ events: { stream: { heartbeatMs: 1000, maxUnreadBytes: 16 * 1024 } } });
  t.teardown(() => server.close());
  const reading = listen(server.url, server.key);
  t.teardown(() => reading.close());
  await reading.opened;
  const stalled = await rawStream(t, server);
  // Past what the kernel's buffers take (a few megabytes on loopback), what the client leaves
  // unread is the server's to hold: it cuts the client off instead.
  const commits = 16;
  for (let n = 0; n < commits; n++) {
    const tags = Array.from({ length: 1000 }, (_, i) => ({ name: `t${n} ${i} ${'x'.repeat(800)}`, color: 'green' }));
    t.is((await server.post('/api/external/tag', tags)).status, 200);
  }
  t.is((await reading.until(commits)).length, commits, 'the reading client got every change');
  // Read now, the stalled stream ends: the server ended it; one it kept would stay open.
  stalled.resume();
  const ended = await Promise.race([once(stalled, 'close').then(() => true), new Promise((resolve) => setTimeout(resolve, 10_000, false))]);
  t.true(ended, 'the stalled client was cut off');
});

test('SSE: a client reading a large event is not cut off by the keep-alive while part of it waits unread', async (t) => {
  const server = await TestServer.start({ events: { stream: { heartbeatMs: 20, maxUnreadBytes: 16 * 1024 } } });
  t.teardown(() => server.close());
  // Read what has come every 10 ms: a 6 MB event still waits partly unread in the server across
  // many keep-alive periods (20 ms), however steadily the client reads.
  const slow = await rawStream(t, server);
  let received = 0;
  const reader = setInterval(() => {
    let chunk: Buffer | null;
    while ((chunk = slow.read(64 * 1024) as Buffer | null) !== null) received += chunk.length;
  }, 10);
  t.teardown(() => clearInterval(reader));
  let closed = false;
  slow.once('close', () => {
    closed = true;
  });
  // One change of about 6 MB: more than the kernel's buffers take, so most of it waits in the server.
  const tags = Array.from({ length: 3000 }, (_, i) => ({ name: `t${i} ${'x'.repeat(2000)}`, color: 'green' }));
  t.is((await server.post('/api/external/tag', tags)).status, 200);
  const deadline = Date.now() + 60_000;
  while (received < 5_000_000 && !closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.false(closed, `cut off after ${received} bytes`);
  t.true(received > 5_000_000, `${received} bytes read`);
});

test('SSE: a resume whose last replayed event is large, and a live event while the client still reads it: not cut off, both arrive', async (t) => {
  const server = await TestServer.start({ events: { stream: { heartbeatMs: 20, maxUnreadBytes: 16 * 1024 } } });
  t.teardown(() => server.close());
  const before = await server.head();
  const tags = Array.from({ length: 3000 }, (_, i) => ({ name: `t${i} ${'x'.repeat(2000)}`, color: 'green' }));
  t.is((await server.post('/api/external/tag', tags)).status, 200);
  const big = await server.head();
  const client = await rawStream(t, server, `Last-Event-ID: ${before}\r\n`);
  let text = '';
  const reader = setInterval(() => {
    let chunk: Buffer | null;
    while ((chunk = client.read() as Buffer | null) !== null) text += chunk.toString('latin1');
  }, 10);
  t.teardown(() => clearInterval(reader));
  let closed = false;
  client.once('close', () => {
    closed = true;
  });
  // While most of the large event still waits in the server, a small change is made.
  t.is((await server.post('/api/external/tag', [{ name: 'small', color: 'red' }])).status, 200);
  const small = await server.head();
  const deadline = Date.now() + 60_000;
  while (!text.includes(`id: ${small}`) && !closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.false(closed, `cut off after ${text.length} characters`);
  t.true(text.includes(`id: ${big}`) && text.includes(`id: ${small}`));
});

test('SSE: a comment line keeps the stream alive; an unknown resume point is 404; no key is 401', async (t) => {
  const server = await TestServer.start({ events: { stream: { heartbeatMs: 50 } } });
  t.teardown(() => server.close());
  const response = await fetch(`${server.url}/api/external/events`, { headers: { authorization: `Bearer ${server.key}` } });
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type')!, /^text\/event-stream/);
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes(': keep-alive')) text += new TextDecoder().decode((await reader.read()).value);
  t.true(text.startsWith('retry: '));
  await reader.cancel();

  const stray = await fetch(`${server.url}/api/external/events`, {
    headers: { authorization: `Bearer ${server.key}`, 'last-event-id': 'ab'.repeat(20) },
  });
  t.is(stray.status, 404);
  t.deepEqual(await stray.json(), { error: `Commit '${'ab'.repeat(20)}' does not exist.` });
  // An empty ?after= names no commit, as in the feed: not "from now", which would skip what was missed.
  const empty = await fetch(`${server.url}/api/external/events?after=`, { headers: { authorization: `Bearer ${server.key}` } });
  t.deepEqual([empty.status, await empty.json()], [404, { error: "Commit '' does not exist." }]);
  t.is((await fetch(`${server.url}/api/external/events`)).status, 401);
});

test('SSE: a write through git itself (a push) reaches listeners too', async (t) => {
  const server = await TestServer.start({ events: { pollMs: 100 } });
  t.teardown(() => server.close());
  const live = listen(server.url, server.key);
  t.teardown(() => live.close());
  await live.opened;
  // Behind the service's back: a new commit and the ref moved by git.
  const tree = (await server.git('rev-parse', 'main^{tree}')).trim();
  const commit = (await server.git('commit-tree', tree, '-p', 'main', '-m', 'by hand')).trim();
  await server.git('update-ref', 'refs/heads/main', commit);
  const [event] = await live.until(1);
  t.is(event.id, commit);
  t.is(event.change.title, 'by hand');
  t.deepEqual(event.change.resources, []);
});

test('HEAD of the stream answers its headers and ends', async (t) => {
  const server = await TestServer.start();
  t.teardown(() => server.close());
  const response = await fetch(`${server.url}/api/external/events`, { method: 'HEAD', headers: { 'x-api-key': server.key } });
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type')!, /^text\/event-stream/);
  t.is(response.headers.get('etag'), `"${await server.head()}"`);
});

test('SSE: a stream ends once its key is revoked; another key’s goes on', async (t) => {
  const { KeyStore } = await import('../src/store/keys.js');
  const server = await TestServer.start({ events: { stream: { heartbeatMs: 100 } } });
  t.teardown(() => server.close());
  const keys = new KeyStore(server.dataDir);
  const { key: doomed, record } = await keys.create(server.slug, { label: 'doomed' });
  const streamOf = async (key: string) => {
    const reply = await fetch(`${server.url}/api/external/events`, { headers: { authorization: `Bearer ${key}` } });
    t.is(reply.status, 200);
    const reader = reply.body!.getReader();
    return async () => {
      for (;;) if ((await reader.read()).done) return 'ended';
    };
  };
  const untilEnd = await streamOf(doomed);
  await keys.revoke(server.slug, record.id);
  t.is(await untilEnd(), 'ended');
  // The other key's stream still carries changes.
  const reply = await fetch(`${server.url}/api/external/events`, { headers: { authorization: `Bearer ${server.key}` } });
  const reader = reply.body!.getReader();
  await server.post('/api/external/tag', [{ name: 'after', color: 'green' }]);
  let text = '';
  while (!text.includes('event: change')) text += new TextDecoder().decode((await reader.read()).value);
  t.regex(text, /event: change/);
  await reader.cancel();
});

test('SSE: a graceful stop ends a stream whose client has not taken all it was sent at once, rather than waiting out the shutdown timeout for it', async (t) => {
  const server = await TestServer.start({ events: { stream: { heartbeatMs: 1000 } } });
  t.teardown(() => server.close());
  const stalled = await rawStream(t, server);
  const closed = once(stalled, 'close');
  // One change of about 6 MB: more than the kernel's buffers take, so most of it waits in the
  // server while the client reads nothing.
  const tags = Array.from({ length: 3000 }, (_, i) => ({ name: `t${i} ${'x'.repeat(2000)}`, color: 'green' }));
  t.is((await server.post('/api/external/tag', tags)).status, 200);
  // The change is on its way to the client (the server holds what the socket does not take).
  const deadline = Date.now() + 30_000;
  while (stalled.readableLength < 64 * 1024 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.true(stalled.readableLength >= 64 * 1024, 'the change began to arrive');
  const cutOff = await server.server.shutdown({ delayMs: 0, timeoutMs: 60_000 });
  t.is(cutOff, 0, 'the stream was ended by the stop, not cut off at its timeout');
  // Read now, the stream is over (a stream still open would not close).
  stalled.resume();
  await closed;
});

test("?at= on the feed and the stream is checked and changes nothing: their ETag names main's tip, and the feed answers no 304 for an older commit", async (t) => {
  const server = await TestServer.start();
  t.teardown(() => server.close());
  const [first] = await addTags(server, ['one', 'two']);
  const tip = await server.head();
  const feed = await server.get(`/api/external/changes?at=${first}`, { headers: { 'if-none-match': `"${first}"` } });
  t.is(feed.status, 200);
  t.is(feed.headers.get('etag'), `"${tip}"`);
  t.is(feed.body.changes.at(-1).id, tip);
  const stream = await fetch(`${server.url}/api/external/events?at=${first}`, { method: 'HEAD', headers: { 'x-api-key': server.key } });
  t.is(stream.status, 200);
  t.is(stream.headers.get('etag'), `"${tip}"`);
  t.is((await server.get('/api/external/changes?at=ffff')).status, 404);
});
