import type Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError } from '../../errors.js';
import { answeredDiff } from '../../drafts/conflict-shape.js';
import { pageStart, pathsOfResourceNamed, readHistory, type HistoryEntry } from '../../history/log.js';
import { draftRef } from '../../store/branches.js';
import { MAIN_REF } from '../../store/refs.js';
import { emptyModel } from '../../model/files.js';
import { resolveCommitName } from '../../service/commit-names.js';
import { limitParameter, queryValue, readSnapshot, state, type RouteSettings } from '../resource.js';
import { send } from '../respond.js';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;

function isoTime(ctx: Context, name: 'since' | 'until'): string | undefined {
  const value = queryValue(ctx, name);
  if (value === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) || Number.isNaN(Date.parse(value)) || !isCalendarDay(value)) {
    throw new ApiError(400, `Invalid ${name} '${value}': use an ISO 8601 time such as 2026-11-24T10:00:00Z.`);
  }
  return value;
}

/** Whether the date part names a day the calendar has: Date.parse reads 2026-02-30 as March 2nd. */
function isCalendarDay(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number);
  return new Date(Date.UTC(year!, month! - 1, day)).getUTCDate() === day;
}

export function historyRoutes(router: Router, settings: RouteSettings): void {
  router.get('/history', async (ctx) => {
    const { org } = state(ctx);
    const head = await readSnapshot(ctx);
    const resource = queryValue(ctx, 'resource');
    const paths = resource === undefined ? undefined : pathsOfResourceNamed(resource, head.model);
    // With ?draft=, the draft's history (which holds main's up to where it branched off); with
    // ?at=, the history as of that commit, which its ETag names: it never changes, as a 304 says.
    const draft = queryValue(ctx, 'draft');
    const tip = draft === undefined && queryValue(ctx, 'at') === undefined ? undefined : head.commit;
    const beforeText = queryValue(ctx, 'before');
    const before =
      beforeText === undefined
        ? undefined
        : await pageStart(org.repo, beforeText, tip ?? MAIN_REF, draft === undefined ? MAIN_REF : draftRef(draft));
    const limit = limitParameter(ctx, DEFAULT_LIMIT, MAX_LIMIT);
    const entries = await readHistory(org.repo.gitdir, {
      before,
      tip,
      since: isoTime(ctx, 'since'),
      until: isoTime(ctx, 'until'),
      limit,
      paths,
    });
    if (entries.length === limit) {
      const next = new URLSearchParams();
      for (const [name, value] of Object.entries(ctx.query)) if (typeof value === 'string' && name !== 'before') next.set(name, value);
      // `at` as the commit it resolved to: an abbreviation may come to name two commits as the history grows.
      if (next.has('at')) next.set('at', head.commit);
      next.set('before', entries[entries.length - 1].id);
      ctx.set('Link', `<${ctx.path}?${next}>; rel="next"`);
    }
    await send(ctx, entries, head);
  });

  router.get('/history/:commit', async (ctx) => {
    const { org } = state(ctx);
    const head = await readSnapshot(ctx);
    const commit = await resolveCommitName(org.repo, String(ctx.params.commit));
    const [entry] = await readHistory(org.repo.gitdir, { single: commit, limit: 1 });
    await send(ctx, { ...entry, diff: await diffFromParent(ctx, entry, settings.publicUrl) }, head);
  });

  router.get('/diff', async (ctx) => {
    const { org } = state(ctx);
    const head = await readSnapshot(ctx);
    const fromText = queryValue(ctx, 'from');
    if (fromText === undefined) throw new ApiError(400, "Query parameter 'from' is required: the commit or version to compare from.");
    const from = await resolveCommitName(org.repo, fromText);
    // Without `to`: what was read (main, or the draft's head with ?draft=, or ?at=), which the ETag names.
    const toText = queryValue(ctx, 'to');
    const to = toText === undefined ? head.commit : await resolveCommitName(org.repo, toText);
    const [before, after] = await Promise.all([org.at(from), org.at(to)]);
    await send(ctx, { from, to, ...answeredDiff(before.model, after.model, settings.publicUrl) }, head);
  });
}

/** What one commit changed: against its first parent, or against nothing for the first commit; as the API answers it. */
async function diffFromParent(ctx: Context, entry: HistoryEntry, publicUrl: string) {
  const { org } = state(ctx);
  const after = await org.at(entry.id);
  const before = entry.parents.length === 0 ? emptyModel(after.model.organization) : (await org.at(entry.parents[0])).model;
  return answeredDiff(before, after.model, publicUrl);
}
