/**
 * Who is told when an organization's `main` (or a draft's branch) moves, and, with `main`, what
 * happened to its drafts (draft-notices.ts). There is no broker: the ref is the one
 * truth every process shares, so each process watches it — told at once of its own commits
 * (the service's afterCommit), by fs.watch of the ref's directory and of packed-refs for
 * other processes' and pushes', and by a poll in case the file system does not report
 * (network file systems, renames fs.watch misses). The new commits are described once and
 * handed to every listener of the process.
 */
import { promises as fsp, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { CLOSED_DRAFT_PREFIX, DRAFT_BRANCH_PREFIX, MERGED_DRAFT_PREFIX } from '../store/branches.js';
import { MAIN_REF, readRef } from '../store/refs.js';
import type { Repo } from '../store/repo.js';
import {
  type DraftNotice,
  type DraftStates,
  draftNotices,
  MERGE_TITLE_PREFIX,
  mergeUnknown,
  noticesBeforeMerge,
  readDraftStates,
} from './draft-notices.js';
import { ChangeFeed, type FeedEvent } from './feed.js';

/** A change of the branch (it has `change`), or, on `main`'s stream, a draft event. */
export type StreamEvent = FeedEvent | DraftNotice;
export type Listener = (events: readonly StreamEvent[]) => void;

export function isChange(event: StreamEvent): event is FeedEvent {
  return 'change' in event;
}

/** Where draft refs live as loose files: a new, moved or removed one changes its folder's mtime. */
const DRAFT_REF_DIRS = [DRAFT_BRANCH_PREFIX, CLOSED_DRAFT_PREFIX, MERGED_DRAFT_PREFIX].map((prefix) => prefix.slice(0, -1));

export interface HubSettings {
  /** How often a watched ref is read besides what fs.watch reports (ms, default 1000). */
  pollMs?: number;
}

/** Changes announced to listeners at once; a push of many commits comes as several batches. */
const BATCH = 100;
export const DEFAULT_POLL_MS = 1000;

/** One organization's feed and the listeners of this process. */
export class OrgEvents {
  readonly feed: ChangeFeed;
  private readonly listeners = new Set<Listener>();
  /** Position of the last change announced; undefined until the first listener came. */
  private announced: number | undefined;
  private watchers: FSWatcher[] = [];
  private poll: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private again = false;
  /** The drafts as last announced (main's stream only); undefined until the first listener came. */
  private drafts: DraftStates | undefined;
  private draftDirsSeen = '';
  private draftCache: { signature: string; at: number; read: ReturnType<typeof readDraftStates> } | undefined;

  constructor(
    readonly repo: Repo,
    private readonly pollMs: number,
    ref = MAIN_REF,
  ) {
    this.feed = new ChangeFeed(repo, ref);
  }

  /** Only `main`'s stream tells of drafts (a draft's own stream is its commits). */
  private get withDrafts(): boolean {
    return this.feed.ref === MAIN_REF;
  }

  get gitdir(): string {
    return this.repo.gitdir;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /**
   * Adds a listener of the changes from now on; the ref is watched while there is one.
   * Resolves once the starting point is known: the function that removes the listener, and
   * the commit the listener's first change follows (null on an empty branch).
   */
  async listen(listener: Listener): Promise<{ stop: () => void; from: string | null }> {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.startWatching();
    // Announcements reach the listener from the one after this position on (none happen before
    // the first sync sets it).
    let from = this.announced;
    if (from === undefined) {
      await this.feed.sync();
      if (this.announced === undefined) {
        // A rewrite before now is no news to listeners from now on.
        this.feed.takeRewrite();
        this.announced = this.feed.length - 1;
      }
      from = this.announced;
    }
    if (this.withDrafts && this.drafts === undefined) {
      this.draftDirsSeen = await this.draftDirsState();
      this.drafts ??= (await this.draftStates()).states;
    }
    const stop = () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0) this.stopWatching();
    };
    return { stop, from: from < 0 ? null : this.feed.commitAt(from) };
  }

  /** The ref may have moved: look (coalesced: one look at a time, one more if asked meanwhile). */
  notify(): void {
    if (this.listeners.size === 0) return;
    if (this.checking !== undefined) {
      this.again = true;
      return;
    }
    this.checking = this.announceNew()
      .catch((error: Error) => console.error(`c4store: events of ${this.gitdir}: ${error.message}`))
      .finally(() => {
        this.checking = undefined;
        if (this.again) {
          this.again = false;
          this.notify();
        }
      });
  }

  private async announceNew(): Promise<void> {
    if (this.announced === undefined) return;
    await this.feed.sync();
    // Rewritten (a draft force-pushed, main by hand): what the new chain has beyond the part it
    // shares with the old one is told, from where they part; positions there are taken anew.
    const kept = this.feed.takeRewrite();
    if (kept !== undefined) this.announced = Math.min(this.announced, kept - 1);
    while (this.announced < this.feed.length - 1) {
      const from: number = this.announced + 1;
      const { events } = await this.feed.range(from, from + BATCH);
      const told = await this.withDraftsBeforeTheirMerges(events);
      this.announced = from + events.length - 1;
      this.tell(told);
    }
    if (this.withDrafts) await this.announceDrafts();
  }

  /**
   * The changes, each merge commit of a draft preceded by that draft's opening and updates
   * not told yet (they happened before it; taken in as told).
   */
  private async withDraftsBeforeTheirMerges(events: readonly FeedEvent[]): Promise<readonly StreamEvent[]> {
    const before = this.drafts;
    if (!this.withDrafts || before === undefined || !events.some((e) => e.change.title.startsWith(MERGE_TITLE_PREFIX))) return events;
    const { states, mergeCommits } = await this.draftStates();
    if (this.drafts !== before) return events;
    const drafts: DraftStates = { ...before };
    const told: StreamEvent[] = [];
    for (const event of events) {
      for (const notice of noticesBeforeMerge(drafts, states, mergeCommits, event.change)) {
        told.push(notice);
        if (notice.leadsTo === null) delete drafts[notice.data.name];
        else drafts[notice.data.name] = notice.leadsTo;
      }
      told.push(event);
    }
    this.drafts = drafts;
    return told;
  }

  /**
   * Draft events since the last look, after the changes of main read just before: a merge
   * commit is always announced before its `draft.merged` (main moves first, under the lock;
   * a merged draft whose merge commit was not yet read waits for the next look).
   */
  private async announceDrafts(): Promise<void> {
    const before = this.drafts;
    if (before === undefined) return;
    const look = await this.draftStates();
    const { states, mergeCommits } = look;
    // The last listener left meanwhile: a later one starts from its own time.
    if (this.drafts !== before) return;
    const notices = draftNotices(before, states, mergeCommits);
    const early = new Set(
      notices
        .filter(
          (notice) =>
            notice.type === 'draft.merged' &&
            (mergeCommits.has(notice.data.name) ? !this.hasAnnounced(notice.data.commit) : mergeUnknown(notice, look)),
        )
        .map(({ data }) => data.name),
    );
    const told = notices.filter(({ data }) => !early.has(data.name));
    const next: DraftStates = { ...states };
    for (const name of early) {
      if (before[name] === undefined) delete next[name];
      else next[name] = before[name];
    }
    this.drafts = next;
    if (told.length > 0) this.tell(told);
  }

  private hasAnnounced(commit: string): boolean {
    const position = this.feed.positionOf(commit);
    return position !== undefined && this.announced !== undefined && position <= this.announced;
  }

  private tell(events: readonly StreamEvent[]): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(events);
      } catch (error) {
        console.error(`c4store: an event listener failed: ${(error as Error).message}`);
      }
    }
  }

  /**
   * The draft refs (draft-notices.ts), read again only when a draft ref folder or packed-refs
   * changed (four stats), or the last read is older than the poll: every write wakes the stream
   * and each webhook worker, and none of them should start a git process for nothing.
   */
  async draftStates(): ReturnType<typeof readDraftStates> {
    const signature = await this.draftDirsState();
    const cached = this.draftCache;
    if (cached !== undefined && cached.signature === signature && Date.now() - cached.at < this.pollMs) return cached.read;
    const read = readDraftStates(this.gitdir);
    this.draftCache = { signature, at: Date.now(), read };
    read.catch(() => {
      if (this.draftCache?.read === read) this.draftCache = undefined;
    });
    return read;
  }

  /** The mtimes of the draft ref folders and packed-refs: what the poll compares. */
  private async draftDirsState(): Promise<string> {
    const places = [...DRAFT_REF_DIRS, 'packed-refs'].map((place) => path.join(this.gitdir, place));
    const times = await Promise.all(
      places.map((place) =>
        fsp.stat(place).then(
          (stat) => stat.mtimeMs,
          () => 0,
        ),
      ),
    );
    return times.join(' ');
  }

  private startWatching(): void {
    const ref = this.feed.ref;
    const refName = path.basename(ref);
    const places: Array<[dir: string, name: string | null]> = [
      [path.join(this.gitdir, path.dirname(ref)), refName],
      [this.gitdir, 'packed-refs'],
      // Any draft ref made, moved or removed (a folder made later is seen by the poll).
      ...(this.withDrafts ? DRAFT_REF_DIRS.map((dir): [string, null] => [path.join(this.gitdir, dir), null]) : []),
    ];
    for (const [dir, name] of places) {
      try {
        const watcher = watch(dir, { persistent: false }, (_event, file) => {
          if (file === null || name === null || file === name) this.notify();
        });
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // Not watchable here: the poll below still sees every move, within pollMs.
      }
    }
    this.poll = setInterval(() => {
      readRef(this.gitdir, ref).then(
        (head) => head !== this.feed.tip && this.notify(),
        () => {}, // a ref being rewritten by git: the next poll reads it
      );
      if (this.withDrafts) {
        void this.draftDirsState().then((seen) => {
          if (seen === this.draftDirsSeen) return;
          this.draftDirsSeen = seen;
          this.notify();
        });
      }
    }, this.pollMs);
    this.poll.unref();
  }

  /** The server stops: no more looks at the refs, whoever still listens (their streams are being closed). */
  close(): void {
    this.listeners.clear();
    this.stopWatching();
  }

  private stopWatching(): void {
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
    clearInterval(this.poll);
    this.poll = undefined;
    // A later first listener starts from the tip of its own time.
    this.announced = undefined;
    this.drafts = undefined;
  }
}

