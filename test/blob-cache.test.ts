import test from 'ava';
import { SCHEMA_FILES } from '../src/editor/schemas.js';
import { execFileSync, spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resourcePath, serialize } from '../src/model/files.js';
import { newId } from '../src/model/ids.js';
import { MODEL_CACHE_FILE } from '../src/service/model-cache.js';
import { Orgs } from '../src/service/orgs.js';
import { BLOB_CACHE_FILE, readBlobCache } from '../src/store/blob-cache.js';
import { KeyStore } from '../src/store/keys.js';
import { readLooseBlobs } from '../src/store/loose-reader.js';
import { Repo, type FileChange } from '../src/store/repo.js';
import { startServer } from '../src/server.js';
import { serveProcess } from './support/process.js';
import { withServer } from './support/server.js';

const author = { name: 'api', email: 'api@demo' };
const createdDirs: string[] = [];
test.after.always(async () => {
  await Promise.all(createdDirs.map((dir) => fsp.rm(dir, { recursive: true, force: true })));
});

async function repoWithFiles(count: number): Promise<{ repo: Repo; files: Map<string, string> }> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-test-'));
  createdDirs.push(dir);
  const files: FileChange[] = Array.from({ length: count }, (_, n) => ({ path: `files/${n}.yaml`, content: `n: ${n}\n` }));
  const repo = await Repo.init(path.join(dir, 'demo.git'), { files, author, message: 'Files' });
  return { repo, files: await repo.listFiles((await repo.readHead())!) };
}

