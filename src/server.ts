import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createApp } from './http/app.js';
import { capConnections, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS } from './http/connections/caps.js';
import { checkContinue } from './http/connections/continue.js';
import { DEFAULT_SEND_BYTES_PER_KEY, DEFAULT_SEND_TIMEOUT } from './http/middleware/send-bounds.js';
import { DEFAULT_LINGER_MS, lingerBeforeClose } from './http/connections/linger.js';
import { YamlPool } from './http/yaml-pool.js';
import { guardPushes } from './push/hook.js';
import { Mirrors } from './mirror/pusher.js';
import { Maintenance } from './store/maintenance.js';
import { drawings } from './drawing/drawings.js';
import { filteredAnswers } from './http/filtered-list.js';
import { pictures } from './viewer/svg-response.js';
import { LayoutPool } from './layout/pool.js';
import { DEFAULT_BODY_LIMIT, DEFAULT_LIMITS, type Limits } from './limits/limits.js';
import { Orgs } from './service/orgs.js';
import type { TestPauses } from './service/org.js';
import { KeyStore } from './store/keys.js';
import { SHARE_LINKS_FILE_NAME, ShareLinks } from './share/links.js';
import { createLogger } from './http/middleware/log.js';
import { Metrics } from './ops/metrics.js';
import { DEFAULT_DRAIN_DELAY_MS, DEFAULT_SHUTDOWN_TIMEOUT_MS, Drain, type DrainTimes } from './ops/drain.js';
import { Events, type EventsSettings } from './events/events.js';

