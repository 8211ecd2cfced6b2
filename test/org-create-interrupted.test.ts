/**
 * `c4store org create` stopped part way (src/service/orgs.ts, src/cli.ts): an organization
 * appears under its slug only complete, with its pre-receive hook, git's object checks and the
 * key just printed; a kill -9 at any moment before leaves no organization, and the same command
 * run again makes it. Two creates of one slug at once: one wins, the other's key is revoked.
 * The keys file's lock, held by the test, stops the command at the step before the key is
 * written, which is where a kill used to leave an organization without a key (or a hook).
 * The real command line (dist/cli.js), real git, the real server.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { THIS_MACHINE } from '../src/store/durable-files.js';
import { withDirectoryLock } from '../src/store/lock.js';
import { cli, CLI, lastLine, serveProcess, until } from './support/process.js';
import { run } from './support/server.js';

const dirs: string[] = [];
test.after.always(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function dataDir(): Promise<string> {
  const data = await mkdtemp(join(tmpdir(), 'c4store-org-create-'));
  dirs.push(data);
  return data;
}

/** Runs fn while this process holds the keys file's lock, as another c4store writing a key would. */
const holdingTheKeysLock = <T>(data: string, fn: () => Promise<T>) => withDirectoryLock(data, fn, 'keys.yaml.lock');

/** Repositories being made for `slug` whose pre-receive hook is in place: the last step before the key. */
function stagedWithHook(data: string, slug: string): string[] {
  const orgs = join(data, 'orgs');
  if (!existsSync(orgs)) return [];
  return readdirSync(orgs)
    .filter((name) => name.startsWith(`${slug}.git.init-`))
    .filter((name) => existsSync(join(orgs, name, 'hooks', 'pre-receive')));
}

/** Every repository being made (or left half made) beside the organizations. */
function stagings(data: string): string[] {
  const orgs = join(data, 'orgs');
  return existsSync(orgs)
    ? readdirSync(orgs)
        .filter((name) => name.includes('.git.init-'))
        .sort()
    : [];
}

function createProcess(data: string, slug: string) {
  const child = spawn(process.execPath, [CLI, 'org', 'create', slug, '--data', data], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, exited };
}

async function opens(data: string, key: string): Promise<number> {
  const server = await serveProcess(data);
  try {
    const response = await fetch(`${server.url}/api/external/tags`, { headers: { authorization: `Bearer ${key}` } });
    await response.arrayBuffer();
    return response.status;
  } finally {
    await server.stop();
  }
}

test('killed before its key is written: no organization appears; run again, it is made with a key that opens it', async (t) => {
  const data = await dataDir();
  const gitdir = join(data, 'orgs', 'acme.git');
  await holdingTheKeysLock(data, async () => {
    const create = createProcess(data, 'acme');
    await until(async () => existsSync(gitdir) || stagedWithHook(data, 'acme').length > 0, 30_000);
    // Time for anything that would follow without the key (the rename) to happen.
    await new Promise((resolve) => setTimeout(resolve, 500));
    create.child.kill('SIGKILL');
    await create.exited;
  });
  t.false(existsSync(gitdir), 'no organization under the slug without its key');
  await t.throwsAsync(cli('key', 'list', 'acme', '--data', data), undefined, 'key list: no such organization');

  const key = lastLine(await cli('org', 'create', 'acme', '--data', data));
  t.deepEqual(stagings(data), [], 'the killed create left nothing beside the organizations once the next one ran');
  t.is(await opens(data, key), 200);
  const hooks = await run('git', ['--git-dir', gitdir, 'config', '--get', 'receive.fsckObjects']);
  t.is(hooks.stdout.trim(), 'true');
  t.true(existsSync(join(gitdir, 'hooks', 'pre-receive')));
});

