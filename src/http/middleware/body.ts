import type { IncomingMessage } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../errors.js';
import { inviteBody } from '../connections/continue.js';
import { parseJsonText, parseYamlText, type Parsed } from '../body-parse.js';
import { state } from '../resource.js';
import { YAML_TYPES } from '../respond.js';
import type { YamlPool } from '../yaml-pool.js';

declare module 'koa' {
  interface Request {
    /** The parsed body of a write (set by parseBody). */
    body?: unknown;
  }
}

export interface BodySettings {
  /** Largest body accepted, after decompression (413 beyond). */
  limitBytes: number;
  /**
   * Bytes of request bodies the whole server holds at once, counted as they arrive and held
   * to the end of the request (503 with Retry-After beyond). With the per-request limit this
   * bounds the memory clients can make the server hold, however many connections they open.
   */
  budgetBytes: number;
  /** The same, for the requests of one organization: one organization cannot fill the server's. */
  budgetBytesPerOrg: number;
  /** A body that sends nothing for this long is cut off with 408 and gives its bytes back (ms). */
  stallMs: number;
  /** Where YAML bodies over INLINE_YAML_BYTES are parsed. */
  yaml: YamlPool;
  /** The budget to count against; shared by every body reader of one server (see bodySettingsOf). */
  budget?: BodyBudget;
}

const shared = new WeakMap<object, BodySettings>();

/**
 * The body settings of one server, with one budget for all its body readers (the API's and
 * the viewer's), so no route can hold bytes outside the server's and organizations' bounds.
 */
export function bodySettingsOf(deps: {
  bodyLimit: number;
  bodyBudget: number;
  bodyBudgetPerOrg?: number;
  bodyStallTimeout?: number;
  yamlPool: YamlPool;
}): BodySettings {
  let settings = shared.get(deps);
  if (!settings) {
    const budgetBytesPerOrg = deps.bodyBudgetPerOrg ?? Math.max(deps.bodyLimit, Math.floor(deps.bodyBudget / 2));
    settings = {
      limitBytes: deps.bodyLimit,
      budgetBytes: deps.bodyBudget,
      budgetBytesPerOrg,
      stallMs: deps.bodyStallTimeout ?? DEFAULT_BODY_STALL_TIMEOUT,
      yaml: deps.yamlPool,
      budget: new BodyBudget(deps.bodyBudget, budgetBytesPerOrg),
    };
    shared.set(deps, settings);
  }
  return settings;
}

/** A body that sends nothing this long is cut off (ms). */
export const DEFAULT_BODY_STALL_TIMEOUT = 10_000;

/** YAML bodies up to this size are parsed on the request's thread (a few ms); larger ones on a worker. */
export const INLINE_YAML_BYTES = 16 * 1024;

/**
 * The bytes of request bodies held at once: across the whole server and per organization.
 * Bytes are taken as they arrive (never from a declared length), so an upload that sends
 * nothing holds nothing, and no organization can take more than its share.
 */
export class BodyBudget {
  private used = 0;
  private readonly usedBy = new Map<string, number>();
  constructor(
    readonly capacity: number,
    readonly perOrg: number,
  ) {}

  /** Takes `bytes` for `org`; the refusal names what is full. */
  take(org: string, bytes: number): 'ok' | 'server' | 'org' {
    const orgUsed = this.usedBy.get(org) ?? 0;
    if (orgUsed + bytes > this.perOrg) return 'org';
    if (this.used + bytes > this.capacity) return 'server';
    this.used += bytes;
    this.usedBy.set(org, orgUsed + bytes);
    return 'ok';
  }

  give(org: string, bytes: number): void {
    if (bytes === 0) return;
    this.used -= bytes;
    const left = (this.usedBy.get(org) ?? 0) - bytes;
    if (left > 0) this.usedBy.set(org, left);
    else this.usedBy.delete(org);
  }

  get inUse(): number {
    return this.used;
  }
}

// Either may be answered before the body has been read to its end: what the client still
// sends is read and discarded, within bounds (middleware/unread-body.ts, connections/linger.ts).
const tooLarge = () => new ApiError(413, 'Request body too large.');
const busy = (full: 'server' | 'org') =>
  new ApiError(
    503,
    full === 'org'
      ? "This organization's uploads are holding too many request bytes; retry shortly."
      : 'The server is holding too many request bodies; retry shortly.',
    { 'Retry-After': '1' },
  );
// A client that stops sending its body has it cut off; it need not wait for requestTimeout.
const stalled = () => new ApiError(408, 'Request timeout: the body stopped arriving.', { Connection: 'close' });

