import type { Context } from 'koa';
import YAML from 'yaml';
import type { Snapshot } from '../service/org.js';

export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

export function wantsYaml(ctx: Context): boolean {
  const chosen = ctx.accepts('application/json', ...YAML_TYPES);
  return typeof chosen === 'string' && YAML_TYPES.includes(chosen);
}

function serialize(data: unknown, yaml: boolean): Buffer {
  return Buffer.from(yaml ? YAML.stringify(data, { lineWidth: 0, aliasDuplicateObjects: false }) : JSON.stringify(data));
}

function sendBuffer(ctx: Context, body: Buffer, yaml: boolean): void {
  ctx.type = yaml ? 'application/yaml; charset=utf-8' : 'application/json; charset=utf-8';
  ctx.body = body;
}

export function setEtag(ctx: Context, snapshot: Snapshot): void {
  ctx.set('ETag', `"${snapshot.commit}"`);
}

/** Answers `data` as JSON, or as YAML when the client accepts YAML. */
export function send(ctx: Context, data: unknown, snapshot?: Snapshot): void {
  if (snapshot) setEtag(ctx, snapshot);
  const yaml = wantsYaml(ctx);
  sendBuffer(ctx, serialize(data, yaml), yaml);
}

/**
 * Answers a read that depends only on the snapshot: serialized once per commit and format,
 * then every later request of it sends the same bytes.
 */
export function sendFromSnapshot(ctx: Context, snapshot: Snapshot, key: string, build: () => unknown): void {
  setEtag(ctx, snapshot);
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  const yaml = wantsYaml(ctx);
  const cacheKey = `${key}:${yaml ? 'yaml' : 'json'}`;
  let body = snapshot.responses.get(cacheKey);
  if (!body) {
    body = serialize(build(), yaml);
    snapshot.responses.set(cacheKey, body);
  }
  sendBuffer(ctx, body, yaml);
}

export function sendError(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  const yaml = wantsYaml(ctx);
  sendBuffer(ctx, serialize({ error: message }, yaml), yaml);
}
