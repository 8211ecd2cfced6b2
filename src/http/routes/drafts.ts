import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { Drafts, MergeConflicts, type DraftState } from '../../drafts/drafts.js';
import { DraftBody, MergeBody } from '../../drafts/schemas.js';
import { requireEditor } from '../middleware/auth.js';
import { authorOf, preconditions, queryValue, readSnapshot, state, writeOptions, type RouteSettings } from '../resource.js';
import { checkRequestBody } from '../request-body.js';
import { send, sendError } from '../respond.js';
import type { Plain } from '../../yaml/format.js';

/**
 * Drafts (CONTRACT §8): `POST/GET /drafts`, `GET /drafts/<name>` (with its changes, how far
 * behind `main` it is, and what a merge now would conflict on), its diff, merge, update,
 * close (DELETE) and reopen. Reading and writing the model of a draft is `?draft=<name>` on
 * the model's own routes (src/http/resource.ts).
 */
export function draftRoutes(router: Router, writing: Middleware[], settings: RouteSettings): void {
  router.post('/drafts', ...writing, async (ctx) => {
    const body = checkRequestBody(ctx, DraftBody);
    const draft = await new Drafts(state(ctx).org).open(body, authorOf(ctx));
    ctx.status = 201;
    ctx.set('Location', `/api/external/drafts/${draft.name}`);
    etag(ctx, draft.head);
    await send(ctx, draft);
  });

  // Drafts are always read as they are now; `?at=` (which every GET takes) must still name a commit.
  const checkAt: Middleware = async (ctx, next) => {
    if (ctx.query.at !== undefined) await readSnapshot(ctx);
    await next();
  };

  router.get('/drafts', checkAt, async (ctx) => {
    const wanted = queryValue(ctx, 'state') ?? 'open';
    if (!['open', 'merged', 'closed'].includes(wanted)) {
      throw new ApiError(400, `Invalid state '${wanted}': use open, merged or closed.`);
    }
    const { org } = state(ctx);
    const drafts = await new Drafts(org).list(wanted as DraftState);
    etag(ctx, (await org.repo.readHead()) ?? '');
    await send(ctx, drafts);
  });

  router.get('/drafts/:name', checkAt, async (ctx) => {
    const draft = await new Drafts(state(ctx).org).get(String(ctx.params.name), settings.publicUrl);
    etag(ctx, draft.head);
    await send(ctx, draft);
  });

  router.get('/drafts/:name/diff', checkAt, async (ctx) => {
    const { snapshot, diff } = await new Drafts(state(ctx).org).diff(String(ctx.params.name), settings.publicUrl);
    await send(ctx, diff, snapshot);
  });

  // `curl -X POST …/merge` with no body at all is a merge without resolutions.
  const bodyIfAny = writing.map(
    (middleware, i): Middleware => (i === 0 ? middleware : (ctx, next) => (hasBody(ctx) ? middleware(ctx, next) : next())),
  );
  for (const [action, into] of [
    ['merge', 'main'],
    ['update', 'draft'],
  ] as const) {
    router.post(`/drafts/:name/${action}`, ...bodyIfAny, async (ctx) => {
      const body = hasBody(ctx) ? checkRequestBody(ctx, MergeBody) : {};
      try {
        const { snapshot, draft, committed, mergedHead } = await new Drafts(state(ctx).org).merge(
          String(ctx.params.name),
          into,
          body.resolutions ?? [],
          {
            author: authorOf(ctx),
            options: writeOptions(ctx),
            publicUrl: settings.publicUrl,
            ...preconditions(ctx),
          },
        );
        await send(ctx, { ...draft, commit: snapshot.commit, committed, ...(mergedHead === undefined ? {} : { mergedHead }) }, snapshot);
      } catch (err) {
        if (!(err instanceof MergeConflicts)) throw err;
        sendConflicts(ctx, err);
      }
    });
  }

  router.delete('/drafts/:name', requireEditor, async (ctx) => {
    const draft = await new Drafts(state(ctx).org).close(String(ctx.params.name));
    etag(ctx, draft.head);
    await send(ctx, draft);
  });

  router.post('/drafts/:name/reopen', requireEditor, async (ctx) => {
    const draft = await new Drafts(state(ctx).org).reopen(String(ctx.params.name));
    etag(ctx, draft.head);
    await send(ctx, draft);
  });
}

function hasBody(ctx: Context): boolean {
  return (ctx.request.length ?? 0) > 0 || ctx.get('transfer-encoding') !== '';
}

function etag(ctx: Context, commit: string): void {
  if (commit !== '') ctx.set('ETag', `"${commit}"`);
}

/** 409 `{"error", "conflicts": [...]}`: the contract's error object, with what to settle beside it. */
function sendConflicts(ctx: Context, err: MergeConflicts): void {
  sendError(ctx, err, { conflicts: err.conflicts as unknown as Plain });
}
