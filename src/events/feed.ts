/**
 * The change feed (CONTRACT.md §9): the first-parent commits of a branch, oldest first, each
 * with the resources it touched. Git's history is the event log; this only indexes it.
 *
 * A page must not cost a walk of the whole history: the first-parent chain is listed once
 * (`git rev-list --first-parent --reverse`, about 30 ms for 20,000 commits), kept as an array
 * with each commit's position, and extended by only the new commits when the branch moves. A
 * page is then a slice of that array, its commits described by one `git log --no-walk` (a few
 * new ones, as a write is announced, from their objects in-process), and kept described.
 */
import { readHistory, type ResourceAction } from '../history/log.js';
import { classifyPath } from '../model/paths.js';
import { NotOnBranchError } from '../store/branches.js';
import { runGit } from '../store/git-cli.js';
import { isoOfGitTime } from '../store/git-format.js';
import { MAIN_REF, readRef } from '../store/refs.js';
import type { Repo } from '../store/repo.js';
import { parseYaml } from '../yaml/format.js';

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

/**
 * Up to this many commits are described in-process (a write's announcement starts no git);
 * more, one `git log` describes them (git reads objects far faster than a page of separate
 * reads here, about 1 s for 100 loose commits on a busy machine).
 */
const DESCRIBE_IN_PROCESS = 4;
/** A file that moved without a change (into its shard) is an update of the resource. */
const FEED_ACTION: Record<ResourceAction, ChangedResource['action']> = {
  create: 'create',
  update: 'update',
  delete: 'delete',
  move: 'update',
};

/** A move of the branch by at most this many commits is followed in-process, without starting git. */
const FOLLOW_IN_PROCESS = 64;
/** Changes kept described: every SSE replay and webhook subscription reads the same recent ones. */
const KEPT_CHANGES = 2000;

export class ChangeFeed {
  private ids: string[] = [];
  private readonly positions = new Map<string, number>();
  private syncing: Promise<void> | undefined;
  /**
   * Since the last takeRewrite(): the fewest commits from the start that the chain kept when it
   * was found rewritten (not continuing its old tip) and listed anew; undefined when it was not.
   */
  private rewrittenKeeping: number | undefined;
  /** Described changes by commit, oldest use first out (a commit never changes, so neither does its change). */
  private readonly described = new Map<string, Change>();

  constructor(
    readonly repo: Repo,
    /** `refs/heads/main`, or a draft's ref (`?draft=`, docs/api.md §19). */
    readonly ref = MAIN_REF,
  ) {}

  get gitdir(): string {
    return this.repo.gitdir;
  }

  /** The commit at the end of the index (null before the first sync of an empty branch). */
  get tip(): string | null {
    return this.ids.at(-1) ?? null;
  }

  /** How many commits the index holds. */
  get length(): number {
    return this.ids.length;
  }

  commitAt(position: number): string {
    return this.ids[position]!;
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
      // The usual move, a few commits on top of the old tip: their first parents, read here.
      const chain = await this.repo.log(head, FOLLOW_IN_PROCESS);
      const reached = chain.findIndex((entry) => entry.oid === tip);
      if (reached > 0) {
        for (const entry of chain.slice(0, reached).reverse()) this.append(entry.oid);
        return;
      }
      // Only what is new: the first-parent chain from the head down to the old tip. An old tip
      // the repository no longer holds (rewritten and pruned, or another repository now at this
      // path) gives nothing, and the chain is listed anew below.
      const lines = await this.revList([head, `^${tip}`]).catch(() => []);
      if (lines.length > 0 && lines[0].split(' ')[1] === tip) {
        for (const line of lines) this.append(line.slice(0, 40));
        return;
      }
    }
    // First sync, or the branch no longer continues the old tip (rewritten behind the
    // service's back, or a draft force-pushed): the chain is listed anew.
    const old = this.ids;
    this.ids = [];
    this.positions.clear();
    for (const line of await this.revList([head])) this.append(line.slice(0, 40));
    if (old.length > 0) {
      let kept = 0;
      while (kept < old.length && kept < this.ids.length && old[kept] === this.ids[kept]) kept++;
      this.rewrittenKeeping = Math.min(this.rewrittenKeeping ?? kept, kept);
    }
  }

  /**
   * Whether the chain was rewritten since the last call: how many commits from its start it
   * kept (the positions after them now hold other commits), or undefined.
   */
  takeRewrite(): number | undefined {
    const kept = this.rewrittenKeeping;
    this.rewrittenKeeping = undefined;
    return kept;
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
      if (position === undefined) throw new NotOnBranchError(after, this.ref);
      start = position + 1;
    }
    return this.range(start, start + limit);
  }

  /** The changes at positions [from, to) of the chain as indexed now. */
  async range(from: number, to: number): Promise<{ events: FeedEvent[]; more: boolean }> {
    const end = Math.min(to, this.ids.length);
    const commits = this.ids.slice(from, end);
    const missing = commits.filter((commit) => !this.described.has(commit));
    if (missing.length > DESCRIBE_IN_PROCESS) {
      for (const change of await describeWithGit(this.gitdir, missing)) this.described.set(change.id, change);
    } else {
      for (const commit of missing) this.described.set(commit, await describe(this.repo, commit));
    }
    const events = commits.map((commit, i) => {
      const change = this.described.get(commit)!;
      // Used again: to the back of the line.
      this.described.delete(commit);
      this.described.set(commit, change);
      return { position: from + i, change };
    });
    while (this.described.size > KEPT_CHANGES) this.described.delete(this.described.keys().next().value!);
    return { events, more: end < this.ids.length };
  }
}

