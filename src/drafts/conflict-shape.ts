import { diffModels, type ModelDiff } from '../history/diff.js';
import { definedFields } from '../model/fields.js';
import { fileOf, type StoredKind } from '../model/files.js';
import { present, tagObjects } from '../model/present.js';
import type { Component, Diagram, Model } from '../model/types.js';
import { type MergeConflict, WHOLE } from './merge.js';

/** The three models a merge reads: where the two sides parted, and each side. */
export interface MergeSides {
  base: Model;
  main: Model;
  draft: Model;
}

/**
 * A merge's conflicts as the API answers them (a merge's or update's 409, a draft's `conflicts`):
 * each value in the shape the API's GETs give it (src/model/present.ts), read against the model
 * of its own side — a whole resource (field `*`) as `GET /api/external/<kind>/<id>` answers it,
 * so a component with its `typeSlug` and a diagram with its `url` and tag objects, and a diagram's
 * `tags` as tag objects. The merge itself works on resources as stored (merge.ts); the fields are
 * named by the same paths either way, so resolutions settle them as before.
 */
export function conflictsAsAnswered(conflicts: readonly MergeConflict[], sides: MergeSides, publicUrl: string): MergeConflict[] {
  return conflicts.map((conflict) => ({
    ...conflict,
    base: answered(conflict, conflict.base, sides.base, publicUrl),
    main: answered(conflict, conflict.main, sides.main, publicUrl),
    draft: answered(conflict, conflict.draft, sides.draft, publicUrl),
  }));
}

function answered({ kind, field }: MergeConflict, value: unknown, model: Model, publicUrl: string): unknown {
  if (value === null) return null;
  if (kind === 'diagram' && field === 'tags') return tagObjects(value as string[], model);
  if (field !== WHOLE) return value;
  return kind === 'organization' ? value : resourceAsAnswered(kind, value as object, model, publicUrl);
}

/**
 * A whole resource as `GET /api/external/<kind>/<id>` answers it, read against `model` (its own
 * side's): the one mapping from stored resources to the API's shape that conflicts and diffs share.
 */
export function resourceAsAnswered(kind: StoredKind, resource: object, model: Model, publicUrl: string): object {
  switch (kind) {
    case 'component':
      return componentAsAnswered(resource as Component, model);
    case 'diagram':
      return present.diagram(resource as Diagram, model, publicUrl);
    default:
      return present[kind](resource as never);
  }
}

/**
 * What changed between two models (history/diff.ts) as the API answers it — a draft's `changes`
 * and `/diff`, `/diff`, `/history/<commit>`, a revert's `changes`, the agents' diffs: each changed
 * resource's fields named and valued as its GET gives them, each side read against its own model
 * (a component's `typeSlug` beside `typeId`, a diagram's tags as tag objects, each named by its id
 * as the items of every list of things with ids are: `tags.<tag id>`).
 */
export function answeredDiff(from: Model, to: Model, publicUrl: string): ModelDiff {
  return diffModels(from, to, (kind, resource, model) => resourceAsAnswered(kind, resource, model, publicUrl));
}

/**
 * As the seed form's GET answers it, plus the current form's fields where set (`inlineDesc`,
 * `tags`, `linksToDiagrams`, named as a conflict on one of them names its field): without them a
 * component deleted on one side and tagged on the other would show the same on main as at base.
 */
function componentAsAnswered(component: Component, model: Model): object {
  const { inlineDesc, tags, linksToDiagrams } = fileOf.component(component);
  return definedFields({ ...present.component(component, model), inlineDesc, tags, linksToDiagrams });
}
