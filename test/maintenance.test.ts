/**
 * Background packing (issue "Git-native review", point 8): git gc runs beside a stream of
 * writes and reads; no acknowledged write is lost, no read fails, and git fsck stays clean.
 */
import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/server.js';
import { gitText } from '../src/store/git-cli.js';
import { tryDirectoryLock } from '../src/store/lock.js';
import {
  GRAPH_EVERY,
  MAINTENANCE_LOCK,
  MAINTENANCE_LOCK_TIMING,
  Maintenance,
  QUARANTINE_ABANDONED_AFTER_MS,
} from '../src/store/maintenance.js';
import { until } from './support/process.js';
import { isErrorLine, run, TestServer } from './support/server.js';

test('packing every 10 commits during 4 writers and a reader: all writes kept, loose objects packed, fsck clean', async (t) => {
  const s = await TestServer.start({ packEvery: 10 });
  try {
    const before = await s.commitCount();
    const names: string[] = [];
    let readsFailed = 0;
    let writing = true;
    const reader = (async () => {
      while (writing) {
        const reply = await s.get('/api/external/component');
        if (reply.status !== 200) readsFailed++;
      }
    })();
    await Promise.all(
      [0, 1, 2, 3].map(async (client) => {
        for (let i = 0; i < 15; i++) {
          const name = `c${client}-${i}`;
          const reply = await s.post('/api/external/component', [{ name }]);
          t.is(reply.status, 200, reply.text);
          names.push(name);
        }
      }),
    );
    writing = false;
    await reader;
    await s.server.close();
    t.is(readsFailed, 0);
    t.is(await s.commitCount(), before + 60);
    const counts = Object.fromEntries(
      (await s.git('count-objects', '-v'))
        .trim()
        .split('\n')
        .map((line) => line.split(': ')),
    );
    t.true(Number(counts.packs) >= 1, JSON.stringify(counts));
    t.true(Number(counts.count) < 60 * 5, `loose objects left: ${counts.count}`);
    t.is((await s.git('fsck', '--full', '--strict')).trim(), '');
    t.deepEqual(
      s.logs.filter((line) => line.includes('maintenance') || isErrorLine(line)),
      [],
    );
    const served = await (async () => {
      const again = await startServer({ dataDir: s.dataDir, port: 0, log: () => {}, packEvery: 0 });
      try {
        const reply = await fetch(`${again.url}/api/external/component`, { headers: { authorization: `Bearer ${s.key}` } });
        return ((await reply.json()) as Array<{ name: string }>).map((c) => c.name);
      } finally {
        await again.close();
      }
    })();
    t.deepEqual(served.sort(), names.sort(), 'a restart on the packed repository serves every write');
  } finally {
    await s.close().catch(() => {});
  }
});

test('writes after a repack pruned the fan-out directories the writer knew: every object is written again where it belongs', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    const many = (tag: string) => Array.from({ length: 300 }, (_, i) => ({ name: `${tag} ${i}` }));
    t.is((await s.post('/api/external/component', many('first'))).status, 200);
    // git repack -d packs every loose object and removes the fan-out directories it emptied,
    // which the server's object writer remembers as existing.
    await s.git('repack', '-d', '-q');
    t.deepEqual(
      (await readdir(join(s.gitdir, 'objects'))).filter((d) => /^[0-9a-f]{2}$/.test(d)),
      [],
    );
    const second = await s.post('/api/external/component', many('second'));
    t.is(second.status, 200, second.text);
    t.deepEqual(
      s.logs.filter((line) => isErrorLine(line)),
      [],
    );
    t.is((await s.git('fsck', '--full', '--strict')).trim(), '');
  } finally {
    await s.close();
  }
});