export interface ServerOptions {
  dataDir: string;
  port?: number;
  host?: string;
  /** The address clients reach the service at; diagram urls start with it. */
  publicUrl?: string;
  /** fsync objects, ref and directories before answering a write. */
  durable?: boolean;
  bodyLimit?: number;
  /** Writes one organization lets wait for its lock before answering 503. */
  maxWaitingWrites?: number;
  /**
   * Bytes of request bodies the server holds at once, over all requests (503 + Retry-After
   * beyond). Default: the larger of 64 MB and four body limits.
   */
  bodyBudget?: number;
  /**
   * The same for the requests of one organization, so one cannot fill the server's
   * (default: half of bodyBudget, at least bodyLimit). Both count bytes as they arrive.
   */
  bodyBudgetPerOrg?: number;
  /** A request body that sends nothing for this long is answered 408 and cut off (default 10 s). */
  bodyStallTimeout?: number;
  /**
   * Bytes of `?at=` snapshots (models of earlier commits and their serialized responses) kept
   * for reuse, over all organizations (default 256 MB); the least recently used go first.
   */
  snapshotCacheBytes?: number;
  /** Worker threads parsing large YAML bodies at once (default: cores − 1, 1 to 4). */
  yamlThreads?: number;
  /**
   * A connection whose request headers are not complete this long after its request began
   * is answered 408 and closed (Node's `headersTimeout`; default 10 s). Also applies to a
   * connection that sends nothing at all.
   */
  headersTimeout?: number;
  /**
   * A request (headers and body) not received completely this long after it began is
   * answered 408 and closed (Node's `requestTimeout`; default 60 s). Time spent answering
   * a complete request does not count.
   */
  requestTimeout?: number;
  /** An idle keep-alive connection is closed after this long (default 5 s). */
  keepAliveTimeout?: number;
  /**
   * After an answer that went out before the request's body was read (a refusal, a body cut at
   * the limit), the connection reads and discards what the client still sends for at most this
   * long (default 5 s) and at most twice the body limit, then closes (connections/linger.ts).
   */
  lingerMs?: number;
  /** GET/HEAD requests a minute per key, counted per process; beyond, 429 + Retry-After (default: unlimited). */
  readsPerMinute?: number;
  /** Write requests a minute per key, counted per process; beyond, 429 + Retry-After (default: unlimited). */
  writesPerMinute?: number;
  /**
   * Bytes of one key's responses not yet taken by its clients; a GET beyond is answered 503
   * (default 32 MB; one response is always allowed).
   */
  sendBytesPerKey?: number;
  /** A response not handed over completely this long after it began is cut off (default 60 s). */
  sendTimeout?: number;
  /** Open connections of the whole server; beyond, 503 and closed (default 1000). */
  maxConnections?: number;
  /**
   * Open connections from one client address; beyond, 503 and closed (default 100). Behind a
   * reverse proxy every connection comes from the proxy: raise it to maxConnections there.
   */
  maxConnectionsPerAddress?: number;
  /** Worker threads running automatic layout (default: cores − 1, 1 to 2); 0: on the request's thread. */
  layoutThreads?: number;
  /** An automatic layout taking longer is cancelled and its write refused with 503 (default 30 s). */
  layoutTimeout?: number;
  /**
   * The write step of a large request still running after this long (not counting its wait
   * for the organization's lock) is cancelled with 503 and changes nothing (default 60 s).
   */
  writeTimeout?: number;
  /** Bounds on requests, diagrams and organizations (src/limits/limits.ts); each one defaults. */
  limits?: Partial<Limits>;
  /**
   * Where the log's lines go, each one JSON object without its newline (default: stdout). Tests
   * keep them.
   */
  log?: (line: string) => void;
  /**
   * Pack a repository's loose objects with `git gc --auto` in the background after this
   * many commits of the service, and once 30 s after start (0: never; default 1000).
   */
  packEvery?: number;
  /** When every repository is first maintained after start (packed, or its commit graph brought up to date; default 30 s). */
  maintenanceStartDelayMs?: number;
  /** Bytes one git fetch or push over HTTP may send (default 256 MB); beyond, it is cut off and nothing moves. */
  gitBodyLimit?: number;
  /** How long one git fetch or push over HTTP may run, its pre-receive hook included (default 10 minutes); then it is stopped. */
  gitTimeoutMs?: number;
  /**
   * A scrape of `/metrics` must present it as `Authorization: Bearer <token>`; without one, only
   * clients on the loopback address that come directly (not through a proxy) may scrape.
   */
  metricsToken?: string;
  /** shutdown()'s defaults: how long it keeps serving while /healthz says 503, and how long requests in flight may take then. */
  drain?: Partial<DrainTimes>;
  /** Webhooks may target private and loopback addresses (`--webhook-allow-private`). */
  webhookAllowPrivate?: boolean;
  /** The change feed, live events and webhook delivery: how often refs are polled, retry schedule… (src/events/). */
  events?: EventsSettings;
  /** Tests only: where requests wait for the test (service/org.ts TestPauses). */
  testPauses?: TestPauses;
  /** An MCP session unused this long is closed (default 30 minutes). */
  mcpSessionIdleMs?: number;
  /** Tests only: the most requests a JSON-RPC batch to `/mcp` runs, and characters its answers take (mcp/endpoint.ts). */
  mcpBatch?: { requests: number; answerChars: number };
}

export interface RunningServer {
  url: string;
  server: Server;
  /** The organizations it serves (tests look at their caches). */
  orgs: Orgs;
  /** Stops at once: every connection is closed, whatever it was doing. */
  close(): Promise<void>;
  /**
   * Stops gracefully (ops/drain.ts): `/healthz` answers 503 while requests are still served for
   * `delayMs`, then no new connections, requests in flight (writes among them) finish within
   * `timeoutMs`, background work (packing, mirrors) stops. Resolves with the number of
   * requests cut off at the timeout.
   */
  shutdown(times?: Partial<DrainTimes>): Promise<number>;
}

export const DEFAULT_BODY_BUDGET = 64 * 1024 * 1024;
export const DEFAULT_HEADERS_TIMEOUT = 10_000;
export const DEFAULT_REQUEST_TIMEOUT = 60_000;
export const DEFAULT_KEEP_ALIVE_TIMEOUT = 5_000;
export const DEFAULT_PACK_EVERY = 1000;

const CLIENT_ERRORS: Record<string, [status: number, reason: string, message: string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request timeout.'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers too large.'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Payload Too Large', 'Request body too large.'],
};

