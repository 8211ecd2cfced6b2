import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { DraftChanged, Drafts, locateDraft, MergeConflicts } from '../drafts/drafts.js';
import { ApiError } from '../errors.js';
import type { MergeKind, Resolution } from '../drafts/merge.js';
import { requireEditor } from '../http/middleware/auth.js';
import { authorOf, state, writeOptions } from '../http/resource.js';
import type { KeyRecord } from '../store/keys.js';
import { draftListPage, draftPage, draftsPath, MERGE_REFUSALS, type MergeRefusal } from './draft-pages.js';

/** What the viewer's router lends the draft pages: its guards, its form reader, its way of answering HTML and where readers reach it. */
export interface DraftPageGuards {
  htmlErrors: Middleware;
  sameOrigin: Middleware;
  signedIn: Middleware;
  ownOrg: Middleware;
  readForm: (ctx: Context) => Promise<URLSearchParams>;
  sendHtml: (ctx: Context, html: string) => void;
  /** Where readers reach the service (`--public-url`, else the address the request came to). */
  publicOrigin: (ctx: Context) => string;
}

/** The draft pages: the list, one draft for review, and its merge and close buttons (editors). */
export function draftPageRoutes(router: Router, guards: DraftPageGuards): void {
  const { htmlErrors, sameOrigin, signedIn, ownOrg, readForm, sendHtml, publicOrigin } = guards;
  const keyOf = (ctx: Context) => (ctx.state.viewer as { key: KeyRecord }).key;

  router.get('/orgs/:slug/drafts', htmlErrors, signedIn, ownOrg, async (ctx) => {
    const key = keyOf(ctx);
    const drafts = new Drafts(state(ctx).org);
    const [open, merged, closed] = await Promise.all([drafts.list('open'), drafts.list('merged'), drafts.list('closed')]);
    sendHtml(ctx, draftListPage({ open, merged, closed }, { key, slug: key.org }));
  });

  router.get('/orgs/:slug/drafts/:name', htmlErrors, signedIn, ownOrg, async (ctx) => {
    const key = keyOf(ctx);
    const review = await new Drafts(state(ctx).org).review(String(ctx.params.name), publicOrigin(ctx));
    const refused = String(ctx.query.refused ?? '');
    sendHtml(
      ctx,
      await draftPage(review, {
        key,
        slug: key.org,
        ...(Object.hasOwn(MERGE_REFUSALS, refused) ? { refused: refused as MergeRefusal } : {}),
      }),
    );
  });

  /** The merge button, with a choice per conflict as `take:<kind>:<id>:<field>` = main | draft. */
  router.post('/orgs/:slug/drafts/:name/merge', htmlErrors, sameOrigin, signedIn, ownOrg, requireEditor, async (ctx) => {
    const form = await readForm(ctx);
    const resolutions: Resolution[] = [];
    for (const [name, take] of form) {
      const match = /^take:([a-z]+):([^:]+):(.+)$/.exec(name);
      if (match && (take === 'main' || take === 'draft'))
        resolutions.push({ kind: match[1] as MergeKind, id: match[2], field: match[3], take });
    }
    const name = String(ctx.params.name);
    const back = (refused: MergeRefusal) => {
      ctx.status = 303;
      ctx.redirect(`${draftsPath(keyOf(ctx).org, name)}?refused=${refused}`);
    };
    const reviewed = form.get('head') ?? undefined;
    const { org } = state(ctx);
    try {
      await new Drafts(org).merge(name, 'main', resolutions, {
        author: authorOf(ctx),
        options: writeOptions(ctx),
        reviewed,
        publicUrl: publicOrigin(ctx),
      });
    } catch (err) {
      // Back on the draft's page, which shows what changed and asks again; nothing was merged.
      if (err instanceof DraftChanged) return back('changed');
      if (err instanceof MergeConflicts) return back('conflicts');
      // Merged already at the very head this page showed: this merge, sent again after its answer
      // was lost (an instance killed behind a load balancer, the browser sending it once more).
      const draft = isRefused(err) ? await locateDraft(org, name) : undefined;
      if (draft?.state !== 'merged' || reviewed === undefined || (await org.repo.readBranch(draft.ref)) !== reviewed) throw err;
    }
    ctx.status = 303;
    ctx.redirect(draftsPath(keyOf(ctx).org, name));
  });

  router.post('/orgs/:slug/drafts/:name/close', htmlErrors, sameOrigin, signedIn, ownOrg, requireEditor, async (ctx) => {
    await readForm(ctx);
    const name = String(ctx.params.name);
    try {
      await new Drafts(state(ctx).org).close(name);
    } catch (err) {
      // Closed already: what the button asks for holds (this close sent again after its answer was lost, as a merge above).
      if (!isRefused(err) || (await locateDraft(state(ctx).org, name)).state !== 'closed') throw err;
    }
    ctx.status = 303;
    ctx.redirect(draftsPath(keyOf(ctx).org));
  });
}

/** A 409: the draft is not open (merged or closed). */
function isRefused(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409;
}
