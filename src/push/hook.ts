import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * git's own pre-receive hook in every organization repository, so that a push made with file
 * access (`git push /data/orgs/acme.git main`) is checked exactly like one over HTTP: it runs
 * `c4store hook pre-receive` (src/push/check.ts) with the node that runs this service.
 */

const CLI = resolve(
  dirname(fileURLToPath(import.meta.url)),
  fileURLToPath(import.meta.url).endsWith('.ts') ? '../../dist/cli.js' : './cli.js',
);

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function hookScript(): string {
  return [
    '#!/bin/sh',
    '# Installed by c4store (rewritten at every start): a push to main must keep the model valid.',
    `exec ${quote(process.execPath)} ${quote(CLI)} hook pre-receive`,
    '',
  ].join('\n');
}

/** Writes the hook unless it is already there as it should be; atomically, so git never runs half a script. */
export async function installPreReceiveHook(gitdir: string): Promise<void> {
  const file = join(gitdir, 'hooks', 'pre-receive');
  const script = hookScript();
  if (existsSync(file) && readFileSync(file, 'utf8') === script) return;
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, script);
  await chmod(temp, 0o755);
  await rename(temp, file);
}
