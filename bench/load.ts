/**
 * HTTP load with autocannon, used as a library. Latencies are taken from autocannon's
 * per-response event (float milliseconds from process.hrtime) rather than its histogram,
 * which keeps whole milliseconds only: too coarse for 1–3 ms writes.
 */
import autocannon, { type Request } from 'autocannon';
import PipelinedRequestsQueue from 'autocannon/lib/pipelinedRequestsQueue.js';
import type { Round } from './stats.js';

// autocannon appends every response body to a string (decoding it as UTF-8) so that it could
// hand it to hooks we do not use. For multi-megabyte reads that decoding, done in this one
// load-generating process, would cap the requests/s of c4store and of the buffer route alike
// and hide the difference between them. The bytes are still received and counted.
PipelinedRequestsQueue.prototype.addBody = function addBody() {};

export interface LoadOptions {
  url: string;
  connections: number;
  /** How long to run (ms), unless `amount` is given. */
  durationMs?: number;
  /** Exactly this many requests. */
  amount?: number;
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** A fresh body per request (writes); `n` counts requests of this run. */
  body?: (n: number) => string;
}

export class LoadError extends Error {}

/**
 * One run of autocannon: every response must be 2xx, else LoadError. A timed run so short
 * (or a machine so busy) that no answer came back in it has no latency to report: it is
 * measured again as one request per connection, each to completion.
 */
export async function load(options: LoadOptions): Promise<Round> {
  const round = await loadOnce(options);
  if (round.latencies.length > 0 || options.amount) return round;
  return loadOnce({ ...options, amount: options.connections });
}

function loadOnce(options: LoadOptions): Promise<Round> {
  const latencies: number[] = [];
  let n = 0;
  const request: Request = { method: options.method ?? 'GET', path: options.path, headers: options.headers };
  if (options.body) {
    const makeBody = options.body;
    request.setupRequest = (req) => ({ ...req, body: makeBody(n++) });
  }
  const began = performance.now();
  let lastResponse = began;
  return new Promise<Round>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        ...(options.amount ? { amount: options.amount } : { duration: (options.durationMs ?? 1000) / 1000 }),
        requests: [request],
        timeout: 60,
        // autocannon only notices the end of a run on its sampling tick (1 s by default).
        sampleInt: 50,
      },
      (error, result) => {
        if (error) return reject(error);
        if (result.non2xx > 0 || result.errors > 0) {
          return reject(
            new LoadError(
              `${options.method ?? 'GET'} ${options.path}: ${result.non2xx} non-2xx, ${result.errors} errors ` +
                `(${JSON.stringify(result.statusCodeStats)})`,
            ),
          );
        }
        // Throughput over the time responses were coming in: autocannon's own stop is
        // checked on a sampling tick, which would add up to a tick of idle time.
        resolve({ latencies, elapsedMs: lastResponse - began });
      },
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status < 300) latencies.push(ms);
      lastResponse = performance.now();
    });
  });
}

/** Warm up, then `rounds` runs; returns the measured rounds. */
export async function loadRounds(options: LoadOptions & { rounds: number; warmupMs: number }): Promise<Round[]> {
  if (options.warmupMs > 0) await load({ ...options, durationMs: options.warmupMs, amount: undefined });
  const rounds: Round[] = [];
  for (let r = 0; r < options.rounds; r++) rounds.push(await load(options));
  return rounds;
}
