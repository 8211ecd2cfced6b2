/**
 * Stopping without dropping anything (src/ops/drain.ts): while draining `/healthz` answers 503
 * and requests are still served, then no new connection is accepted, a write whose body is
 * still arriving gets its answer and its commit, and `c4store serve` exits 0 on SIGTERM.
 */
import test from 'ava';
import { once } from 'node:events';
import { createServer, request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Drain, endWhenStopping } from '../src/ops/drain.js';
import { run, TestServer } from './support/server.js';
import { cli, lastLine, serveProcess } from './support/process.js';

/** A POST of one tag whose body is sent in two parts: the second only when `finish` is called. */
function slowWrite(url: string, key: string, name: string): { finish(): void; answer: Promise<{ status: number; body: string }> } {
  const body = JSON.stringify([{ name, color: 'blue' }]);
  const half = Math.floor(body.length / 2);
  const req: ClientRequest = request(`${url}/api/external/tag`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(body.length) },
  });
  const answer = (async () => {
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let text = '';
    for await (const chunk of res) text += chunk;
    return { status: res.statusCode!, body: text };
  })();
  req.write(body.slice(0, half));
  return { finish: () => req.end(body.slice(half)), answer };
}

async function commitsOf(gitdir: string): Promise<number> {
  return Number((await run('git', ['--git-dir', gitdir, 'rev-list', '--count', 'main'])).stdout.trim());
}

test('draining: /healthz says 503 while requests are still served, then a write in flight finishes and nothing new connects', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    t.is((await s.get('/healthz', { key: null })).status, 200);
    const write = slowWrite(s.url, s.key, 'in flight');
    // The request has reached the server before the drain begins.
    while ((await s.get('/api/external/tag')).status !== 200) await new Promise((r) => setTimeout(r, 10));
    const stopped = s.server.shutdown({ delayMs: 1500, timeoutMs: 30_000 });

    const health = await s.get('/healthz', { key: null });
    t.is(health.status, 503);
    t.deepEqual(health.body, { error: 'Shutting down: this instance takes no new work.' });
    const served = await fetch(`${s.url}/api/external/tag`, { headers: { authorization: `Bearer ${s.key}` } });
    t.is(served.status, 200, 'requests that still arrive are served');
    t.is(served.headers.get('connection'), 'close', 'and their connection closes after the answer');
    await served.arrayBuffer();

    write.finish();
    const answered = await write.answer;
    t.is(answered.status, 200, answered.body);
    t.is(await stopped, 0, 'nothing was cut off');
    t.is(await s.commitCount(), 2, 'the write is committed');
    await t.throwsAsync(fetch(`${s.url}/healthz`), undefined, 'no new connection is accepted');
  } finally {
    await s.close();
  }
});

test('draining: a live event stream is ended when the server stops accepting, not waited for, nor counted as cut off', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    const stream = await fetch(`${s.url}/api/external/events`, { headers: { authorization: `Bearer ${s.key}` } });
    t.is(stream.status, 200);
    const read = (async () => {
      let text = '';
      for await (const chunk of stream.body!) text += Buffer.from(chunk).toString('utf8');
      return text;
    })();
    // A timeout the test would not outwait: the stream must end before it, by itself.
    t.is(await s.server.shutdown({ delayMs: 0, timeoutMs: 120_000 }), 0);
    t.regex(await read, /^retry: \d+\n/, 'the stream ended cleanly, read to its end');
  } finally {
    await s.close();
  }
});

test('draining: a request still unfinished at the timeout is cut off and counted', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    const write = slowWrite(s.url, s.key, 'never finished');
    write.answer.catch(() => undefined);
    while ((await s.get('/api/external/tag')).status !== 200) await new Promise((r) => setTimeout(r, 10));
    const before = await s.head();
    t.is(await s.server.shutdown({ delayMs: 0, timeoutMs: 300 }), 1);
    t.is(await s.head(), before, 'the cut-off write changed nothing');
  } finally {
    await s.close();
  }
});

test('c4store serve on SIGTERM drains, answers the write in flight and exits 0', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'c4store-drain-'));
  try {
    await cli('org', 'create', 'acme', '--data', dataDir);
    const key = lastLine(await cli('key', 'create', 'acme', '--data', dataDir));
    const gitdir = join(dataDir, 'orgs', 'acme.git');
    const commits = await commitsOf(gitdir);
    const server = await serveProcess(dataDir, '--drain-delay', '1', '--shutdown-timeout', '20');
    const write = slowWrite(server.url, key, 'across SIGTERM');
    // The write's headers are in: its answer is owed.
    await new Promise((r) => setTimeout(r, 200));
    const exited = once(server.child, 'exit');
    server.child.kill('SIGTERM');
    // The signal arrives when it arrives: /healthz turns 503 then, and stays so while draining.
    while ((await fetch(`${server.url}/healthz`)).status === 200) await new Promise((r) => setTimeout(r, 20));
    t.is((await fetch(`${server.url}/healthz`)).status, 503);
    write.finish();
    t.is((await write.answer).status, 200);
    const [code] = await exited;
    t.is(code, 0, server.output.join('\n'));
    t.true(server.output.some((line) => line.includes('stopped: every request in flight was answered')));
    t.is(await commitsOf(gitdir), commits + 1, 'the write is committed');
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('draining: an endless answer that registers after the stop swept them (a stream starting at that moment) is ended at once, not waited for', async (t) => {
  const drain = new Drain();
  let register!: () => void;
  let arrived!: () => void;
  const streamOpen = new Promise<void>((resolve) => (arrived = resolve));
  const server = createServer(
    drain.track((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      // The stream registers itself only when the test says: after the stop's sweep.
      register = () => endWhenStopping(res, () => res.end());
      arrived();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const response = new Promise<IncomingMessage>((resolve) => request(`http://127.0.0.1:${port}/`, resolve).end());
  await streamOpen;
  // No delay: the sweep of endless answers is done before run() first waits.
  // Waited out, it would be counted as cut off when the timeout came.
  const stopping = drain.run(server, { delayMs: 0, timeoutMs: 60_000 });
  register();
  t.is(await stopping, 0, 'ended, not waited out and cut off');
  let body = '';
  for await (const chunk of await response) body += chunk;
  t.is(body, ': open\n\n');
});
