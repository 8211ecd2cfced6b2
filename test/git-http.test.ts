/**
 * Clone, fetch and push over git's smart HTTP protocol with API keys, and pushes with file
 * access checked by the repository's pre-receive hook (issue "Git-native review", points 5–6).
 * Needs dist/cli.js (npm test builds it first): the hook runs the built command line.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { KeyStore } from '../src/store/keys.js';
import { run, TestServer, withServer } from './support/server.js';

const IDENTITY = ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com'];

function remote(s: TestServer, key: string | null, user = 'anyone'): string {
  const url = new URL(`${s.url}/git/${s.slug}.git`);
  if (key !== null) {
    url.username = user;
    url.password = key;
  }
  return url.href;
}

async function git(cwd: string, ...args: string[]) {
  return run('git', ['-C', cwd, ...IDENTITY, ...args], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
}

async function gitFails(cwd: string, ...args: string[]): Promise<string> {
  try {
    await git(cwd, ...args);
  } catch (err) {
    return String((err as { stderr?: string }).stderr);
  }
  throw new Error(`git ${args.join(' ')} succeeded`);
}

async function withClone(s: TestServer, key: string, body: (dir: string) => Promise<void>) {
  const parent = await mkdtemp(join(tmpdir(), 'c4store-clone-'));
  const dir = join(parent, 'model');
  try {
    await run('git', ['clone', '-q', remote(s, key), dir], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    await body(dir);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

/** The path of the one component file in a clone. */
async function componentFile(dir: string): Promise<string> {
  const found: string[] = [];
  const walk = async (sub: string) => {
    for (const entry of await readdir(join(dir, sub), { withFileTypes: true })) {
      const path = `${sub}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else if (path.endsWith('.yaml')) found.push(path);
    }
  };
  await walk('components');
  if (found.length !== 1) throw new Error(`components: ${found}`);
  return found[0];
}

test('clone and fetch with a key: the clone holds main as the server has it', (t) =>
  withServer(async (s) => {
    await s.post('/api/external/component', [{ name: 'Ledger' }]);
    await withClone(s, s.readerKey, async (dir) => {
      t.is((await git(dir, 'rev-parse', 'HEAD')).stdout.trim(), await s.head());
      t.is((await git(dir, 'fsck', '--full')).stderr, '');
      await s.post('/api/external/component', [{ name: 'Payments' }]);
      await git(dir, 'fetch', '-q', 'origin');
      t.is((await git(dir, 'rev-parse', 'origin/main')).stdout.trim(), await s.head());
    });
    // A shallow clone works too.
    const parent = await mkdtemp(join(tmpdir(), 'c4store-shallow-'));
    try {
      await run('git', ['clone', '-q', '--depth', '1', remote(s, s.key), join(parent, 'm')]);
      t.is((await git(join(parent, 'm'), 'rev-list', '--count', 'HEAD')).stdout.trim(), '1');
      // So does a partial clone: old versions of files are left out, and fetched when a checkout needs them.
      const partial = join(parent, 'p');
      const first = await s.head();
      const ledger = (await s.get('/api/external/component')).body.find((c: { name: string }) => c.name === 'Ledger');
      t.is((await s.post('/api/external/component', [{ id: ledger.id, name: 'Ledger', desc: 'A newer version of its file' }])).status, 200);
      const { stderr } = await run('git', ['clone', '-q', '--filter=blob:none', remote(s, s.key), partial]);
      t.notRegex(stderr, /filtering not recognized/);
      const missing = (await git(partial, 'rev-list', '--all', '--objects', '--missing=print')).stdout
        .split('\n')
        .filter((line) => line.startsWith('?'));
      t.true(missing.length > 0, 'old blobs were left out');
      await git(partial, 'checkout', '-q', first);
      t.is((await git(partial, 'status', '--porcelain')).stdout, '');
      t.is((await git(partial, 'fsck', '--connectivity-only')).stderr, '');
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }));

test('wrong, missing and other organizations keys cannot clone', (t) =>
  withServer(async (s) => {
    const parent = await mkdtemp(join(tmpdir(), 'c4store-clone-'));
    try {
      for (const url of [remote(s, null), remote(s, 'not-a-key')]) {
        const output = await gitFails(parent, 'clone', '-q', url, join(parent, 'x'));
        t.regex(output, /Authentication failed|could not read Username|401/, output);
      }
      const other = await new KeyStore(s.dataDir).create('other-org', { label: 'other' }).catch(() => undefined);
      if (other) t.regex(await gitFails(parent, 'clone', '-q', remote(s, other.key), join(parent, 'y')), /Authentication failed|401/);
      const reply = await fetch(`${s.url}/git/${s.slug}.git/info/refs?service=git-upload-pack`);
      t.is(reply.status, 401);
      t.regex(reply.headers.get('www-authenticate') ?? '', /^Basic/);
      t.is((await fetch(`${s.url}/git/${s.slug}.git/objects/info/packs`, { headers: { authorization: `Bearer ${s.key}` } })).status, 404);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }));

test('push with an editor key moves main when the model stays valid; the API serves it', (t) =>
  withServer(async (s) => {
    const [component] = (await s.post('/api/external/component', [{ name: 'Ledger' }])).body;
    await withClone(s, s.key, async (dir) => {
      const file = await componentFile(dir);
      const text = await readFile(join(dir, file), 'utf8');
      await writeFile(join(dir, file), text.replace('name: Ledger', 'name: General ledger'));
      await git(dir, 'commit', '-qam', 'Rename the ledger');
      await git(dir, 'push', '-q', 'origin', 'main');
      const head = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
      t.is(await s.head(), head);
      t.is((await s.get(`/api/external/component/${component.id}`)).body.name, 'General ledger');
      t.is((await s.get('/api/external/history?limit=1')).body[0].summary, 'Rename the ledger');
    });
  }));

test('a push that breaks a rule, rewrites history or comes from a reader key is refused and changes nothing', (t) =>
  withServer(async (s) => {
    await s.post('/api/external/component', [{ name: 'Ledger' }]);
    const before = await s.state();
    await withClone(s, s.key, async (dir) => {
      const file = await componentFile(dir);
      const text = await readFile(join(dir, file), 'utf8');
      await writeFile(
        join(dir, file),
        text.replace(/^typeId:.*$/m, '').replace('name: Ledger', 'name: Ledger\ntypeId: 01aaaaaaaaaaaaaaaaaaaaaaaa'),
      );
      await git(dir, 'commit', '-qam', 'Point at a type that does not exist');
      const output = await gitFails(dir, 'push', 'origin', 'main');
      t.regex(
        output,
        new RegExp(`remote: c4store: commit [0-9a-f]{12}: ${file}: Type with id '01aaaaaaaaaaaaaaaaaaaaaaaa' does not exist.`),
        output,
      );
      t.regex(output, /pre-receive hook declined/, output);
      t.is(await s.state(), before);

      await git(dir, 'reset', '-q', '--hard', 'HEAD~2');
      await writeFile(join(dir, 'README.md'), 'notes\n');
      await git(dir, 'add', 'README.md');
      await git(dir, 'commit', '-qm', 'Rewrite history');
      const forced = await gitFails(dir, 'push', '--force', 'origin', 'main');
      t.regex(forced, /main can only move forward/, forced);
      t.is(await s.state(), before);
    });
    await withClone(s, s.readerKey, async (dir) => {
      await writeFile(join(dir, 'README.md'), 'notes\n');
      await git(dir, 'add', 'README.md');
      await git(dir, 'commit', '-qm', 'Notes');
      const output = await gitFails(dir, 'push', 'origin', 'main');
      // The reason reaches the person at the terminal (git shows a text/plain answer as remote: …).
      t.regex(output, /remote: This API key may only read\./, output);
      t.is(await s.state(), before);
    });
  }));

test('a broken push with file access is refused by git itself through the hook', (t) =>
  withServer(async (s) => {
    await s.post('/api/external/component', [{ name: 'Ledger' }]);
    const before = await s.state();
    const parent = await mkdtemp(join(tmpdir(), 'c4store-local-'));
    try {
      const dir = join(parent, 'm');
      await run('git', ['clone', '-q', s.gitdir, dir]);
      const file = await componentFile(dir);
      await writeFile(join(dir, file), 'name: [unclosed\n');
      await git(dir, 'commit', '-qam', 'Break the YAML');
      const output = await gitFails(dir, 'push', 'origin', 'main');
      t.regex(output, new RegExp(`remote: c4store: commit [0-9a-f]{12}: ${file.replace(/\//g, '\\/')}`), output);
      t.is(await s.state(), before);
      t.is((await run('git', ['--git-dir', s.gitdir, 'fsck', '--full'])).stderr, '');
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }));

test('a push over the git body limit is cut off and moves nothing', async (t) => {
  const s = await TestServer.start({ gitBodyLimit: 256 * 1024 });
  try {
    const before = await s.state();
    await withClone(s, s.key, async (dir) => {
      // Random bytes do not compress: the pack is as large as the file.
      await writeFile(join(dir, 'blob.bin'), randomBytes(1024 * 1024));
      await git(dir, 'add', 'blob.bin');
      await git(dir, 'commit', '-qm', 'A large file');
      const output = await gitFails(dir, 'push', 'origin', 'main');
      t.regex(output, /413|remote end hung up|unexpected disconnect|broken pipe|RPC failed/i, output);
    });
    t.is(await s.state(), before);
    t.true(s.logs.some((line) => line.includes('request body over 262144 bytes, cut off')));
  } finally {
    await s.close();
  }
});

/** pkt-line framing of git's protocol. */
function pktLine(text: string): Buffer {
  const payload = Buffer.from(text, 'latin1');
  return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, '0')), payload]);
}

