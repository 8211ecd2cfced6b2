import type { Context } from 'koa';
import { Drafts } from '../drafts/drafts.js';
import { drawingOf } from '../drawing/drawings.js';
import type { DrawOptions } from '../drawing/svg.js';
import { ApiError } from '../errors.js';
import { byIdOrRef } from '../model/draft.js';
import type { Diagram } from '../model/types.js';
import type { Snapshot } from '../service/org.js';
import { queryValue, state } from './resource.js';

/**
 * The SVG of a diagram as a request asks for it: as the snapshot read has it, or with
 * `?draft=<name>&compare=main` the draft's visual diff against main (CONTRACT §8): the draft's
 * drawing with what it adds, removes and changes marked (a diagram the draft deleted: as main
 * had it, every element marked removed). Used by the API's diagram GET with
 * `Accept: image/svg+xml` (or `image/png`) and by the viewer's `.svg` and `.png` addresses.
 */
export async function diagramSvg(ctx: Context, snapshot: Snapshot, diagram: Diagram, options: DrawOptions = {}): Promise<string> {
  const draft = comparedDraft(ctx);
  if (draft === undefined) return drawingOf(diagram, snapshot.model, options);
  const drawn = await new Drafts(state(ctx).org).comparison(draft, diagram.id);
  return drawingOf(drawn.diagram, drawn.model, { ...options, marks: drawn.marks });
}

/**
 * The draft whose visual diff the request asks for (`?draft=<name>&compare=main`), or undefined
 * without `compare`. A `compare` other than `main`, or one without `?draft=`, is refused here,
 * before any diagram is looked for: a refusal of the parameters, whichever diagram they name.
 */
function comparedDraft(ctx: Context): string | undefined {
  const compare = queryValue(ctx, 'compare');
  if (compare === undefined) return undefined;
  if (compare !== 'main') throw new ApiError(400, `Invalid compare '${compare}': the only value is 'main'.`);
  const draft = queryValue(ctx, 'draft');
  if (draft === undefined) throw new ApiError(400, 'compare=main needs ?draft=<name>: the draft to compare with main.');
  return draft;
}

/**
 * Refuses `compare` where the answer is no drawing (the diagram's JSON, an export): answering
 * without the comparison would let a client take it for one.
 */
export function refuseComparisonOfNoDrawing(ctx: Context): void {
  if (queryValue(ctx, 'compare') !== undefined) {
    throw new ApiError(400, 'compare=main is a drawing: ask for the visual diff with Accept: image/svg+xml or image/png.');
  }
}

/**
 * The diagram `idOrRef` names that the request's `?draft=<name>&compare=main` draws although
 * the draft has it no more: the draft deleted it, and its visual diff draws it as main had it
 * (Drafts.deletedDiagram). Undefined when the request asks for no visual diff, or the draft did
 * not delete such a diagram; a request asking for one wrongly is refused (comparedDraft).
 */
export async function deletedInComparedDraft(ctx: Context, idOrRef: string): Promise<Diagram | undefined> {
  const draft = comparedDraft(ctx);
  if (draft === undefined) return undefined;
  return new Drafts(state(ctx).org).deletedDiagram(draft, idOrRef);
}

/**
 * The diagram a drawing GET of the API names (`:id`, its id or else its ref): the snapshot's,
 * or one the draft deleted when the request asks for the draft's visual diff; else 404.
 */
export async function diagramToDraw(ctx: Context, snapshot: Snapshot): Promise<Diagram> {
  const id = String(ctx.params.id);
  const diagram = byIdOrRef(snapshot.model.diagrams, id) ?? (await deletedInComparedDraft(ctx, id));
  if (diagram === undefined) throw new ApiError(404, `Diagram with id '${id}' does not exist.`);
  return diagram;
}
