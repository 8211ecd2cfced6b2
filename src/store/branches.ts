/**
 * Refs beyond `main`: the branches of drafts (`refs/heads/drafts/<name>`) and where closed and
 * merged drafts are kept (`refs/drafts-closed/<name>`, `refs/drafts-merged/<name>`, outside
 * `refs/heads/` so that a clone no longer shows them as branches). Moves of more than one ref
 * go through `git update-ref --stdin` as one transaction: git takes every ref's lock, checks
 * every old value, and moves all of them or none (the same `<ref>.lock` files refs.ts uses).
 */
import { runGit } from './git-cli.js';
import { isoOfGitTime } from './git-format.js';
import { MAIN_REF } from './refs.js';

/** The longest draft name (CONTRACT §8). */
export const DRAFT_NAME_MAX_LENGTH = 63;
/** A draft's name (CONTRACT §8): safe as a ref component and a file name in every clone. */
export const DRAFT_NAME = new RegExp(`^[a-z0-9][a-z0-9._-]{0,${DRAFT_NAME_MAX_LENGTH - 1}}$`);
/** What DRAFT_NAME lets through and git's ref rules do not: `..` anywhere, a trailing `.lock` or `.`. */
export const DRAFT_NAME_EXCLUDED: readonly RegExp[] = [/\.\./, /\.lock$/, /\.$/];
/** Names DRAFT_NAME and git allow that no new draft takes (reservedDraftName says why). */
export const RESERVED_DRAFT_NAMES: readonly string[] = ['main'];

export const DRAFT_BRANCH_PREFIX = 'refs/heads/drafts/';
export const CLOSED_DRAFT_PREFIX = 'refs/drafts-closed/';
export const MERGED_DRAFT_PREFIX = 'refs/drafts-merged/';

export type DraftRefState = 'open' | 'closed' | 'merged';

const PREFIXES: Record<DraftRefState, string> = {
  open: DRAFT_BRANCH_PREFIX,
  closed: CLOSED_DRAFT_PREFIX,
  merged: MERGED_DRAFT_PREFIX,
};

/** The ref that holds a draft in a given state. `name` must match DRAFT_NAME (checked by the caller). */
export function draftRef(name: string, state: DraftRefState = 'open'): string {
  return PREFIXES[state] + name;
}

/** The draft an open draft branch belongs to (`refs/heads/drafts/x` → `x`), or undefined for any other ref. */
export function draftOfRef(ref: string): string | undefined {
  if (!ref.startsWith(DRAFT_BRANCH_PREFIX)) return undefined;
  const name = ref.slice(DRAFT_BRANCH_PREFIX.length);
  return DRAFT_NAME.test(name) && !name.includes('..') && !name.endsWith('.lock') ? name : undefined;
}

/**
 * A name no new draft takes: `main` matches the pattern, but `?draft=main`, `draft: "main"` and
 * `compare=main` would all read as the main branch. Why, for the refusal's text; undefined when free.
 */
export function reservedDraftName(name: string): string | undefined {
  return RESERVED_DRAFT_NAMES.includes(name) ? 'it names the main branch' : undefined;
}

/** Whether a draft name may become a ref: the pattern, and git's own rules on what the pattern lets through. */
export function isDraftName(name: string): boolean {
  return DRAFT_NAME.test(name) && !DRAFT_NAME_EXCLUDED.some((excluded) => excluded.test(name));
}

/** Every draft ref in the repository: name → state and the commit it points at. */
export async function listDraftRefs(gitdir: string): Promise<Map<string, { state: DraftRefState; commit: string }>> {
  const { stdout } = await runGit(gitdir, [
    'for-each-ref',
    '--format=%(objectname) %(refname)',
    DRAFT_BRANCH_PREFIX,
    CLOSED_DRAFT_PREFIX,
    MERGED_DRAFT_PREFIX,
  ]);
  const drafts = new Map<string, { state: DraftRefState; commit: string }>();
  for (const line of stdout.toString('utf8').split('\n')) {
    if (line === '') continue;
    const commit = line.slice(0, 40);
    const ref = line.slice(41);
    for (const [state, prefix] of Object.entries(PREFIXES) as Array<[DraftRefState, string]>) {
      if (ref.startsWith(prefix)) drafts.set(ref.slice(prefix.length), { state, commit });
    }
  }
  return drafts;
}

export type RefMove =
  | { action: 'create'; ref: string; commit: string }
  | { action: 'delete'; ref: string; expected: string }
  | { action: 'update'; ref: string; commit: string; expected: string };

