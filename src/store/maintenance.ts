import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { runGit } from './git-cli.js';
import { tryDirectoryLock } from './lock.js';
import { type SpareFiles, spareFilesOf } from './spare-files.js';

/**
 * Every write adds loose objects (a blob, a few trees, a commit). Left alone, tens of
 * thousands of them slow down start-up, clones and fsck. After every `every` commits of a
 * repository, git's own `repack` packs them in the background: never under the write
 * lock and never on a write's path. It is safe beside writers: git prunes only unreachable
 * objects older than two weeks, and the object store retries a read that races a repack.
 *
 * The commit graph with changed-path Bloom filters is history's index: without it, one
 * resource's history diffs the trees of every commit (4 s on 20,000 loose commits; 20 ms with
 * it). Packing rewrites it whole; between packings, and when packing is off, every
 * `GRAPH_EVERY` commits add a layer for just the new ones (tens of milliseconds).
 *
 * Either job first removes the quarantines of pushes killed mid-receive, once a day old
 * (QUARANTINE_ABANDONED_AFTER_MS).
 *
 * Several processes may serve one data directory; one of them at a time maintains a
 * repository (MAINTENANCE_LOCK), the others skip their turn and try again at their next
 * commit. Two of them writing the commit graph at once had one fail on git's own lock.
 */
/** How long after start the upkeep of what earlier runs left behind begins. */
const START_DELAY_MS = 30_000;
/** New commits after which the commit graph takes them in, whether or not packing is on. */
export const GRAPH_EVERY = 100;
/** How `git prune-packed --dry-run` names each file it would delete (relative to the git directory). */
const PRUNE_LINE = 'rm -f ';

/**
 * A push's objects wait in a quarantine (`objects/tmp_objdir-incoming-XXXXXX`; `incoming-XXXXXX`
 * in older git) until its hooks accept it. git removes it when the push ends, taken or refused,
 * but not when receive-pack is killed, by SIGKILL and (git 2.39) by SIGTERM alike: a push stopped
 * at the git timeout or when its client went away (git-http/backend.ts stops the whole process
 * group), a server or machine stopped hard. Then only `git prune` would remove it, which gc runs
 * with two weeks' grace, and `gc --auto` seldom. One a day old is no push under way (one over
 * HTTP is stopped after the git timeout, 10 minutes by default); removing one still in use could
 * only fail that push (its objects gone before they reached the repository), never move a ref.
 */
export const QUARANTINE_ABANDONED_AFTER_MS = 24 * 3_600_000;
const QUARANTINE = /^(tmp_objdir-incoming|incoming)-[A-Za-z0-9]{6}$/;

/** The lock, in the repository, of the process maintaining it. */
export const MAINTENANCE_LOCK = 'c4store-maintenance.lock';
/**
 * Held for as long as a job takes (kept fresh every 10 s); a holder that died stops keeping it
 * fresh, and a minute later another process may maintain the repository again.
 */
export const MAINTENANCE_LOCK_TIMING = { stale: 60_000, update: 10_000 };

type Job = 'pack' | 'graph';
/** One step of a job: git's arguments, or work of the process's own. */
type Step = readonly string[] | ((gitdir: string) => Promise<void>);

