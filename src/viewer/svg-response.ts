/** Answering with the drawing (./svg.ts): the viewer's `.svg` address and the API's `Accept: image/svg+xml`. */
import type { Context } from 'koa';

const SVG_TYPE = 'image/svg+xml; charset=utf-8';
/** An SVG opened on its own is a document too: no script at all. */
const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'";

/** `Accept: image/svg+xml` on the API's diagram GET: the drawing instead of JSON. */
export function wantsSvg(ctx: Context): boolean {
  return ctx.accepts('application/json', 'image/svg+xml') === 'image/svg+xml';
}

export function sendSvg(ctx: Context, svg: string): void {
  ctx.vary('Accept');
  ctx.set('Content-Security-Policy', SVG_POLICY);
  ctx.type = SVG_TYPE;
  ctx.body = svg;
}