/** The pack of the commits of HEAD the server lacks, each object stored as is (deflate's level 0). */
async function uncompressedPack(dir: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['-C', dir, '-c', 'pack.compression=0', 'pack-objects', '--stdout', '--revs'],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
    child.stdin!.end('HEAD\n^origin/main\n');
  });
}

/** A receive-pack request as a hand-made client sends it, gzip-compressed, and the answer's status and text. */
async function gzippedPush(s: TestServer, body: Buffer): Promise<{ status: number; text: string }> {
  const reply = await fetch(`${s.url}/git/${s.slug}.git/git-receive-pack`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`ci:${s.key}`).toString('base64')}`,
      'content-type': 'application/x-git-receive-pack-request',
      'content-encoding': 'gzip',
    },
    body,
  });
  return { status: reply.status, text: await reply.text() };
}

test('a gzip-compressed push is held to the git body limit as it unpacks, and one that is no gzip is refused', async (t) => {
  const s = await TestServer.start({ gitBodyLimit: 256 * 1024 });
  try {
    const before = await s.state();
    await withClone(s, s.key, async (dir) => {
      const head = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
      // Two megabytes of zeros, stored: some kilobytes of gzip, unpacked far past the limit.
      await writeFile(join(dir, 'zeros.bin'), Buffer.alloc(2 * 1024 * 1024));
      await git(dir, 'add', 'zeros.bin');
      await git(dir, 'commit', '-qm', 'Zeros');
      const commit = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
      const request = Buffer.concat([
        pktLine(`${head} ${commit} refs/heads/main\0report-status\n`),
        Buffer.from('0000'),
        await uncompressedPack(dir),
      ]);
      const compressed = gzipSync(request);
      t.true(compressed.length < 256 * 1024, `${compressed.length} bytes sent`);
      // Cut off: the connection is closed (receive-pack was stopped), or at least no ref is reported moved.
      const reply = await gzippedPush(s, compressed).catch(() => ({ status: 0, text: '' }));
      t.notRegex(reply.text, /ok refs\/heads\/main/);
      t.true(s.logs.some((line) => line.includes('request body over 262144 bytes, cut off')));
      t.is(await s.state(), before);

      const garbage = await gzippedPush(s, Buffer.from('not gzip at all'));
      t.is(garbage.status, 400, garbage.text);
      t.regex(JSON.parse(garbage.text).error, /^Request body is not the gzip its Content-Encoding says: /);
      t.is(await s.state(), before);
      t.is((await s.get('/healthz')).status, 200);
    });
  } finally {
    await s.close();
  }
});

test('a push of main, a version and a draft whose main moved meanwhile (an API write) changes nothing: every push is atomic', (t) =>
  withServer(async (s) => {
    // Two commits: a clone of depth 1 is shallow, and its push names its shallow commit first.
    await s.post('/api/external/component', [{ name: 'Ledger' }]);
    for (const depth of [[], ['--depth', '1']]) {
      const parent = await mkdtemp(join(tmpdir(), 'c4store-atomic-'));
      try {
        const dir = join(parent, 'model');
        await run('git', ['clone', '-q', ...depth, remote(s, s.key), dir], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
        t.is((await git(dir, 'rev-parse', '--is-shallow-repository')).stdout.trim(), String(depth.length > 0));
        // git runs pre-push after it has read the server's refs and before it sends the pack: the
        // API write lands in between, as one from someone else would while a large pack uploads.
        const write = join(dir, '.git', 'api-write.mjs');
        await writeFile(
          write,
          `await fetch(${JSON.stringify(`${s.url}/api/external/component`)}, { method: 'POST', headers: { authorization: ${JSON.stringify(`Bearer ${s.key}`)}, 'content-type': 'application/json' }, body: JSON.stringify([{ name: 'Meanwhile' }]) });\n`,
        );
        await writeFile(join(dir, '.git', 'hooks', 'pre-push'), `#!/bin/sh\nexec '${process.execPath}' '${write}'\n`, { mode: 0o755 });
        await writeFile(join(dir, 'README.md'), `notes ${depth.length}\n`);
        await git(dir, 'add', 'README.md');
        await git(dir, 'commit', '-qm', 'Notes');
        await git(dir, 'tag', `v${depth.length}`);
        const refsBefore = await s.git('for-each-ref', '--format=%(refname)');
        const output = await gitFails(dir, 'push', 'origin', 'main', `v${depth.length}`, 'HEAD:refs/heads/drafts/notes');
        t.regex(output, /cannot lock ref 'refs\/heads\/main'/, output);
        t.regex(output, /v\d -> v\d \(atomic transaction failed\)/, output);
        t.regex(output, /HEAD -> drafts\/notes \(atomic transaction failed\)/, output);
        // The API's write is main; neither the version nor the draft was made.
        t.is((await s.get('/api/external/history?limit=1')).body[0].summary, 'POST /api/external/component: create 1');
        t.is(await s.git('for-each-ref', '--format=%(refname)'), refsBefore);
        t.is((await s.get('/api/external/drafts')).body.length, 0);
      } finally {
        await rm(parent, { recursive: true, force: true });
      }
    }
    t.is((await run('git', ['--git-dir', s.gitdir, 'fsck', '--full'])).stderr, '');
  }));

