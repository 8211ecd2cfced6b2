import { runGit } from './git-cli.js';

/**
 * Every write adds loose objects (a blob, a few trees, a commit). Left alone, tens of
 * thousands of them slow down start-up, clones and fsck. After every `every` commits of a
 * repository, git's own `repack` packs them in the background: never under the write
 * lock and never on a write's path. It is safe beside writers: git prunes only unreachable
 * objects older than two weeks, and the object store retries a read that races a repack.
 * The commit graph it writes (with changed-path filters) keeps history by resource fast.
 */
/** How long after start the packing of what earlier runs left loose begins. */
const START_DELAY_MS = 30_000;

export class Maintenance {
  private readonly counts = new Map<string, number>();
  private readonly running = new Map<string, Promise<void>>();
  private closed = false;
  private queue: Promise<void> = Promise.resolve();
  private startTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly every: number,
    private readonly log: (line: string) => void,
  ) {}

  /** Packing under way, and commits of the service not packed yet (over every repository): metrics. */
  get backlog(): { running: number; commitsSinceLastPack: number } {
    let commits = 0;
    for (const count of this.counts.values()) commits += count;
    return { running: this.running.size, commitsSinceLastPack: commits };
  }

  afterCommit(gitdir: string): void {
    if (this.every <= 0 || this.closed) return;
    const count = (this.counts.get(gitdir) ?? 0) + 1;
    if (count < this.every || this.running.has(gitdir)) {
      this.counts.set(gitdir, count);
      return;
    }
    this.counts.set(gitdir, 0);
    void this.pack(gitdir);
  }

  /** Packs now (in the background of any caller that does not wait). */
  pack(gitdir: string): Promise<void> {
    const pending = this.running.get(gitdir);
    if (pending !== undefined) return pending;
    const run = (async () => {
      try {
        // The loose objects into one new pack (incremental: existing packs are left as they
        // are); then gc --auto folds the packs together once there are too many of them.
        // At the lowest CPU priority: at 100,000 components packing 1,000 commits takes ~1.4 s of
        // CPU (the delta search over large shard trees); at the server's priority it took that
        // from the writes themselves on a 2-core machine.
        const background = { lowPriority: true };
        await runGit(gitdir, ['repack', '-d', '-q'], background);
        await runGit(gitdir, ['-c', 'gc.autoDetach=false', 'gc', '--auto', '--quiet'], background);
        await runGit(gitdir, ['commit-graph', 'write', '--reachable', '--changed-paths'], background);
      } catch (err) {
        this.log(`maintenance of ${gitdir} failed: ${(err as Error).message}`);
      } finally {
        this.running.delete(gitdir);
      }
    })();
    this.running.set(gitdir, run);
    return run;
  }

  /**
   * Packs what earlier runs left loose, one repository at a time, off the caller's path, and
   * only after `delayMs`: a repack at start would take the cores a cold load needs for the
   * first answers (measured: 0.73 → 1.5 s to the first answer at 10,000 components).
   */
  packInTurn(gitdirs: readonly string[], delayMs = START_DELAY_MS): void {
    if (this.every <= 0 || gitdirs.length === 0) return;
    this.startTimer = setTimeout(() => {
      for (const gitdir of gitdirs) this.queue = this.queue.then(() => (this.closed ? undefined : this.pack(gitdir)));
    }, delayMs);
    this.startTimer.unref();
  }

  /** Starts nothing more and waits for packing under way, so no git process outlives the server. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.startTimer);
    await this.queue;
    await Promise.all(this.running.values());
  }
}