test('git for background work (packing) runs at the lowest CPU priority: the processes it starts inherit nice 19', async (t) => {
  const s = await TestServer.start();
  try {
    const gitdir = join(s.dataDir, 'orgs', `${s.slug}.git`);
    // `nice` without arguments prints the niceness it runs at; git runs the alias in a child.
    const niceness = async (lowPriority: boolean) =>
      (await gitText(gitdir, ['-c', 'alias.niceness=!nice', 'niceness'], { lowPriority })).trim();
    t.is(await niceness(true), '19');
    t.not(await niceness(false), '19');
    // Where there is no `nice` to start it with, the work is done all the same.
    const onlyGit = await mkdtemp(join(tmpdir(), 'c4store-path-'));
    t.teardown(() => rm(onlyGit, { recursive: true, force: true }));
    await symlink(execFileSync('sh', ['-c', 'command -v git']).toString().trim(), join(onlyGit, 'git'));
    const noNice = await gitText(gitdir, ['rev-parse', '--is-bare-repository'], { lowPriority: true, env: { PATH: onlyGit } });
    t.is(noNice.trim(), 'true');
  } finally {
    await s.close();
  }
});

test('with packing off, every 100 commits the commit graph takes in the new ones, with changed-path filters one resource history uses', async (t) => {
  // The graph's update 30 s after start would take in the commits made by then and count the 100 from there (a busy machine's 100 writes take longer).
  const s = await TestServer.start({ packEvery: 0, maintenanceStartDelayMs: 3_600_000 });
  try {
    const before = await s.commitCount();
    // The server counts its own commits: GRAPH_EVERY of them.
    const created = await s.post('/api/external/component', [{ name: 'Watched' }]);
    t.is(created.status, 200, created.text);
    const watched = (created.body as Array<{ id: string }>)[0]!.id;
    for (let n = 1; n < GRAPH_EVERY; n++) t.is((await s.post('/api/external/component', [{ name: `c${n}` }])).status, 200);
    await s.server.close();
    t.is(await s.commitCount(), before + GRAPH_EVERY);
    t.deepEqual(
      s.logs.filter((line) => line.includes('maintenance') || isErrorLine(line)),
      [],
    );
    t.is((await s.git('commit-graph', 'verify')).trim(), '');
    // git's trace of the Bloom filters' use: every commit of the walk answered by a filter.
    const path = (await s.git('log', '--format=', '--name-only', '-1', '--diff-filter=A', '-S', 'Watched')).trim();
    t.regex(path, new RegExp(`${watched}\\.yaml$`));
    const trace = join(await mkdtemp(join(tmpdir(), 'c4store-trace-')), 'events');
    t.teardown(() => rm(join(trace, '..'), { recursive: true, force: true }));
    execFileSync('git', ['--git-dir', s.gitdir, 'log', '--format=%H', 'main', '--', path], {
      env: { ...process.env, GIT_TRACE2_EVENT: trace },
    });
    const statistics = (await readFile(trace, 'utf8'))
      .split('\n')
      .filter((line) => line.includes('"category":"bloom"'))
      .map((line) => JSON.parse(line).value as { filter_not_present: number; definitely_not: number });
    t.is(statistics.length, 1, 'git used the changed-path filters');
    t.is(statistics[0]!.filter_not_present, 0);
    // "maybe" for the commits that touched a component of the same shard directory (filters hold directories too).
    t.true(statistics[0]!.definitely_not > GRAPH_EVERY / 2, JSON.stringify(statistics[0]));
  } finally {
    await s.close().catch(() => {});
  }
});

test('a repository another process is maintaining is skipped without a failure, and maintained at a later commit', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    t.is((await s.post('/api/external/component', [{ name: 'Loose' }])).status, 200);
    const packs = async () => Number(/^packs: (\d+)$/m.exec(await s.git('count-objects', '-v'))![1]);
    const before = await packs();
    const lines: string[] = [];
    const maintenance = new Maintenance(5, (line) => lines.push(line));
    // Held the way another server process holds it while it packs.
    const other = await tryDirectoryLock(s.gitdir, MAINTENANCE_LOCK, MAINTENANCE_LOCK_TIMING, (line) => lines.push(line));
    t.truthy(other);
    await maintenance.pack(s.gitdir);
    t.is(await packs(), before, 'nothing packed while the other process held the repository');
    await other!();
    // The turn it skipped comes at its next commit.
    maintenance.afterCommit(s.gitdir);
    await maintenance.close();
    t.is(await packs(), before + 1);
    t.is((await s.git('commit-graph', 'verify')).trim(), '');
    t.deepEqual(lines, []);
  } finally {
    await s.close();
  }
});

