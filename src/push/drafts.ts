import { draftOfRef, draftRef, reservedDraftName } from '../store/branches.js';
import { runGit } from '../store/git-cli.js';

/** check.ts's check of new commits, handed in (check.ts calls this module). */
type CheckCommits = (gitdir: string, range: readonly string[], env: NodeJS.ProcessEnv) => Promise<string[]>;

const ZERO = /^0{40}$/;

/**
 * A push to a draft's branch `drafts/<name>` (CONTRACT §8): a push that creates one opens the
 * draft; every commit it brings holds a valid model, checked as a push to `main` is. A draft
 * is a proposal, so it may be rewritten (force-pushed); `main` alone only moves forward.
 * A draft is closed or merged through the API, where its branch is kept, not by deleting it.
 */
export async function checkDraftPush(
  gitdir: string,
  update: { old: string; new: string; ref: string },
  env: NodeJS.ProcessEnv,
  checkCommits: CheckCommits,
): Promise<string[]> {
  const name = draftOfRef(update.ref);
  if (name === undefined) {
    return [
      `${update.ref}: a draft's name uses lowercase letters, digits, '.', '_' and '-', starting with a letter or digit (at most 63).`,
    ];
  }
  if (ZERO.test(update.new)) {
    return [`Draft '${name}' is not closed by deleting its branch: DELETE /api/external/drafts/${name} closes it and keeps the branch.`];
  }
  if (ZERO.test(update.old)) {
    const reserved = reservedDraftName(name);
    if (reserved !== undefined) return [`drafts/${name}: a draft cannot be named '${name}': ${reserved}.`];
    for (const state of ['merged', 'closed'] as const) {
      const { code } = await runGit(gitdir, ['rev-parse', '--verify', '--quiet', draftRef(name, state)], { okCodes: [1], env });
      if (code === 0) {
        return [
          state === 'closed'
            ? `Draft '${name}' is closed; reopen it (POST /api/external/drafts/${name}/reopen) before pushing to it.`
            : `Draft '${name}' is merged; push a draft of another name.`,
        ];
      }
    }
  }
  // A draft proposes a change to main: without a commit in common it has no base to be shown
  // against or merged onto (its diff would be the whole model, its author nobody's).
  const shared = await runGit(gitdir, ['merge-base', 'refs/heads/main', update.new], { okCodes: [1], env });
  if (shared.code === 1) {
    return [
      `drafts/${name}: a draft starts from a commit of main, and this branch shares no history with main; branch it from main (git switch -c drafts/${name} origin/main) and commit the change there.`,
    ];
  }
  // The commits no ref holds yet: those on main or another draft were checked when they came.
  const problems = await checkCommits(gitdir, [update.new, '--not', '--all'], env);
  return problems.map((problem) => `drafts/${name}: ${problem}`);
}
