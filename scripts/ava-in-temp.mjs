/**
 * Runs ava (with the arguments given) with TMPDIR set to a directory of this run's own, removed
 * when every test passed: the tests make hundreds of temporary data directories, repositories,
 * clones and browser profiles, and a developer's /tmp should not keep them from run to run.
 * After a failure the directory stays, for a look at what the failing test left.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'c4store-test-'));
const ava = join(import.meta.dirname, '..', 'node_modules', '.bin', 'ava');
const child = spawn(ava, process.argv.slice(2), { stdio: 'inherit', env: { ...process.env, TMPDIR: dir } });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => {
  if (code === 0) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  else console.error(`The tests' temporary files are kept in ${dir}.`);
  process.exit(code ?? 1);
});
