import test from 'ava';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashObject, wrapObject } from '../src/store/git-format.js';
import { PackReader } from '../src/store/pack-reader.js';
import { Repo } from '../src/store/repo.js';

const author = { name: 'api', email: 'api@demo' };
const createdDirs: string[] = [];
test.after.always(async () => {
  await Promise.all(createdDirs.map((dir) => fsp.rm(dir, { recursive: true, force: true })));
});

/** A repository of 600 small files and one of 1 MB (it arrives in many chunks), all packed by git gc. */
async function packedRepo(): Promise<{ gitdir: string; contents: Map<string, Buffer> }> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-pack-'));
  createdDirs.push(dir);
  const gitdir = path.join(dir, 'demo.git');
  const files = Array.from({ length: 600 }, (_, n) => ({ path: `files/${n % 20}/${n}.yaml`, content: `n: ${n}\nname: File ${n}\n` }));
  files.push({ path: 'big.bin', content: randomBytes(768 * 1024).toString('base64') });
  await Repo.init(gitdir, { files: [{ path: 'organization.yaml', content: 'name: Demo\n' }, ...files], author, message: 'first' });
  execFileSync('git', ['--git-dir', gitdir, 'gc', '--quiet']);
  const contents = new Map<string, Buffer>();
  for (const { content } of files) {
    const bytes = Buffer.from(content, 'utf8');
    contents.set(hashObject(wrapObject('blob', bytes)), bytes);
  }
  return { gitdir, contents };
}

test.serial('packed objects are read through git cat-file --batch: all at once, in any size, missing ones as null', async (t) => {
  const { gitdir, contents } = await packedRepo();
  const objects = await fsp.readdir(path.join(gitdir, 'objects'));
  t.deepEqual(
    objects.filter((name) => /^[0-9a-f]{2}$/.test(name)),
    [],
    'nothing is loose',
  );
  const reader = new PackReader(gitdir);
  const oids = [...contents.keys()];
  const read = await Promise.all(oids.map((oid) => reader.read(oid)));
  // Buffer.equals: ava's deepEqual would diff a megabyte byte by byte.
  const wrong = oids.filter((oid, i) => read[i]?.type !== 'blob' || !read[i]!.content.equals(contents.get(oid)!));
  t.deepEqual(wrong, []);
  t.is(await reader.read('0'.repeat(40)), null);
  const head = execFileSync('git', ['--git-dir', gitdir, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
  t.is((await reader.read(head))?.type, 'commit');
  // And the whole model loads the same through Repo (trees, then every blob).
  const repo = new Repo(gitdir);
  const files = await repo.listFiles(head);
  t.is(files.size, 602);
  const blobs = await repo.readBlobs(files.values());
  let same = 0;
  for (const [oid, content] of blobs) if ((await content).equals(contents.get(oid) ?? Buffer.from('name: Demo\n'))) same++;
  t.is(same, blobs.size);
});

test.serial('without a git to run, packed objects are still read (isomorphic-git)', async (t) => {
  const { gitdir, contents } = await packedRepo();
  const pathBefore = process.env.PATH;
  process.env.PATH = path.join(os.tmpdir(), 'no-git-here');
  try {
    const reader = new PackReader(gitdir);
    for (const [oid, content] of [...contents].slice(0, 3)) t.true((await reader.read(oid))!.content.equals(content));
    t.is(await reader.read('0'.repeat(40)), null);
  } finally {
    process.env.PATH = pathBefore;
  }
});