test("a partial clone over git's protocol v0 (older clients, protocol.version=0) fetches what a checkout needs, and a commit by its id", (t) =>
  withServer(async (s) => {
    const [ledger] = (await s.post('/api/external/component', [{ name: 'Ledger' }])).body;
    const first = await s.head();
    t.is((await s.post('/api/external/component', [{ id: ledger.id, name: 'Ledger', desc: 'A newer version of its file' }])).status, 200);
    await s.post('/api/external/component', [{ name: 'Payments' }]);
    const parent = await mkdtemp(join(tmpdir(), 'c4store-v0-'));
    try {
      const partial = join(parent, 'p');
      await run('git', ['-c', 'protocol.version=0', 'clone', '-q', '--filter=blob:none', remote(s, s.readerKey), partial]);
      await git(partial, 'config', 'protocol.version', '0');
      await git(partial, 'checkout', '-q', first);
      t.is((await git(partial, 'status', '--porcelain')).stdout, '');
      // A shallow clone fetches a commit of main's history by its id (not a ref's tip).
      const shallow = join(parent, 's');
      await run('git', ['-c', 'protocol.version=0', 'clone', '-q', '--depth', '1', remote(s, s.readerKey), shallow]);
      await git(shallow, '-c', 'protocol.version=0', 'fetch', '-q', 'origin', first);
      t.is((await git(shallow, 'rev-parse', 'FETCH_HEAD')).stdout.trim(), first);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }));

test("a push whose git the server stops (past the git timeout) ends with an error at the pusher's end, not a git waiting forever", async (t) => {
  const s = await TestServer.start({ gitTimeoutMs: 4000 });
  try {
    // receive-pack tells the pusher it is still there (a keepalive) every second of the hook,
    // as it does every 5 s by default: the pusher has read part of an answer when it is stopped.
    await s.git('config', 'receive.keepAlive', '1');
    const before = await s.state();
    await withClone(s, s.key, async (dir) => {
      // A check that never ends, as one of a push too large to check within the timeout.
      await writeFile(join(s.gitdir, 'hooks', 'pre-receive'), '#!/bin/sh\nexec sleep 600\n', { mode: 0o755 });
      // Over git's http.postBuffer (1 MB): the pack goes chunked, as a large push's does.
      await writeFile(join(dir, 'notes.bin'), randomBytes(2 * 1024 * 1024));
      await git(dir, 'add', 'notes.bin');
      await git(dir, 'commit', '-qm', 'Notes');
      const output = await gitFails(dir, 'push', 'origin', 'main');
      t.regex(output, /RPC failed|transfer closed|remote end hung up|unexpected disconnect/, output);
    });
    t.is(await s.state(), before);
    t.true(s.logs.some((line) => line.includes('still running after 4 s, stopped')));
  } finally {
    await s.close();
  }
});

test('a reader key is not offered a push, however the service is named', (t) =>
  withServer(async (s) => {
    // `?service=` given twice: http-backend offers the receive-pack of either.
    for (const query of [
      'service=git-receive-pack',
      'service=git-upload-pack&service=git-receive-pack',
      'service=git-receive-pack&service=git-receive-pack',
    ]) {
      const offered = await fetch(`${s.url}/git/${s.slug}.git/info/refs?${query}`, {
        headers: { authorization: `Bearer ${s.readerKey}` },
      });
      t.is(offered.status, 403, query);
      t.deepEqual(await offered.json(), { error: 'This API key may only read.' });
    }
  }));

test('a gzip-compressed push whose client goes away before its first bytes unpack is answered and logged, not left waiting', async (t) => {
  const s = await TestServer.start();
  try {
    const before = await s.state();
    const request = httpRequest(`${s.url}/git/${s.slug}.git/git-receive-pack`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`ci:${s.key}`).toString('base64')}`,
        'content-type': 'application/x-git-receive-pack-request',
        'content-encoding': 'gzip',
        'transfer-encoding': 'chunked',
      },
    });
    request.on('error', () => {});
    // Half of gzip's ten-byte header: nothing unpacks from it.
    request.write(gzipSync(Buffer.from('0000')).subarray(0, 5));
    // Gone once the server is reading it: in flight beside the scrape that asks.
    const inFlight = async () => (await (await fetch(`${s.url}/metrics`)).text()).match(/^c4store_http_requests_in_flight (\d+)/m)?.[1];
    while ((await inFlight()) !== '2') await new Promise((resolve) => setTimeout(resolve, 10));
    request.destroy();
    // Its handler ends and its line is written; one waiting forever for the rest of the gzip never wrote one.
    const answered = () => s.logs.some((line) => line.includes('"path":"/git/acme.git/git-receive-pack"'));
    while (!answered()) await new Promise((resolve) => setTimeout(resolve, 10));
    t.is(await s.state(), before);
  } finally {
    await s.close();
  }
});

test('a gzip-compressed fetch is held to the git body limit as it unpacks; git fetch, which compresses its requests, still works', async (t) => {
  const s = await TestServer.start({ gitBodyLimit: 256 * 1024 });
  try {
    const main = await s.head();
    // A hundred thousand `have` lines (5 MB) in some kilobytes of gzip: each one upload-pack looks up.
    const have = pktLine(`have ${'1'.repeat(40)}\n`);
    const request = Buffer.concat([
      pktLine(`want ${main} multi_ack_detailed side-band-64k ofs-delta\n`),
      Buffer.from('0000'),
      Buffer.concat(Array.from({ length: 100_000 }, () => have)),
      pktLine('done\n'),
    ]);
    const compressed = gzipSync(request);
    t.true(compressed.length < 256 * 1024, `${compressed.length} bytes sent`);
    const reply = await fetch(`${s.url}/git/${s.slug}.git/git-upload-pack`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`ci:${s.readerKey}`).toString('base64')}`,
        'content-type': 'application/x-git-upload-pack-request',
        'content-encoding': 'gzip',
      },
      body: compressed,
    })
      .then((r) => r.arrayBuffer())
      .catch(() => undefined);
    t.log(`answer: ${reply === undefined ? 'cut' : `${reply.byteLength} bytes`}`);
    t.true(s.logs.some((line) => line.includes('git-upload-pack: request body over 262144 bytes, cut off')));

    // git compresses a fetch's request over a kilobyte: a clone forty commits apart from main sends its haves so.
    await withClone(s, s.readerKey, async (dir) => {
      for (let i = 0; i < 40; i++) await git(dir, 'commit', '-q', '--allow-empty', '-m', `local ${i}`);
      await s.post('/api/external/component', [{ name: 'Fetched' }]);
      await git(dir, 'fetch', '-q', 'origin');
      t.is((await git(dir, 'rev-parse', 'origin/main')).stdout.trim(), await s.head());
    });
    t.is((await s.get('/healthz')).status, 200);
  } finally {
    await s.close();
  }
});

