import test from 'ava';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resourcePath, serialize } from '../src/model/files.js';
import { newId } from '../src/model/ids.js';
import type { Component } from '../src/model/types.js';
import { MODEL_CACHE_FILE, readModelCache, writeModelCache } from '../src/service/model-cache.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import type { FileChange } from '../src/store/repo.js';
import { serveProcess } from './support/process.js';

// ava runs each test file in a worker of its own: this setting is this file's alone.
const CODE = 'test-build-1';
process.env.C4STORE_CODE_ID = CODE;
const codeId = `${CODE} ${process.version}`;

const author = { name: 'api', email: 'api@demo' };
const createdDirs: string[] = [];
test.after.always(async () => {
  // A cache rewrite a cold load scheduled (a second after it) may still be writing into a directory.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await Promise.all(createdDirs.map((dir) => fsp.rm(dir, { recursive: true, force: true, maxRetries: 5 })));
});

async function orgWithComponents(count: number) {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-test-'));
  createdDirs.push(dataDir);
  const org = await new Orgs(dataDir).create('big', { author });
  const typeId = [...(await org.head()).model.types.keys()][0]!;
  const components: Component[] = Array.from({ length: count }, (_, n) => ({
    id: newId(),
    ref: `c-${n}`,
    name: `Service ${n}`,
    desc: n % 2 ? null : `Part ${n}`,
    state: 'ACTIVE',
    typeId,
    apiContext: 'x',
    linksTo: [],
    attributes: [],
  }));
  const changes: FileChange[] = components.map((c) => ({ path: resourcePath('component', c.id), content: serialize('component', c) }));
  await org.repo.commit({ parent: (await org.repo.readHead())!, changes, author, message: 'bulk\n' });
  return { dataDir, gitdir: org.repo.gitdir, components };
}

/** The model as a fresh process loads it (cold). */
async function coldModel(dataDir: string) {
  return (await new Orgs(dataDir).get('big').head()).model;
}

