import type { Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { queryParameterNames } from '../../openapi/document.js';
import { ROUTES } from '../../openapi/routes.js';
import { routeOf } from './log.js';

/**
 * The seed's reads, which take no query parameter and, as they always did, ignore any they are
 * given (docs/api.md §1.1): a seed client's cache-busting `?_=…` keeps working.
 */
const SEED_READS = new Set(['/type', '/tag', '/attribute', '/component', '/diagram'].flatMap((path) => [path, `${path}/:id`]));

interface Takes {
  names: readonly string[];
  /** A route of main alone lets `?draft=` through to its own refusal, which says why (resource.ts, mainOnly). */
  mainOnly: boolean;
}

/** What each route of the API takes, by `<METHOD> <route as the router names it>`; null: anything (a seed read). */
let taken: Map<string, Takes | null> | undefined;

function takenByRoute(): Map<string, Takes | null> {
  if (taken) return taken;
  taken = new Map();
  for (const route of ROUTES) {
    if (route.absolute) continue;
    const seedRead = route.method === 'GET' && SEED_READS.has(route.path);
    taken.set(
      `${route.method} /api/external${route.path}`,
      seedRead ? null : { names: queryParameterNames(route), mainOnly: route.mainOnly === true },
    );
  }
  return taken;
}

/**
 * Refuses (400) a query parameter the route does not take, in the words of the list filters'
 * refusal. Ignored, a misspelt one changes what the request means without a word: a write with
 * `?drfat=review` committed to main instead of the draft, `/history?resurce=…` answered the whole
 * history. What a route takes is what the OpenAPI document lists for it, so the two agree.
 */
export const refuseUnknownParameters: Middleware = async (ctx, next) => {
  const route = routeOf(ctx);
  const takes = route === undefined ? undefined : takenByRoute().get(`${ctx.method === 'HEAD' ? 'GET' : ctx.method} ${route}`);
  if (takes) {
    const { names, mainOnly } = takes;
    for (const name of Object.keys(ctx.query)) {
      if (!names.includes(name) && !(mainOnly && name === 'draft')) {
        const listed = names.length === 0 ? 'no query parameters' : names.join(', ');
        throw new ApiError(400, `Unknown query parameter '${name}': ${ctx.method} ${ctx.path} takes ${listed}.`);
      }
    }
  }
  await next();
};