test('git archive, dumb HTTP and any other git service or path are answered in the contract format; the smart protocol alone is served', (t) =>
  withServer(async (s) => {
    const base = `${s.url}/git/${s.slug}.git`;
    const auth = { authorization: `Basic ${Buffer.from(`ci:${s.readerKey}`).toString('base64')}` };
    const archive =
      /^git archive --remote is not served here: clone the repository \(git clone .*\/git\/acme\.git\) and run git archive in the clone, or read the model through the API's exports/;
    const dumb = /^Only git's smart HTTP protocol is served here/;
    const cases: Array<[string, string, RegExp]> = [
      ['GET', 'info/refs?service=git-upload-archive', archive],
      ['POST', 'git-upload-archive', archive],
      [
        'GET',
        'info/refs?service=git-frobnicate',
        /^git's service 'git-frobnicate' is not served here: git-upload-pack \(clone, fetch\) and git-receive-pack \(push\) are\.$/,
      ],
      ['GET', 'info/refs', dumb],
      ['GET', 'HEAD', dumb],
      ['GET', 'objects/info/packs', dumb],
      ['GET', 'objects/info/alternates', dumb],
      ['GET', 'config', dumb],
    ];
    for (const headers of [auth, {}]) {
      for (const [method, path, error] of cases) {
        const reply = await fetch(`${base}/${path}`, { method, headers });
        t.is(reply.status, 404, `${method} ${path}`);
        t.regex(reply.headers.get('content-type') ?? '', /^application\/json/, `${method} ${path}`);
        t.regex(((await reply.json()) as { error: string }).error, error, `${method} ${path}`);
      }
    }
    // git itself is told in words (text/plain, which it shows), not an empty 403.
    const told = await fetch(`${base}/info/refs?service=git-upload-archive`, { headers: { ...auth, 'user-agent': 'git/2.39.5' } });
    t.is(told.status, 404);
    t.regex(await told.text(), archive);
    // The smart protocol still serves git: a clone with the reader key works.
    await withClone(s, s.readerKey, async (dir) => {
      t.is((await git(dir, 'rev-parse', 'HEAD')).stdout.trim(), await s.head());
    });
  }));

