/**
 * The change feed (CONTRACT.md §9): the first-parent commits of a branch, oldest first, each
 * with the resources it touched. Git's history is the event log; this only indexes it.
 *
 * A page must not cost a walk of the whole history: the first-parent chain is listed once
 * (`git rev-list --first-parent --reverse`, about 30 ms for 20,000 commits), kept as an array
 * with each commit's position, and extended by only the new commits when the branch moves. A
 * page is then a slice of that array, described by one `git log --no-walk` of its commits.
 */
import { readHistory, type ResourceAction } from '../history/log.js';
import { runGit } from '../store/git-cli.js';
import { MAIN_REF, readRef } from '../store/refs.js';

export interface ChangedResource {
  kind: string;
  id: string;
  name: string | null;
  action: 'create' | 'update' | 'delete';
}

/** One commit of the feed, as the API, SSE and webhooks carry it. */
export interface Change {
  id: string;
  time: string;
  author: { name: string; email: string };
  title: string;
  apiContext: string | null;
  resources: ChangedResource[];
}

/** A change with its place in the chain (0: the first commit), to order and de-duplicate deliveries. */
export interface FeedEvent {
  position: number;
  change: Change;
}

export class NotOnBranchError extends Error {
  constructor(readonly commit: string) {
    super(`Commit '${commit}' is not a commit of main.`);
  }
}

/** A file that moved without a change (into its shard) is an update of the resource, not a new kind of action. */
const FEED_ACTION: Record<ResourceAction, ChangedResource['action']> = {
  create: 'create',
  update: 'update',
  delete: 'delete',
  move: 'update',
};

export class ChangeFeed {
  private ids: string[] = [];
  private readonly positions = new Map<string, number>();
  private syncing: Promise<void> | undefined;

  constructor(
    readonly gitdir: string,
    /** `refs/heads/main`; a draft's feed would be its own branch (see docs/api.md §12). */
    readonly ref = MAIN_REF,
  ) {}

  /** The commit at the end of the index (null before the first sync of an empty branch). */
  get tip(): string | null {
    return this.ids.at(-1) ?? null;
  }

  /** How many commits the index holds. */
  get length(): number {
    return this.ids.length;
  }

  positionOf(commit: string): number | undefined {
    return this.positions.get(commit);
  }

  /** Brings the index up to the branch's tip; concurrent callers share one sync. */
  sync(): Promise<void> {
    if (this.syncing === undefined) {
      this.syncing = this.extend().finally(() => {
        this.syncing = undefined;
      });
    }
    return this.syncing;
  }

  private async extend(): Promise<void> {
    const head = await readRef(this.gitdir, this.ref);
    const tip = this.tip;
    if (head === null || head === tip) return;
    if (tip !== null) {
      // Only what is new: the first-parent chain from the head down to the old tip.
      const lines = await this.revList([head, `^${tip}`]);
      if (lines.length > 0 && lines[0].split(' ')[1] === tip) {
        for (const line of lines) this.append(line.slice(0, 40));
        return;
      }
    }
    // First sync, or the branch no longer continues the old tip (rewritten behind the
    // service's back): the chain is listed anew.
    this.ids = [];
    this.positions.clear();
    for (const line of await this.revList([head])) this.append(line.slice(0, 40));
  }

  private async revList(revisions: string[]): Promise<string[]> {
    const { stdout } = await runGit(this.gitdir, ['rev-list', '--first-parent', '--reverse', '--parents', ...revisions, '--']);
    return stdout
      .toString('utf8')
      .split('\n')
      .filter((line) => line.length >= 40);
  }

  private append(id: string): void {
    this.positions.set(id, this.ids.length);
    this.ids.push(id);
  }

  /**
   * Up to `limit` changes after `after` (none: from the first commit), oldest first, and whether
   * more follow. `after` must be on the chain (NotOnBranchError).
   */
  async page(after: string | undefined, limit: number): Promise<{ events: FeedEvent[]; more: boolean }> {
    await this.sync();
    let start = 0;
    if (after !== undefined) {
      const position = this.positions.get(after);
      if (position === undefined) throw new NotOnBranchError(after);
      start = position + 1;
    }
    return this.range(start, start + limit);
  }

  /** The changes at positions [from, to) of the chain as indexed now. */
  async range(from: number, to: number): Promise<{ events: FeedEvent[]; more: boolean }> {
    const end = Math.min(to, this.ids.length);
    const commits = this.ids.slice(from, end);
    const changes = commits.length === 0 ? [] : await describe(this.gitdir, commits);
    return { events: changes.map((change, i) => ({ position: from + i, change })), more: end < this.ids.length };
  }
}

/** The commits as changes, in the order given. */
async function describe(gitdir: string, commits: string[]): Promise<Change[]> {
  const entries = await readHistory(gitdir, { commits, limit: commits.length });
  return entries.map((entry) => ({
    id: entry.id,
    time: entry.time,
    author: entry.author,
    title: entry.summary,
    apiContext: entry.apiContext,
    resources: entry.resources.map(({ kind, id, name, action }) => ({ kind, id, name, action: FEED_ACTION[action] })),
  }));
}
