import test from 'ava';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { KeyStore, KEYS_FILE_NAME } from '../src/store/keys.js';

const execFileAsync = promisify(execFile);
const projectRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

const createdDirs: string[] = [];
test.after.always(async () => {
  await Promise.all(createdDirs.map((dir) => fsp.rm(dir, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-keys-'));
  createdDirs.push(dir);
  return dir;
}

test('create, verify, list and revoke', async (t) => {
  const store = new KeyStore(await dataDir());
  const { key, record } = await store.create('demo');
  t.regex(key, /^c4s_[A-Za-z0-9_-]{43}$/);
  t.like(record, { org: 'demo', label: 'api', role: 'editor' });
  t.regex(record.id, /^[0-9a-f]{16}$/, 'never starts with - (it would read as a command-line option)');
  t.is(record.revoked, undefined);
  t.false(Number.isNaN(Date.parse(record.created)));

  t.deepEqual(await store.verify(key), record);
  t.is(await store.verify(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`), null);
  t.is(await store.verify('c4s_short'), null);
  t.is(await store.verify(''), null);

  const other = await store.create('other', { label: 'ci' });
  t.deepEqual(
    (await store.list('demo')).map((r) => r.id),
    [record.id],
  );
  t.deepEqual(
    (await store.list('other')).map((r) => r.label),
    ['ci'],
  );

  await t.throwsAsync(store.revoke('other', record.id), { message: /no API key with id/ });
  await t.throwsAsync(store.revoke('demo', 'nope'), { message: /no API key with id/ });
  const revoked = await store.revoke('demo', record.id);
  t.truthy(revoked.revoked);
  t.is(await store.verify(key), null);
  t.deepEqual(await store.verify(other.key), other.record);
  t.truthy((await store.list('demo'))[0]!.revoked, 'revoked keys stay listed');
});

test('reader keys carry their role; unknown roles are refused', async (t) => {
  const store = new KeyStore(await dataDir());
  const { key } = await store.create('demo', { label: 'dashboard', role: 'reader' });
  t.like(await store.verify(key), { role: 'reader', label: 'dashboard' });
  await t.throwsAsync(store.create('demo', { role: 'admin' as never }), { message: /Unknown role/ });
  // A label is a commit author and a column of `key list`: no line breaks, tabs or terminal escapes.
  for (const label of ['two\nlines', 'a\tb', 'red\u001b[31m', 'nul\u0000']) {
    await t.throwsAsync(store.create('demo', { label }), {
      message: 'A key label must not contain control characters (line breaks, tabs, escapes).',
    });
  }
  // Nor a bidirectional control: the commit author's name (git log) and `key list` would show it reordered.
  for (const label of ['ci\u202egnp.exe', 'a\u2066b', 'mark\u200f']) {
    await t.throwsAsync(store.create('demo', { label }), {
      message:
        'A key label must not contain bidirectional controls (U+202E and the like): they show it in another order than its characters.',
    });
  }
  // Other format characters are text: an emoji sequence joins with U+200D.
  t.like(await store.create('demo', { label: 'team \u{1F468}\u200D\u{1F469}' }), { record: { label: 'team \u{1F468}\u200D\u{1F469}' } });
});

test('keys.yaml is mode 0600 and holds hashes, never keys', async (t) => {
  const dir = await dataDir();
  const store = new KeyStore(dir);
  const created = [await store.create('demo'), await store.create('demo', { role: 'reader' })];
  const file = path.join(dir, KEYS_FILE_NAME);
  t.is((await fsp.stat(file)).mode & 0o777, 0o600);
  const text = await fsp.readFile(file, 'utf8');
  const stored = (parse(text) as { keys: Array<Record<string, string>> }).keys;
  for (const { key, record } of created) {
    t.false(text.includes(key));
    t.false(text.includes(key.slice(4)));
    t.is(stored.find((entry) => entry.id === record.id)!.hash, record.hash);
  }
  t.deepEqual(Object.keys(stored[0]!), ['id', 'org', 'label', 'role', 'hash', 'created']);
  // Besides keys.yaml only the key of this process's lock (src/store/lock.ts), released: no temp or lock files left behind.
  const [keysFile, ...rest] = (await fsp.readdir(dir)).sort();
  t.is(keysFile, KEYS_FILE_NAME);
  t.is(rest.length, 1);
  t.regex(rest[0]!, new RegExp(`^${KEYS_FILE_NAME}\\.lock\\.holder-${process.pid}-[0-9a-f]{8}$`));
  t.is((await fsp.stat(path.join(dir, rest[0]!))).nlink, 1, 'the lock is released');
});

test('a second KeyStore on the same directory sees a revoke at once', async (t) => {
  const dir = await dataDir();
  const server = new KeyStore(dir);
  const cli = new KeyStore(dir);
  const { key, record } = await cli.create('demo');
  t.truthy(await server.verify(key), 'a key created elsewhere works at once');
  await cli.revoke('demo', record.id);
  t.is(await server.verify(key), null);
});

test('a revoke from another process takes effect at once', async (t) => {
  const dir = await dataDir();
  const server = new KeyStore(dir);
  const { key, record } = await server.create('demo');
  t.truthy(await server.verify(key));
  const script = `import { KeyStore } from ${JSON.stringify(path.join(projectRoot, 'src/store/keys.ts'))};
const [dir, id] = process.argv.slice(-2);
await new KeyStore(dir).revoke('demo', id);`;
  await execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir, record.id], { cwd: projectRoot });
  t.is(await server.verify(key), null);
});

test('concurrent creates from two instances and two processes lose nothing', async (t) => {
  const dir = await dataDir();
  const a = new KeyStore(dir);
  const b = new KeyStore(dir);
  const script = `import { KeyStore } from ${JSON.stringify(path.join(projectRoot, 'src/store/keys.ts'))};
const [dir, name] = process.argv.slice(-2);
const store = new KeyStore(dir);
await Promise.all(Array.from({ length: 10 }, (_, i) => store.create('demo', { label: name + i })));`;
  const inProcess = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).create('demo', { label: `local${i}` })));
  await Promise.all(
    ['p', 'q'].map((name) =>
      execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir, name], { cwd: projectRoot }),
    ),
  );
  const listed = await new KeyStore(dir).list('demo');
  t.is(listed.length, 40);
  t.is(new Set(listed.map((r) => r.id)).size, 40);
  for (const { key } of inProcess) t.truthy(await a.verify(key));
});

test('a keys.yaml written before revocations came first is rewritten in that order when a server starts, keys unchanged', async (t) => {
  const dir = await dataDir();
  const store = new KeyStore(dir);
  const { key: revokedKey, record } = await store.create('demo', { label: 'old' });
  await store.revoke('demo', record.id);
  const file = path.join(dir, KEYS_FILE_NAME);
  // As an earlier version wrote it: revoked last.
  const revoked = parse(await fsp.readFile(file, 'utf8')).keys[0];
  const { revoked: when, ...rest } = revoked;
  await fsp.writeFile(
    file,
    `keys:\n${Object.entries({ ...rest, revoked: when })
      .map(([k, v], i) => `${i === 0 ? '  - ' : '    '}${k}: ${v}`)
      .join('\n')}\n`,
    { mode: 0o600 },
  );
  t.true((await fsp.readFile(file, 'utf8')).trimEnd().endsWith(`revoked: ${when}`));
  const { startServer } = await import('../src/server.js');
  const server = await startServer({ dataDir: dir, port: 0, log: () => {} });
  t.teardown(() => server.close());
  const text = await fsp.readFile(file, 'utf8');
  t.true(text.indexOf('revoked:') < text.indexOf('hash:'), text);
  t.deepEqual(
    parse(text).keys,
    [revoked].map(({ id, revoked: r, ...others }) => ({ id, revoked: r, ...others })),
  );
  t.is(await new KeyStore(dir).verify(revokedKey), null);
});

test('a malformed keys.yaml is an error, not an empty key list', async (t) => {
  const dir = await dataDir();
  await fsp.writeFile(path.join(dir, KEYS_FILE_NAME), 'keys:\n  - id: x\n');
  const store = new KeyStore(dir);
  await t.throwsAsync(store.verify(`c4s_${'A'.repeat(43)}`), { message: /malformed/ });
  await t.throwsAsync(store.create('demo'), { message: /malformed/ });
  t.is(await fsp.readFile(path.join(dir, KEYS_FILE_NAME), 'utf8'), 'keys:\n  - id: x\n');
});

test('keys.yaml cut short anywhere never makes a revoked key valid again', async (t) => {
  const dir = await dataDir();
  const store = new KeyStore(dir);
  const { key: kept } = await store.create('demo', { label: 'kept' });
  const { key: revokedKey, record } = await store.create('demo', { label: 'revoked last' });
  await store.revoke('demo', record.id);
  const file = path.join(dir, KEYS_FILE_NAME);
  const whole = await fsp.readFile(file, 'utf8');
  const lastRecord = whole.lastIndexOf('  - id:');
  t.true(whole.indexOf('revoked:', lastRecord) < whole.indexOf('hash:', lastRecord), 'the revocation precedes the hash');

  let refusedAsDamaged = 0;
  for (let cut = lastRecord; cut < whole.length; cut++) {
    await fsp.writeFile(file, whole.slice(0, cut));
    const reader = new KeyStore(dir);
    try {
      t.is(await reader.verify(revokedKey), null, `cut at ${cut}: ${JSON.stringify(whole.slice(lastRecord, cut))}`);
      t.truthy(await reader.verify(kept));
    } catch (error) {
      t.regex((error as Error).message, /malformed|must be a list|keys\.yaml/);
      refusedAsDamaged++;
    }
  }
  t.true(refusedAsDamaged > 0);
});

test('a server over a damaged keys.yaml or share-links.yaml answers 503 naming the file, /healthz too; repaired, it serves', async (t) => {
  const { TestServer } = await import('./support/server.js');
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const keysFile = path.join(s.dataDir, KEYS_FILE_NAME);
  const keys = await fsp.readFile(keysFile, 'utf8');
  await fsp.writeFile(keysFile, keys.slice(0, 150));
  const refused = await s.get('/api/external/tag');
  t.is(refused.status, 503);
  t.regex(
    refused.body.error,
    /^The data directory's keys\.yaml cannot be read: .+\. Requests that need it are refused until it is repaired\.$/,
  );
  t.false(refused.body.error.includes(s.dataDir), 'the data directory stays out of answers');
  const health = await s.get('/healthz', { key: null });
  t.is(health.status, 503);
  t.deepEqual(health.body, refused.body);
  // Empty, cut after `keys:`, plain text: damage all the same, never "no keys".
  for (const damaged of ['', 'keys:\n', 'this is garbage\n', '- a list\n']) {
    await fsp.writeFile(keysFile, damaged);
    t.is((await s.get('/api/external/tag')).status, 503, JSON.stringify(damaged));
  }
  await fsp.writeFile(keysFile, keys.slice(0, 150));
  t.is(await fsp.readFile(keysFile, 'utf8'), keys.slice(0, 150), 'left as it was');
  await fsp.writeFile(keysFile, keys);
  t.is((await s.get('/api/external/tag')).status, 200);
  t.is((await s.get('/healthz', { key: null })).status, 200);

  const made = await s.post('/api/external/diagrams', { id: 'ctx', name: 'Context', level: 'C1' });
  t.is(made.status, 201, made.text);
  const link = await s.post('/api/external/diagrams/ctx/share-links', {});
  t.is(link.status, 201, link.text);
  const linksFile = path.join(s.dataDir, 'share-links.yaml');
  for (const damaged of ['links: [', 'links:\n', 'garbage\n']) {
    await fsp.writeFile(linksFile, damaged);
    const shared = await fetch(`${link.body.url}.svg`);
    t.is(shared.status, 503, JSON.stringify(damaged));
    t.regex(await shared.text(), /share-links\.yaml cannot be read/);
    t.is((await s.post('/api/external/diagrams/ctx/share-links', {})).status, 503, 'and nothing is written over it');
    t.is(await fsp.readFile(linksFile, 'utf8'), damaged);
  }
});