/**
 * What Node's HTTP parser refuses before any handler runs (a timeout, headers over 16 KB, a
 * malformed request line) is answered in the contract's form, `{ "error": … }`, instead of
 * Node's bodyless default; then the connection is closed, as Node does.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code !== 'ECONNRESET' && socket.writable && !response?.headersSent) {
    const [status, reason, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'Bad Request', 'Bad request.'];
    writeRawError(socket, status, reason, message);
  }
  socket.destroy();
}

/**
 * A CONNECT asks for a tunnel, which only a proxy opens. Without a `connect` listener Node closes
 * the connection without a word; this server is no proxy, and says so in the contract's form.
 */
function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  if (socket.writable) writeRawError(socket, 400, 'Bad Request', 'Bad request: CONNECT is for proxies, and this server is none.');
  socket.end();
}

/** An answer written on the connection itself (no handler runs), which is closed after it. */
function writeRawError(socket: Duplex, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ error: message });
  socket.write(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const logger = createLogger(options.log);
  const log = (line: string) => logger.warn(line);
  const maintenance = new Maintenance(options.packEvery ?? DEFAULT_PACK_EVERY, log);
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const layoutPool =
    options.layoutThreads === 0 ? undefined : new LayoutPool({ threads: options.layoutThreads, timeoutMs: options.layoutTimeout });
  const orgs = new Orgs(options.dataDir, {
    durable: options.durable,
    maxWaitingWrites: options.maxWaitingWrites,
    snapshotCacheBytes: options.snapshotCacheBytes,
    limits,
    runLayout: layoutPool && ((input) => layoutPool.layout(input)),
    writeTimeout: options.writeTimeout,
    afterCommit: (slug, gitdir) => {
      maintenance.afterCommit(gitdir);
      mirrors.afterCommit(slug);
      events.afterCommit(slug);
    },
    observeWrite: (timing) => metrics.observeWrite(timing),
    testPauses: options.testPauses,
  });
  const events = new Events(orgs, {
    ...options.events,
    durable: options.durable,
    webhooks: { ...options.events?.webhooks, allowPrivate: options.webhookAllowPrivate ?? options.events?.webhooks?.allowPrivate },
  });
  const mirrors = new Mirrors(options.dataDir, (slug) => orgs.gitdir(slug), log);
  await mirrors.start();
  const keys = new KeyStore(options.dataDir);
  // A damaged file is refused on every request that needs it (503, naming it), not here.
  await keys.rewriteInCurrentForm().catch((error: Error) => log(`keys.yaml: ${error.message}`));
  await new ShareLinks(options.dataDir).rewriteInCurrentForm().catch((error: Error) => log(`${SHARE_LINKS_FILE_NAME}: ${error.message}`));
  await orgs.prepare(keys);
  // Pushes with file access are checked by the same code as API writes, through git's hook.
  const slugs = await orgs.list();
  for (const slug of slugs) {
    // As in prepare(): one damaged repository (a file named <slug>.git, an empty folder a restore
    // left) must not keep the server from serving the others; it ended the start here.
    await guardPushes(orgs.gitdir(slug)).catch((error: Error) =>
      log(`organization '${slug}': pushes to it cannot be checked (pre-receive hook, git's object checks): ${error.message}`),
    );
  }
  maintenance.maintainInTurn(
    slugs.map((slug) => orgs.gitdir(slug)),
    options.maintenanceStartDelayMs,
  );
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const yamlPool = new YamlPool({ threads: options.yamlThreads });
  const drain = new Drain();
  const metrics = new Metrics({
    organizationsLoaded: () => orgs.loadedCount,
    snapshotCache: () => ({ bytes: orgs.snapshots.bytes, entries: orgs.snapshots.size }),
    keptAnswers: () => ({ filteredLists: filteredAnswers.bytes, pictures: pictures.bytes, drawings: drawings.size.chars }),
    packing: () => maintenance.backlog,
    mirrors: () => mirrors.backlog,
    requestsInFlight: () => drain.requestsInFlight,
    draining: () => drain.draining,
  });
  const deps = {
    readiness: drain,
    metrics,
    metricsToken: options.metricsToken,
    orgs,
    keys,
    log,
    logger,
    publicUrl: '',
    bodyLimit,
    yamlPool,
    mirrors,
    events,
    limits,
    gitBodyLimit: options.gitBodyLimit,
    gitTimeoutMs: options.gitTimeoutMs,
    bodyBudget: options.bodyBudget ?? Math.max(DEFAULT_BODY_BUDGET, 4 * bodyLimit),
    bodyBudgetPerOrg: options.bodyBudgetPerOrg,
    bodyStallTimeout: options.bodyStallTimeout,
    rateLimits: { readsPerMinute: options.readsPerMinute, writesPerMinute: options.writesPerMinute },
    sendBounds: {
      bytesPerKey: options.sendBytesPerKey ?? DEFAULT_SEND_BYTES_PER_KEY,
      timeoutMs: options.sendTimeout ?? DEFAULT_SEND_TIMEOUT,
    },
    linger: { ms: options.lingerMs ?? DEFAULT_LINGER_MS, bytes: 2 * bodyLimit },
    mcpSessionIdleMs: options.mcpSessionIdleMs,
    mcpBatch: options.mcpBatch,
  };
  const app = createApp(deps);
  // A client that trickles its headers or body must not hold a connection forever. Node
  // enforces both timeouts from a timer that runs every `connectionsCheckingInterval` (its
  // default, 30 s, would let a 10 s timeout run to 40 s), and refuses headersTimeout >
  // requestTimeout.
  const requestTimeout = options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT;
  const headersTimeout = Math.min(options.headersTimeout ?? DEFAULT_HEADERS_TIMEOUT, requestTimeout);
  const handle = app.callback();
  const server = createServer({
    // A request without Host is refused by the app (middleware/protocol.ts), in the contract's form.
    requireHostHeader: false,
    requestTimeout,
    headersTimeout,
    keepAliveTimeout: options.keepAliveTimeout ?? DEFAULT_KEEP_ALIVE_TIMEOUT,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 10))),
  });
  const { guard } = capConnections(server, {
    total: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    perAddress: Math.min(
      options.maxConnectionsPerAddress ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
      options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    ),
  });
  server.on('request', drain.track(guard(handle)));
  server.on('checkContinue', drain.track(guard(checkContinue(handle))));
  // An `Expect` other than 100-continue: refused by the app (middleware/protocol.ts) with 417.
  server.on('checkExpectation', drain.track(guard(handle)));
  lingerBeforeClose(server, deps.linger);
  server.on('clientError', answerClientError);
  server.on('connect', refuseConnect);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8080, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  deps.publicUrl = (options.publicUrl ?? url).replace(/\/+$/, '');
  /** Packing, mirror pushes and webhook deliveries under way finish, for at most `ms`; nothing new starts. */
  const stopBackground = async (ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    const stopped = Promise.all([maintenance.close(), mirrors.close(), events.close({ finish: true })]).then(() => true);
    const outcome = await Promise.race([stopped, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
    clearTimeout(timer);
    if (!outcome) {
      // A delivery cut off now is recorded nowhere: the next holder of its lease sends it again.
      events.abortDeliveries();
      log(`background work (packing, mirror pushes, webhook deliveries) still running after ${ms} ms; left to finish on its own`);
    }
  };
  const stopWorkers = async () => {
    await yamlPool.close();
    await layoutPool?.close();
  };
  events.start();
  return {
    url,
    server,
    orgs,
    close: async () => {
      if (!server.listening) return; // stopped by shutdown() already
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      await events.close();
      await yamlPool.close();
      await maintenance.close();
      await mirrors.close();
      await layoutPool?.close();
    },
    shutdown: async (times = {}) => {
      const delayMs = times.delayMs ?? options.drain?.delayMs ?? DEFAULT_DRAIN_DELAY_MS;
      const timeoutMs = times.timeoutMs ?? options.drain?.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
      // Background work stops beside the drain: what it leaves (a push of the last commits)
      // the other instances, or this one's next start, pick up.
      const background = stopBackground(delayMs + timeoutMs);
      const cutOff = await drain.run(server, { delayMs, timeoutMs });
      await background;
      await stopWorkers();
      return cutOff;
    },
  };
}
