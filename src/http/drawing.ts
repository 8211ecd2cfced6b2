import type { Context } from 'koa';
import { Drafts } from '../drafts/drafts.js';
import { drawingOf } from '../drawing/drawings.js';
import type { DrawOptions } from '../drawing/svg.js';
import { ApiError } from '../errors.js';
import type { Diagram } from '../model/types.js';
import type { Snapshot } from '../service/org.js';
import { queryValue, state } from './resource.js';

/**
 * The SVG of a diagram as a request asks for it: as the snapshot read has it, or with
 * `?draft=<name>&compare=main` the draft's visual diff against main (CONTRACT §8): the draft's
 * drawing with what it adds, removes and changes marked. Used by the API's diagram GET with
 * `Accept: image/svg+xml` and by the viewer's `.svg` address.
 */
export async function diagramSvg(ctx: Context, snapshot: Snapshot, diagram: Diagram, options: DrawOptions = {}): Promise<string> {
  const compare = queryValue(ctx, 'compare');
  if (compare === undefined) return drawingOf(diagram, snapshot.model, options);
  if (compare !== 'main') throw new ApiError(400, `Invalid compare '${compare}': the only value is 'main'.`);
  const draft = queryValue(ctx, 'draft');
  if (draft === undefined) throw new ApiError(400, 'compare=main needs ?draft=<name>: the draft to compare with main.');
  const drawn = await new Drafts(state(ctx).org).comparison(draft, diagram.id);
  return drawingOf(drawn.diagram, drawn.model, { ...options, marks: drawn.marks });
}
