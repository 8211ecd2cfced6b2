/**
 * Requests a minute per key, as a token bucket: a key may burst up to its whole minute's
 * worth, then gets one request per 60/rate seconds. Counted in this process only.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private sinceSweep = 0;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes one request for `key`: 0 when allowed, else the seconds until one is. */
  take(key: string): number {
    return this.ask(key, true);
  }

  /** Whether `key` may make a request now, taking nothing: 0 when it may, else the seconds until it may. */
  peek(key: string): number {
    return this.ask(key, false);
  }

  private ask(key: string, taking: boolean): number {
    const now = this.now();
    const perMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    this.buckets.set(key, bucket);
    this.sweep(now, perMs);
    if (bucket.tokens >= 1) {
      if (taking) bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
  }

  /** Forgets full buckets now and then: a key that has been quiet long enough costs nothing. */
  private sweep(now: number, perMs: number): void {
    if (++this.sinceSweep < 10_000) return;
    this.sinceSweep = 0;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * perMs >= this.perMinute) this.buckets.delete(key);
    }
  }
}
