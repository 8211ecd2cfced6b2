import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import { gitHttp } from '../git-http/backend.js';
import type { Mirrors } from '../mirror/pusher.js';
import { openapiJson } from '../openapi/document.js';
import type { Orgs } from '../service/orgs.js';
import type { KeyStore } from '../store/keys.js';
import { DEFAULT_LIMITS, type Limits } from '../limits/limits.js';
import { limitWriteSize } from './middleware/limits.js';
import { authenticate, requireEditor } from './middleware/auth.js';
import { bodySettingsOf, parseBody } from './middleware/body.js';
import { errors } from './middleware/errors.js';
import { createLogger, noteRoute, requestLog } from './middleware/log.js';
import { boundSends, DEFAULT_SEND_BYTES_PER_KEY, DEFAULT_SEND_TIMEOUT, type SendBounds } from './middleware/send-bounds.js';
import { KeyRates, rateLimit, type RateLimits } from './middleware/rate-limit.js';
import { closeAfterUnreadBody } from './middleware/unread-body.js';
import { privateAnswers } from './middleware/private-answers.js';
import { protocolRequirements } from './middleware/protocol.js';
import { DEFAULT_LINGER_MS, type LingerSettings } from './connections/linger.js';
import type { RouteSettings } from './resource.js';
import type { YamlPool } from './yaml-pool.js';
import { attributeRoutes } from './routes/attributes.js';
import { componentRoutes } from './routes/components.js';
import { currentRoutes, refuseTypeDeletes } from './routes/current.js';
import { diagramRoutes } from './routes/diagrams.js';
import { draftRoutes } from './routes/drafts.js';
import { eventRoutes, type EventRouteSettings } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { historyRoutes } from './routes/history.js';
import { modelRoutes } from './routes/model.js';
import { searchRoutes } from './routes/search.js';
import { tagRoutes } from './routes/tags.js';
import { templateRoutes } from './routes/template.js';
import { revertRoutes } from './routes/revert.js';
import { typeRoutes } from './routes/types.js';
import { versionRoutes } from './routes/versions.js';
import { pageNotFound, viewerRouter } from '../viewer/routes.js';
import { ignoreAcceptParameters } from './middleware/accept.js';
import { mcpRouter } from '../mcp/endpoint.js';
import { refuseUnknownParameters } from './middleware/known-parameters.js';
import { MCP_TOOLS } from '../mcp/tools.js';
import { ShareLinks } from '../share/links.js';
import { shareLinkRoutes } from './routes/share-links.js';
import { countRequests, type Metrics, serveMetrics } from '../ops/metrics.js';

export interface AppDependencies extends RouteSettings, EventRouteSettings {
  orgs: Orgs;
  keys: KeyStore;
  /** Bytes one git fetch or push request may send (default 256 MB). */
  gitBodyLimit?: number;
  /** How long one git fetch or push request may run (default 10 minutes). */
  gitTimeoutMs?: number;

  /** Messages of the server's parts that are not about one request (a failed mirror push, …): warnings. */
  log: (line: string) => void;
  /** The structured log: one JSON line per request, and unexpected errors (default: lines to `log`). */
  logger?: Logger;
  /** Bytes of request bodies held at once across the server (see middleware/body.ts). */
  bodyBudget: number;
  /** The same per organization (default: half the server's, at least one body limit). */
  bodyBudgetPerOrg?: number;
  /** A body that sends nothing this long is cut off with 408 (ms, default 10 s). */
  bodyStallTimeout?: number;
  /** Worker threads for large YAML bodies. */
  yamlPool: YamlPool;
  /** Where each organization is mirrored to, and how that goes. */
  mirrors?: Mirrors;
  /** Requests a minute per key (off by default). */
  rateLimits?: RateLimits;
  /** The counts of those rates, shared by the API, git over HTTP and the viewer (made from rateLimits when absent). */
  rates?: KeyRates;
  /** Bytes of responses in flight per key, and the send timeout (see middleware/send-bounds.ts). */
  sendBounds?: SendBounds;
  /** How long and how much a connection reads on after answering before the body was read. */
  linger?: LingerSettings;
  /** Bounds on what one write may ask for (default: DEFAULT_LIMITS). */
  limits?: Limits;
  /** While `draining`, `/healthz` answers 503 (src/ops/drain.ts). */
  readiness?: { readonly draining: boolean };
  /** Counted requests and `/metrics` (src/ops/metrics.ts); without a token, loopback scrapes only. */
  metrics?: Metrics;
  metricsToken?: string;
  /** An MCP session unused this long is closed (ms, default 30 minutes). */
  mcpSessionIdleMs?: number;
  /** The bounds of a JSON-RPC batch to `/mcp` (defaults: 50 requests, 2,000,000 characters of answers). */
  mcpBatch?: { requests: number; answerChars: number };
}