/** Every organization's events in this process: main's, and those of drafts asked for. */
export class EventHub {
  private readonly orgs = new Map<string, Map<string, OrgEvents>>();
  private readonly pollMs: number;

  constructor(settings: HubSettings = {}) {
    this.pollMs = settings.pollMs ?? DEFAULT_POLL_MS;
  }

  /** The events of an organization's `main` (or of another branch: a draft's). */
  of(slug: string, repo: Repo, ref = MAIN_REF): OrgEvents {
    let refs = this.orgs.get(slug);
    if (refs === undefined) this.orgs.set(slug, (refs = new Map()));
    let events = refs.get(ref);
    // Another Repo of the slug is another organization (removed and made again under its slug,
    // service/orgs.ts): nothing of the old one's chain or listeners carries over.
    if (events === undefined || events.repo !== repo) {
      events?.close();
      events = new OrgEvents(repo, this.pollMs, ref);
      refs.set(ref, events);
    }
    return events;
  }

  /** A commit or a draft's change made by this process: its listeners hear of it now, not at the next poll. */
  afterCommit(slug: string): void {
    for (const events of this.orgs.get(slug)?.values() ?? []) events.notify();
  }

  close(): void {
    for (const refs of this.orgs.values()) for (const events of refs.values()) events.close();
  }
}
