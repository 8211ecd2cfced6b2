import Router from '@koa/router';
import Koa from 'koa';
import { openapiJson } from '../openapi/document.js';
import type { Orgs } from '../service/orgs.js';
import type { KeyStore } from '../store/keys.js';
import { authenticate, requireEditor } from './middleware/auth.js';
import { parseBody } from './middleware/body.js';
import { errors } from './middleware/errors.js';
import { requestLog } from './middleware/log.js';
import type { RouteSettings } from './resource.js';
import type { YamlPool } from './yaml-pool.js';
import { send } from './respond.js';
import { attributeRoutes } from './routes/attributes.js';
import { componentRoutes } from './routes/components.js';
import { diagramRoutes } from './routes/diagrams.js';
import { modelRoutes } from './routes/model.js';
import { tagRoutes } from './routes/tags.js';
import { typeRoutes } from './routes/types.js';

export interface AppDependencies extends RouteSettings {
  orgs: Orgs;
  keys: KeyStore;
  log: (line: string) => void;
  /** Bytes of request bodies held at once across the server (see middleware/body.ts). */
  bodyBudget: number;
  /** Worker threads for large YAML bodies. */
  yamlPool: YamlPool;
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
  const writing = [requireEditor, parseBody({ limitBytes: deps.bodyLimit, budgetBytes: deps.bodyBudget, yaml: deps.yamlPool })];
  typeRoutes(api);
  tagRoutes(api, writing);
  attributeRoutes(api, writing);
  componentRoutes(api, writing);
  diagramRoutes(api, writing, deps);
  modelRoutes(api, writing, deps);
  return api;
}

/**
 * Every request: log → errors in the contract's format → route. API routes then run
 * authentication, and writes the key's role and body parsing, in that order: a reader
 * key's write is refused whatever its body.
 */
export function createApp(deps: AppDependencies): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(requestLog(deps.log));
  app.use(errors(deps.log));

  const health = new Router(ROUTER_OPTIONS);
  health.get('/healthz', (ctx) => send(ctx, { ok: true }));
  // No key: a client generator must be able to read it before it has one.
  health.get('/api/external/openapi.json', (ctx) => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = openapiJson();
  });

  for (const router of [health, apiRouter(deps)]) {
    app.use(router.routes());
    // Not thrown: the router then sets the `Allow` header a 405 must carry (RFC 9110 §15.5.6);
    // the errors middleware turns the bodiless 405/501 into the contract's error.
    app.use(router.allowedMethods());
  }
  return app;
}