test('two creates of one slug at once: one makes it, the other is refused and its key revoked', async (t) => {
  const data = await dataDir();
  const creates = await holdingTheKeysLock(data, async () => {
    const both = [createProcess(data, 'acme'), createProcess(data, 'acme')];
    await until(async () => stagedWithHook(data, 'acme').length === 2 || existsSync(join(data, 'orgs', 'acme.git')), 30_000);
    return both;
  });
  const ends = await Promise.all(creates.map((create) => create.exited));
  const made = ends.filter((end) => end.code === 0);
  const refused = ends.filter((end) => end.code !== 0);
  t.is(made.length, 1, JSON.stringify(ends));
  t.is(refused.length, 1);
  t.regex(refused[0]!.stderr, /already exists/);
  const listed = (await cli('key', 'list', 'acme', '--data', data)).trim().split('\n');
  t.is(listed.length, 2, listed.join('\n'));
  t.is(listed.filter((line) => line.endsWith('\tactive')).length, 1, listed.join('\n'));
  t.is(listed.filter((line) => line.split('\t')[4]?.startsWith('revoked ')).length, 1, listed.join('\n'));
  t.is(await opens(data, lastLine(made[0]!.stdout)), 200);
  t.deepEqual(stagedWithHook(data, 'acme'), [], 'nothing left of the refused one');
});

/** The pid of a process that ran and is gone. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'close');
  return child.pid!;
}

/**
 * A repository left half made where Repo.init assembles one (`<slug>.git.init-<machine>-<pid>-<random>`),
 * as git makes a bare repository; `backdatedBy` (ms): its folder's times set that far back, as if made then.
 */
async function leftover(data: string, slug: string, maker: { machine?: string; pid?: number }, backdatedBy?: number): Promise<string> {
  const made = maker.machine === undefined ? '' : `${maker.machine}-${maker.pid}-`;
  const name = `${slug}.git.init-${made}${randomBytes(6).toString('hex')}`;
  const dir = join(data, 'orgs', name);
  await run('git', ['init', '-q', '--bare', dir]);
  if (backdatedBy !== undefined) {
    const then = new Date(Date.now() - backdatedBy);
    await utimes(dir, then, then);
  }
  return name;
}

const ELEVEN_MINUTES = 11 * 60_000;

test('repositories left half made by a killed create are removed at the next server start and the next create; ones being made are kept', async (t) => {
  const data = await dataDir();
  const acmeKey = lastLine(await cli('org', 'create', 'acme', '--data', data));
  const gone = await deadPid();
  const otherMachine = THIS_MACHINE === 'ffffffff' ? 'eeeeeeee' : 'ffffffff';
  const abandoned = [
    await leftover(data, 'beta', { machine: THIS_MACHINE, pid: gone }),
    await leftover(data, 'delta', { machine: otherMachine, pid: gone }, ELEVEN_MINUTES),
    // Made by a version that did not name the maker.
    await leftover(data, 'epsilon', {}, ELEVEN_MINUTES),
  ];
  const beingMade = [
    // This test's own process runs.
    await leftover(data, 'gamma', { machine: THIS_MACHINE, pid: process.pid }),
    // Another machine's maker cannot be asked about: only its age tells.
    await leftover(data, 'zeta', { machine: otherMachine, pid: gone }),
    await leftover(data, 'eta', {}),
  ].sort();

  const server = await serveProcess(data);
  try {
    const response = await fetch(`${server.url}/api/external/tags`, { headers: { authorization: `Bearer ${acmeKey}` } });
    await response.arrayBuffer();
    t.is(response.status, 200);
  } finally {
    await server.stop();
  }
  t.deepEqual(stagings(data), beingMade, 'the server start removed the abandoned ones and kept the others');
  t.deepEqual(
    readdirSync(join(data, 'orgs')).filter((name) => name.endsWith('.git')),
    ['acme.git'],
  );
  for (const name of beingMade) {
    t.false(existsSync(join(data, 'orgs', name, 'hooks', 'pre-receive')), `${name} was not taken for an organization`);
  }
  t.is((await run('git', ['--git-dir', join(data, 'orgs', 'acme.git'), 'fsck', '--strict'])).stdout.trim(), '');
  for (const slug of ['beta', 'gamma']) {
    await t.throwsAsync(cli('key', 'list', slug, '--data', data), undefined, `${slug} is no organization`);
  }

  const again = await leftover(data, 'beta', { machine: THIS_MACHINE, pid: await deadPid() });
  t.true(stagings(data).includes(again));
  lastLine(await cli('org', 'create', 'theta', '--data', data));
  t.deepEqual(stagings(data), beingMade, 'the next create removed the abandoned one and kept the others');
  t.deepEqual(
    readdirSync(join(data, 'orgs'))
      .filter((name) => name.endsWith('.git'))
      .sort(),
    ['acme.git', 'theta.git'],
  );
  t.deepEqual(
    abandoned.filter((name) => existsSync(join(data, 'orgs', name))),
    [],
  );
});