/**
 * Paths match to the letter. @koa/router matches case-insensitively by default while its
 * prefix middleware (authentication) matches only the exact prefix: `/API/EXTERNAL/tag` reached
 * a handler without a key check. A path in another letter case is simply not found.
 */
const ROUTER_OPTIONS = { sensitive: true } as const;

/** The key-checked API, every route of every form under `/api/external`. */
export function apiRouter(deps: AppDependencies): Router {
  const api = new Router({ ...ROUTER_OPTIONS, prefix: '/api/external' });
  api.use(authenticate(deps.keys, deps.orgs));
  api.use(rateLimit(deps.rates ?? new KeyRates(deps.rateLimits ?? {})));
  api.use(boundSends(deps.sendBounds ?? { bytesPerKey: DEFAULT_SEND_BYTES_PER_KEY, timeoutMs: DEFAULT_SEND_TIMEOUT }));
  api.use(refuseUnknownParameters);
  const writing = [requireEditor, parseBody(bodySettingsOf(deps)), limitWriteSize(deps.limits ?? DEFAULT_LIMITS)];
  typeRoutes(api);
  tagRoutes(api, writing);
  attributeRoutes(api, writing, deps);
  componentRoutes(api, writing);
  diagramRoutes(api, writing, deps);
  modelRoutes(api, writing, deps);
  historyRoutes(api, deps);
  versionRoutes(api, writing);
  revertRoutes(api, writing, deps);
  currentRoutes(api, writing, deps);
  templateRoutes(api, writing, deps);
  searchRoutes(api, deps);
  let shareLinks: ShareLinks | undefined;
  shareLinkRoutes(api, writing, () => (shareLinks ??= new ShareLinks(deps.keys.dataDir)), deps);
  draftRoutes(api, writing, deps);
  eventRoutes(api, writing, deps);
  return api;
}

/**
 * `/mcp` for AI agents (src/mcp/): the same key check, rates, send bounds and body reading as the
 * API; its handlers' unexpected errors go to `logger` as the errors middleware's do, with the request's id.
 */
function agentRouter(deps: AppDependencies, logger: Logger): Router {
  const rates = deps.rates ?? new KeyRates(deps.rateLimits ?? {});
  const sendBounds = deps.sendBounds ?? { bytesPerKey: DEFAULT_SEND_BYTES_PER_KEY, timeoutMs: DEFAULT_SEND_TIMEOUT };
  const settings = {
    get publicUrl() {
      return deps.publicUrl;
    },
    tools: MCP_TOOLS,
    idleMs: deps.mcpSessionIdleMs,
    batch: deps.mcpBatch,
    rates,
    sendBounds,
    logError: (requestId: string, line: string) => logger.error({ requestId }, line),
  };
  return mcpRouter(
    [authenticate(deps.keys, deps.orgs), rateLimit(rates), boundSends(sendBounds)],
    parseBody(bodySettingsOf(deps)),
    settings,
  );
}

/**
 * Every request: log → errors in the contract's format → route. API routes then run
 * authentication, and writes the key's role and body parsing, in that order: a reader
 * key's write is refused whatever its body.
 */
export function createApp(deps: AppDependencies): Koa {
  // One count per key over every way in. Set on the object itself, not a copy: the server sets
  // `publicUrl` on it once it listens, and every route reads it from there.
  deps.rates ??= new KeyRates(deps.rateLimits ?? {});
  const app = new Koa();
  app.silent = true;
  const logger = deps.logger ?? createLogger(deps.log);
  app.use(requestLog(logger));
  app.use(ignoreAcceptParameters);
  if (deps.metrics) app.use(countRequests(deps.metrics));
  app.use(closeAfterUnreadBody(deps.linger ?? { ms: DEFAULT_LINGER_MS, bytes: 2 * deps.bodyLimit }));
  app.use(privateAnswers);
  app.use(errors((line, requestId) => logger.error({ requestId }, line)));
  app.use(protocolRequirements);
  app.use(gitHttp(deps));
  app.use(refuseTypeDeletes);
  app.use(pageNotFound(deps));

  const health = new Router(ROUTER_OPTIONS);
  healthRoutes(health, deps);
  if (deps.metrics) health.get('/metrics', serveMetrics(deps.metrics, deps.metricsToken));
  // No key: a client generator must be able to read it before it has one.
  health.get('/api/external/openapi.json', (ctx) => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = openapiJson();
  });

  // The viewer's pages (src/viewer/) read deps.publicUrl when asked: it is set once the server listens.
  const viewer = viewerRouter(deps);
  for (const router of [health, apiRouter(deps), viewer, agentRouter(deps, logger)]) {
    app.use(noteRoute(router));
    app.use(router.routes());
    // Not thrown: the router then sets the `Allow` header a 405 must carry (RFC 9110 §15.5.6);
    // the errors middleware turns the bodiless 405/501 into the contract's error.
    app.use(router.allowedMethods());
  }
  return app;
}
