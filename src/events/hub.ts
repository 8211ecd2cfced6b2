/**
 * Who is told when an organization's `main` moves. There is no broker: the ref is the one
 * truth every process shares, so each process watches it — told at once of its own commits
 * (the service's afterCommit), by fs.watch of the ref's directory and of packed-refs for
 * other processes' and pushes', and by a poll in case the file system does not report
 * (network file systems, renames fs.watch misses). The new commits are described once and
 * handed to every listener of the process.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { ChangeFeed, type FeedEvent } from './feed.js';
import { readRef } from '../store/refs.js';
import type { Repo } from '../store/repo.js';

export type Listener = (events: readonly FeedEvent[]) => void;

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

  constructor(
    readonly repo: Repo,
    private readonly pollMs: number,
  ) {
    this.feed = new ChangeFeed(repo);
  }

  get gitdir(): string {
    return this.repo.gitdir;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /**
   * Adds a listener of the changes from now on; the ref is watched while there is one.
   * Resolves once the starting point is known, with the function that removes it.
   */
  async listen(listener: Listener): Promise<() => void> {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.startWatching();
    if (this.announced === undefined) {
      await this.feed.sync();
      this.announced ??= this.feed.length - 1;
    }
    return () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0) this.stopWatching();
    };
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
    const before = this.feed.length;
    const beforeTip = this.feed.tip;
    await this.feed.sync();
    // Rewritten behind the service's back: positions start over, from the new tip.
    if (this.feed.length < before || (before > 0 && this.feed.positionOf(beforeTip!) !== before - 1)) {
      this.announced = this.feed.length - 1;
      return;
    }
    while (this.announced < this.feed.length - 1) {
      const from: number = this.announced + 1;
      const { events } = await this.feed.range(from, from + BATCH);
      this.announced = from + events.length - 1;
      for (const listener of [...this.listeners]) {
        try {
          listener(events);
        } catch (error) {
          console.error(`c4store: an event listener failed: ${(error as Error).message}`);
        }
      }
    }
  }

  private startWatching(): void {
    const ref = this.feed.ref;
    const refName = path.basename(ref);
    const places: Array<[dir: string, name: string]> = [
      [path.join(this.gitdir, path.dirname(ref)), refName],
      [this.gitdir, 'packed-refs'],
    ];
    for (const [dir, name] of places) {
      try {
        const watcher = watch(dir, { persistent: false }, (_event, file) => {
          if (file === null || file === name) this.notify();
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
    }, this.pollMs);
    this.poll.unref();
  }

  private stopWatching(): void {
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
    clearInterval(this.poll);
    this.poll = undefined;
    // A later first listener starts from the tip of its own time.
    this.announced = undefined;
  }
}

/** Every organization's events in this process. */
export class EventHub {
  private readonly orgs = new Map<string, OrgEvents>();
  private readonly pollMs: number;

  constructor(settings: HubSettings = {}) {
    this.pollMs = settings.pollMs ?? DEFAULT_POLL_MS;
  }

  /** The events of an organization's repository. */
  of(slug: string, repo: Repo): OrgEvents {
    let events = this.orgs.get(slug);
    if (events === undefined || events.gitdir !== repo.gitdir) {
      events = new OrgEvents(repo, this.pollMs);
      this.orgs.set(slug, events);
    }
    return events;
  }

  /** A commit of this process: its listeners hear of it now, not at the next poll. */
  afterCommit(slug: string): void {
    this.orgs.get(slug)?.notify();
  }
}
