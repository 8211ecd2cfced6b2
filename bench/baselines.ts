/**
 * The same single-component change, committed without c4store's HTTP layer:
 * - floor: Repo.commit, the project's own store layer (no HTTP, no validation, no lock);
 * - floor + write lock: the same inside Repo.withWriteLock, as the service does it;
 * - floor, durable: Repo.commit with { durable: true } (fsyncs), the floor of --durable;
 * - floor in the server's repository (and durable): the same two, committed into the very
 *   repository the server under test (default, and --durable) writes to, between its rounds:
 *   the same directories, the same objects freed by its packing, the same file system state
 *   (see results.md: on this machine kind what a file's creation costs depends on what was
 *   deleted lately); the floors above write into a repository that never packs;
 * - git CLI: the file written into a working-tree clone, then `git add <file>` and `git commit`;
 * - isomorphic-git: the file written into a working-tree clone, then git.add + git.commit.
 * Each runs in this process, back to back, while the servers under test sit idle.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import git from 'isomorphic-git';
import type { Component } from '../src/model/types.js';
import { Repo } from '../src/store/repo.js';
import { BENCH_AUTHOR, updatedFile, type BenchOrg } from './fixture.js';
import { timeLoop, type Figure, type Measurement } from './stats.js';

const run = promisify(execFile);

export type BaselineName = 'floor' | 'floorLocked' | 'floorDurable' | 'floorInServer' | 'floorInServerDurable' | 'gitCli' | 'isomorphicGit';
export type BaselineFigures = Record<BaselineName, Figure>;

/** Which component the i-th change of a run touches: spread over the whole model. */
export function pick(components: readonly Component[], i: number): Component {
  return components[(i * 7919) % components.length]!;
}

/** A measurement that repeats `op` (numbered across rounds, so every change is new) for the round's duration. */
function looped(key: BaselineName, label: string, op: (i: number) => Promise<void>, afterRound?: () => Promise<void>): Measurement {
  let next = 0;
  return {
    key,
    label,
    async round(ms) {
      const round = await timeLoop(op, ms, 3, next);
      next += round.latencies.length;
      await afterRound?.();
      return round;
    },
  };
}

/** A commit of one changed file through the project's store layer, optionally under its write lock. */
function storeCommit(repo: Repo, org: BenchOrg, tag: string, locked: boolean): (i: number) => Promise<void> {
  return async (i) => {
    const change = updatedFile(pick(org.components, i), `${tag} edit ${i}`);
    const commit = async () => {
      const parent = (await repo.readHead())!;
      await repo.commit({ parent, changes: [change], author: BENCH_AUTHOR, message: 'POST /api/external/component\n' });
    };
    await (locked ? repo.withWriteLock(commit) : commit());
  };
}

/**
 * A non-bare clone as a quick git-backed store would keep it: cloned over git's transport
 * (objects in a pack, like any clone from a remote), identity configured, automatic gc off
 * so that a background repack does not land in the middle of a round.
 */
export async function workingClone(gitdir: string, dir: string): Promise<void> {
  await run('git', ['clone', '--quiet', '--no-local', '--branch', 'main', gitdir, dir]);
  for (const [key, value] of [
    ['user.name', BENCH_AUTHOR.name],
    ['user.email', BENCH_AUTHOR.email],
    ['gc.auto', '0'],
  ] as const) {
    await run('git', ['-C', dir, 'config', key, value]);
  }
}

/**
 * A server under test whose repository a floor also commits to: after each of the floor's rounds
 * the server is asked (`catchUp`, not timed) to load those commits, so that none of its measured
 * writes starts by loading them.
 */
export interface ServerRepository {
  gitdir: string;
  catchUp: () => Promise<void>;
}

/** `inServer`: the repositories of the default and the --durable server under test (see the top). */
export async function baselineMeasurements(
  org: BenchOrg,
  workDir: string,
  inServer: { plain: ServerRepository; durable: ServerRepository },
): Promise<Measurement[]> {
  const cliDir = join(workDir, 'git-cli');
  const isoDir = join(workDir, 'isomorphic-git');
  await Promise.all([workingClone(org.gitdir, cliDir), workingClone(org.gitdir, isoDir)]);
  return [
    looped('floor', 'floor: Repo.commit', storeCommit(new Repo(org.gitdir), org, 'floor', false)),
    looped('floorLocked', 'floor + write lock', storeCommit(new Repo(org.gitdir), org, 'locked', true)),
    looped('floorDurable', 'floor, durable', storeCommit(new Repo(org.gitdir, { durable: true }), org, 'durable', false)),
    looped(
      'floorInServer',
      "floor in the server's repository",
      storeCommit(new Repo(inServer.plain.gitdir), org, 'floor in server', false),
      inServer.plain.catchUp,
    ),
    looped(
      'floorInServerDurable',
      "floor, durable, in the server's repository",
      storeCommit(new Repo(inServer.durable.gitdir, { durable: true }), org, 'durable floor in server', false),
      inServer.durable.catchUp,
    ),
    looped('gitCli', 'git add && git commit', async (i) => {
      const { path, content } = updatedFile(pick(org.components, i), `git edit ${i}`);
      fs.writeFileSync(join(cliDir, path), content!);
      await run('git', ['-C', cliDir, 'add', path]);
      await run('git', ['-C', cliDir, 'commit', '--quiet', '-m', 'POST /api/external/component']);
    }),
    looped('isomorphicGit', 'isomorphic-git add + commit', async (i) => {
      const { path, content } = updatedFile(pick(org.components, i), `iso edit ${i}`);
      fs.writeFileSync(join(isoDir, path), content!);
      await git.add({ fs, dir: isoDir, filepath: path });
      await git.commit({ fs, dir: isoDir, message: 'POST /api/external/component', author: BENCH_AUTHOR });
    }),
  ];
}