test('git push -o (push options, as GitHub and GitLab take them) is accepted; the options are ignored, which the pusher is told', (t) =>
  withServer(async (s) => {
    await withClone(s, s.key, async (dir) => {
      await writeFile(join(dir, 'notes.md'), 'Pushed with options\n');
      await git(dir, 'add', 'notes.md');
      await git(dir, 'commit', '-qm', 'Notes');
      const pushed = await git(dir, 'push', '-o', 'ci.skip', '-o', 'merge_request.create', 'origin', 'main');
      t.regex(pushed.stderr, /remote: c4store: push options are not used here and were ignored: ci\.skip, merge_request\.create/);
      t.is(await s.head(), (await git(dir, 'rev-parse', 'HEAD')).stdout.trim());
      // A push without options says nothing of them.
      await writeFile(join(dir, 'notes.md'), 'Pushed without\n');
      await git(dir, 'commit', '-qam', 'More notes');
      t.notRegex((await git(dir, 'push', 'origin', 'main')).stderr, /push options/);
      t.is(await s.head(), (await git(dir, 'rev-parse', 'HEAD')).stdout.trim());
    });
  }));

test('a commit no ref reaches any more (a draft force-pushed away) is refused to a fetch by its id over protocol v2 as over v0; its files by id are served over both, as git serves them', (t) =>
  withServer(async (s) => {
    await withClone(s, s.key, async (dir) => {
      const base = await s.head();
      await s.post('/api/external/component', [{ name: 'Ledger' }]);
      await git(dir, 'switch', '-qc', 'drafts/gone');
      await writeFile(join(dir, 'notes.md'), 'A draft later rewritten\n');
      await git(dir, 'add', 'notes.md');
      await git(dir, 'commit', '-qm', 'Draft notes');
      const dropped = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
      await git(dir, 'push', '-q', 'origin', 'drafts/gone');
      await git(dir, 'reset', '-q', '--hard', 'origin/main');
      await git(dir, 'commit', '-q', '--allow-empty', '-m', 'Draft, rewritten');
      await git(dir, 'push', '-q', '-f', 'origin', 'drafts/gone');
      t.is((await s.git('for-each-ref', '--contains', dropped)).trim(), '');
      // A clone that never saw it asks for it by id.
      const parent = await mkdtemp(join(tmpdir(), 'c4store-unreachable-'));
      try {
        const fresh = join(parent, 'f');
        await run('git', ['clone', '-q', remote(s, s.readerKey), fresh]);
        const v0 = await gitFails(fresh, '-c', 'protocol.version=0', 'fetch', 'origin', dropped);
        t.regex(v0, /upload-pack: not our ref/, v0);
        // Its file, by id (as a partial clone asks for what a checkout needs): git's v0 check looks at commits only.
        const partial = join(parent, 'p');
        await run('git', ['-c', 'protocol.version=0', 'clone', '-q', '--filter=blob:none', remote(s, s.readerKey), partial]);
        await git(partial, 'config', 'protocol.version', '0');
        const blob = (await s.git('rev-parse', `${dropped}:notes.md`)).trim();
        t.is((await git(partial, 'cat-file', '-p', blob)).stdout, 'A draft later rewritten\n');
        // Protocol v2 (git's default) the same: upload-pack would take it, the server refuses it.
        const v2 = await gitFails(fresh, '-c', 'protocol.version=2', 'fetch', 'origin', dropped);
        t.regex(v2, /upload-pack: not our ref/, v2);
        await gitFails(fresh, '-c', 'protocol.version=2', 'cat-file', '-e', dropped);
        const partial2 = join(parent, 'p2');
        await run('git', ['-c', 'protocol.version=2', 'clone', '-q', '--filter=blob:none', remote(s, s.readerKey), partial2]);
        t.is((await git(partial2, '-c', 'protocol.version=2', 'cat-file', '-p', blob)).stdout, 'A draft later rewritten\n');
        // What a ref reaches is still fetched by id over v2: an older commit of main into a shallow clone.
        const shallow = join(parent, 's');
        await run('git', ['-c', 'protocol.version=2', 'clone', '-q', '--depth', '1', remote(s, s.readerKey), shallow]);
        await git(shallow, '-c', 'protocol.version=2', 'fetch', '-q', 'origin', base);
        t.is((await git(shallow, 'rev-parse', 'FETCH_HEAD')).stdout.trim(), base);
      } finally {
        await rm(parent, { recursive: true, force: true });
      }
    });
  }));
