import type { Context } from 'koa';
import { emitYaml, type Plain } from '../yaml/format.js';
import type { Snapshot } from '../service/org.js';

export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

export function wantsYaml(ctx: Context): boolean {
  const chosen = ctx.accepts('application/json', ...YAML_TYPES);
  return typeof chosen === 'string' && YAML_TYPES.includes(chosen);
}

function serialize(data: unknown, yaml: boolean): Buffer {
  return Buffer.from(yaml ? emitYaml(data as { [key: string]: Plain } | Plain[]) : JSON.stringify(data));
}

function sendBuffer(ctx: Context, body: Buffer, yaml: boolean): void {
  // JSON or YAML by Accept, under one ETag: caches must keep the two apart.
  ctx.vary('Accept');
  ctx.type = yaml ? 'application/yaml; charset=utf-8' : 'application/json; charset=utf-8';
  ctx.body = body;
}

export function setEtag(ctx: Context, snapshot: Snapshot): void {
  ctx.set('ETag', `"${snapshot.commit}"`);
}

/**
 * Sets the snapshot's ETag and answers `304 Not Modified` (no body) when the request is a
 * GET/HEAD whose `If-None-Match` names it (weak comparison, RFC 9110 §13.1.2). Evaluated
 * here rather than by Koa's `ctx.fresh`, which only looks at a 2xx status (a response is
 * 404 until its body is set) and ignores `If-None-Match` when the request also carries
 * `Cache-Control: no-cache` — which `fetch` adds to every request with `If-None-Match`.
 */
function notModified(ctx: Context, snapshot: Snapshot): boolean {
  setEtag(ctx, snapshot);
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  const header = ctx.get('if-none-match').trim();
  if (header === '') return false;
  const current = `"${snapshot.commit}"`;
  const matches = header === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === current);
  if (matches) {
    ctx.vary('Accept');
    ctx.status = 304;
  }
  return matches;
}

/** Answers `data` as JSON, or as YAML when the client accepts YAML. */
export function send(ctx: Context, data: unknown, snapshot?: Snapshot): void {
  if (snapshot && notModified(ctx, snapshot)) return;
  const yaml = wantsYaml(ctx);
  sendBuffer(ctx, serialize(data, yaml), yaml);
}

/**
 * Answers a read that depends only on the snapshot: serialized once per commit and format,
 * then every later request of it sends the same bytes.
 */
export function sendFromSnapshot(ctx: Context, snapshot: Snapshot, key: string, build: () => unknown): void {
  if (notModified(ctx, snapshot)) return;
  const yaml = wantsYaml(ctx);
  const cacheKey = `${key}:${yaml ? 'yaml' : 'json'}`;
  let body = snapshot.responses.get(cacheKey);
  if (!body) {
    body = serialize(build(), yaml);
    snapshot.responses.set(cacheKey, body);
  }
  sendBuffer(ctx, body, yaml);
}

/**
 * Answers a text rendering of the snapshot (an export) of media type `type`, built once per
 * commit and cache key. JSON, YAML and the exports share one ETag, so caches must keep them apart.
 */
export function sendRendered(ctx: Context, snapshot: Snapshot, key: string, type: string, build: () => string): void {
  if (notModified(ctx, snapshot)) return;
  let body = snapshot.responses.get(key);
  if (!body) {
    body = Buffer.from(build());
    snapshot.responses.set(key, body);
  }
  ctx.vary('Accept');
  ctx.type = `${type}; charset=utf-8`;
  ctx.body = body;
}

export function sendError(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  const yaml = wantsYaml(ctx);
  sendBuffer(ctx, serialize({ error: message }, yaml), yaml);
}
