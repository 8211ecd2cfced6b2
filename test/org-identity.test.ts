/**
 * Issue 16 point 6: an organization is more than its slug. Each repository gets an identity
 * when it is created (git config `c4store.orgId`, and in each key record); keys of another
 * identity are refused, and nothing cached from an organization removed and created again
 * under the same slug is served for the new one.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import YAML from 'yaml';
import { startServer } from '../src/server.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { identityIn } from '../src/store/org-identity.js';
import { run, TestServer, withServer } from './support/server.js';

const AUTHOR = { name: 'test', email: 'test@test' };

async function gitConfig(gitdir: string, ...args: string[]): Promise<string> {
  return (await run('git', ['--git-dir', gitdir, 'config', ...args])).stdout.trim();
}

async function keyRecords(dataDir: string): Promise<Array<{ org: string; orgId?: string }>> {
  return (YAML.parse(await readFile(join(dataDir, 'keys.yaml'), 'utf8')) as { keys: Array<{ org: string; orgId?: string }> }).keys;
}

test('the identity is in the repository config (as git reads it) and in every key made for it', async (t) => {
  await withServer(async (s) => {
    const identity = await gitConfig(s.gitdir, '--get', 'c4store.orgId');
    t.regex(identity, /^[0-9a-f-]{36}$/);
    const records = await keyRecords(s.dataDir);
    t.is(records.length, 2);
    for (const record of records) t.is(record.orgId, identity);
    t.is((await s.get('/api/external/tag')).status, 200);
    // git itself still reads the config, and fsck is clean.
    t.is(await gitConfig(s.gitdir, '--get', 'core.bare'), 'true');
    await t.notThrowsAsync(s.git('fsck', '--strict'));
  });
});

test('an organization removed and created again under its slug: old keys get 401, old ?at= snapshots are gone', async (t) => {
  await withServer(async (s) => {
    t.is((await s.post('/api/external/tag', [{ name: 'Old secret', color: 'red' }])).status, 200);
    const first = await s.head();
    t.is((await s.post('/api/external/tag', [{ name: 'Old second', color: 'blue' }])).status, 200);
    // Kept by the running server: ?at= of an earlier commit.
    const kept = await s.get(`/api/external/tag?at=${first}`);
    t.is(kept.status, 200);
    t.is(kept.body.length, 1);

    await rm(s.gitdir, { recursive: true, force: true });
    await new Orgs(s.dataDir).create(s.slug, { name: 'New owner', author: AUTHOR });
    const { key: newKey } = await new KeyStore(s.dataDir).create(s.slug, { label: 'new owner' });

    for (const key of [s.key, s.readerKey]) {
      for (const path of ['/api/external/tag', `/api/external/tag?at=${first}`, '/api/external/model']) {
        const reply = await s.get(path, { key });
        t.is(reply.status, 401, path);
        t.deepEqual(reply.body, { error: 'Invalid API key.' });
      }
      const write = await s.post('/api/external/tag', [{ name: 'Intruder', color: 'red' }], { key });
      t.is(write.status, 401);
    }
    t.is(await s.commitCount(), 1);

    const mine = await s.get('/api/external/tag', { key: newKey });
    t.is(mine.status, 200);
    t.deepEqual(mine.body, []);
    const old = await s.get(`/api/external/tag?at=${first}`, { key: newKey });
    t.is(old.status, 404);
    t.deepEqual(old.body, { error: `Commit '${first}' does not exist.` });
  });
});

test('a repository and keys from before identities are adopted when a server starts', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'c4store-identity-'));
  try {
    await new Orgs(dataDir).create('acme', { author: AUTHOR });
    const { key } = await new KeyStore(dataDir).create('acme', { label: 'old pipeline' });
    await new Orgs(dataDir).create('other', { author: AUTHOR });
    const { key: otherKey } = await new KeyStore(dataDir).create('other', { label: 'other pipeline' });
    // As an older version left them: no c4store.orgId in the configs, none in keys.yaml (nor its seal).
    const gitdir = join(dataDir, 'orgs', 'acme.git');
    for (const slug of ['acme', 'other']) await gitConfig(join(dataDir, 'orgs', `${slug}.git`), '--unset', 'c4store.orgId');
    const keysFile = join(dataDir, 'keys.yaml');
    await writeFile(keysFile, (await readFile(keysFile, 'utf8')).replace(/^# c4store seal: .*\n/, '').replace(/^ {4}orgId: .*\n/gm, ''));
    t.true((await keyRecords(dataDir)).every((record) => record.orgId === undefined));

    const server = await startServer({ dataDir, port: 0, log: () => {} });
    try {
      const identity = await gitConfig(gitdir, '--get', 'c4store.orgId');
      t.regex(identity, /^[0-9a-f-]{36}$/);
      const records = await keyRecords(dataDir);
      t.is(records.find((record) => record.org === 'acme')!.orgId, identity);
      t.is(
        records.find((record) => record.org === 'other')!.orgId,
        await gitConfig(join(dataDir, 'orgs', 'other.git'), '--get', 'c4store.orgId'),
      );
      for (const presented of [key, otherKey]) {
        const reply = await fetch(`${server.url}/api/external/tag`, { headers: { authorization: `Bearer ${presented}` } });
        t.is(reply.status, 200);
      }
    } finally {
      await server.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a key made for a slug with no organization opens nothing, even once one is created under it', async (t) => {
  const s = await TestServer.start();
  try {
    const { key } = await new KeyStore(s.dataDir).create('later', { label: 'too early' });
    await new Orgs(s.dataDir).create('later', { author: AUTHOR });
    const reply = await s.get('/api/external/tag', { key });
    t.is(reply.status, 401);
    t.deepEqual(reply.body, { error: 'Invalid API key.' });
  } finally {
    await s.close();
  }
});

test('the config reader agrees with git on case, sections and the last value', (t) => {
  t.is(identityIn('[core]\n\tbare = true\n[C4Store]\n\tORGID = a\n'), 'a');
  t.is(identityIn('[c4store]\n\torgId = a\n[c4store]\n\torgid = b ; comment\n'), 'b');
  t.is(identityIn('[c4store "sub"]\n\torgId = a\n'), undefined);
  t.is(identityIn('[core]\n\torgId = a\n'), undefined);
});

test('an organization removed while the server runs: its keys get 401 and its ?at= snapshots are dropped', async (t) => {
  await withServer(async (s) => {
    t.is((await s.post('/api/external/tag', [{ name: 'First', color: 'red' }])).status, 200);
    const first = await s.head();
    t.is((await s.post('/api/external/tag', [{ name: 'Second', color: 'red' }])).status, 200);
    t.is((await s.get(`/api/external/model?at=${first}`)).status, 200);
    const snapshots = s.server.orgs.snapshots;
    t.is(snapshots.size, 1);
    t.true(snapshots.bytes > 0);
    await rm(s.gitdir, { recursive: true, force: true });
    const reply = await s.get(`/api/external/model?at=${first}`);
    t.is(reply.status, 401);
    t.deepEqual(reply.body, { error: 'Invalid API key.' });
    t.is(snapshots.size, 0);
    t.is(snapshots.bytes, 0);
  });
});

test("an organization created again under its slug lists none of the old one's share links, and cannot revoke them", async (t) => {
  await withServer(async (s) => {
    const [d] = (await s.post('/api/external/diagram', [{ ref: 'd', name: 'Old plans', level: 'C1' }])).body;
    const made = await s.request('POST', `/api/external/diagram/${d.id}/share-links`, { body: { label: 'Old partner wiki' } });
    t.is(made.status, 201);

    await rm(s.gitdir, { recursive: true, force: true });
    await new Orgs(s.dataDir).create(s.slug, { name: 'New owner', author: AUTHOR });
    const { key: newKey } = await new KeyStore(s.dataDir).create(s.slug, { label: 'new owner' });

    const listed = await s.get('/api/external/share-links', { key: newKey });
    t.is(listed.status, 200);
    t.deepEqual(listed.body, [], "the old organization's labels, creators and diagram ids are not the new one's");
    t.is((await s.get(`/api/external/share-links/${made.body.id}`, { key: newKey })).status, 404);
    t.is((await s.request('DELETE', `/api/external/share-links/${made.body.id}`, { key: newKey })).status, 404);
  });
});

test('a damaged repository among the organizations (a file, an empty folder) does not keep the server from serving the others', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'c4store-identity-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  await new Orgs(dataDir).create('acme', { author: AUTHOR });
  const { key } = await new KeyStore(dataDir).create('acme', { label: 'pipeline' });
  // What a restore cut short, or a hand, leaves beside it.
  await writeFile(join(dataDir, 'orgs', 'stray.git'), 'not a repository\n');
  await mkdir(join(dataDir, 'orgs', 'empty.git'));
  const logs: string[] = [];
  const server = await startServer({ dataDir, port: 0, log: (line) => logs.push(line) });
  try {
    const reply = await fetch(`${server.url}/api/external/tag`, { headers: { authorization: `Bearer ${key}` } });
    t.is(reply.status, 200);
    for (const slug of ['stray', 'empty']) {
      t.true(
        logs.some((line) => line.includes(`organization '${slug}': pushes to it cannot be checked`)),
        logs.join('\n'),
      );
    }
  } finally {
    await server.close();
  }
});
