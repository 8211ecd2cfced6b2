/**
 * git on a clone of an organization's repository, as a person at a terminal runs it: for the
 * tests that commit and push over real HTTP.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type TestServer } from './server.js';

export const GIT_IDENTITY = ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com'];
/** Never a password prompt: a refused key fails the command. */
export const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0' };

/** `git -C cwd args` (stdin `input`, if any): its output trimmed; a failure carries git's stderr. */
export function gitIn(cwd: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['-C', cwd, ...GIT_IDENTITY, ...args],
      { env: GIT_ENV, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve(stdout.trim())),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** The organization's git address with the key as password. */
export function remoteOf(s: TestServer, key = s.key): string {
  const url = new URL(`${s.url}/git/${s.slug}.git`);
  url.username = 'ci';
  url.password = key;
  return url.href;
}

/** A clone of the organization in a directory of its own, removed when the test ends. */
export async function cloneFor(t: { teardown: (fn: () => Promise<void>) => void }, s: TestServer, prefix: string): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  const dir = join(parent, 'model');
  await run('git', ['clone', '-q', remoteOf(s), dir], { env: GIT_ENV });
  return dir;
}
