import type { Context } from 'koa';
import { ApiError } from '../errors.js';
import { byIdOrRef, kindName, type Identified, type WriteOptions } from '../model/draft.js';
import type { StoredKind } from '../model/files.js';
import { isId, newId } from '../model/ids.js';
import type { Draft } from '../model/draft.js';
import { draftTip, writeToDraft } from '../drafts/drafts.js';
import type { OrgModel, Preconditions, Snapshot } from '../service/org.js';
import type { KeyRecord } from '../store/keys.js';
import { pageAfter } from './pages.js';
import { mapped } from '../slices.js';
import { send, sendFromSnapshot } from './respond.js';

/** What the middleware leaves on `ctx.state` for the handlers. */
export interface ApiState {
  key: KeyRecord;
  org: OrgModel;
}

export interface RouteSettings {
  /** Where diagrams are viewed: `<publicUrl>/orgs/<slug>/diagrams/<id>` (src/viewer/). */
  publicUrl: string;
  bodyLimit: number;
}

/**
 * The authenticated key and organization of a request. Every handler reaches them through
 * here, so a handler that somehow runs without the key check fails closed with a 401 instead
 * of serving or changing anything.
 */
export function state(ctx: Context): ApiState {
  const { key, org } = ctx.state as Partial<ApiState>;
  if (key === undefined || org === undefined) throw new ApiError(401, 'Missing API key.', { 'WWW-Authenticate': 'Bearer' });
  return { key, org };
}

/** `?limit=`: a whole number from 1 to `max`, or `fallback` when absent; otherwise 400 saying so. */
export function limitParameter(ctx: Context, fallback: number, max: number): number {
  const text = queryValue(ctx, 'limit');
  if (text === undefined) return fallback;
  // Digits only: Number() would also read '1e2', '0x10' and '+5'.
  const limit = /^[0-9]{1,7}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new ApiError(400, `Invalid limit '${text}': use a whole number from 1 to ${max}.`);
  }
  return limit;
}

export function queryValue(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw new ApiError(400, `Query parameter '${name}' is given more than once.`);
  return value;
}

/**
 * Refuses `?draft=` where the request is about main alone (versions, share links): silently
 * answering for main would let a client believe it acted on its draft.
 */
export function mainOnly(ctx: Context, what: string): void {
  if (queryValue(ctx, 'draft') !== undefined) throw new ApiError(400, `${what} belong to main: ?draft= does not apply to them.`);
}

/**
 * The snapshot a GET reads: the tip of `main`, the tip of the draft named by `?draft=` (an
 * open one, or where a merged or closed one was left), or the commit named by `?at=`. While
 * `main` is broken behind the service's back, the last valid commit, with a `Warning` saying so.
 */
export async function readSnapshot(ctx: Context): Promise<Snapshot> {
  const at = queryValue(ctx, 'at');
  if (at !== undefined) return state(ctx).org.at(at);
  return readBranchTip(ctx);
}

/** What a read without `?at=` reads: `main`'s tip, or with `?draft=<name>` the draft's head. */
export async function readBranchTip(ctx: Context): Promise<Snapshot> {
  const draft = queryValue(ctx, 'draft');
  if (draft !== undefined) {
    return draftTip(state(ctx).org, draft);
  }
  const { snapshot, warning } = await state(ctx).org.readable();
  // RFC 9110 field values: visible ASCII and spaces only (the message may quote a file).
  if (warning !== undefined) ctx.set('Warning', `199 c4store "${warning.replace(/[^\x20-\x7e]+/g, ' ').replace(/["\\]/g, "'")}"`);
  return snapshot;
}

