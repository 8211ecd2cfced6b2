import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitText, runGit } from '../store/git-cli.js';
import { replaceFile } from '../store/durable-files.js';

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

/**
 * Every push to an organization repository checked, by git and by c4store: the pre-receive hook,
 * and git's own object checks on everything received, fetched or transferred (a tree with
 * unsorted entries or a `.GIT` path is refused before any hook runs). Run on every repository at
 * every start, so that repositories made before these settings get them too.
 */
export async function guardPushes(gitdir: string): Promise<void> {
  await installPreReceiveHook(gitdir);
  await requireObjectChecks(gitdir);
}

/** git's settings that check every object a push brings (git fsck's rules), each `true`. */
export const OBJECT_CHECKS = ['receive.fsckObjects', 'transfer.fsckObjects', 'fetch.fsckObjects'] as const;

/**
 * fsck findings git only warns about by default, made errors for what a push or fetch brings: a
 * tree entry of a mode git never writes (`100664`, `40755`: "badFilemode"), which no client of
 * ours makes and which tools read in different ways, and a tag object without a tagger or with a
 * name no ref could have (`v1..bad`).
 */
export const OBJECT_CHECK_SEVERITIES = [
  ['receive.fsck.badFilemode', 'error'],
  ['fetch.fsck.badFilemode', 'error'],
  ['receive.fsck.missingTaggerEntry', 'error'],
  ['receive.fsck.badTagName', 'error'],
] as const;

/** `section.key` or `section.subsection.key` as a line of its section in git's config file, as git config writes it. */
function writtenAs(name: string, value: string): RegExp {
  const parts = name.split('.');
  const key = parts.pop()!;
  const section = parts.length === 1 ? `\\[${parts[0]}\\]` : `\\[${parts[0]} "${parts[1]}"\\]`;
  return new RegExp(`${section}[^[]*\\b${key} = ${value}\\b`, 'i');
}

async function requireObjectChecks(gitdir: string): Promise<void> {
  const wanted: Array<readonly [string, string]> = [...OBJECT_CHECKS.map((name) => [name, 'true'] as const), ...OBJECT_CHECK_SEVERITIES];
  // As git config writes them: a start with many organizations reads files, and runs no git.
  const text = readFileSync(join(gitdir, 'config'), 'utf8');
  for (const [name, value] of wanted) {
    if (writtenAs(name, value).test(text)) continue;
    const current = (await gitText(gitdir, ['config', '--get', name], { okCodes: [1] })).trim().toLowerCase();
    if (current === value || (value === 'true' && ['yes', 'on', '1'].includes(current))) continue;
    try {
      await runGit(gitdir, ['config', name, value]);
    } catch (err) {
      // Another process starting on the same data directory may hold config.lock: it is setting the same.
      await new Promise((resolve) => setTimeout(resolve, 200));
      if ((await gitText(gitdir, ['config', '--get', name], { okCodes: [1] })).trim().toLowerCase() !== value) throw err;
    }
  }
}

/** Writes the hook unless it is already there as it should be; atomically, so git never runs half a script. */
async function installPreReceiveHook(gitdir: string): Promise<void> {
  const file = join(gitdir, 'hooks', 'pre-receive');
  const script = hookScript();
  if (existsSync(file) && readFileSync(file, 'utf8') === script) return;
  await mkdir(dirname(file), { recursive: true });
  await replaceFile(file, script, { mode: 0o755, durable: false });
}
