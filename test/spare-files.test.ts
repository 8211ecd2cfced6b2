/**
 * The files of packed loose objects are kept and written again as new objects (spare-files.ts):
 * real repositories, real git packing and checking them.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import * as nodeFs from 'node:fs';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Maintenance } from '../src/store/maintenance.js';
import { Repo } from '../src/store/repo.js';
import { SPARE_FILES_DIR, SpareFiles } from '../src/store/spare-files.js';

const author = { name: 'api', email: 'api@demo' };

async function packedRepo(t: { teardown: (fn: () => Promise<void>) => void }, reuseAfterMs: number) {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-spares-'));
  // Spares are emptied in the background (with no wait, at once): a removal may meet one renamed back.
  t.teardown(() => fsp.rm(dir, { recursive: true, force: true, maxRetries: 10 }));
  const gitdir = path.join(dir, 'demo.git');
  await Repo.init(gitdir, { files: [{ path: 'organization.yaml', content: 'name: Demo\n' }], author, message: 'Create organization' });
  const spares = new SpareFiles(gitdir, reuseAfterMs);
  const repo = new Repo(gitdir, { spares });
  const maintenance = new Maintenance(
    0,
    () => {},
    () => spares,
  );
  return { gitdir, repo, spares, maintenance };
}

function git(gitdir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

async function commitFiles(repo: Repo, count: number, tag: string): Promise<string> {
  let head = (await repo.readHead())!;
  for (let i = 0; i < count; i++) {
    head = await repo.commit({
      parent: head,
      changes: [{ path: `components/${tag}-${i}.yaml`, content: `name: ${tag} ${i}\n` }],
      author,
      message: `${tag} ${i}`,
    });
  }
  return head;
}

function looseObjectFiles(gitdir: string): string[] {
  const objects = path.join(gitdir, 'objects');
  return nodeFs
    .readdirSync(objects)
    .filter((name) => /^[0-9a-f]{2}$/.test(name))
    .flatMap((fanout) => nodeFs.readdirSync(path.join(objects, fanout)).map((name) => path.join(objects, fanout, name)));
}

/**
 * Packs every loose object and waits until the files of all of them are usable spares (they are
 * emptied first, in the background: with no wait, at once); returns their inodes.
 */