function git(gitdir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Waits for the cache file that readBlobs writes in the background. */
async function cacheFile(gitdir: string): Promise<Buffer> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    try {
      return await fsp.readFile(path.join(gitdir, BLOB_CACHE_FILE));
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  throw new Error('no blob cache was written');
}

async function contentsOf(pending: Promise<Map<string, Promise<Buffer>>>, files: Map<string, string>): Promise<string[]> {
  const blobs = await pending;
  return Promise.all([...files.values()].map(async (oid) => (await blobs.get(oid)!).toString('utf8')));
}

test('readBlobs writes the cache after a cold read, then reads from it; git ignores the file', async (t) => {
  const { repo, files } = await repoWithFiles(300);
  const expected = Array.from({ length: 300 }, (_, n) => `n: ${n}\n`).sort();
  t.deepEqual((await contentsOf(repo.readBlobs(files.values()), files)).sort(), expected);
  await cacheFile(repo.gitdir);
  t.is((await readBlobCache(repo.gitdir)).size, 300);

  // Proof that the cache answers: a loose object removed behind our back is still read.
  const someOid = files.get('files/7.yaml')!;
  await fsp.rm(path.join(repo.gitdir, 'objects', someOid.slice(0, 2), someOid.slice(2)));
  t.deepEqual((await contentsOf(repo.readBlobs(files.values()), files)).sort(), expected);
  await t.throwsAsync(repo.readBlob(someOid));
});

test('git fsck is clean and git clone carries no cache when the cache file is present', async (t) => {
  const { repo, files } = await repoWithFiles(260);
  await repo.readBlobs(files.values());
  await cacheFile(repo.gitdir);
  t.notThrows(() => git(repo.gitdir, 'fsck', '--full', '--strict', '--no-dangling'));
  const clone = path.join(path.dirname(repo.gitdir), 'clone');
  execFileSync('git', ['clone', '--quiet', repo.gitdir, clone]);
  const listing = execFileSync('git', ['-C', clone, 'ls-files'], { encoding: 'utf8' }).trim().split('\n');
  t.is(listing.length, 260);
  await t.throwsAsync(fsp.access(path.join(clone, '.git', BLOB_CACHE_FILE)));
});

test('a cache whose entries do not match their ids, or that is cut short or foreign, is not believed', async (t) => {
  const { repo, files } = await repoWithFiles(300);
  const expected = await contentsOf(repo.readBlobs(files.values()), files);
  const data = await cacheFile(repo.gitdir);
  const cachePath = path.join(repo.gitdir, BLOB_CACHE_FILE);

  // Same length, other bytes: "n: 5" becomes "n: 6" inside the cache.
  const forged = Buffer.from(data);
  const at = forged.indexOf('n: 5\n');
  forged[at + 3] = '6'.charCodeAt(0);
  await fsp.writeFile(cachePath, forged);
  t.is((await readBlobCache(repo.gitdir)).size, 299);
  t.deepEqual(await contentsOf(repo.readBlobs(files.values()), files), expected);

  await fsp.writeFile(cachePath, data.subarray(0, Math.floor(data.length / 2)));
  const half = await readBlobCache(repo.gitdir);
  t.true(half.size > 100 && half.size < 200);
  t.deepEqual(await contentsOf(repo.readBlobs(files.values()), files), expected);

  await fsp.writeFile(cachePath, 'not a cache at all\n');
  t.is((await readBlobCache(repo.gitdir)).size, 0);
  t.deepEqual(await contentsOf(repo.readBlobs(files.values()), files), expected);
});

test('a small read neither reads nor writes a cache', async (t) => {
  const { repo, files } = await repoWithFiles(20);
  t.is((await repo.readBlobs(files.values())).size, 20);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await t.throwsAsync(fsp.access(path.join(repo.gitdir, BLOB_CACHE_FILE)));
});

test('a restarted server loads the same model from the cache, and the right one from a forged cache', async (t) => {
  await withServer(async (s) => {
    const components = Array.from({ length: 300 }, (_, n) => ({ ref: `c-${n}`, name: `Service ${n}`, desc: `Part ${n}` }));
    t.is((await s.post('/api/external/model', { components, diagrams: [] })).status, 200);
    const before = (await s.get('/api/external/component')).text;

    const restarted = async () => {
      const server = await startServer({ dataDir: s.dataDir, port: 0, log: () => {} });
      try {
        const response = await fetch(`${server.url}/api/external/component`, { headers: { authorization: `Bearer ${s.key}` } });
        return await response.text();
      } finally {
        await server.close();
      }
    };
    t.is(await restarted(), before);
    const data = await cacheFile(s.gitdir);
    t.true((await readBlobCache(s.gitdir)).size >= 300);

    const forged = Buffer.from(data);
    const at = forged.indexOf('Part 42\n');
    forged[at + 'Part 4'.length] = '3'.charCodeAt(0);
    await fsp.writeFile(path.join(s.gitdir, BLOB_CACHE_FILE), forged);
    t.is(await restarted(), before);
    t.notThrows(() => git(s.gitdir, 'fsck', '--full', '--strict', '--no-dangling'));
  });
});

test('a bulk read of over a thousand loose blobs goes through the worker thread, in order and whole', async (t) => {
  const { repo, files } = await repoWithFiles(1100);
  const expected = Array.from({ length: 1100 }, (_, n) => `n: ${n}\n`);
  const byPath = await contentsOf(repo.readBlobs(files.values()), files);
  t.deepEqual([...byPath].sort(), [...expected].sort());
  t.is(byPath.length, 1100);
});

test('blobs the worker cannot read as loose (packed by git gc, or corrupt) are read, or refused, on the main thread', async (t) => {
  const { repo, files } = await repoWithFiles(1100);
  git(repo.gitdir, 'gc', '--quiet');
  const expected = Array.from({ length: 1100 }, (_, n) => `n: ${n}\n`).sort();
  t.deepEqual((await contentsOf(repo.readBlobs(files.values()), files)).sort(), expected);

  // A corrupt loose copy of one blob: its promise rejects, the others still arrive.
  await cacheFile(repo.gitdir);
  await fsp.rm(path.join(repo.gitdir, BLOB_CACHE_FILE));
  const oid = files.get('files/3.yaml')!;
  const dir = path.join(repo.gitdir, 'objects', oid.slice(0, 2));
  await fsp.mkdir(dir, { recursive: true });
  await fsp.writeFile(path.join(dir, oid.slice(2)), 'not zlib at all');
  const pending = await repo.readBlobs(files.values());
  await t.throwsAsync(pending.get(oid)!);
  t.is((await pending.get(files.get('files/4.yaml')!)!).toString(), 'n: 4\n');
});

test('the loose reader worker hands over blobs, and reports what is not a loose blob', async (t) => {
  const { repo, files } = await repoWithFiles(10);
  const oids = [...files.values()];
  const head = (await repo.readHead())!;
  const found = new Map<string, string>();
  const absent: string[] = [];
  const missingOid = '0'.repeat(40);
  await readLooseBlobs(
    path.join(repo.gitdir, 'objects'),
    [...oids, missingOid, head],
    (oid, content) => {
      found.set(oid, content.toString('utf8'));
    },
    (oid) => absent.push(oid),
  );
  t.deepEqual([...found.values()].sort(), Array.from({ length: 10 }, (_, n) => `n: ${n}\n`).sort());
  t.deepEqual(absent.sort(), [missingOid, head].sort());
});

test('a built server (dist/) cold-loads 1,200 components through the worker and the cache, the same each time', async (t) => {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-test-'));
  createdDirs.push(dataDir);
  const org = await new Orgs(dataDir).create('big', { author });
  const { key } = await new KeyStore(dataDir).create('big', { label: 'test' });
  const typeId = [...(await org.head()).model.types.keys()][0]!;
  const changes: FileChange[] = Array.from({ length: 1200 }, (_, n) => {
    const id = newId();
    return {
      path: resourcePath('component', id),
      content: serialize('component', {
        id,
        ref: `c-${n}`,
        name: `Service ${n}`,
        desc: null,
        state: 'ACTIVE',
        typeId,
        apiContext: 'x',
        linksTo: [],
        attributes: [],
      }),
    };
  });
  await org.repo.commit({ parent: (await org.repo.readHead())!, changes, author, message: 'bulk\n' });

  const list = async () => {
    const server = await serveProcess(dataDir);
    try {
      const response = await fetch(`${server.url}/api/external/component`, { headers: { authorization: `Bearer ${key}` } });
      t.is(response.status, 200);
      const components = (await response.json()) as Array<{ ref: string }>;
      await cacheFile(org.repo.gitdir); // written in the background after the cold load
      return components;
    } finally {
      await server.stop();
    }
  };
  const cold = await list();
  t.is(cold.length, 1200);
  t.deepEqual(
    cold.map((c) => c.ref),
    Array.from({ length: 1200 }, (_, n) => `c-${n}`),
  );
  // Every file of the tree: the components, organization.yaml, six types and the six editor schemas.
  t.is((await readBlobCache(org.repo.gitdir)).size, 1200 + 7 + SCHEMA_FILES.length);
  t.deepEqual(await list(), cold);
});

test("temporary cache files (blob and model cache) whose writer is gone are removed when a server starts; a live writer's stay", async (t) => {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-test-'));
  createdDirs.push(dataDir);
  const org = await new Orgs(dataDir).create('big', { author });
  const gitdir = org.repo.gitdir;
  // A pid that surely runs no more: a process that has exited.
  const dead = execFileSync(process.execPath, ['-p', 'process.pid'], { encoding: 'utf8' }).trim();
  const live = spawnSleeper();
  try {
    const names = {
      olderVersion: `${BLOB_CACHE_FILE}.tmp-0123456789ab`,
      deadWriter: `${BLOB_CACHE_FILE}.tmp-${dead}-0123456789ab`,
      liveWriter: `${BLOB_CACHE_FILE}.tmp-${live.pid}-0123456789ab`,
      // The model cache is replaced whole by replaceFile (durable-files.ts), whose temporary names these are.
      deadModelWriter: `${MODEL_CACHE_FILE}.${dead}.0123456789ab.tmp`,
      liveModelWriter: `${MODEL_CACHE_FILE}.${live.pid}.0123456789ab.tmp`,
    };
    for (const name of Object.values(names)) await fsp.writeFile(path.join(gitdir, name), 'half a cache');
    const server = await startServer({ dataDir, port: 0, log: () => {} });
    await server.close();
    const left = (await fsp.readdir(gitdir)).filter((name) => name.startsWith(`${BLOB_CACHE_FILE}.tmp-`) || name.endsWith('.tmp'));
    t.deepEqual(left.sort(), [names.liveWriter, names.liveModelWriter].sort());
  } finally {
    live.kill();
  }
});

test('a leftover temporary file never stands in the way of the next cache write', async (t) => {
  const { repo, files } = await repoWithFiles(300);
  const leftovers = [`${BLOB_CACHE_FILE}.tmp-${process.pid}-000000000000`, `${BLOB_CACHE_FILE}.tmp-0123456789ab`];
  for (const name of leftovers) await fsp.writeFile(path.join(repo.gitdir, name), 'half a cache');
  await contentsOf(repo.readBlobs(files.values()), files);
  await cacheFile(repo.gitdir);
  t.is((await readBlobCache(repo.gitdir)).size, 300);
});

test('a built server stopped by SIGTERM right after a cold load leaves no temporary cache file (blob or model cache)', async (t) => {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-test-'));
  createdDirs.push(dataDir);
  const org = await new Orgs(dataDir).create('big', { author });
  const { key } = await new KeyStore(dataDir).create('big', { label: 'test' });
  const typeId = [...(await org.head()).model.types.keys()][0]!;
  const changes: FileChange[] = Array.from({ length: 600 }, (_, n) => {
    const id = newId();
    return {
      path: resourcePath('component', id),
      content: serialize('component', {
        id,
        ref: `c-${n}`,
        name: `Service ${n}`,
        desc: 'x'.repeat(10_000),
        state: 'ACTIVE',
        typeId,
        apiContext: 'x',
        linksTo: [],
        attributes: [],
      }),
    };
  });
  await org.repo.commit({ parent: (await org.repo.readHead())!, changes, author, message: 'bulk\n' });
  for (let attempt = 0; attempt < 3; attempt++) {
    await fsp.rm(path.join(org.repo.gitdir, BLOB_CACHE_FILE), { force: true });
    await fsp.rm(path.join(org.repo.gitdir, MODEL_CACHE_FILE), { force: true });
    const server = await serveProcess(dataDir);
    const reply = fetch(`${server.url}/api/external/tag`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100 + 100 * attempt));
    await server.stop('SIGTERM');
    await reply;
    const left = (await fsp.readdir(org.repo.gitdir)).filter(
      (name) => name.startsWith(`${BLOB_CACHE_FILE}.tmp-`) || (name.startsWith(MODEL_CACHE_FILE) && name.endsWith('.tmp')),
    );
    t.deepEqual(left, [], `attempt ${attempt}`);
  }
});

function spawnSleeper() {
  return spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
}