/** Moves refs all at once or not at all; an old value not as expected fails the whole transaction. */
export async function moveRefs(gitdir: string, moves: readonly RefMove[]): Promise<void> {
  const lines = ['start'];
  for (const move of moves) {
    if (move.action === 'create') lines.push(`create ${move.ref} ${move.commit}`);
    else if (move.action === 'delete') lines.push(`delete ${move.ref} ${move.expected}`);
    else lines.push(`update ${move.ref} ${move.commit} ${move.expected}`);
  }
  lines.push('prepare', 'commit', '');
  await runGit(gitdir, ['update-ref', '--stdin'], { input: lines.join('\n') });
}

/** The best common ancestor of two commits (git's merge base), or null when they share none. */
export async function mergeBase(gitdir: string, a: string, b: string): Promise<string | null> {
  const { code, stdout } = await runGit(gitdir, ['merge-base', a, b], { okCodes: [1] });
  return code === 0 ? stdout.toString('utf8').trim() : null;
}

/** How many commits `to` has that `from` does not (`git rev-list --count from..to`). */
export async function commitsBetween(gitdir: string, from: string, to: string): Promise<number> {
  const { stdout } = await runGit(gitdir, ['rev-list', '--count', `${from}..${to}`]);
  return Number.parseInt(stdout.toString('utf8').trim(), 10);
}

/** Whether `ancestor` is reachable from `descendant` (a commit is its own ancestor). */
export async function isAncestor(gitdir: string, ancestor: string, descendant: string): Promise<boolean> {
  const { code } = await runGit(gitdir, ['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1] });
  return code === 0;
}

/** The first commit of `from..to` in order of making, with its author and time (UTC): who started a pushed draft. */
export async function firstCommitBetween(
  gitdir: string,
  from: string | null,
  to: string,
): Promise<{ author: string; email: string; time: string } | null> {
  // Without `from`: `to` itself.
  const range = from === null ? ['-1', to] : ['--reverse', `${from}..${to}`];
  const { stdout } = await runGit(gitdir, ['log', '--date=raw', '--format=%an%x00%ae%x00%ad', ...range, '--']);
  const first = stdout.toString('utf8').split('\n')[0];
  if (!first) return null;
  const [author, email, time] = first.split('\0');
  // In UTC (`…Z`), as every draft time is written; any time a commit carries (isoOfGitTime).
  return { author, email, time: isoOfGitTime(time.split(' ')[0]!, '+0000').replace(/\+00:00$/, 'Z') };
}

/** The merge commits on the first-parent history of `from`, newest first, with their parents and first lines. */
export async function firstParentMerges(
  gitdir: string,
  from: string,
): Promise<Array<{ commit: string; parents: string[]; subject: string }>> {
  const { stdout } = await runGit(gitdir, ['log', '--first-parent', '--merges', '--format=%H %P%x00%s', from, '--']);
  const merges: Array<{ commit: string; parents: string[]; subject: string }> = [];
  for (const line of stdout.toString('utf8').split('\n')) {
    if (line === '') continue;
    const [ids, subject = ''] = line.split('\0');
    const [commit, ...parents] = ids.split(' ');
    merges.push({ commit, parents, subject });
  }
  return merges;
}

/**
 * The commit that merged draft `name`, at `head`, into main: the first on the first-parent history
 * of `from` (default main's tip) whose second parent is `head` and whose message starts `Merged
 * draft '<name>'`; undefined when there is none (a draft marked merged without a commit). For a
 * merged draft whose record does not name it: lost, or not yet written (a merge moves the ref first).
 */
export async function findDraftMerge(
  gitdir: string,
  name: string,
  head: string,
  from = MAIN_REF,
): Promise<{ commit: string; firstParent: string } | undefined> {
  const title = `Merged draft '${name}'`;
  for (const merge of await firstParentMerges(gitdir, from)) {
    if (merge.parents.length === 2 && merge.parents[1] === head && merge.subject.startsWith(title)) {
      return { commit: merge.commit, firstParent: merge.parents[0]! };
    }
  }
  return undefined;
}

/** How errors name a branch: `main`, or `draft '<name>'` (whichever ref holds it now). */
export function branchLabel(ref: string): string {
  return ref === MAIN_REF ? 'main' : `draft '${ref.slice(ref.lastIndexOf('/') + 1)}'`;
}

export class NotOnBranchError extends Error {
  constructor(
    readonly commit: string,
    ref = MAIN_REF,
  ) {
    super(`Commit '${commit}' is not a commit of ${branchLabel(ref)}.`);
  }
}
