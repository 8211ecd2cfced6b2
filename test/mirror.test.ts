/**
 * Mirroring (issue "Git-native review", point 7): after the service's commits, main and the
 * version tags reach a remote in the background; a remote that goes away costs no write and
 * is caught up when it comes back. Remotes: a local bare repository, and a real git HTTP
 * server (git http-backend under a small HTTP server) started here.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from './support/process.js';
import { run, TestServer } from './support/server.js';

async function remoteHead(remote: string): Promise<string | null> {
  try {
    return (await run('git', ['--git-dir', remote, 'rev-parse', '--verify', '-q', 'refs/heads/main'])).stdout.trim();
  } catch {
    return null;
  }
}

async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a local bare mirror gets main and versions, survives going away, and catches up', async (t) => {
  const s = await TestServer.start();
  const dir = await mkdtemp(join(tmpdir(), 'c4store-mirror-'));
  const remote = join(dir, 'remote.git');
  try {
    await run('git', ['init', '-q', '--bare', '--initial-branch=main', remote]);
    t.regex(await cli('mirror', 'add', s.slug, remote, '--interval', '0', '--data', s.dataDir), /is mirrored to/);
    const first = await s.head();
    await until(
      'first push',
      () => remoteHead(remote),
      (head) => head === first,
    );

    await s.post('/api/external/component', [{ name: 'Ledger' }]);
    await s.post('/api/external/version', { name: 'v1', desc: 'first' });
    await s.post('/api/external/component', [{ name: 'Payments' }]);
    const head = await s.head();
    await until(
      'catch-up after writes',
      () => remoteHead(remote),
      (h) => h === head,
    );
    await until(
      'the version tag',
      async () => (await run('git', ['--git-dir', remote, 'tag', '-l'])).stdout.trim(),
      (tags) => tags === 'v1',
    );

    // The remote goes away: writes still answer at once, and the failure shows.
    await rename(remote, `${remote}.away`);
    const started = performance.now();
    const write = await s.post('/api/external/component', [{ name: 'Fraud' }]);
    t.is(write.status, 200);
    t.true(performance.now() - started < 2000);
    const failing = await until(
      'failure in /healthz',
      async () => (await s.get('/healthz')).body,
      (body) => body.mirrors?.[0]?.failures >= 1,
    );
    t.is(failing.mirrors[0].url, remote);
    // git's cause, not its closing advice ("Please make sure you have the correct access rights…").
    t.regex(failing.mirrors[0].lastError, /^fatal: '.*\.git' does not appear to be a git repository/, failing.mirrors[0].lastError);
    t.is(failing.mirrors[0].behind, 1);
    t.deepEqual((await s.get('/healthz', { key: null })).body, { ok: true }, 'no key: nothing of any organization');
    const listed = await cli('mirror', 'list', s.slug, '--data', s.dataDir);
    t.regex(listed, /last error \(\d+ in a row\)/);

    await rename(`${remote}.away`, remote);
    const now = await s.head();
    await until(
      'catch-up after the remote came back',
      () => remoteHead(remote),
      (h) => h === now,
      20_000,
    );
    const healed = await until(
      'healed /healthz',
      async () => (await s.get('/healthz')).body,
      (body) => body.mirrors[0].lastError === null,
    );
    t.is(healed.mirrors[0].behind, 0);
    t.is((await run('git', ['--git-dir', remote, 'fsck', '--full'])).stderr, '');
    t.regex(
      await cli('mirror', 'list', '--data', s.dataDir),
      new RegExp(`${s.slug}\\t${remote}\\tevery 0 s\\tlast pushed ${now.slice(0, 12)}`),
    );
    t.regex(await cli('mirror', 'remove', s.slug, remote, '--data', s.dataDir), /no longer mirrored/);
  } finally {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a mirror over HTTP: git http-backend under a small HTTP server, with credentials kept out of sight', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-mirror-http-'));
  await run('git', ['init', '-q', '--bare', '--initial-branch=main', join(dir, 'model.git')]);
  const seenUsers: string[] = [];
  const http = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const user = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':')[0];
    if (user === '') {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"' }).end();
      return;
    }
    seenUsers.push(user);
    const child = spawn('git', ['http-backend'], {
      env: {
        ...process.env,
        GIT_PROJECT_ROOT: dir,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method,
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: user,
      },
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let sent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (sent) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = head.subarray(0, end).toString().split('\r\n');
      const status = Number(lines.find((l) => l.startsWith('Status:'))?.split(' ')[1] ?? 200);
      res.writeHead(status, Object.fromEntries(lines.filter((l) => !l.startsWith('Status:')).map((l) => l.split(/: (.*)/s).slice(0, 2))));
      res.write(head.subarray(end + 4));
      sent = true;
    });
    child.on('close', () => res.end());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const s = await TestServer.start();
  try {
    const url = `http://mirror-bot:s3cret-token@127.0.0.1:${(http.address() as AddressInfo).port}/model.git`;
    await cli('mirror', 'add', s.slug, url, '--interval', '0', '--data', s.dataDir);
    await s.post('/api/external/component', [{ name: 'Ledger' }]);
    const head = await s.head();
    await until(
      'push over HTTP',
      () => remoteHead(join(dir, 'model.git')),
      (h) => h === head,
    );
    t.true(seenUsers.includes('mirror-bot'));
    const health = (await s.get('/healthz')).body;
    t.false(JSON.stringify(health).includes('s3cret'), 'the token never shows');
    t.false((await cli('mirror', 'list', '--data', s.dataDir)).includes('s3cret'));
    t.false(s.logs.join('\n').includes('s3cret'));
  } finally {
    await s.close();
    http.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a mirror someone else moved shows which ref was refused and why, not only "failed to push some refs"', async (t) => {
  const s = await TestServer.start();
  const dir = await mkdtemp(join(tmpdir(), 'c4store-mirror-moved-'));
  t.teardown(async () => {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  });
  const remote = join(dir, 'remote.git');
  await run('git', ['init', '-q', '--bare', '--initial-branch=main', remote]);
  // Someone else's commit on the mirror's main, which a push of ours would drop.
  const clone = join(dir, 'theirs');
  await run('git', ['init', '-q', '--initial-branch=main', clone]);
  await run('git', [
    '-C',
    clone,
    '-c',
    'user.name=Them',
    '-c',
    'user.email=them@example.com',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'theirs',
  ]);
  await run('git', ['-C', clone, 'push', '-q', remote, 'main']);
  await cli('mirror', 'add', s.slug, remote, '--interval', '0', '--data', s.dataDir);
  const failing = await until(
    'failure in /healthz',
    async () => (await s.get('/healthz')).body,
    (body) => body.mirrors?.[0]?.failures >= 1,
  );
  t.regex(failing.mirrors[0].lastError, /! \[rejected\] refs\/heads\/main \(fetch first\)/, failing.mirrors[0].lastError);
});
