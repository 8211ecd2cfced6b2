/**
 * Share links through the API (src/share/links.ts, docs/api.md §16): an editor key makes a
 * read-only link to one diagram and revokes it; any key of the organization lists them.
 */
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { ApiError } from '../../errors.js';
import { type ShareLink, type ShareLinks, TokenUsed, TooManyLinks } from '../../share/links.js';
import { ShareLinkBody } from '../../share/schemas.js';
import { requireEditor } from '../middleware/auth.js';
import { checkRequestBody } from '../request-body.js';
import { findOne, mainOnly, queryValue, readSnapshot, state, type RouteSettings } from '../resource.js';
import { send } from '../respond.js';

/** A link as lists show it: never its token (only its hash is kept). */
export function presentLink(link: ShareLink) {
  return {
    id: link.id,
    diagramId: link.diagram,
    label: link.label,
    created: link.created,
    createdBy: link.createdBy,
    expires: link.expires ?? null,
  };
}

/** The addresses a token opens, under the server's public url. */
export function shareUrls(publicUrl: string, token: string) {
  const page = `${publicUrl}/share/${token}`;
  return { url: page, svgUrl: `${page}.svg`, pngUrl: `${page}.png` };
}

/**
 * Links have no history: `?at=` is checked like on every GET (an unknown commit is a 404), and
 * the answer is the links as they are now.
 */
async function checkAt(ctx: Context): Promise<void> {
  if (queryValue(ctx, 'at') !== undefined) await readSnapshot(ctx);
}

/** A body is optional: a POST without one makes a link without a label. */
function optionalBody(parse: Middleware): Middleware {
  return (ctx: Context, next: Next) => {
    const bodiless = (ctx.request.length ?? 0) === 0 && ctx.get('transfer-encoding') === '';
    if (!bodiless) return parse(ctx, next);
    ctx.request.body = {};
    return next();
  };
}

/**
 * A new link to the diagram `diagramId` of the request's organization, as main has it at `commit`,
 * made by the request's key (the API's and the viewer's). `token`: the one the viewer's form drew
 * (ShareLinks.create: the same form sent again answers its link again).
 */
export async function makeShareLink(
  ctx: Context,
  store: ShareLinks,
  diagramId: string,
  commit: string,
  made: { label?: string; expiresInDays?: number },
  token?: string,
) {
  const { key, org } = state(ctx);
  if (org.identity === undefined) throw new ApiError(503, 'This organization has no identity yet: restart the server once.');
  try {
    return await store.create(
      {
        org: org.slug,
        orgId: org.identity,
        diagram: diagramId,
        commit,
        label: (made.label ?? '').trim(),
        createdBy: key.label,
        expiresInDays: made.expiresInDays,
      },
      token,
    );
  } catch (err) {
    if (err instanceof TooManyLinks || err instanceof TokenUsed) throw new ApiError(409, err.message);
    throw err;
  }
}

/** What share links are called where `?draft=` is refused: a link shows main's diagram, whatever a draft holds. */
const SHARE_LINKS = 'Share links';

/** `storeOf`: the data directory's links, made when first asked for. */
export function shareLinkRoutes(router: Router, writing: Middleware[], storeOf: () => ShareLinks, settings: RouteSettings): void {
  const [, parse] = writing;
  const create = async (ctx: Context, byRef: boolean) => {
    mainOnly(ctx, SHARE_LINKS);
    const body = checkRequestBody(ctx, ShareLinkBody);
    const head = await state(ctx).org.head();
    const diagram = findOne(ctx, 'diagram', head.model.diagrams, byRef);
    const { token, link } = await makeShareLink(ctx, storeOf(), diagram.id, head.commit, body);
    ctx.status = 201;
    ctx.set('Location', `/api/external/share-links/${link.id}`);
    await send(ctx, { ...presentLink(link), ...shareUrls(settings.publicUrl, token) });
    ctx.status = 201;
  };
  const list = async (ctx: Context, byRef: boolean) => {
    mainOnly(ctx, SHARE_LINKS);
    await checkAt(ctx);
    const { org } = state(ctx);
    const diagram = findOne(ctx, 'diagram', (await org.head()).model.diagrams, byRef);
    await send(ctx, (await storeOf().list(org.slug, org.identity, diagram.id)).map(presentLink));
  };
  router.post('/diagram/:id/share-links', requireEditor, optionalBody(parse!), (ctx) => create(ctx, false));
  router.post('/diagrams/:id/share-links', requireEditor, optionalBody(parse!), (ctx) => create(ctx, true));
  router.get('/diagram/:id/share-links', (ctx) => list(ctx, false));
  router.get('/diagrams/:id/share-links', (ctx) => list(ctx, true));
  router.get('/share-links', async (ctx) => {
    mainOnly(ctx, SHARE_LINKS);
    await checkAt(ctx);
    await send(ctx, (await storeOf().list(state(ctx).org.slug, state(ctx).org.identity)).map(presentLink));
  });
  router.get('/share-links/:id', async (ctx) => {
    mainOnly(ctx, SHARE_LINKS);
    await checkAt(ctx);
    const link = (await storeOf().list(state(ctx).org.slug, state(ctx).org.identity)).find((l) => l.id === ctx.params.id);
    if (!link) throw new ApiError(404, `Share link with id '${ctx.params.id}' does not exist.`);
    await send(ctx, presentLink(link));
  });
  router.delete('/share-links/:id', requireEditor, async (ctx) => {
    mainOnly(ctx, SHARE_LINKS);
    const removed = await storeOf().revoke(state(ctx).org.slug, state(ctx).org.identity, String(ctx.params.id));
    if (!removed) throw new ApiError(404, `Share link with id '${ctx.params.id}' does not exist.`);
    await send(ctx, presentLink(removed));
  });
}
