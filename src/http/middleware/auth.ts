import type { Context, Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import type { Orgs } from '../../service/orgs.js';
import type { KeyRecord, KeyStore } from '../../store/keys.js';
import type { OrgModel } from '../../service/org.js';
import { state } from '../resource.js';

/** RFC 9110: a 401 names the scheme the client should use. */
const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };

/**
 * The key of a request, from `Authorization: Bearer <key>` or `x-api-key: <key>`; 401 for none,
 * a malformed one, or two different ones. The one reading of the key headers: the API, git over
 * HTTP and /healthz all take it from here.
 */
export function presentedKey(ctx: Context): string {
  // Node keeps only the first of several Authorization headers; all of them are here.
  const authorizations = new Set((ctx.req.headersDistinct.authorization ?? []).map((value) => value.trim()));
  if (authorizations.size > 1) throw new ApiError(401, 'Invalid API key.', CHALLENGE);
  const authorization = ctx.get('authorization');
  const apiKey = ctx.get('x-api-key');
  if (authorization === '' && apiKey === '') throw new ApiError(401, 'Missing API key.', CHALLENGE);
  let bearer: string | undefined;
  if (authorization !== '') {
    bearer = /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
    if (bearer === undefined) throw new ApiError(401, 'Invalid API key.', CHALLENGE);
  }
  // Two different keys in one request is a client bug; acting on either one would hide it.
  if (bearer !== undefined && apiKey !== '' && bearer !== apiKey.trim()) throw new ApiError(401, 'Invalid API key.', CHALLENGE);
  return bearer ?? apiKey.trim();
}

/**
 * The organization a verified key opens, or undefined. The one rule for the API, git over
 * HTTP and the viewer's sessions: a key made for an organization since removed must not open
 * a new one under its slug; fails closed, so a key or repository without an identity matches
 * nothing.
 */
export function organizationOf(record: KeyRecord | null | undefined, orgs: Orgs): OrgModel | undefined {
  if (!record) return undefined;
  const org = orgs.find(record.org);
  if (!org || record.orgId === undefined || record.orgId !== org.identity) return undefined;
  return org;
}

export function authenticate(keys: KeyStore, orgs: Orgs): Middleware {
  return async (ctx, next) => {
    const record = await keys.verify(presentedKey(ctx));
    const org = organizationOf(record, orgs);
    if (!record || !org) throw new ApiError(401, 'Invalid API key.', CHALLENGE);
    ctx.state.key = record;
    ctx.state.org = org;
    await next();
  };
}

export const requireEditor: Middleware = async (ctx, next) => {
  if (state(ctx).key.role !== 'editor') throw new ApiError(403, 'This API key may only read.');
  await next();
};