/** `YYYY-MM-DD HH:MM:SS`, UTC: the `apiContext` of elements that do not bring one. */
export function apiContextOf(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export function writeOptions(ctx: Context): WriteOptions {
  const layout = queryValue(ctx, 'layout');
  if (layout !== undefined && layout !== 'auto') {
    throw new ApiError(400, `Invalid layout '${layout}': the only value is 'auto'.`);
  }
  return { apiContext: apiContextOf(new Date()), newId: () => newId(), layout: layout === 'auto' ? 'auto' : 'keep' };
}

/**
 * A write's `If-Match` (the commits it may start from) and `If-None-Match` (those it may not),
 * lists as RFC 9110 has them: every write that takes them reads them here. `If-Match` compares
 * strongly (RFC 9110 §13.1.1), so a weak tag (`W/"<commit>"`) matches no commit, not even the one
 * it names; `If-None-Match` weakly (§13.1.2), so `W/` is taken off.
 */
export function preconditions(ctx: Context): Preconditions {
  return { ifMatch: entityTags(ctx, 'if-match', 'strong'), ifNoneMatch: entityTags(ctx, 'if-none-match', 'weak') };
}

/**
 * The commits a conditional header lists, quotes taken off (and `W/`, compared weakly); undefined
 * when it is absent or lists nothing (empty list elements are skipped, as RFC 9110 §5.6.1 has
 * it). A tag that names no commit stays as sent — one that names nothing (`""`, `W/`), and a weak
 * one compared strongly — so an `If-Match` of it fails (412, naming it), as the client that sent
 * it (with an empty ETag variable, say) meant a conditional write.
 */
function entityTags(ctx: Context, header: 'if-match' | 'if-none-match', comparison: 'strong' | 'weak'): readonly string[] | undefined {
  const tags = ctx
    .get(header)
    .split(',')
    .map((sent) => sent.trim())
    .filter((sent) => sent !== '')
    .map((sent) => {
      if (comparison === 'strong' && sent.startsWith('W/')) return sent;
      return sent.replace(/^W\//, '').replace(/^"(.*)"$/, '$1') || sent;
    });
  return tags.length === 0 ? undefined : tags;
}

/** An e-mail-safe form of the key's label for the commit author. */
function emailLocalPart(label: string): string {
  return label.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'api';
}

/** The commit author (and tagger) of a request: the key's label, `<label>@<org-slug>`. */
export function authorOf(ctx: Context): { name: string; email: string } {
  const { key, org } = state(ctx);
  return { name: key.label.replace(/[<>\n]/g, ''), email: `${emailLocalPart(key.label)}@${org.slug}` };
}

/**
 * Runs the pure model step of a write under the organization's lock and commits its changes:
 * to `main`, or with `?draft=<name>` to that draft's branch (never to `main`). `spoken`: the
 * commit's title as people say it, for writes people make (viewer, revert).
 */
export async function write<R>(ctx: Context, step: (draft: Draft) => Promise<R> | R, spoken?: (draft: Draft) => string) {
  const { org } = state(ctx);
  const draft = queryValue(ctx, 'draft');
  const writeTo = (ref: string | undefined) =>
    org.write(
      {
        ref,
        ...preconditions(ctx),
        author: authorOf(ctx),
        // The router takes `/tag/` for `/tag`: the title names the path it routed.
        title: `${ctx.method} ${ctx.path.replace(/(.)\/+$/, '$1')}`,
        spoken,
        options: writeOptions(ctx),
      },
      step,
    );
  return draft === undefined ? writeTo(undefined) : writeToDraft(org, draft, writeTo);
}

const MAX_PAGE = 1000;

/**
 * A list GET. Without `?limit=`/`?cursor=` the whole list, serialized once per commit; with
 * them one page, and a `Link: <…>; rel="next"` header while more follow.
 */
export async function sendList<T extends { id: string }>(
  ctx: Context,
  snapshot: Snapshot,
  kind: StoredKind,
  items: ReadonlyMap<string, T>,
  present: (item: T) => unknown,
  /** Which form's shapes `present` gives: whole lists are cached per commit under kind and form. */
  form = '',
): Promise<void> {
  const limitText = queryValue(ctx, 'limit');
  const cursor = queryValue(ctx, 'cursor');
  if (limitText === undefined && cursor === undefined) {
    // Presented lazily, item by item inside the slices of the build (src/slices.ts).
    return sendFromSnapshot(ctx, snapshot, `list:${kind}${form}`, () => mapped(items.values(), present));
  }
  const limit = limitParameter(ctx, 100, MAX_PAGE);
  // A cursor is the last id of the previous page, found without a scan (http/pages.ts): a walk
  // costs O(page) a page. Deleted since, it continues at the next id, generated or client-chosen.
  if (cursor !== undefined && !isId(cursor)) {
    throw new ApiError(400, `Invalid cursor '${cursor}'.`);
  }
  const { page, more } = pageAfter(items, cursor, limit);
  if (more) {
    // The next page of the same list: filters and other parameters stay, `at` pins the commit.
    const next = new URLSearchParams();
    for (const [name, value] of Object.entries(ctx.query)) {
      if (typeof value === 'string' && !['limit', 'cursor', 'at'].includes(name)) next.set(name, value);
    }
    next.set('limit', String(limit));
    next.set('cursor', page[page.length - 1].id);
    if (ctx.query.at !== undefined) next.set('at', snapshot.commit);
    ctx.set('Link', `<${ctx.path}?${next}>; rel="next"`);
  }
  return send(ctx, page.map(present), snapshot);
}

/** `GET /api/external/<kind>/<id>`, in every form: `<id>` is an id, or else a ref. */
export function sendOne<T extends { id: string }>(
  ctx: Context,
  snapshot: Snapshot,
  kind: StoredKind,
  items: ReadonlyMap<string, T>,
  present: (item: T) => unknown,
): Promise<void> {
  return send(ctx, present(findOne(ctx, kind, items, true)), snapshot);
}

/** The resource named by the path's `:id`, by id or (with `byRef`) by ref; 404 if none. */
export function findOne<T extends { id: string }>(ctx: Context, kind: StoredKind, items: ReadonlyMap<string, T>, byRef: boolean): T {
  const id = String(ctx.params.id);
  const item = byRef ? byIdOrRef(items as ReadonlyMap<string, T & Identified>, id) : items.get(id);
  if (item === undefined) throw new ApiError(404, `${kindName(kind)} with id '${id}' does not exist.`);
  return item;
}