/** The commits as changes, in the order given, as `git log` (history/log.ts) tells them. */
async function describeWithGit(gitdir: string, commits: string[]): Promise<Change[]> {
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

/**
 * What a commit changed against its first parent, read in-process (no git started: a write's
 * announcement costs a few object reads): each model file that differs, as its resource, with
 * the name in the file (before a delete, the name it had). A file that moved (into its shard)
 * is a delete and a create of one resource: an update.
 */
async function describe(repo: Repo, commit: string): Promise<Change> {
  const [entry] = await repo.log(commit, 1);
  const resources = new Map<string, ChangedResource>();
  for (const file of await repo.changedFiles(entry.parents[0] ?? null, commit)) {
    const place = classifyPath(file.path);
    // A file whose mode alone changed (made executable) holds the resource it held.
    if (place === null || file.before === file.after) continue;
    const [kind, id] = place === 'organization' ? ['organization', 'organization'] : [place.kind, place.id];
    const action = file.before === null ? 'create' : file.after === null ? 'delete' : 'update';
    const key = `${kind}/${id}`;
    const seen = resources.get(key);
    if (seen !== undefined) {
      seen.action = 'update';
      if (file.after !== null) seen.name = await nameIn(repo, file.after);
      continue;
    }
    resources.set(key, { kind, id, name: await nameIn(repo, file.after ?? file.before!), action });
  }
  const { name, email, time } = parseAuthor(entry.author);
  return {
    id: commit,
    time,
    author: { name, email },
    // As git's `%s`: the first paragraph, its lines joined.
    title: entry.message
      .trim()
      .split(/\n\s*\n/, 1)[0]
      .replace(/\s*\n\s*/g, ' '),
    apiContext: apiContextOf(entry.message),
    resources: [...resources.values()],
  };
}

async function nameIn(repo: Repo, blob: string): Promise<string | null> {
  try {
    const value = parseYaml((await repo.readBlob(blob)).toString('utf8')) as { name?: unknown } | null;
    return typeof value?.name === 'string' ? value.name : null;
  } catch {
    return null;
  }
}

/** `Name <email> <seconds> <+hhmm>` → the name, the address, and the time as git's `%aI` prints it. */
function parseAuthor(line: string): { name: string; email: string; time: string } {
  const match = /^(.*?) <(.*)> (\d+) ([+-]\d{4})$/.exec(line);
  if (!match) return { name: line, email: '', time: isoOfGitTime(0, '+0000') };
  const [, name, email, seconds, zone] = match;
  return { name, email, time: isoOfGitTime(seconds, zone) };
}

/** The first `Api-Context:` trailer of the message's last paragraph (commit-message.ts writes it there). */
function apiContextOf(message: string): string | null {
  const paragraphs = message.trimEnd().split(/\n\s*\n/);
  if (paragraphs.length < 2) return null;
  for (const line of paragraphs.at(-1)!.split('\n')) {
    const match = /^Api-Context:\s*(.*)$/i.exec(line);
    if (match) return match[1].trim();
  }
  return null;
}
