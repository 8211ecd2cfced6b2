/**
 * `/metrics` in the Prometheus text format (prom-client): requests by route and status, the
 * write path's lock wait and commit time, what is held in memory, background backlogs, and the
 * process's own figures. Each server has its own registry (a test process runs many servers);
 * the process figures are one registry per process, merged in when scraped.
 *
 * Not public: with a token (`--metrics-token`) a scrape must present it as `Authorization:
 * Bearer <token>`; without one only a client on the loopback address, reaching the server
 * directly (no `Forwarded`/`X-Forwarded-For`: a proxy on the same machine is not the operator),
 * may scrape.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import client from 'prom-client';
import { ApiError } from '../errors.js';
import { routeOf } from '../http/middleware/log.js';
import type { WriteTiming } from '../service/org.js';

/** What the gauges read when scraped. */
export interface MetricSources {
  organizationsLoaded(): number;
  snapshotCache(): { bytes: number; entries: number };
  /** Answers kept in the bounded stores, and drawings kept (their SVG's length). */
  keptAnswers(): { filteredLists: number; pictures: number; drawings: number };
  packing(): { running: number; commitsSinceLastPack: number };
  mirrors(): { mirrors: number; pending: number; failing: number };
  requestsInFlight(): number;
  draining(): boolean;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const REQUEST_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const WRITE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processRegistry: client.Registry | undefined;

/** Memory, CPU, event-loop lag, GC: once per process, however many servers it runs. */
function processMetrics(): client.Registry {
  if (!processRegistry) {
    processRegistry = new client.Registry();
    client.collectDefaultMetrics({ register: processRegistry, prefix: 'c4store_' });
  }
  return processRegistry;
}

export class Metrics {
  readonly registry = new client.Registry();
  private readonly requests: client.Counter<'method' | 'route' | 'status'>;
  private readonly durations: client.Histogram<'method' | 'route' | 'status'>;
  private readonly lockWait: client.Histogram;
  private readonly commit: client.Histogram;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    this.requests = new client.Counter({
      name: 'c4store_http_requests_total',
      help: 'HTTP requests answered, by method, route (as the router names it; "unmatched" when none) and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.durations = new client.Histogram({
      name: 'c4store_http_request_duration_seconds',
      help: 'Time from a request’s arrival to its answer being handed over, by method, route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.lockWait = new client.Histogram({
      name: 'c4store_write_lock_wait_seconds',
      help: 'Time a write waited for its organization’s lock (in this process, then across processes).',
      buckets: WRITE_BUCKETS,
      registers,
    });
    this.commit = new client.Histogram({
      name: 'c4store_write_commit_seconds',
      help: 'Time a write’s commit took: objects, tree and the compare-and-swap of main.',
      buckets: WRITE_BUCKETS,
      registers,
    });
    const gauge = (name: string, help: string, read: () => number) =>
      new client.Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    gauge('c4store_organizations_loaded', 'Organizations whose model is in memory.', () => sources.organizationsLoaded());
    gauge(
      'c4store_snapshot_cache_bytes',
      'Bytes of ?at= snapshots kept for reuse (all organizations).',
      () => sources.snapshotCache().bytes,
    );
    gauge('c4store_snapshot_cache_entries', 'Snapshots kept for ?at= reads.', () => sources.snapshotCache().entries);
    gauge(
      'c4store_filtered_answers_bytes',
      'Bytes of filtered list answers kept (all organizations; bounded).',
      () => sources.keptAnswers().filteredLists,
    );
    gauge('c4store_png_answers_bytes', 'Bytes of PNG drawings kept (all organizations; bounded).', () => sources.keptAnswers().pictures);
    gauge(
      'c4store_drawings_kept_bytes',
      'SVG drawings kept for reuse (characters of SVG, ~bytes; bounded).',
      () => sources.keptAnswers().drawings,
    );
    gauge('c4store_packing_running', 'Repositories being packed in the background now.', () => sources.packing().running);
    gauge(
      'c4store_packing_backlog_commits',
      'Commits of this process not packed yet, over every repository.',
      () => sources.packing().commitsSinceLastPack,
    );
    gauge('c4store_mirrors', 'Mirrors configured.', () => sources.mirrors().mirrors);
    gauge('c4store_mirror_backlog', 'Mirrors with commits still to push or a push under way.', () => sources.mirrors().pending);
    gauge('c4store_mirrors_failing', 'Mirrors whose last push failed.', () => sources.mirrors().failing);
    gauge('c4store_http_requests_in_flight', 'Requests received and not answered yet.', () => sources.requestsInFlight());
    gauge('c4store_draining', '1 while the instance is stopping (/healthz answers 503).', () => (sources.draining() ? 1 : 0));
  }

  observeRequest(method: string, route: string | undefined, status: number, seconds: number): void {
    const labels = { method: METHODS.has(method) ? method : 'other', route: route ?? 'unmatched', status: String(status) };
    this.requests.inc(labels);
    this.durations.observe(labels, seconds);
  }

  observeWrite(timing: WriteTiming): void {
    this.lockWait.observe(timing.lockWaitMs / 1000);
    this.commit.observe(timing.commitMs / 1000);
  }

  /** The text a scrape gets. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    const merged = client.Registry.merge([this.registry, processMetrics()]);
    return { contentType: merged.contentType, text: await merged.metrics() };
  }
}

/** Counts every request once its answer is handed over (or abandoned), under its route. */
export function countRequests(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    ctx.res.once('close', () => metrics.observeRequest(ctx.method, routeOf(ctx), ctx.status, (performance.now() - started) / 1000));
    await next();
  };
}

/** The `/metrics` handler. */
export function serveMetrics(metrics: Metrics, token: string | undefined): Middleware {
  const expected = token === undefined ? undefined : digest(token);
  return async (ctx) => {
    allowScrape(ctx, expected);
    const { contentType, text } = await metrics.exposition();
    ctx.type = contentType;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = text;
  };
}

function allowScrape(ctx: Context, expected: Buffer | undefined): void {
  if (expected !== undefined) {
    const presented = /^Bearer +(\S+) *$/i.exec(ctx.get('authorization'))?.[1];
    // Digests of equal length: a constant-time comparison whatever was sent.
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      throw new ApiError(401, 'Metrics need the metrics token.', { 'WWW-Authenticate': 'Bearer' });
    }
    return;
  }
  const address = ctx.req.socket.remoteAddress ?? '';
  const loopback = address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
  if (!loopback || ctx.get('forwarded') !== '' || ctx.get('x-forwarded-for') !== '') {
    throw new ApiError(
      403,
      'Metrics are served on the loopback address only; give the server a --metrics-token to scrape them from elsewhere.',
    );
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