test('two processes packing one repository at the same moment, ten times: one packs, the other skips, neither fails', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    const lines: string[] = [];
    for (let round = 0; round < 10; round++) {
      t.is((await s.post('/api/external/component', [{ name: `Loose ${round}` }])).status, 200);
      // Two servers' maintenance (each its own process's): before the lock, one of them failed on
      // git's commit-graph.lock now and then (1 round in 5 here).
      const [one, two] = [new Maintenance(5, (line) => lines.push(line)), new Maintenance(5, (line) => lines.push(line))];
      await Promise.all([one.pack(s.gitdir), two.pack(s.gitdir)]);
    }
    t.deepEqual(lines, []);
    t.is(/^count: (\d+)$/m.exec(await s.git('count-objects', '-v'))![1], '0', 'every round packed');
    t.is((await s.git('fsck', '--full', '--strict')).trim(), '');
    t.is((await s.git('commit-graph', 'verify')).trim(), '');
  } finally {
    await s.close();
  }
});

/** git's quarantine of objects a push brings (receive-pack's tmp_objdir, `incoming-*` before git 2.33). */
const quarantines = async (gitdir: string) =>
  (await readdir(join(gitdir, 'objects'))).filter((name) => /^(tmp_objdir-)?incoming-/.test(name)).sort();

test("git's quarantine of a push killed mid-receive stays behind; maintenance removes it once it is a day old, and leaves a younger one", async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  const work = await mkdtemp(join(tmpdir(), 'c4store-push-'));
  try {
    const head = await s.head();
    // A hook that holds the push while its objects sit in the quarantine, where a kill finds them.
    await writeFile(join(s.gitdir, 'hooks', 'pre-receive'), '#!/bin/sh\nsleep 60\n', { mode: 0o755 });
    await run('git', ['clone', '-q', s.gitdir, work]);
    await writeFile(join(work, 'README.md'), 'notes\n');
    await run('git', ['-C', work, 'add', 'README.md']);
    await run('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'notes']);
    // In a process group of its own: killed whole, as a kill -9 of a server or a machine stops it, no process left to clean up.
    const push = spawn('git', ['-C', work, 'push', '-q', 'origin', 'HEAD:main'], { detached: true, stdio: 'ignore' });
    const ended = once(push, 'close');
    await until(async () => (await quarantines(s.gitdir)).length > 0, 30_000);
    process.kill(-push.pid!, 'SIGKILL');
    await ended;
    const [left] = await quarantines(s.gitdir);
    t.truthy(left, 'the killed push left its quarantine');
    // A second leftover, to be found by the commit graph's turn (packing off) rather than packing's.
    const copy = 'tmp_objdir-incoming-c0py01';
    await cp(join(s.gitdir, 'objects', left!), join(s.gitdir, 'objects', copy), { recursive: true });

    const lines: string[] = [];
    const maintenance = new Maintenance(1000, (line) => lines.push(line));
    await maintenance.pack(s.gitdir);
    await maintenance.updateGraph(s.gitdir);
    t.deepEqual(await quarantines(s.gitdir), [left, copy].sort(), 'a quarantine less than a day old may be a push under way: kept');

    const old = new Date(Date.now() - QUARANTINE_ABANDONED_AFTER_MS - 3_600_000);
    await utimes(join(s.gitdir, 'objects', left!), old, old);
    await maintenance.pack(s.gitdir);
    t.deepEqual(await quarantines(s.gitdir), [copy], 'packing removed the one a day old');
    await utimes(join(s.gitdir, 'objects', copy), old, old);
    await maintenance.updateGraph(s.gitdir);
    t.deepEqual(await quarantines(s.gitdir), [], "the commit graph's turn removed the other");
    await maintenance.close();
    t.deepEqual(lines, []);
    t.is(await s.head(), head, 'the killed push moved nothing');
    t.is((await s.git('fsck', '--strict')).trim(), '');
  } finally {
    await s.close();
    await rm(work, { recursive: true, force: true });
  }
});
