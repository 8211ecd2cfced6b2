/**
 * What the store's own choices buy, measured on the same repository against what they
 * replaced (issue 5's "measure first, then choose"):
 * - loose-object reads with node's zlib, synchronously in short slices (ObjectStore) vs
 *   isomorphic-git's readBlob — the start-up load of every blob — and the same blobs from the
 *   verified blob cache file (Repo.readBlobs);
 * - writing one blob: ObjectWriter (node crypto + zlib) vs isomorphic-git's writeBlob;
 * - one object-level commit (blob, the changed trees, commit, ref): Repo.commit vs the same
 *   done with isomorphic-git's readTree/writeTree/writeCommit/writeRef;
 * - trees stored uncompressed (the store's choice, on the big components/ tree) vs git's default level 1;
 * - the next model's components map as a layer over the stored one vs a copy of it;
 * - the bundled build vs the same code as one file per module, starting a process.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import git from 'isomorphic-git';
import { writeBlobCache } from '../src/store/blob-cache.js';
import { wrapObject } from '../src/store/git-format.js';
import { compressionFor, ObjectStore } from '../src/store/object-storage.js';
import { Repo } from '../src/store/repo.js';
import { LayeredMap } from '../src/model/layered-map.js';
import type { Component } from '../src/model/types.js';
import { CLI, ROOT } from './server.js';
import { pick } from './baselines.js';
import { BENCH_AUTHOR, updatedFile, type BenchOrg } from './fixture.js';
import { log, median } from './stats.js';

export interface ChoiceFigures {
  components: number;
  /** Reading every blob of the tree, ms: loose objects, the blob cache file (Repo.readBlobs), isomorphic-git. */
  loadBlobs: { c4store: number; cached: number; isomorphicGit: number; blobs: number };
  /** Writing one small blob, ms (median). */
  writeBlob: { c4store: number; isomorphicGit: number };
  /** One object-level commit of one changed file, ms (median). */
  objectCommit: { c4store: number; isomorphicGit: number };
  /** Deflating the components tree once, ms (median), and its size. */
  bigTree: { level1: number; level0: number; bytes: number };
  /** The disk's own cost of durability, ms (median): fsync of a new small file, and of its directory. */
  fsync: { file: number; directory: number };
  /** The next model's components map after a one-component write, ms per write (mean over a run of writes). */
  nextModel: { layered: number; copy: number };
  /** `node dist/cli.js --help`, spawn to exit, ms (median): the bundle vs the same code as one file per module (esbuild without bundling). */
  processStart: { bundled: number; modules: number };
}

/** Mean time per write of building each write's components map from the previous one's. */
function nextModelCost(
  components: ReadonlyMap<string, Component>,
  writes: number,
  next: (m: ReadonlyMap<string, Component>) => Map<string, Component> | LayeredMap<string, Component>,
): number {
  const ids = [...components.keys()];
  let current = components;
  const began = performance.now();
  for (let i = 0; i < writes; i++) {
    const map = next(current);
    const id = ids[(i * 7919) % ids.length]!;
    map.set(id, { ...components.get(id)!, desc: `write ${i}` });
    current = map;
  }
  return (performance.now() - began) / writes;
}

/** `node <cli> --help`, spawn to exit (ms). */
function startAndExit(cli: string): number {
  const began = performance.now();
  execFileSync(process.execPath, [cli, '--help'], { stdio: 'ignore' });
  return performance.now() - began;
}

async function time(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Median time of `fn`; `timesItself`: fn returns the time to count. */
async function medianOf(times: number, fn: (i: number) => Promise<unknown> | unknown, timesItself = false): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) samples.push(timesItself ? ((await fn(i)) as number) : await time(() => fn(i)));
  return median(samples);
}