async function packAndWait(gitdir: string, maintenance: Maintenance, spares: SpareFiles): Promise<Set<number>> {
  const packed = inodesOf(looseObjectFiles(gitdir));
  // Besides the refs the commits replaced, which are spares already.
  const expected = spares.size + packed.size;
  await maintenance.pack(gitdir);
  // Not a timing bound: a generous limit, so that a busy machine's slowness fails with a clear reason.
  for (let wait = 0; spares.size < expected; wait++) {
    if (wait === 2400) throw new Error(`${spares.size} of ${expected} spares usable after a minute`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return packed;
}

function inodesOf(files: readonly string[]): Set<number> {
  return new Set(files.map((file) => nodeFs.statSync(file).ino));
}

function spareFiles(gitdir: string): string[] {
  const dir = path.join(gitdir, SPARE_FILES_DIR);
  return nodeFs.readdirSync(dir).map((name) => path.join(dir, name));
}

test('packing keeps the loose objects it packed as spare files, and new objects are written into them: no file made, git fsck clean', async (t) => {
  const { gitdir, repo, spares, maintenance } = await packedRepo(t, 0);
  await commitFiles(repo, 20, 'first');
  const packed = await packAndWait(gitdir, maintenance, spares);
  t.deepEqual(looseObjectFiles(gitdir), [], 'no loose object is left: every one was packed');
  const kept = inodesOf(spareFiles(gitdir));
  for (const inode of packed) t.true(kept.has(inode), 'every packed loose object is a spare');
  t.is(spares.size, kept.size);

  const head = await commitFiles(repo, 3, 'second');
  const written = looseObjectFiles(gitdir);
  // Each commit: its commit object, the root and components/ trees, one blob.
  t.is(written.length, 3 * 4);
  for (const file of written) {
    const stat = nodeFs.statSync(file);
    t.true(kept.has(stat.ino), `${file} is written into a spare`);
    t.is(stat.mode & 0o777, 0o444, 'read-only, as git makes objects');
    t.is(stat.nlink, 1);
  }
  for (const inode of inodesOf(written)) t.false(inodesOf(spareFiles(gitdir)).has(inode), 'and is no spare any more');
  t.is(git(gitdir, 'show', `${head}:components/second-2.yaml`), 'name: second 2\n');
  t.is(git(gitdir, 'fsck', '--full', '--strict', '--no-dangling'), '');
  t.is(git(gitdir, 'log', '--format=%s', '-n', '2', head), 'second 2\nsecond 1\n');
});

test('a spare is written into only once its wait is over; until then new objects get new files', async (t) => {
  const { gitdir, repo, maintenance } = await packedRepo(t, 60 * 60_000);
  await commitFiles(repo, 5, 'first');
  const packed = inodesOf(looseObjectFiles(gitdir));
  await maintenance.pack(gitdir);
  await commitFiles(repo, 2, 'second');
  for (const file of looseObjectFiles(gitdir)) t.false(packed.has(nodeFs.statSync(file).ino), `${file} is a new file`);
  const spares = inodesOf(spareFiles(gitdir));
  for (const inode of packed) t.true(spares.has(inode), 'no spare taken');
  t.is(git(gitdir, 'fsck', '--full', '--strict', '--no-dangling'), '');
});

test('a spare whose file is linked elsewhere too (as a power loss may leave it) is never written into, and the other name keeps its bytes', async (t) => {
  const { gitdir, repo, spares, maintenance } = await packedRepo(t, 0);
  await commitFiles(repo, 2, 'first');
  await packAndWait(gitdir, maintenance, spares);
  const files = spareFiles(gitdir);
  t.is(spares.size, files.length);
  // Every spare is linked elsewhere: none may be used.
  const elsewhere = path.join(path.dirname(gitdir), 'elsewhere');
  nodeFs.mkdirSync(elsewhere);
  const before = new Map<string, Buffer>();
  for (const file of files) {
    const other = path.join(elsewhere, path.basename(file));
    nodeFs.linkSync(file, other);
    before.set(other, nodeFs.readFileSync(other));
  }
  const head = await commitFiles(repo, 1, 'second');
  for (const [other, bytes] of before) t.deepEqual(nodeFs.readFileSync(other), bytes, `${other} untouched`);
  const left = new Set(spareFiles(gitdir));
  for (const file of files) t.false(left.has(file), "the pool's names of them are gone");
  t.is(git(gitdir, 'show', `${head}:components/second-0.yaml`), 'name: second 0\n');
  t.is(git(gitdir, 'fsck', '--full', '--strict', '--no-dangling'), '');
});

test('spares left unused are emptied once their wait is over: an idle pool holds no bytes', async (t) => {
  const { gitdir, repo, spares, maintenance } = await packedRepo(t, 0);
  await commitFiles(repo, 5, 'first');
  const packed = await packAndWait(gitdir, maintenance, spares);
  const sizes = spareFiles(gitdir)
    .map((file) => nodeFs.statSync(file))
    .filter((stat) => packed.has(stat.ino))
    .map((stat) => stat.size);
  t.is(sizes.length, packed.size);
  t.deepEqual(
    sizes.filter((size) => size > 0),
    [],
  );
  const head = await commitFiles(repo, 1, 'second');
  t.is(git(gitdir, 'show', `${head}:components/second-0.yaml`), 'name: second 0\n');
  t.is(git(gitdir, 'fsck', '--full', '--strict', '--no-dangling'), '');
});

test('a process that did not keep them finds the spares another process kept, and uses them after the wait', async (t) => {
  const { gitdir, repo, spares, maintenance } = await packedRepo(t, 0);
  await commitFiles(repo, 3, 'first');
  const packed = await packAndWait(gitdir, maintenance, spares);
  // Another process's pool: it knows of no spare until it looks at the directory.
  const other = new SpareFiles(gitdir, 0);
  const otherRepo = new Repo(gitdir, { spares: other });
  // The only spare it keeps itself: the ref that commit replaces.
  const ownSpare = nodeFs.statSync(path.join(gitdir, 'refs', 'heads', 'main')).ino;
  await commitFiles(otherRepo, 1, 'looked');
  for (let wait = 0; wait < 200 && other.size < packed.size - 5; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.true(other.size >= packed.size - 5, 'it found them (and may have used a few in that commit)');
  const before = new Set(looseObjectFiles(gitdir));
  const sparesBefore = inodesOf(spareFiles(gitdir));
  const head = await commitFiles(otherRepo, 1, 'second');
  const written = inodesOf(looseObjectFiles(gitdir).filter((file) => !before.has(file)));
  t.is(written.size, 4);
  for (const inode of written) t.true(sparesBefore.has(inode), 'each object is written into a spare');
  // All but perhaps one of them kept by the first process.
  t.true([...written].filter((inode) => inode !== ownSpare).length >= 3);
  t.is(git(gitdir, 'show', `${head}:components/second-0.yaml`), 'name: second 0\n');
  t.is(git(gitdir, 'fsck', '--full', '--strict', '--no-dangling'), '');
});

test("a commit's ref lock is made of a spare, and the ref it replaces becomes one: moving a branch makes and frees no file", async (t) => {
  const { gitdir, repo, spares, maintenance } = await packedRepo(t, 0);
  // Ten commits' objects: enough spares for four commits' objects and locks.
  await commitFiles(repo, 10, 'first');
  await packAndWait(gitdir, maintenance, spares);
  const mainFile = path.join(gitdir, 'refs', 'heads', 'main');
  let head = (await repo.readHead())!;
  for (let i = 0; i < 4; i++) {
    const sparesBefore = inodesOf(spareFiles(gitdir));
    const replaced = nodeFs.statSync(mainFile).ino;
    head = await repo.commit({
      parent: head,
      changes: [{ path: `components/c${i}.yaml`, content: `name: c ${i}\n` }],
      author,
      message: `c ${i}`,
    });
    const ref = nodeFs.statSync(mainFile);
    t.true(sparesBefore.has(ref.ino), 'the lock, now the ref, was a spare');
    t.true(inodesOf(spareFiles(gitdir)).has(replaced), 'the ref it replaced is a spare');
    t.is(ref.nlink, 1);
    t.is(ref.mode & 0o777, 0o644);
    t.is(nodeFs.readFileSync(mainFile, 'utf8'), `${head}\n`);
    t.is(git(gitdir, 'rev-parse', 'main').trim(), head);
  }
  t.is(git(gitdir, 'log', '--format=%s', '-n', '4', 'main'), 'c 3\nc 2\nc 1\nc 0\n');
  t.is(git(gitdir, 'fsck', '--full', '--strict', '--no-dangling'), '');
});

test('after a repack removed the emptied fan-out directories, new objects still go into spares and the pool loses none', async (t) => {
  const { gitdir, repo, spares, maintenance } = await packedRepo(t, 0);
  await commitFiles(repo, 10, 'first');
  await packAndWait(gitdir, maintenance, spares);
  const objects = path.join(gitdir, 'objects');
  // As `git prune-packed` (of a `git gc` someone runs) leaves it: no empty fan-out directory,
  // among them those the writer made and remembers.
  for (const fanout of nodeFs.readdirSync(objects).filter((name) => /^[0-9a-f]{2}$/.test(name)))
    nodeFs.rmdirSync(path.join(objects, fanout));
  const sparesBefore = inodesOf(spareFiles(gitdir));
  // A blob the writer wrote before (same bytes, same id, same fan-out directory), packed since.
  const head = await repo.commit({
    parent: (await repo.readHead())!,
    changes: [{ path: 'components/again.yaml', content: 'name: first 0\n' }],
    author,
    message: 'again',
  });
  const written = looseObjectFiles(gitdir);
  t.is(written.length, 4);
  for (const inode of inodesOf(written)) t.true(sparesBefore.has(inode), 'written into a spare');
  t.is(spares.size, spareFiles(gitdir).length, 'every spare left is still in the pool');
  t.is(git(gitdir, 'show', `${head}:components/again.yaml`), 'name: first 0\n');
  t.is(git(gitdir, 'fsck', '--full', '--strict', '--no-dangling'), '');
});

test('once the maintenance is closed, nothing empties the spares it kept: they are used as they are after their wait', async (t) => {
  const { gitdir, repo, spares, maintenance } = await packedRepo(t, 1500);
  await commitFiles(repo, 5, 'first');
  const packed = inodesOf(looseObjectFiles(gitdir));
  await maintenance.pack(gitdir);
  await maintenance.close();
  // What the close found (on a loaded machine the packing's last steps may outlast the wait, and
  // the spares be emptied before the close, as they should): none may be emptied after it.
  const keptAtClose = () =>
    spareFiles(gitdir)
      .filter((file) => packed.has(nodeFs.statSync(file).ino))
      .map((file) => `${path.basename(file)} ${nodeFs.statSync(file).size > 0 ? 'full' : 'emptied'}`)
      .sort();
  const atClose = keptAtClose();
  t.log(`${atClose.filter((line) => line.endsWith('full')).length} of ${atClose.length} still full at the close`);
  await new Promise((resolve) => setTimeout(resolve, 1700));
  const kept = spareFiles(gitdir).filter((file) => packed.has(nodeFs.statSync(file).ino));
  t.is(kept.length, packed.size);
  t.true(
    kept.every((file) => !file.endsWith('.emptying')),
    'none being emptied',
  );
  t.deepEqual(keptAtClose(), atClose, 'none emptied after the close');
  t.true(spares.size >= packed.size, 'all usable after their wait');
  const sparesBefore = inodesOf(spareFiles(gitdir));
  const head = await commitFiles(repo, 2, 'second');
  const written = [...inodesOf(looseObjectFiles(gitdir))];
  for (const inode of written) t.true(sparesBefore.has(inode), 'written into a spare');
  // Besides the refs the first commits replaced, spares too.
  t.true(written.filter((inode) => packed.has(inode)).length >= written.length - 5, 'written over, as they were');
  t.is(git(gitdir, 'show', `${head}:components/second-1.yaml`), 'name: second 1\n');
  t.is(git(gitdir, 'fsck', '--full', '--strict', '--no-dangling'), '');
});

test("a lock made of a spare is as new as a file made now: a waiting writer reads an old lock's age as its holder's death", async (t) => {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-spares-'));
  t.teardown(() => fsp.rm(dir, { recursive: true, force: true }));
  const spares = new SpareFiles(dir, 0);
  const longAgo = new Date('2001-01-01T00:00:00Z');
  for (const name of ['old-ref', 'older-ref']) {
    const old = path.join(dir, name);
    // Empty, as an emptied spare is: cutting it to 0 changes nothing of it.
    nodeFs.writeFileSync(old, '');
    nodeFs.utimesSync(old, longAgo, longAgo);
    spares.keepReplaced(old);
    nodeFs.rmSync(old);
  }
  const lock = path.join(dir, 'main.lock');
  const fd = spares.createAs(lock, 0o644);
  t.not(fd, undefined, 'made of the spare');
  nodeFs.closeSync(fd!);
  const stat = nodeFs.statSync(lock);
  t.is(stat.size, 0);
  // Not the spare's old time (which a waiting writer would read as a dead holder's).
  t.true(stat.mtimeMs > longAgo.getTime(), `mtime ${stat.mtime.toISOString()}`);
  t.is(spares.size, 1);
  t.is(spares.createAs(lock, 0o644), undefined, 'exclusive: the lock exists');
  t.is(spares.size, 1, 'and the spare is kept');
});
