/**
 * Mirrors against hostile or broken hosts (issue 24, point 9): a token in the mirror's URL never
 * reaches a reader key, the state file, `mirror list` or the log in any form git prints it; a
 * host that accepts the connection and never answers costs a push its timeout, and the server's
 * SIGTERM still ends it.
 */
import test from 'ava';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redactSecrets, redactUrl } from '../src/credentials.js';
import { cli, lastLine, serveProcess } from './support/process.js';
import { run, TestServer } from './support/server.js';

async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('every credential form is hidden, in the URL and wherever git prints it', (t) => {
  const cases: Array<[url: string, secret: string, text: string]> = [
    [
      'https://ghp_TOKEN123@git.example.com/a/b.git',
      'ghp_TOKEN123',
      "fatal: could not read Password for 'https://ghp_TOKEN123@git.example.com': terminal prompts disabled",
    ],
    [
      'https://bot:p%40ss-word@git.example.com/a/b.git',
      'p@ss-word',
      "fatal: unable to access 'https://bot:p@ss-word@git.example.com/a/b.git/': 403",
    ],
    [
      'https://git.example.com/a/b.git?access_token=tok-QUERY-9',
      'tok-QUERY-9',
      "fatal: unable to access 'https://git.example.com/a/b.git?access_token=tok-QUERY-9/': 403",
    ],
    ['ssh://deploy:sshpass99@git.example.com/a/b.git', 'sshpass99', 'ssh: connect to host git.example.com port 22: Connection refused'],
  ];
  for (const [url, secret, text] of cases) {
    t.false(redactUrl(url).includes(secret), redactUrl(url));
    t.false(redactUrl(url).includes(encodeURIComponent(secret)), redactUrl(url));
    const redacted = redactSecrets(text, url);
    t.false(redacted.includes(secret), redacted);
    t.true(redacted.includes('***') || !text.includes(secret), redacted);
  }
  t.is(redactUrl('https://git.example.com/a/b.git?access_token=x&u=y'), 'https://git.example.com/a/b.git?access_token=***&u=***');
  // A user name with a password is a name; over ssh without one it is a login, not a secret.
  t.is(redactUrl('https://bot:secret@git.example.com/a.git'), 'https://bot:***@git.example.com/a.git');
  t.is(redactUrl('ssh://git@git.example.com/a.git'), 'ssh://git@git.example.com/a.git');
});

