import * as nodeFs from 'node:fs';
import { ApiError } from '../errors.js';
import type { Repo } from '../store/repo.js';

const FULL_ID = /^[0-9a-f]{40}$/;
/** As `git log --oneline` prints them: at least 4 hex digits (git's own minimum abbreviation). */
const ABBREVIATED_ID = /^[0-9a-f]{4,39}$/;

/**
 * The commit a client names in `?at=`: a full commit id, or an abbreviation of one as git
 * prints it. Other ways to name a commit (version names) belong here too, so that every
 * reader of `?at=` understands the same names.
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
