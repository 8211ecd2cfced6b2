import test from 'ava';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BLOB_CACHE_FILE, readBlobCache } from '../src/store/blob-cache.js';
import { Repo, type FileChange } from '../src/store/repo.js';
import { startServer } from '../src/server.js';
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
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      return await fsp.readFile(path.join(gitdir, BLOB_CACHE_FILE));
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  throw new Error('no blob cache was written');
}

function contentsOf(blobs: Map<string, Buffer>, files: Map<string, string>): string[] {
  return [...files.values()].map((oid) => blobs.get(oid)!.toString('utf8'));
}

test('readBlobs writes the cache after a cold read, then reads from it; git ignores the file', async (t) => {
  const { repo, files } = await repoWithFiles(300);
  const expected = Array.from({ length: 300 }, (_, n) => `n: ${n}\n`).sort();
  t.deepEqual(contentsOf(await repo.readBlobs(files.values()), files).sort(), expected);
  await cacheFile(repo.gitdir);
  t.is((await readBlobCache(repo.gitdir)).size, 300);

  // Proof that the cache answers: a loose object removed behind our back is still read.
  const someOid = files.get('files/7.yaml')!;
  await fsp.rm(path.join(repo.gitdir, 'objects', someOid.slice(0, 2), someOid.slice(2)));
  t.deepEqual(contentsOf(await repo.readBlobs(files.values()), files).sort(), expected);
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
  const expected = contentsOf(await repo.readBlobs(files.values()), files);
  const data = await cacheFile(repo.gitdir);
  const cachePath = path.join(repo.gitdir, BLOB_CACHE_FILE);

  // Same length, other bytes: "n: 5" becomes "n: 6" inside the cache.
  const forged = Buffer.from(data);
  const at = forged.indexOf('n: 5\n');
  forged[at + 3] = '6'.charCodeAt(0);
  await fsp.writeFile(cachePath, forged);
  t.is((await readBlobCache(repo.gitdir)).size, 299);
  t.deepEqual(contentsOf(await repo.readBlobs(files.values()), files), expected);

  await fsp.writeFile(cachePath, data.subarray(0, Math.floor(data.length / 2)));
  const half = await readBlobCache(repo.gitdir);
  t.true(half.size > 100 && half.size < 200);
  t.deepEqual(contentsOf(await repo.readBlobs(files.values()), files), expected);

  await fsp.writeFile(cachePath, 'not a cache at all\n');
  t.is((await readBlobCache(repo.gitdir)).size, 0);
  t.deepEqual(contentsOf(await repo.readBlobs(files.values()), files), expected);
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
