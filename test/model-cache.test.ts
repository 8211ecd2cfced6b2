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
  const header = `c4store model cache 1\n${code ?? ''}`;
  for (let attempt = 0; attempt < 1000; attempt++) {
    const data = await fsp.readFile(path.join(gitdir, MODEL_CACHE_FILE)).catch(() => undefined);
    if (data?.toString('utf8', 0, header.length) === header) return data;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no model cache of ${code} was written`);
}

function oidOf(gitdir: string, file: string): string {
  return execFileSync('git', ['--git-dir', gitdir, 'rev-parse', `main:${file}`], { encoding: 'utf8' }).trim();
}

test('a cold load writes the model cache; the next cold load takes its resources from it', async (t) => {
  const { dataDir, gitdir, components } = await orgWithComponents(300);
  const model = await coldModel(dataDir);
  await cacheWritten(gitdir);
  const cached = (await readModelCache(gitdir))!;
  // Every resource file: the components and the six types.
  t.is(cached.size, 300 + model.types.size);
  t.deepEqual(cached.get(oidOf(gitdir, resourcePath('component', components[7]!.id))), { kind: 'component', resource: components[7] });
  t.deepEqual(await coldModel(dataDir), model);

  // Proof that the cache answers: an entry written for this code is taken as it is.
  const forged = [...cached].map(
    ([oid, { kind, resource }]) =>
      [oid, kind, resource.id === components[42]!.id ? { ...resource, name: 'From the cache' } : resource] as const,
  );
  await writeModelCache(gitdir, forged);
  t.is((await coldModel(dataDir)).components.get(components[42]!.id)!.name, 'From the cache');
});

test('a model cache written by other code, damaged, or naming another file is not used', async (t) => {
  const { dataDir, gitdir, components } = await orgWithComponents(300);
  const model = await coldModel(dataDir);
  await cacheWritten(gitdir);
  const cached = (await readModelCache(gitdir))!;
  const target = components[42]!;
  const forged = [...cached].map(
    ([oid, { kind, resource }]) => [oid, kind, resource.id === target.id ? { ...resource, name: 'Forged' } : resource] as const,
  );
  const cachePath = path.join(gitdir, MODEL_CACHE_FILE);

  await writeModelCache(gitdir, forged, 'another build v0');
  t.is((await coldModel(dataDir)).components.get(target.id)!.name, target.name);
  await cacheWritten(gitdir); // this code's cache again, in place of the other's

  await writeModelCache(gitdir, forged);
  const damaged = await fsp.readFile(cachePath);
  damaged[damaged.length - 20] = damaged[damaged.length - 20]! ^ 1;
  await fsp.writeFile(cachePath, damaged);
  t.is((await readModelCache(gitdir))!.size, 0);
  t.deepEqual(await coldModel(dataDir), model);

  await writeModelCache(gitdir, forged.slice(0, 100));
  const cut = await fsp.readFile(cachePath);
  await fsp.writeFile(cachePath, cut.subarray(0, cut.length - 10));
  t.is((await readModelCache(gitdir))!.size, 0);

  // Component 42's entry, filed under component 43's blob: 43's file holds another id.
  const other = oidOf(gitdir, resourcePath('component', components[43]!.id));
  const misfiled = [...cached].map(
    ([oid, { kind, resource }]) => [oid, kind, oid === other ? { ...target, name: 'Misfiled' } : resource] as const,
  );
  await writeModelCache(gitdir, misfiled);
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
  t.regex(written.toString('utf8', 0, 200), /^c4store model cache 1\n[0-9a-f]{32} v\d+\.\d+\.\d+\n[0-9a-f]{40}\n/);
  t.is(JSON.parse(cold).length, 300);
  t.is(await list(), cold);
  t.deepEqual(await fsp.readFile(path.join(gitdir, MODEL_CACHE_FILE)), written);
  t.is(components.length, 300);
  t.notThrows(() => execFileSync('git', ['--git-dir', gitdir, 'fsck', '--full', '--strict', '--no-dangling'], { stdio: 'pipe' }));
});