test('a token as the URL user name reaches no reader key, state file, mirror list or log', async (t) => {
  // A host that asks for a password (git then prints the URL with its user name) or refuses.
  const host = createHttpServer((req, res) => {
    if (req.url?.startsWith('/ask/')) res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="x"' }).end();
    else res.writeHead(403).end('no');
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  const port = (host.address() as AddressInfo).port;
  const s = await TestServer.start();
  const secrets = ['ghp_USERNAME_TOKEN_1', 'QUERY_TOKEN_2'];
  try {
    await cli('mirror', 'add', s.slug, `http://${secrets[0]}@127.0.0.1:${port}/ask/model.git`, '--interval', '0', '--data', s.dataDir);
    await cli(
      'mirror',
      'add',
      s.slug,
      `http://127.0.0.1:${port}/deny/model.git?private_token=${secrets[1]}`,
      '--interval',
      '0',
      '--data',
      s.dataDir,
    );
    const failing = await until(
      'both mirrors failing',
      async () => (await s.get('/healthz')).body,
      (body) => body.mirrors?.length === 2 && body.mirrors.every((m: any) => m.failures >= 1),
    );
    // Editor keys see what went wrong, without the tokens.
    t.true(failing.mirrors.every((m: any) => typeof m.lastError === 'string' && m.lastError !== ''));
    const everything = [
      JSON.stringify(failing),
      JSON.stringify((await s.get('/healthz', { key: s.readerKey })).body),
      await readFile(join(s.dataDir, 'mirror-state.json'), 'utf8'),
      await cli('mirror', 'list', '--data', s.dataDir),
      s.logs.join('\n'),
    ];
    for (const secret of secrets) {
      for (const [i, text] of everything.entries()) t.false(text.includes(secret), `${secret} in #${i}: ${text}`);
    }
    t.true(
      s.logs.some((line) => line.includes('***')),
      s.logs.join('\n'),
    );
    // Reader keys see how far the mirrors are, not their URLs or git's texts.
    const reader = (await s.get('/healthz', { key: s.readerKey })).body;
    t.is(reader.mirrors.length, 2);
    for (const mirror of reader.mirrors) {
      t.false('lastError' in mirror);
      t.false('url' in mirror);
      t.true(mirror.failures >= 1);
    }
    t.is((await stat(join(s.dataDir, 'mirror-state.json'))).mode & 0o777, 0o600);
    t.is((await stat(join(s.dataDir, 'mirrors.yaml'))).mode & 0o777, 0o600);
  } finally {
    await s.close();
    host.close();
  }
});

/** A TCP server that accepts every connection and never says a word. */
async function silentHost(): Promise<{ port: number; accepted: () => number; close: () => void }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createTcpServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

test('a mirror host that accepts and never answers: the push is stopped at its timeout and shown', async (t) => {
  const host = await silentHost();
  const s = await TestServer.start();
  try {
    for (const scheme of ['http', 'git']) {
      await cli(
        'mirror',
        'add',
        s.slug,
        `${scheme}://127.0.0.1:${host.port}/model.git`,
        '--interval',
        '0',
        '--timeout',
        '1',
        '--data',
        s.dataDir,
      );
    }
    const failing = await until(
      'the stalled pushes fail',
      async () => (await s.get('/healthz')).body,
      (body) => body.mirrors?.length === 2 && body.mirrors.every((m: any) => m.failures >= 1),
    );
    t.true(host.accepted() >= 2);
    for (const mirror of failing.mirrors) t.is(mirror.lastError, 'the mirror did not finish within 1 s; the push was stopped');
    // Writes go on meanwhile.
    t.is((await s.post('/api/external/component', [{ name: 'Ledger' }])).status, 200);
  } finally {
    await s.close();
    host.close();
  }
});

test('SIGTERM ends the server while a push hangs on a silent host', async (t) => {
  const host = await silentHost();
  const dataDir = await mkdtemp(join(tmpdir(), 'c4store-mirror-stall-'));
  try {
    await cli('org', 'create', 'acme', '--data', dataDir);
    const key = lastLine(await cli('key', 'create', 'acme', '--data', dataDir));
    // The default timeout (minutes): only the shutdown can stop this push.
    await cli('mirror', 'add', 'acme', `http://127.0.0.1:${host.port}/model.git`, '--interval', '0', '--data', dataDir);
    const server = await serveProcess(dataDir);
    await until(
      'the push connects',
      async () => host.accepted(),
      (n) => n >= 1,
    );
    const health = await fetch(`${server.url}/healthz`, { headers: { authorization: `Bearer ${key}` } });
    t.is(((await health.json()) as any).mirrors[0].failures, 0, 'still in flight');
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    const outcome = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000).unref())]);
    if (outcome === 'still running') server.child.kill('SIGKILL');
    t.is(outcome, 0, server.output.join('\n'));
  } finally {
    host.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a mirrors.yaml the parser refuses: the command line says which file, and never quotes the credentials in it', async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'c4store-mirrors-broken-'));
  t.teardown(() => rm(data, { recursive: true, force: true }));
  await cli('org', 'create', 'demo', '--data', data);
  const secret = 'SuperSecretTok';
  await writeFile(join(data, 'mirrors.yaml'), `mirrors:\n  - org: demo\n    url: https://bot:${secret}@git.example.com/a.git: x\n`);
  for (const args of [
    ['mirror', 'list', 'demo'],
    ['mirror', 'add', 'demo', 'https://git.example.com/b.git'],
  ]) {
    const failed = await cli(...args, '--data', data).then(
      () => undefined,
      (err: { stderr?: string; code?: number }) => err,
    );
    t.truthy(failed, args.join(' '));
    t.regex(failed?.stderr ?? '', /mirrors\.yaml cannot be read: /);
    t.false((failed?.stderr ?? '').includes(secret), failed?.stderr);
  }
  t.regex(await readFile(join(data, 'mirrors.yaml'), 'utf8'), new RegExp(secret), 'left as it was');
  // An organization that does not exist is said so, not listed as having no mirror.
  const unknown = await cli('mirror', 'list', 'nosuch', '--data', data).then(
    () => undefined,
    (err: { stderr?: string }) => err,
  );
  t.regex(unknown?.stderr ?? '', /organization 'nosuch' does not exist/);
});

