import { ModelError } from '../errors.js';
import { FileError } from '../model/files.js';
import { loadModel } from '../model/load.js';
import type { Model } from '../model/types.js';
import { CatFile, gitText, runGit } from '../store/git-cli.js';
import { checkDraftPush } from './drafts.js';

/**
 * The check of a push, by git's own pre-receive hook (src/push/hook.ts) or before the smart
 * HTTP route lets receive-pack move a ref: `main` only moves forward, and every commit it
 * gains holds a valid model — checked by `loadModel`, the same code that loads every commit
 * the service serves, with the same rules that refuse API writes.
 *
 * It reads through git's command line, not the service's object store: during a push the
 * new objects sit in git's quarantine directory, which only git (told by the environment
 * receive-pack sets) can see.
 */

const ZERO = /^0{40}$/;
const MAIN = 'refs/heads/main';

export interface RefUpdate {
  old: string;
  new: string;
  ref: string;
}

export function parseRefUpdates(stdin: string): RefUpdate[] {
  return stdin
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [old, next, ref] = line.trim().split(' ');
      return { old, new: next, ref };
    });
}

/**
 * git's variables that point at a push's quarantined objects: set by receive-pack for its
 * hooks, and needed by every git command that must see the objects being pushed.
 */
export function quarantineEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const name of ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH']) {
    if (env[name] !== undefined) kept[name] = env[name];
  }
  return kept;
}

/** The problems of a push, one line each; none means it may go through. */
export async function checkPush(gitdir: string, updates: readonly RefUpdate[], env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const problems: string[] = [];
  for (const update of updates) {
    if (update.ref === MAIN) problems.push(...(await checkMain(gitdir, update, env)));
    else if (update.ref.startsWith('refs/heads/drafts/')) problems.push(...(await checkDraftPush(gitdir, update, env, checkCommits)));
    else if (update.ref.startsWith('refs/tags/')) {
      if (!ZERO.test(update.old)) problems.push(`${update.ref}: versions are never moved or deleted; make a new one.`);
    } else {
      problems.push(`${update.ref}: only main, drafts/<name> and new version tags can be pushed; the model lives on main.`);
    }
  }
  return problems;
}

async function checkMain(gitdir: string, update: RefUpdate, env: NodeJS.ProcessEnv): Promise<string[]> {
  if (ZERO.test(update.new)) return ['main cannot be deleted.'];
  if (!ZERO.test(update.old)) {
    const { code } = await runGit(gitdir, ['merge-base', '--is-ancestor', update.old, update.new], { okCodes: [1], env });
    if (code !== 0) return ['main can only move forward: fetch, rebase your commits onto it, and push again (no force-push).'];
  }
  return checkCommits(gitdir, ZERO.test(update.old) ? [update.new] : [update.new, `^${update.old}`], env);
}

/** Every commit of a `git rev-list` range, oldest first, loaded and checked as the service loads a commit; the first problem. */
export async function checkCommits(gitdir: string, range: readonly string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const commits = (await gitText(gitdir, ['rev-list', '--reverse', '--topo-order', ...range, '--'], { env })).split('\n').filter(Boolean);
  const catFile = new CatFile(gitdir, env);
  try {
    let previous: { files: Map<string, string>; model: Model } | undefined;
    for (const commit of commits) {
      const files = await treeFiles(gitdir, commit, env);
      try {
        const model = await loadModel(files, {
          read: async (oid) => {
            const content = await catFile.read(oid);
            if (content === null) throw new Error(`object ${oid} is missing`);
            return content.toString('utf8');
          },
          reuse: previous ? reuseFrom(previous) : undefined,
        });
        previous = { files, model };
      } catch (err) {
        if (err instanceof FileError || err instanceof ModelError) return [`commit ${commit.slice(0, 12)}: ${err.message}`];
        throw err;
      }
    }
    return [];
  } finally {
    catFile.close();
  }
}

function reuseFrom(previous: { files: Map<string, string>; model: Model }) {
  return (path: string, oid: string) => (previous.files.get(path) === oid ? previous.model : undefined);
}

/** path → blob id of every file in a commit's tree, in git's order. */
export async function treeFiles(gitdir: string, commit: string, env: NodeJS.ProcessEnv = {}): Promise<Map<string, string>> {
  const { stdout } = await runGit(gitdir, ['ls-tree', '-r', '-z', '--full-tree', commit], { env });
  const files = new Map<string, string>();
  for (const entry of stdout.toString('utf8').split('\0')) {
    if (entry === '') continue;
    const tab = entry.indexOf('\t');
    const [, type, oid] = entry.slice(0, tab).split(' ');
    if (type === 'blob') files.set(entry.slice(tab + 1), oid);
  }
  return files;
}
