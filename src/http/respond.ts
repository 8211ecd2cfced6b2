import type { Context } from 'koa';
import { type ApiError, ERROR_CONTEXT_HEADER } from '../errors.js';
import type { Snapshot } from '../service/org.js';
import { jsonPieces, type Piece, textInSlices } from '../slices.js';
import { emitYaml, emitYamlPieces, type Plain } from '../yaml/format.js';

export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

export function wantsYaml(ctx: Context): boolean {
  const chosen = ctx.accepts('application/json', ...YAML_TYPES);
  return typeof chosen === 'string' && YAML_TYPES.includes(chosen);
}

/**
 * An answer's bytes, built in slices of the event loop (src/slices.ts): lists may be lazy
 * iterables (`mapped`), so that presenting their items happens inside the slices too.
 */
function serialize(data: unknown, yaml: boolean): Promise<Buffer> {
  return textInSlices(yaml ? emitYamlPieces(data) : jsonPieces(data));
}

/**
 * Where serialized answers are kept: a snapshot's own `responses` (whole lists, exports), or a
 * store of bounded size for answers whose keys a client can vary without end (filtered lists).
 */
export interface AnswerStore {
  get(key: string): Buffer | undefined;
  set(key: string, body: Buffer): unknown;
}

/** Builds that are under way, per store: a second request of one waits for it. */
const building = new WeakMap<AnswerStore, Map<string, Promise<Buffer>>>();

/**
 * The cached body of `key`, or the one being built, or a new build (`build` runs only then);
 * a failed build is not kept. Also the viewer's PNGs (viewer/svg-response.ts).
 */
export function cachedBody(store: AnswerStore, key: string, build: () => Promise<Buffer>): Promise<Buffer> {
  const done = store.get(key);
  if (done) return Promise.resolve(done);
  let underWay = building.get(store);
  if (!underWay) building.set(store, (underWay = new Map()));
  const existing = underWay.get(key);
  if (existing !== undefined) return existing;
  const body = build().then((bytes) => {
    store.set(key, bytes);
    return bytes;
  });
  const forget = () => underWay.delete(key);
  body.then(forget, forget);
  underWay.set(key, body);
  return body;
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
export function notModified(ctx: Context, snapshot: Snapshot): boolean {
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
export async function send(ctx: Context, data: unknown, snapshot?: Snapshot): Promise<void> {
  if (snapshot && notModified(ctx, snapshot)) return;
  const yaml = wantsYaml(ctx);
  sendBuffer(ctx, await serialize(data, yaml), yaml);
}

/**
 * Answers a read that depends only on the snapshot: serialized once per commit and format,
 * then every later request of it sends the same bytes. `build` may take its time (in slices);
 * it runs only when neither the store nor a build under way has the answer.
 */
export async function sendFromSnapshot(
  ctx: Context,
  snapshot: Snapshot,
  key: string,
  build: () => unknown,
  store: AnswerStore = snapshot.responses,
): Promise<void> {
  if (notModified(ctx, snapshot)) return;
  const yaml = wantsYaml(ctx);
  const body = await cachedBody(store, `${key}:${yaml ? 'yaml' : 'json'}`, async () => serialize(await build(), yaml));
  sendBuffer(ctx, body, yaml);
}

/**
 * Answers a text rendering of the snapshot (an export) of media type `type`, built once per
 * commit and cache key. JSON, YAML and the exports share one ETag, so caches must keep them apart.
 */
export async function sendRendered(
  ctx: Context,
  snapshot: Snapshot,
  key: string,
  type: string,
  build: () => Iterable<Piece>,
): Promise<void> {
  if (notModified(ctx, snapshot)) return;
  const body = await cachedBody(snapshot.responses, key, () => textInSlices(build()));
  ctx.vary('Accept');
  ctx.type = `${type}; charset=utf-8`;
  ctx.body = body;
}

/**
 * An error answer, the one place every refusal of the API is written (the error middleware, a
 * merge's conflicts): the contract's object `{"error": <text>}` (with `more` beside it, a merge's
 * `conflicts`), JSON or YAML by Accept, the error's own headers, and what the refusal concerns
 * (ApiError.context) in `C4store-Error-Context`: the text itself is exactly the rule's
 * (CONTRACT.md §3, "exactly these").
 */
export function sendError(ctx: Context, error: ApiError, more: { [key: string]: Plain } = {}): void {
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  if (error.context.length > 0) ctx.set(ERROR_CONTEXT_HEADER, headerSafe(error.context.join(', ')));
  const body = { error: error.message, ...more };
  const yaml = wantsYaml(ctx);
  sendBuffer(ctx, Buffer.from(yaml ? emitYaml(body) : JSON.stringify(body)), yaml);
}

/**
 * `text` as a header value that gives it back whole: `%` and every character outside printable
 * ASCII (0x20–0x7E) percent-encoded as UTF-8, so that `decodeURIComponent` reads it exactly
 * (names may be Chinese, hold `%`, or a line break). A lone surrogate, which UTF-8 cannot
 * hold, is sent as U+FFFD.
 */
function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x24\x26-\x7e]+/g, (run) =>
    Array.from(Buffer.from(run, 'utf8'), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}
