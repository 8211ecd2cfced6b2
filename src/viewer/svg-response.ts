/**
 * Answering with the drawing (src/drawing/): the viewer's `.svg` and `.png` addresses, a share
 * link's, and the API's `Accept: image/svg+xml` / `Accept: image/png` on a diagram's GET.
 */
import type { Context } from 'koa';
import { diagramSvg } from '../http/drawing.js';
import { ApiError } from '../errors.js';
import { queryValue } from '../http/resource.js';
import { BoundedAnswers } from '../http/bounded-answers.js';
import { FairQueue } from '../http/fair-queue.js';
import { cachedBody, notModified } from '../http/respond.js';
import { drawingOf } from '../drawing/drawings.js';
import { PNG_SCALES, renderPng } from '../drawing/png.js';
import type { Diagram } from '../model/types.js';
import type { Snapshot } from '../service/org.js';

export type DrawingFormat = 'svg' | 'png';

export const DRAWING_TYPES: Record<DrawingFormat, string> = { svg: 'image/svg+xml; charset=utf-8', png: 'image/png' };
/** An SVG opened on its own is a document too: no script at all. */
const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'";

/**
 * Who may see the answer. `signed-in`: a key or a session, so no cache may keep it (`no-store`).
 * `shared`: a share link, which anyone holding it may read and a cache may keep, asking again
 * every time (`no-cache` with the commit as ETag), so a revoked link is gone at once.
 */
export type Audience = 'signed-in' | 'shared';

/** `Accept: image/svg+xml` or `image/png` on a diagram's GET: the drawing instead of JSON (JSON stays the default). */
export function acceptedDrawing(ctx: Context): DrawingFormat | undefined {
  const chosen = ctx.accepts('application/json', 'image/svg+xml', 'image/png');
  return chosen === 'image/svg+xml' ? 'svg' : chosen === 'image/png' ? 'png' : undefined;
}

/** `?scale=` of a PNG: 1 (one pixel per SVG unit) unless asked. */
function scaleOf(ctx: Context): number {
  const raw = queryValue(ctx, 'scale');
  if (raw === undefined) return 1;
  const scale = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(scale >= PNG_SCALES.min && scale <= PNG_SCALES.max))
    throw new ApiError(400, `Invalid scale '${raw}': a number from ${PNG_SCALES.min} to ${PNG_SCALES.max}.`);
  return scale;
}

/**
 * One PNG at a time in the process (rasterizing takes a core), organizations in turn: one
 * organization's stream of PNG requests delays another's by one render, not by its whole queue.
 */
const pngTurns = new FairQueue(1);
/** The default size of the PNGs kept for the whole server. */
export const DEFAULT_PICTURE_BYTES = 64 * 1024 * 1024;
/** PNGs already rendered, per commit: bounded, since `?scale=` takes any of countless values. */
export const pictures = new BoundedAnswers(DEFAULT_PICTURE_BYTES);

/**
 * The PNG of one diagram at one scale, kept for the snapshot (the viewer, the API, share links,
 * the agents' render tool); a second request for a picture being rendered waits for it.
 */
export function pngOf(snapshot: Snapshot, diagram: Diagram, scale: number): Promise<Buffer> {
  const owner = snapshot.model.organization.slug;
  return cachedBody(pictures.of(snapshot), `png:${diagram.id}:${scale}`, async () =>
    pngInTurn(owner, await drawingOf(diagram, snapshot.model), scale),
  );
}

/** `svg` rasterized in `owner`'s turn (a drawing no commit names, such as a draft's visual diff, is not kept). */
export async function pngInTurn(owner: string, svg: string, scale: number): Promise<Buffer> {
  await pngTurns.acquire(owner);
  try {
    return await renderPng(svg, scale);
  } finally {
    pngTurns.release();
  }
}

/** True (and 304 set) when the request already holds this commit's drawing. */
/** Answers the drawing of `diagram` at the snapshot's commit as SVG or PNG. */
export async function sendDrawing(
  ctx: Context,
  snapshot: Snapshot,
  diagram: Diagram,
  format: DrawingFormat,
  audience: Audience = 'signed-in',
): Promise<void> {
  const scale = format === 'png' ? scaleOf(ctx) : 1;
  ctx.vary('Accept');
  ctx.set('Cache-Control', audience === 'shared' ? 'no-cache' : 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  // A draft's visual diff (`compare=main`) also draws main, which the draft's commit does not
  // name: it has no ETag, and is drawn every time.
  const comparing = audience === 'signed-in' && ctx.query.compare !== undefined;
  if (!comparing && notModified(ctx, snapshot)) return;
  if (format === 'svg') {
    ctx.set('Content-Security-Policy', SVG_POLICY);
    ctx.type = DRAWING_TYPES.svg;
    // A signed-in reader may ask for a draft's visual diff (`?draft=&compare=main`); a share link shows the drawing alone.
    ctx.body =
      audience === 'signed-in' ? await diagramSvg(ctx, snapshot, diagram) : await drawingOf(diagram, snapshot.model, { shared: true });
    return;
  }
  // A visual diff's PNG is its SVG rasterized, marks and all; drawn every time, as the SVG is.
  const png = comparing
    ? await pngInTurn(snapshot.model.organization.slug, await diagramSvg(ctx, snapshot, diagram), scale)
    : await pngOf(snapshot, diagram, scale);
  ctx.type = DRAWING_TYPES.png;
  ctx.body = png;
}
