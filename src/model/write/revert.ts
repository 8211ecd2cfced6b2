import { checkDiagramSize, checkOrgSize, DEFAULT_LIMITS, type Limits } from '../../limits/limits.js';
import { collectionOf, DIRECTORIES, type StoredKind } from '../files.js';
import { checkModel } from '../rules.js';
import type { Model } from '../types.js';
import { type Draft, type Identified, putOrganization } from '../draft.js';

/**
 * The model as it was at an earlier commit, or as a merge of two branches made it, as one new
 * write on top of the current one: every resource of `target` stored exactly as it is there (its
 * `apiContext` included), every resource it lacks removed. History is never rewritten.
 */
export function revertTo(draft: Draft, target: Model): void {
  checkWriteBounds(draft.base, target, draft.options.limits ?? DEFAULT_LIMITS);
  for (const kind of Object.keys(DIRECTORIES) as StoredKind[]) {
    const wanted = collectionOf(target, kind) as ReadonlyMap<string, Identified>;
    const current = collectionOf(draft.base, kind) as ReadonlyMap<string, Identified>;
    if (wanted === current) continue;
    for (const id of current.keys()) if (!wanted.has(id)) draft.remove(kind, id);
    // The same object is the same resource (snapshots share what a commit left unchanged): no need to compare.
    for (const resource of wanted.values()) {
      if (current.get(resource.id) === resource) continue;
      draft.put(kind, resource, true);
    }
  }
  putOrganization(draft, target.organization);
  // The target held a valid model when it was committed; checked again, as every write is.
  checkModel(draft.model);
}

/**
 * Refuses (413) a `target` that `current` would become past a write's bounds: a diagram it
 * changes with more instances, relations or text areas than allowed, or more components than
 * the organization may hold (and than it has). A merge may join two sides that each stayed
 * within them; a draft's `problem` foresees such a refusal with this same check.
 */
export function checkWriteBounds(current: Model, target: Model, limits: Limits): void {
  if (target.diagrams !== current.diagrams) {
    for (const diagram of target.diagrams.values()) {
      // The same object is the same diagram: held to the bounds when it was written.
      if (current.diagrams.get(diagram.id) === diagram) continue;
      const { name, componentInstances, relations, textareas } = diagram;
      checkDiagramSize(name, { instances: componentInstances.length, relations: relations.length, textareas: textareas.length }, limits);
    }
  }
  checkOrgSize(current.components.size, target.components.size, limits);
}
