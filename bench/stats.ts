/** Latency samples, percentiles and medians over rounds. */

/** One measured round: per-operation latencies (ms) and how long the round took. */
export interface Round {
  latencies: number[];
  elapsedMs: number;
  /** What the server itself reports for the round's writes (its /metrics), where the figure asks it. */
  server?: ServerTimes;
}

/** Means over a round's writes, as the server times them: a request from arrival to answer, and the commit within it. */
export interface ServerTimes {
  requestMs: number;
  commitMs: number;
}

/** A figure as reported: medians over rounds of each round's p50, p99 and throughput. */
export interface Figure {
  p50: number;
  p99: number;
  /** Operations (requests, commits) per second. */
  perSecond: number;
  /** Operations measured, over all rounds. */
  operations: number;
  rounds: number;
  /** Each round's own p50, mean and throughput, in round order: figures measured in the same rounds pair up. */
  perRound: { p50: number[]; mean: number[]; perSecond: number[] };
  /** Medians over rounds of the server's own means (Round.server), where measured. */
  server?: ServerTimes;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank: the smallest value with at least p% of the samples at or below it.
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function summarize(rounds: readonly Round[]): Figure {
  return {
    perRound: {
      p50: rounds.map((r) => percentile(r.latencies, 50)),
      mean: rounds.map((r) => r.latencies.reduce((sum, latency) => sum + latency, 0) / r.latencies.length),
      perSecond: rounds.map((r) => (r.latencies.length * 1000) / r.elapsedMs),
    },
    p50: median(rounds.map((r) => percentile(r.latencies, 50))),
    p99: median(rounds.map((r) => percentile(r.latencies, 99))),
    perSecond: median(rounds.map((r) => (r.latencies.length * 1000) / r.elapsedMs)),
    operations: rounds.reduce((sum, r) => sum + r.latencies.length, 0),
    rounds: rounds.length,
    ...serverTimesOf(rounds),
  };
}

function serverTimesOf(rounds: readonly Round[]): { server?: ServerTimes } {
  const measured = rounds.flatMap((r) => (r.server ? [r.server] : []));
  if (measured.length === 0) return {};
  return { server: { requestMs: median(measured.map((t) => t.requestMs)), commitMs: median(measured.map((t) => t.commitMs)) } };
}

/**
 * Runs `op` back to back for `durationMs` (at least `minOps` times), timing each call.
 * Used for the in-process baselines (floor, git CLI, isomorphic-git).
 */
export async function timeLoop(op: (i: number) => Promise<void>, durationMs: number, minOps = 3, start = 0): Promise<Round> {
  const latencies: number[] = [];
  const began = performance.now();
  let i = start;
  while (performance.now() - began < durationMs || latencies.length < minOps) {
    const t0 = performance.now();
    await op(i++);
    latencies.push(performance.now() - t0);
  }
  return { latencies, elapsedMs: performance.now() - began };
}

export function isPositiveFinite(value: number): boolean {
  return Number.isFinite(value) && value > 0;
}

/**
 * `a ÷ b` for two figures measured side by side in the same rounds: the median of the per-round
 * ratios, so that drift of the machine between rounds cancels out. Falls back to the ratio of
 * the medians when the rounds do not pair up.
 */
export function pairedRatio(a: Figure, b: Figure, field: 'p50' | 'perSecond'): number {
  const x = a.perRound[field];
  const y = b.perRound[field];
  if (x.length !== y.length || x.length === 0) return a[field] / b[field];
  return median(x.map((value, i) => value / y[i]!));
}

/** `a − b` (ms) for two latencies measured side by side: the median of the per-round differences. */
export function pairedDifference(a: Figure, b: Figure): number {
  const x = a.perRound.p50;
  const y = b.perRound.p50;
  if (x.length !== y.length || x.length === 0) return a.p50 - b.p50;
  return median(x.map((value, i) => value - y[i]!));
}

/** One figure to measure: `round(ms)` runs it for about `ms` (or its own fixed amount) and times each operation. */
export interface Measurement {
  key: string;
  label: string;
  /** Length of its measured rounds, when not the run's (ms). */
  durationMs?: number;
  round(durationMs: number): Promise<Round>;
}

export interface Timing {
  rounds: number;
  /** Length of one measured round (ms). */
  durationMs: number;
  /** Warm-up round before the first measured one (ms). */
  warmupMs: number;
  /** Idle time between two measurements (ms): in-flight work and garbage of one do not land on the next. */
  pauseMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Warms every measurement up, then runs round 1 of each, round 2 of each, …: the figures
 * that are compared with each other are taken side by side, so a burst of other work on a
 * shared machine lands on all of them rather than on one.
 */
export async function interleave(measurements: readonly Measurement[], timing: Timing): Promise<Record<string, Figure>> {
  const pause = () => sleep(timing.pauseMs ?? 100);
  if (timing.warmupMs > 0) {
    for (const m of measurements) {
      await m.round(timing.warmupMs);
      await pause();
    }
  }
  const rounds = new Map<string, Round[]>(measurements.map((m) => [m.key, []]));
  for (let r = 0; r < timing.rounds; r++) {
    for (const m of measurements) {
      rounds.get(m.key)!.push(await m.round(m.durationMs ?? timing.durationMs));
      await pause();
    }
  }
  const figures: Record<string, Figure> = {};
  for (const m of measurements) {
    const figure = (figures[m.key] = summarize(rounds.get(m.key)!));
    log(
      `    ${m.label.padEnd(36)} p50 ${figure.p50.toFixed(2).padStart(8)} ms  p99 ${figure.p99.toFixed(2).padStart(8)} ms  ${figure.perSecond.toFixed(1).padStart(8)}/s`,
    );
  }
  return figures;
}

let quiet = false;

/** Progress lines of the benchmark; the smoke test turns them off. */
export function log(line: string): void {
  if (!quiet) console.log(line);
}

export function setQuiet(value: boolean): void {
  quiet = value;
}
