/**
 * A few slots shared by many organizations. When all are taken, each organization waits in its
 * own queue, and a freed slot goes to the organization whose last turn started longest ago (or
 * never): one organization's stream of requests then delays another's by at most the turns
 * already running, not by everything it queued first.
 */
export class FairQueue {
  private running = 0;
  private readonly waiting = new Map<string, Array<() => void>>();
  /** When each organization's latest turn started, as a count of turns started. */
  private readonly lastStarted = new Map<string, number>();
  private started = 0;

  constructor(readonly slots: number) {}

  /** Waits for a slot; call release() exactly once afterwards. */
  async acquire(owner: string): Promise<void> {
    if (this.running < this.slots) this.running++;
    else await new Promise<void>((resolve) => this.enqueue(owner, resolve));
    this.lastStarted.set(owner, ++this.started);
  }

  /**
   * Passes the slot straight to the organization whose turn it is (its oldest waiter);
   * `running` stays as it is, so a caller arriving meanwhile cannot take the slot as well.
   */
  release(): void {
    let owner: string | undefined;
    for (const candidate of this.waiting.keys()) {
      if (owner === undefined || (this.lastStarted.get(candidate) ?? 0) < (this.lastStarted.get(owner) ?? 0)) owner = candidate;
    }
    if (owner === undefined) {
      this.running--;
      if (this.running === 0) this.lastStarted.clear();
      return;
    }
    const queue = this.waiting.get(owner)!;
    const resolve = queue.shift()!;
    if (queue.length === 0) this.waiting.delete(owner);
    resolve();
  }

  /** Callers waiting, over all organizations. */
  get queued(): number {
    let count = 0;
    for (const queue of this.waiting.values()) count += queue.length;
    return count;
  }

  private enqueue(owner: string, resolve: () => void): void {
    const queue = this.waiting.get(owner);
    if (queue) queue.push(resolve);
    else this.waiting.set(owner, [resolve]);
  }
}