export class Maintenance {
  /** Commits of a repository since its last packing, and since its commit graph took in the new ones. */
  private readonly sincePack = new Map<string, number>();
  private readonly sinceGraph = new Map<string, number>();
  private readonly running = new Map<string, { job: Job; done: Promise<void> }>();
  /** The pools packing kept files into: their emptying stops with the maintenance. */
  private readonly keptInto = new Set<SpareFiles>();
  private closed = false;
  private queue: Promise<void> = Promise.resolve();
  private startTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly every: number,
    private readonly log: (line: string) => void,
    private readonly sparesOf: (gitdir: string) => SpareFiles = spareFilesOf,
  ) {}

  /** Packing under way, and commits of the service not packed yet (over every repository): metrics. */
  get backlog(): { running: number; commitsSinceLastPack: number } {
    let commits = 0;
    for (const count of this.sincePack.values()) commits += count;
    return { running: this.running.size, commitsSinceLastPack: commits };
  }

  afterCommit(gitdir: string): void {
    if (this.closed) return;
    const sincePack = (this.sincePack.get(gitdir) ?? 0) + 1;
    const sinceGraph = (this.sinceGraph.get(gitdir) ?? 0) + 1;
    this.sincePack.set(gitdir, this.every > 0 ? sincePack : 0);
    this.sinceGraph.set(gitdir, sinceGraph);
    if (this.running.has(gitdir)) return;
    if (this.every > 0 && sincePack >= this.every) void this.pack(gitdir);
    else if (sinceGraph >= GRAPH_EVERY) void this.updateGraph(gitdir);
  }

  /** Packs now (in the background of any caller that does not wait); the commit graph is rewritten whole. */
  pack(gitdir: string): Promise<void> {
    this.sincePack.set(gitdir, 0);
    this.sinceGraph.set(gitdir, 0);
    // The loose objects into one new pack (incremental: existing packs are left as they are),
    // their files then kept for new objects (spare-files.ts) where `repack -d` would delete
    // them; then gc --auto folds the packs together once there are too many of them.
    return this.run(gitdir, 'pack', [
      removeAbandonedQuarantines,
      ['repack', '-q'],
      (dir) => this.keepPackedLooseObjects(dir),
      ['-c', 'gc.autoDetach=false', 'gc', '--auto', '--quiet'],
      ['commit-graph', 'write', '--reachable', '--changed-paths'],
    ]);
  }

  /** Adds the commits the commit graph lacks to it, as a layer of their own (git merges small layers). */
  updateGraph(gitdir: string): Promise<void> {
    this.sinceGraph.set(gitdir, 0);
    return this.run(gitdir, 'graph', [removeAbandonedQuarantines, ['commit-graph', 'write', '--reachable', '--changed-paths', '--split']]);
  }

  /** What git's prune-packed deletes (the loose objects a pack holds too) goes to the pool of spare files instead. */
  private async keepPackedLooseObjects(gitdir: string): Promise<void> {
    const listing = await runGit(gitdir, ['prune-packed', '--dry-run'], { lowPriority: true });
    const files = listing.stdout
      .toString('utf8')
      .split('\n')
      .filter((line) => line.startsWith(PRUNE_LINE))
      .map((line) => path.resolve(gitdir, line.slice(PRUNE_LINE.length)));
    const spares = this.sparesOf(gitdir);
    this.keptInto.add(spares);
    await spares.keep(files);
  }

  /**
   * One job at a time per repository: two git processes writing its commit graph would fail on
   * its lock. A job asked for while the same (or a packing, which covers the graph) is under
   * way is that one; a packing asked for during a graph update runs after it.
   */
  private run(gitdir: string, job: Job, steps: readonly Step[]): Promise<void> {
    const pending = this.running.get(gitdir);
    if (pending !== undefined && (pending.job === job || pending.job === 'pack')) return pending.done;
    const entry = { job, done: Promise.resolve() };
    entry.done = (async () => {
      await pending?.done;
      try {
        const release = await tryDirectoryLock(gitdir, MAINTENANCE_LOCK, MAINTENANCE_LOCK_TIMING, (line) =>
          this.log(`maintenance of ${gitdir}: ${line}`),
        );
        if (release === null) {
          // Another process is maintaining the repository: this one tries again at its next commit.
          if (job === 'pack') this.sincePack.set(gitdir, Math.max(this.every - 1, this.sincePack.get(gitdir) ?? 0));
          this.sinceGraph.set(gitdir, Math.max(GRAPH_EVERY - 1, this.sinceGraph.get(gitdir) ?? 0));
          return;
        }
        try {
          // At the lowest CPU priority: at 100,000 components packing 1,000 commits takes ~1.4 s of
          // CPU (the delta search over large shard trees); at the server's priority it took that
          // from the writes themselves on a 2-core machine.
          for (const step of steps) {
            if (typeof step === 'function') await step(gitdir);
            else await runGit(gitdir, step, { lowPriority: true });
          }
        } finally {
          await release();
        }
      } catch (err) {
        this.log(`maintenance (${job}) of ${gitdir} failed: ${(err as Error).message}`);
      } finally {
        if (this.running.get(gitdir) === entry) this.running.delete(gitdir);
      }
    })();
    this.running.set(gitdir, entry);
    return entry.done;
  }

  /**
   * Packs what earlier runs left loose (with packing off: brings the commit graph up to date),
   * one repository at a time, off the caller's path, and only after `delayMs`: a repack at start
   * would take the cores a cold load needs for the first answers (measured: 0.73 → 1.5 s to the
   * first answer at 10,000 components).
   */
  maintainInTurn(gitdirs: readonly string[], delayMs = START_DELAY_MS): void {
    if (gitdirs.length === 0) return;
    this.startTimer = setTimeout(() => {
      for (const gitdir of gitdirs) {
        this.queue = this.queue.then(() => {
          if (this.closed) return;
          return this.every > 0 ? this.pack(gitdir) : this.updateGraph(gitdir);
        });
      }
    }, delayMs);
    this.startTimer.unref();
  }

  /**
   * Starts nothing more and waits for jobs under way, so no git process outlives the server,
   * and stops the emptying of the spare files packing kept (nothing touches the data after).
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.startTimer);
    await this.queue;
    await Promise.all([...this.running.values()].map((each) => each.done));
    await Promise.all([...this.keptInto].map((spares) => spares.stop()));
  }
}

/** Removes what pushes killed mid-receive left (QUARANTINE_ABANDONED_AFTER_MS). */
async function removeAbandonedQuarantines(gitdir: string): Promise<void> {
  const objects = path.join(gitdir, 'objects');
  for (const name of await fsp.readdir(objects).catch(() => [] as string[])) {
    if (!QUARANTINE.test(name)) continue;
    const quarantine = path.join(objects, name);
    const stat = await fsp.stat(quarantine).catch(() => undefined);
    if (stat !== undefined && Date.now() - stat.mtimeMs > QUARANTINE_ABANDONED_AFTER_MS) {
      await fsp.rm(quarantine, { recursive: true, force: true });
    }
  }
}
