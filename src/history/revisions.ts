import { ApiError } from '../errors.js';
import { runGit } from '../store/git-cli.js';

/**
 * What a person types for a commit, as `git log --oneline` and `git tag` show it: a full or
 * abbreviated commit id (4 hex digits or more), a version name (an annotated tag), or `main`.
 * Nothing else of git's revision syntax (`main~3`, `:/text`, reflogs) is taken, so a request
 * can never make git search or walk more than it asked for.
 */
const HEX = /^[0-9a-f]{4,40}$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;

export async function resolveRevision(gitdir: string, revision: string): Promise<string> {
  if (revision === 'main') return verify(gitdir, 'refs/heads/main', revision);
  if (HEX.test(revision)) {
    const commits = await commitsStartingWith(gitdir, revision);
    if (commits.length === 1) return commits[0];
    if (commits.length > 1) {
      throw new ApiError(400, `Commit '${revision}' is ambiguous: ${commits.length} commits start with it; give more digits.`);
    }
    // Otherwise it may still be a version named with hex digits only.
  }
  if (NAME.test(revision) && !revision.includes('..')) return verify(gitdir, `refs/tags/${revision}`, revision);
  throw new ApiError(404, `Commit '${revision}' does not exist.`);
}

async function verify(gitdir: string, name: string, asTyped: string): Promise<string> {
  const { code, stdout } = await runGit(gitdir, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${name}^{commit}`], {
    okCodes: [1, 128],
  });
  if (code === 0) return stdout.toString('utf8').trim();
  throw new ApiError(404, `Commit '${asTyped}' does not exist.`);
}

/** The commits (not blobs or trees, which share the id space) whose id starts with `prefix`. */
async function commitsStartingWith(gitdir: string, prefix: string): Promise<string[]> {
  if (prefix.length === 40) {
    const { stdout } = await runGit(gitdir, ['cat-file', '--batch-check'], { input: `${prefix}\n` });
    return stdout.toString('utf8').startsWith(`${prefix} commit `) ? [prefix] : [];
  }
  const { stdout } = await runGit(gitdir, ['rev-parse', `--disambiguate=${prefix}`], { okCodes: [128] });
  const candidates = stdout.toString('utf8').split('\n').filter((line) => line !== '');
  if (candidates.length === 0) return [];
  const { stdout: types } = await runGit(gitdir, ['cat-file', '--batch-check'], { input: `${candidates.join('\n')}\n` });
  return types.toString('utf8').split('\n').filter((line) => line.split(' ')[1] === 'commit').map((line) => line.split(' ')[0]);
}