/**
 * Reads a write's body as JSON or YAML (by Content-Type) into `ctx.request.body`.
 * - Content-Encoding gzip, deflate or br is decompressed; the limit applies to the result.
 * - The bytes must be UTF-8 (a BOM is dropped); nothing is silently replaced.
 * - Nesting is bounded before parsing, YAML aliases are limited, and large YAML bodies are
 *   parsed on a worker thread (body-parse.ts, yaml-pool.ts).
 */
export function parseBody(settings: BodySettings): Middleware {
  const budget = settings.budget ?? new BodyBudget(settings.budgetBytes, settings.budgetBytesPerOrg);
  return async (ctx, next) => {
    // Media types are case-insensitive (RFC 9110 §8.3.1): Application/JSON is JSON.
    const type = ctx.request.type.trim().toLowerCase();
    const yaml = YAML_TYPES.includes(type);
    if (!yaml && type !== 'application/json' && !type.endsWith('+json')) {
      throw new ApiError(415, `Unsupported Content-Type: ${ctx.request.type.trim() || '(none)'}.`);
    }
    const held = { org: state(ctx).org.slug, bytes: 0 };
    try {
      const text = decodeUtf8(await readBody(ctx, settings, budget, held), yaml);
      let parsed: Parsed;
      if (!yaml) parsed = parseJsonText(text);
      else if (text.length <= INLINE_YAML_BYTES) parsed = parseYamlText(text, settings.limitBytes);
      // Each organization takes its turn at the workers (auth ran first and set the organization).
      else parsed = await settings.yaml.parse(text, (ctx.state as { org?: { slug: string } }).org?.slug ?? '', settings.limitBytes);
      if ('error' in parsed) throw new ApiError(parsed.status ?? 400, parsed.error);
      ctx.request.body = parsed.value;
      await next();
    } finally {
      budget.give(held.org, held.bytes);
    }
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Buffer, yaml: boolean): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError(400, `Invalid ${yaml ? 'YAML' : 'JSON'}: the request body is not valid UTF-8.`);
  }
}

function decoderFor(ctx: Context): Transform | null {
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  switch (encoding) {
    case 'identity':
      return null;
    case 'gzip':
    case 'x-gzip':
    case 'deflate':
      return createUnzip();
    case 'br':
      return createBrotliDecompress();
    default:
      throw new ApiError(415, 'Unsupported Content-Encoding.');
  }
}

/**
 * The request's body bytes, decompressed. Counted against the limit and against the budget
 * (`held` says how much this request took from it) as they arrive; the request stream is
 * never destroyed, so an error can still be answered.
 */
function readBody(ctx: Context, settings: BodySettings, budget: BodyBudget, held: { org: string; bytes: number }): Promise<Buffer> {
  const limit = settings.limitBytes;
  const req: IncomingMessage = ctx.req;
  const decoder = decoderFor(ctx);
  const declared = Number(req.headers['content-length']);
  if (decoder === null && Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw tooLarge();
  }
  // Every refusal the headers decide has been made: a client waiting for `100 Continue` gets it now.
  inviteBody(req, ctx.res);
  const source: Readable = decoder ?? req;
  if (decoder) req.pipe(decoder);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const stallTimer = setTimeout(() => finish(stalled()), settings.stallMs);
    const finish = (error: unknown, body?: Buffer) => {
      if (done) return;
      done = true;
      clearTimeout(stallTimer);
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      req.off('close', onClose);
      req.off('error', onClose);
      if (error) {
        chunks.length = 0;
        if (decoder) {
          req.unpipe(decoder);
          decoder.destroy();
        }
        // Whatever else arrives is discarded (and the connection closed after the answer).
        req.resume();
        reject(error);
      } else {
        resolve(body!);
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish(tooLarge());
      const full = budget.take(held.org, chunk.length);
      if (full !== 'ok') return finish(busy(full));
      held.bytes += chunk.length;
      chunks.push(chunk);
      stallTimer.refresh();
    };
    const onEnd = () => finish(null, Buffer.concat(chunks, size));
    // The decoder fails only on bytes that are not what Content-Encoding says they are.
    const onError = () => finish(new ApiError(400, source === req ? 'Request aborted.' : 'The request body could not be decompressed.'));
    const onClose = () => {
      if (!req.complete) finish(new ApiError(400, 'Request aborted.'));
    };
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    req.on('close', onClose);
    req.on('error', onClose);
  });
}
