/**
 * At most `limit` tasks at once; the others wait their turn, first come first served, and a
 * finished task hands its slot straight to the next waiter (one arriving meanwhile cannot take
 * it as well). Used by the object store (files open in fsync) and the worker pools (threads.ts).
 */
export class Semaphore {
  private active = 0;
  // A queue with a head index: shift() on an array of 45,000 waiters moved them all each time.
  private waiting: Array<() => void> = [];
  private head = 0;

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter, or free it.
      if (this.head < this.waiting.length) {
        const next = this.waiting[this.head]!;
        this.waiting[this.head++] = undefined as unknown as () => void;
        if (this.head === this.waiting.length) {
          this.waiting = [];
          this.head = 0;
        }
        next();
      } else {
        this.active--;
      }
    }
  }
}