/** Waits for the cache file written in the background; `code` null: written by any code. */
async function cacheWritten(gitdir: string, code: string | null = codeId): Promise<Buffer> {
  const header = `c4store model cache 2\n${code ?? ''}`;
  for (let attempt = 0; attempt < 1000; attempt++) {
    const data = await fsp.readFile(path.join(gitdir, MODEL_CACHE_FILE)).catch(() => undefined);
    if (data?.toString('utf8', 0, header.length) === header) return data;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no model cache of ${code} was written`);
}

/** A cold load, and the model cache it writes (read back once written). */
async function coldLoadAndItsCache(dataDir: string, gitdir: string) {
  const model = await coldModel(dataDir);
  await cacheWritten(gitdir);
  return { model, cache: (await readModelCache(gitdir))! };
}

function oidOf(gitdir: string, file: string): string {
  return execFileSync('git', ['--git-dir', gitdir, 'rev-parse', `main:${file}`], { encoding: 'utf8' }).trim();
}

test('a cold load writes the model cache; the next cold load takes its resources from it', async (t) => {
  const { dataDir, gitdir, components } = await orgWithComponents(300);
  const { model, cache } = await coldLoadAndItsCache(dataDir, gitdir);
  const cached = cache.parsed;
  // Every resource file: the components and the six types.
  t.is(cached.size, 300 + model.types.size);
  t.deepEqual(cached.get(oidOf(gitdir, resourcePath('component', components[7]!.id))), { kind: 'component', resource: components[7] });
  t.deepEqual(await coldModel(dataDir), model);

  // Proof that the cache answers: an entry written for this code is taken as it is.
  const forged = [...cached].map(
    ([oid, { kind, resource }]) =>
      [oid, kind, resource.id === components[42]!.id ? { ...resource, name: 'From the cache' } : resource] as const,
  );
  await writeModelCache(gitdir, cache.listing!, forged);
  t.is((await coldModel(dataDir)).components.get(components[42]!.id)!.name, 'From the cache');
});

test("the cache's list of files stands for the commit's tree only when the commit has that very tree", async (t) => {
  const { dataDir, gitdir, components } = await orgWithComponents(300);
  const { cache } = await coldLoadAndItsCache(dataDir, gitdir);
  const tree = execFileSync('git', ['--git-dir', gitdir, 'rev-parse', 'main^{tree}'], { encoding: 'utf8' }).trim();
  t.is(cache.listing!.tree, tree);
  t.deepEqual(
    [...cache.listing!.files.keys()].sort(),
    execFileSync('git', ['--git-dir', gitdir, 'ls-tree', '-r', '--name-only', 'main'], { encoding: 'utf8' }).trim().split('\n').sort(),
  );
  const entries = [...cache.parsed].map(([oid, { kind, resource }]) => [oid, kind, resource] as const);
  // Proof that the list answers: one listed without a component's file, the model lacks it.
  const gone = components[9]!;
  const files = new Map([...cache.listing!.files].filter(([file]) => file !== resourcePath('component', gone.id)));
  await writeModelCache(gitdir, { tree, files }, entries);
  t.false((await coldModel(dataDir)).components.has(gone.id));
  // The same list said to be of another tree: the commit's own tree is listed, and the cache rewritten.
  await writeModelCache(gitdir, { tree: '0'.repeat(40), files }, entries);
  t.true((await coldModel(dataDir)).components.has(gone.id));
  for (let attempt = 0; attempt < 500 && (await readModelCache(gitdir))!.listing?.tree !== tree; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.is((await readModelCache(gitdir))!.listing!.files.size, cache.listing!.files.size);
});

test('a model cache written by other code, damaged, or naming another file is not used', async (t) => {
  const { dataDir, gitdir, components } = await orgWithComponents(300);
  const { model, cache } = await coldLoadAndItsCache(dataDir, gitdir);
  const cached = cache.parsed;
  const listing = cache.listing!;
  const target = components[42]!;
  const forged = [...cached].map(
    ([oid, { kind, resource }]) => [oid, kind, resource.id === target.id ? { ...resource, name: 'Forged' } : resource] as const,
  );
  const cachePath = path.join(gitdir, MODEL_CACHE_FILE);

  await writeModelCache(gitdir, listing, forged, 'another build v0');
  t.is((await coldModel(dataDir)).components.get(target.id)!.name, target.name);
  await cacheWritten(gitdir); // this code's cache again, in place of the other's

  await writeModelCache(gitdir, listing, forged);
  const damaged = await fsp.readFile(cachePath);
  damaged[damaged.length - 20] = damaged[damaged.length - 20]! ^ 1;
  await fsp.writeFile(cachePath, damaged);
  t.is((await readModelCache(gitdir))!.parsed.size, 0);
  t.deepEqual(await coldModel(dataDir), model);

  await writeModelCache(gitdir, listing, forged.slice(0, 100));
  const cut = await fsp.readFile(cachePath);
  await fsp.writeFile(cachePath, cut.subarray(0, cut.length - 10));
  t.is((await readModelCache(gitdir))!.parsed.size, 0);

  // Component 42's entry, filed under component 43's blob: 43's file holds another id.
  const other = oidOf(gitdir, resourcePath('component', components[43]!.id));
  const misfiled = [...cached].map(
    ([oid, { kind, resource }]) => [oid, kind, oid === other ? { ...target, name: 'Misfiled' } : resource] as const,
  );
  await writeModelCache(gitdir, listing, misfiled);
  const loaded = await coldModel(dataDir);
  t.is(loaded.components.get(components[43]!.id)!.name, components[43]!.name);
  t.deepEqual(loaded, model);
});

// Serial (ava runs these before the others): it takes this file's code name away for a while.
test.serial('a process not run from a build keeps no model cache', async (t) => {
  const { dataDir, gitdir } = await orgWithComponents(300);
  delete process.env.C4STORE_CODE_ID;
  try {
    t.is(await readModelCache(gitdir), undefined);
    await coldModel(dataDir);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await t.throwsAsync(fsp.access(path.join(gitdir, MODEL_CACHE_FILE)));
  } finally {
    process.env.C4STORE_CODE_ID = CODE;
  }
});

test('a built server (dist/) writes the model cache, answers the same from it after a restart, and git ignores it', async (t) => {
  const { dataDir, gitdir, components } = await orgWithComponents(300);
  const { key } = await new KeyStore(dataDir).create('big', { label: 'test' });
  const list = async () => {
    const server = await serveProcess(dataDir);
    try {
      const response = await fetch(`${server.url}/api/external/component`, { headers: { authorization: `Bearer ${key}` } });
      t.is(response.status, 200);
      const text = await response.text();
      await cacheWritten(gitdir, null); // written in the background after the cold load
      return text;
    } finally {
      await server.stop();
    }
  };
  const cold = await list();
  const written = await fsp.readFile(path.join(gitdir, MODEL_CACHE_FILE));
  // The build's own name, not this file's.
  t.regex(written.toString('utf8', 0, 200), /^c4store model cache 2\n[0-9a-f]{32} v\d+\.\d+\.\d+\n[0-9a-f]{40}\n/);
  t.is(JSON.parse(cold).length, 300);
  t.is(await list(), cold);
  t.deepEqual(await fsp.readFile(path.join(gitdir, MODEL_CACHE_FILE)), written);
  t.is(components.length, 300);
  t.notThrows(() => execFileSync('git', ['--git-dir', gitdir, 'fsck', '--full', '--strict', '--no-dangling'], { stdio: 'pipe' }));
});