test('mirror add or remove refuses to write back a mirrors.yaml whose hand-written entries are no mirror (URL: for url), rather than drop them unsaid', async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'c4store-mirrors-entries-'));
  t.teardown(() => rm(data, { recursive: true, force: true }));
  await cli('org', 'create', 'demo', '--data', data);
  const file = join(data, 'mirrors.yaml');
  const text =
    'mirrors:\n  - org: demo\n    url: https://git.example.com/a.git\n  - org: demo\n    URL: https://git.example.com/typo.git\n';
  await writeFile(file, text);
  for (const args of [
    ['mirror', 'add', 'demo', 'https://git.example.com/b.git'],
    ['mirror', 'remove', 'demo', 'https://git.example.com/a.git'],
  ]) {
    const failed = await cli(...args, '--data', data).then(
      () => undefined,
      (err: { stderr?: string }) => err,
    );
    t.truthy(failed, args.join(' '));
    t.true(
      (failed?.stderr ?? '').includes(
        `${file}: entry 2 is no mirror (each needs 'org' and 'url' as text): correct or remove it by hand first; nothing was changed`,
      ),
      failed?.stderr,
    );
  }
  t.is(await readFile(file, 'utf8'), text, 'left as it was');
  // Put right by hand, the file is changed as asked.
  await writeFile(file, text.replace('URL:', 'url:'));
  await cli('mirror', 'add', 'demo', 'https://git.example.com/b.git', '--data', data);
  t.is((await readFile(file, 'utf8')).match(/url: /g)?.length, 3);
});

test("a mirrors.yaml entry written by hand for no organization's slug ('Acme') is left out and said so; the server and the other mirrors go on", async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'c4store-mirrors-slug-'));
  t.teardown(() => rm(data, { recursive: true, force: true }));
  await cli('org', 'create', 'acme', '--data', data);
  const key = lastLine(await cli('key', 'create', 'acme', '--data', data));
  const target = join(data, 'mirror.git');
  await run('git', ['init', '-q', '--bare', target]);
  await writeFile(
    join(data, 'mirrors.yaml'),
    `mirrors:\n  - org: Acme\n    url: ${target}\n    interval: 0\n  - org: ../../elsewhere\n    url: ${target}\n    interval: 0\n  - org: acme\n    url: ${target}\n    interval: 0\n`,
  );
  const server = await serveProcess(data);
  t.teardown(() => server.stop());
  // The valid mirror's push was started with the others, at the first reading of the file.
  const mirrors = await until(
    'the mirror of acme is pushed',
    async () => {
      const health = await fetch(`${server.url}/healthz`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined);
      return health === undefined
        ? undefined
        : ((await health.json()) as { mirrors: Array<{ url: string; lastPushed: string | null }> }).mirrors;
    },
    (found) => found === undefined || found.every((mirror) => mirror.lastPushed !== null),
  );
  t.is(server.child.exitCode, null, server.output.join('\n'));
  t.deepEqual(
    mirrors?.map((mirror) => mirror.url),
    [target],
  );
  t.is(
    (await run('git', ['--git-dir', target, 'rev-parse', 'main'])).stdout.trim(),
    (await run('git', ['--git-dir', join(data, 'orgs', 'acme.git'), 'rev-parse', 'main'])).stdout.trim(),
  );
  for (const org of ['Acme', '../../elsewhere']) {
    t.true(
      server.output.some((line) => line.includes(`mirror of \\"${org}\\" to ${target} is left out: it names no organization`)),
      server.output.join('\n'),
    );
  }
});

test('mirror add of an address already mirrored with other credentials (a rotated token) replaces that mirror, not a second one beside it', async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'c4store-mirrors-rotate-'));
  t.teardown(() => rm(data, { recursive: true, force: true }));
  await cli('org', 'create', 'demo', '--data', data);
  for (const url of [
    'https://bot:OldToken1@git.example.com/arch/demo.git',
    'https://bot:NewToken2@git.example.com/arch/demo.git',
    'https://OldToken3@git.example.com/arch/other.git',
    'https://NewToken4@git.example.com/arch/other.git',
  ]) {
    await cli('mirror', 'add', 'demo', url, '--data', data);
  }
  const file = await readFile(join(data, 'mirrors.yaml'), 'utf8');
  for (const gone of ['OldToken1', 'OldToken3']) t.false(file.includes(gone), file);
  for (const kept of ['NewToken2', 'NewToken4']) t.true(file.includes(kept), file);
  const listed = (await cli('mirror', 'list', 'demo', '--data', data)).trim().split('\n');
  t.deepEqual(
    listed.map((line) => line.split('\t')[1]),
    ['https://bot:***@git.example.com/arch/demo.git', 'https://***@git.example.com/arch/other.git'],
  );
  // Another address, or another user name, is another mirror.
  await cli('mirror', 'add', 'demo', 'https://ci:NewToken5@git.example.com/arch/demo.git', '--data', data);
  t.is((await cli('mirror', 'list', 'demo', '--data', data)).trim().split('\n').length, 3);
});