async function inBatches<T>(items: readonly T[], size: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

export async function measureChoices(org: BenchOrg, samples = 20): Promise<ChoiceFigures> {
  const gitdir = org.gitdir;
  const repo = new Repo(gitdir);
  const head = (await repo.readHead())!;
  const files = await repo.listFiles(head);
  const oids = [...files.values()];

  // Start-up's blob load, with the concurrency loadModel uses (64).
  const c4Load = await time(() => inBatches(oids, 64, (oid) => repo.readBlob(oid)));
  const readAll = async () => {
    const pending = await repo.readBlobs(oids);
    return new Map(await Promise.all([...pending].map(async ([oid, content]) => [oid, await content] as const)));
  };
  await writeBlobCache(gitdir, await readAll());
  const cachedLoad = await time(readAll);
  const isoCache = {};
  const isoLoad = await time(() => inBatches(oids, 64, (oid) => git.readBlob({ fs, gitdir, oid, cache: isoCache })));

  const store = new ObjectStore(gitdir);
  const c4Blob = await medianOf(samples * 3, async (i) => {
    const writer = store.startWriting();
    await writer.write('blob', Buffer.from(`c4store blob ${i} ${Math.random()}\n`));
    await writer.finish();
  });
  const isoBlob = await medianOf(samples * 3, (i) =>
    git.writeBlob({ fs, gitdir, blob: Buffer.from(`isogit blob ${i} ${Math.random()}\n`) }),
  );

  const c4Commit = await medianOf(samples, async (i) => {
    const parent = (await repo.readHead())!;
    await repo.commit({
      parent,
      changes: [updatedFile(pick(org.components, i), `choice edit ${i}`)],
      author: BENCH_AUTHOR,
      message: 'choice\n',
    });
  });
  // The same commit with isomorphic-git's object API, on a side branch so main is left alone.
  const ref = 'refs/heads/bench-isomorphic-git';
  await git.writeRef({ fs, gitdir, ref, value: (await repo.readHead())!, force: true });
  const cache = {};
  const isoCommit = await medianOf(samples, async (i) => {
    const { path, content } = updatedFile(pick(org.components, i), `iso choice edit ${i}`);
    const [dir, name] = path.split('/') as [string, string];
    const parent = await git.resolveRef({ fs, gitdir, ref });
    const { commit } = await git.readCommit({ fs, gitdir, oid: parent, cache });
    const root = (await git.readTree({ fs, gitdir, oid: commit.tree, cache })).tree;
    const at = root.findIndex((e) => e.path === dir);
    const sub = (await git.readTree({ fs, gitdir, oid: root[at]!.oid, cache })).tree;
    const blob = await git.writeBlob({ fs, gitdir, blob: Buffer.from(content!) });
    const entry = sub.findIndex((e) => e.path === name);
    sub[entry] = { ...sub[entry]!, oid: blob };
    const subOid = await git.writeTree({ fs, gitdir, tree: sub });
    root[at] = { ...root[at]!, oid: subOid };
    const tree = await git.writeTree({ fs, gitdir, tree: root });
    const who = { ...BENCH_AUTHOR, timestamp: Math.floor(Date.now() / 1000), timezoneOffset: 0 };
    const oid = await git.writeCommit({ fs, gitdir, commit: { tree, parent: [parent], author: who, committer: who, message: 'choice\n' } });
    await git.writeRef({ fs, gitdir, ref, value: oid, force: true });
  });
  await git.deleteRef({ fs, gitdir, ref });

  const rootTree = (
    await git.readTree({ fs, gitdir, oid: (await git.readCommit({ fs, gitdir, oid: (await repo.readHead())! })).commit.tree })
  ).tree;
  const components = rootTree.find((e) => e.path === 'components')!;
  const treeBytes = wrapObject(
    'tree',
    Buffer.from((await git.readObject({ fs, gitdir, oid: components.oid, format: 'content' })).object as Uint8Array),
  );
  const level1 = await medianOf(samples, () => deflateSync(treeBytes, { level: 1 }));
  const stored = compressionFor(wrapObject('tree', treeBytes));
  const level0 = await medianOf(samples, () => deflateSync(treeBytes, stored));

  const fsync = promisify(fs.fsync);
  const scratch = fs.mkdtempSync(join(org.dataDir, 'fsync-'));
  const fileSync = await medianOf(
    samples,
    async (i) => {
      const fd = fs.openSync(join(scratch, `f${i}`), 'wx');
      fs.writeFileSync(fd, 'x'.repeat(200));
      const t0 = performance.now();
      await fsync(fd);
      const took = performance.now() - t0;
      fs.closeSync(fd);
      return took;
    },
    true,
  );
  const dirSync = await medianOf(samples, async (i) => {
    fs.writeFileSync(join(scratch, `d${i}`), 'x');
    const fd = fs.openSync(scratch, 'r');
    try {
      await fsync(fd);
    } finally {
      fs.closeSync(fd);
    }
  });
  fs.rmSync(scratch, { recursive: true, force: true });

  const componentMap = new Map(org.components.map((c) => [c.id, c] as const));
  const writes = Math.max(100, samples * 50);
  const layered = nextModelCost(componentMap, writes, (m) => LayeredMap.over(m));
  const copy = nextModelCost(componentMap, writes, (m) => new Map(m));

  // The same source one file per module, as the build was before it bundled (tsc emitted it then;
  // esbuild's transform of each file gives the same modules in a quarter of a second, where a
  // tsc emit took 15–20 s of the bench's smoke test).
  const modulesDir = fs.mkdtempSync(join(ROOT, '.bench-modules-'));
  let bundled: number;
  let modules: number;
  try {
    const { build } = await import('esbuild');
    const sources = fs.readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    await build({
      entryPoints: sources.map((file) => join(ROOT, 'src', file)),
      outbase: join(ROOT, 'src'),
      outdir: modulesDir,
      bundle: false,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'error',
    });
    startAndExit(CLI);
    startAndExit(join(modulesDir, 'cli.js'));
    bundled = await medianOf(Math.max(3, samples / 4), () => startAndExit(CLI), true);
    modules = await medianOf(Math.max(3, samples / 4), () => startAndExit(join(modulesDir, 'cli.js')), true);
  } finally {
    fs.rmSync(modulesDir, { recursive: true, force: true });
  }

  const figures: ChoiceFigures = {
    components: org.components.length,
    loadBlobs: { c4store: c4Load, cached: cachedLoad, isomorphicGit: isoLoad, blobs: oids.length },
    writeBlob: { c4store: c4Blob, isomorphicGit: isoBlob },
    objectCommit: { c4store: c4Commit, isomorphicGit: isoCommit },
    bigTree: { level1, level0, bytes: treeBytes.length },
    fsync: { file: fileSync, directory: dirSync },
    nextModel: { layered, copy },
    processStart: { bundled, modules },
  };
  log(
    `    load ${oids.length} blobs: c4store ${c4Load.toFixed(0)} ms (from the blob cache ${cachedLoad.toFixed(0)} ms), isomorphic-git ${isoLoad.toFixed(0)} ms; ` +
      `write a blob: ${c4Blob.toFixed(2)} vs ${isoBlob.toFixed(2)} ms; object-level commit: ${c4Commit.toFixed(2)} vs ${isoCommit.toFixed(2)} ms; ` +
      `deflate the ${(treeBytes.length / 1024).toFixed(0)} KiB tree: level 1 ${level1.toFixed(2)} ms, level 0 ${level0.toFixed(2)} ms; ` +
      `fsync of a file ${fileSync.toFixed(2)} ms, of a directory ${dirSync.toFixed(2)} ms; ` +
      `next components map: layered ${layered.toFixed(3)} ms, copied ${copy.toFixed(3)} ms; ` +
      `node dist/cli.js --help: bundled ${bundled.toFixed(0)} ms, one file per module ${modules.toFixed(0)} ms`,
  );
  return figures;
}
