/**
 * A full disk where the data directory is: every write is refused `507` with the contract's
 * error body (not `500 Internal error.`), says so in the log, and changes nothing — no branch
 * moved, no draft half made, the repository clean for `git fsck`; once space is freed, writes go
 * on. The disk is a real tmpfs of a few megabytes, mounted in a mount namespace of the server's
 * own (`unshare -rm`: no privilege needed where user namespaces are allowed, as root anyway),
 * filled through /proc/<pid>/root. The real command line and server (dist/), real git.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, untilListening } from './support/process.js';
import { run } from './support/server.js';

const API = '/api/external';
const FULL = { error: "The server's disk is full: the request was not carried out. Retry once space is freed." };

/**
 * A server whose data directory is on a tmpfs of 4 MB of its own (a mount namespace of its own),
 * organization `acme` made; `disk` is that file system as this process reaches it.
 */
async function serverOnItsOwnDisk(t: ExecutionContext) {
  const outside = await mkdtemp(join(tmpdir(), 'c4store-full-'));
  const mountPoint = join(outside, 'disk');
  const keyFile = join(outside, 'key');
  const script = [
    'set -e',
    'mkdir -p "$1"',
    'mount -t tmpfs -o size=4m tmpfs "$1"',
    `"${process.execPath}" "${CLI}" org create acme --data "$1/data" | tail -n 1 > "$2"`,
    `exec "${process.execPath}" "${CLI}" serve --data "$1/data" --port 0 --drain-delay 0`,
  ].join('\n');
  const child = spawn('unshare', ['-rm', 'sh', '-c', script, 'sh', mountPoint, keyFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  t.teardown(async () => {
    child.kill('SIGKILL');
    await rm(outside, { recursive: true, force: true });
  });
  const url = await untilListening(
    child,
    (line) => output.push(line),
    () => output.join('\n'),
  );
  // The server's own view of the file system (unshare and sh exec into it: one process).
  const disk = `/proc/${child.pid}/root${mountPoint}`;
  // git resolves its directory's real path, which only the server's namespace has: run there.
  const gitdir = join(mountPoint, 'data', 'orgs', 'acme.git');
  const git = async (...args: string[]) =>
    (
      await run('nsenter', ['-t', String(child.pid), '-U', '-m', '--preserve-credentials', 'git', '--git-dir', gitdir, ...args])
    ).stdout.trim();
  const key = (await readFile(keyFile, 'utf8')).trim();
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const inItsNamespace = (command: string, ...args: string[]) =>
    run('nsenter', ['-t', String(child.pid), '-U', '-m', '--preserve-credentials', command, ...args]);
  return { url, call, git, disk, output, mountPoint, inItsNamespace };
}

test('writes on a full disk are 507, logged, and change nothing; freed, writes go on', async (t) => {
  const { call, git, disk, output } = await serverOnItsOwnDisk(t);
  t.is((await call('POST', `${API}/tags`, { id: 'before', name: 'Before', color: 'red' })).status, 201);
  const head = await git('rev-parse', 'main');

  // Filled to the last byte.
  const filler = await open(join(disk, 'filler'), 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) await filler.write(chunk);
  } catch (error) {
    t.is((error as NodeJS.ErrnoException).code, 'ENOSPC');
  } finally {
    await filler.close();
  }
  // Incompressible text: its objects cannot fit where git's compression would have made room.
  const large = randomBytes(96 * 1024).toString('base64');
  const writes: Array<[string, string, unknown]> = [
    ['POST', `${API}/components`, { id: 'full', name: 'On a full disk', desc: large }],
    ['POST', `${API}/tag`, [{ name: 'Seed form', color: 'blue', desc: large }]],
    ['PATCH', `${API}/tags/before`, { desc: large }],
    ['POST', `${API}/drafts`, { name: 'on-full-disk' }],
    ['POST', `${API}/versions`, { name: 'v1' }],
  ];
  for (const [method, path, body] of writes) {
    const answer = await call(method, path, body);
    t.deepEqual([answer.status, answer.body], [507, FULL], `${method} ${path}`);
  }
  t.is(await git('rev-parse', 'main'), head, 'main did not move');
  t.is(await git('for-each-ref', '--format=%(refname)'), 'refs/heads/main', 'no draft, no version');
  t.is((await call('GET', `${API}/tags/before`)).body.desc, null, 'reads go on');
  t.true(
    output.some((line) => line.includes('disk full: POST /api/external/components refused: ENOSPC')),
    output.join('\n'),
  );

  // Freed: the same writes are carried out.
  await rm(join(disk, 'filler'));
  for (const [method, path, body] of writes) {
    const answer = await call(method, path, body);
    t.true(answer.status === 200 || answer.status === 201, `${method} ${path}: ${JSON.stringify(answer.body).slice(0, 200)}`);
  }
  t.is((await call('GET', `${API}/tags/before`)).body.desc, large);
  t.is(await git('for-each-ref', '--format=%(refname)', 'refs/heads/drafts', 'refs/tags'), 'refs/heads/drafts/on-full-disk\nrefs/tags/v1');
  await git('fsck', '--strict', '--no-dangling');
});

const READ_ONLY = {
  error:
    'The server cannot write its data directory (a read-only file system, or no permission): the request was not carried out. Retry once it is writable again.',
};

test('writes to a data directory made read-only under a running server are 503 in words, logged, and change nothing; writable again, writes go on', async (t) => {
  const { call, git, output, mountPoint, inItsNamespace } = await serverOnItsOwnDisk(t);
  t.is((await call('POST', `${API}/tags`, { id: 'before', name: 'Before', color: 'red' })).status, 201);
  const head = await git('rev-parse', 'main');
  await inItsNamespace('mount', '-o', 'remount,ro', mountPoint);
  const writes: Array<[string, string, unknown]> = [
    ['POST', `${API}/components`, { id: 'ro', name: 'On a read-only disk' }],
    ['POST', `${API}/tag`, [{ name: 'Seed form', color: 'blue' }]],
    ['PATCH', `${API}/tags/before`, { desc: 'changed' }],
    ['POST', `${API}/drafts`, { name: 'on-read-only' }],
    ['POST', `${API}/versions`, { name: 'v1' }],
  ];
  for (const [method, path, body] of writes) {
    const answer = await call(method, path, body);
    t.deepEqual([answer.status, answer.body], [503, READ_ONLY], `${method} ${path}`);
  }
  t.is(await git('rev-parse', 'main'), head, 'main did not move');
  t.is(await git('for-each-ref', '--format=%(refname)'), 'refs/heads/main', 'no draft, no version');
  const read = await call('GET', `${API}/tags/before`);
  t.is(read.status, 200, 'reads go on');
  t.true(
    output.some((line) => /data directory not writable: POST \/api\/external\/components refused: EROFS/.test(line)),
    output.join('\n'),
  );

  await inItsNamespace('mount', '-o', 'remount,rw', mountPoint);
  for (const [method, path, body] of writes) {
    const answer = await call(method, path, body);
    t.true(answer.status === 200 || answer.status === 201, `${method} ${path}: ${JSON.stringify(answer.body).slice(0, 200)}`);
  }
  await git('fsck', '--strict', '--no-dangling');
});
