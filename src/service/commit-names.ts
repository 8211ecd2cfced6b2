import * as nodeFs from 'node:fs';
import { ApiError } from '../errors.js';
import { runGit } from '../store/git-cli.js';
import { VERSION_NAME } from '../store/refs.js';
import type { Repo } from '../store/repo.js';

const FULL_ID = /^[0-9a-f]{40}$/;
/** As `git log --oneline` prints them: at least 4 hex digits (git's own minimum abbreviation). */
const ABBREVIATED_ID = /^[0-9a-f]{4,39}$/;

/**
 * The commit a client names wherever one is taken (`?at=`, `from`, `to`, `before`, history,
 * revert): a full commit id, an abbreviation of one as `git log --oneline` prints it, a
 * version name (an annotated tag), or `main`. Nothing else of git's revision syntax
 * (`main~3`, `:/text`, reflogs): a request never makes git search or walk.
 */
export async function resolveCommitName(repo: Repo, name: string): Promise<string> {
  const hex = name.toLowerCase();
  if (FULL_ID.test(hex)) {
    if (await repo.hasCommit(hex)) return hex;
  } else if (ABBREVIATED_ID.test(hex)) {
    const commits = await commitsStartingWith(repo, hex);
    if (commits.length === 1) return commits[0];
    if (commits.length > 1) {
      throw new ApiError(400, `Commit '${name}' is ambiguous: it abbreviates ${commits.length} commits; give more digits.`);
    }
  }
  // A version may be named with hex digits only: a commit id wins where both exist.
  if (name === 'main') {
    const head = await repo.readHead();
    if (head !== null) return head;
  } else if (VERSION_NAME.test(name) && !name.includes('..')) {
    const { code, stdout } = await runGit(
      repo.gitdir,
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/tags/${name}^{commit}`],
      {
        okCodes: [1, 128],
      },
    );
    if (code === 0) return stdout.toString('utf8').trim();
  }
  throw new ApiError(404, `Commit '${name}' does not exist.`);
}

/** Commits (loose or packed) whose id starts with `prefix`; like git, objects of other types do not count. */
async function commitsStartingWith(repo: Repo, prefix: string): Promise<string[]> {
  const { expandOid } = await import('isomorphic-git');
  let candidates: string[];
  try {
    candidates = [await expandOid({ fs: nodeFs, gitdir: repo.gitdir, oid: prefix })];
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'NotFoundError') return [];
    if (code !== 'AmbiguousError') throw error;
    candidates = (error as { data: { matches: string[] } }).data.matches;
  }
  const commits: string[] = [];
  for (const oid of candidates) if (await repo.hasCommit(oid)) commits.push(oid);
  return commits;
}
