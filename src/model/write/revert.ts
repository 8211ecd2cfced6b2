import { checkDiagramSize, checkOrgSize, DEFAULT_LIMITS } from '../../limits/limits.js';
import { collectionOf, DIRECTORIES, type StoredKind } from '../files.js';
import { checkModel } from '../rules.js';
import type { Diagram, Model } from '../types.js';
import { type Draft, type Identified, putOrganization } from '../draft.js';

/**
 * The model as it was at an earlier commit, or as a merge of two branches made it, as one new
 * write on top of the current one: every resource of `target` stored exactly as it is there (its
 * `apiContext` included), every resource it lacks removed. History is never rewritten.
 */
export function revertTo(draft: Draft, target: Model): void {
  const limits = draft.options.limits ?? DEFAULT_LIMITS;
  for (const kind of Object.keys(DIRECTORIES) as StoredKind[]) {
    const wanted = collectionOf(target, kind) as ReadonlyMap<string, Identified>;
    const current = collectionOf(draft.base, kind) as ReadonlyMap<string, Identified>;
    if (wanted === current) continue;
    for (const id of current.keys()) if (!wanted.has(id)) draft.remove(kind, id);
    // The same object is the same resource (snapshots share what a commit left unchanged): no need to compare.
    for (const resource of wanted.values()) {
      if (current.get(resource.id) === resource) continue;
      // Held to a write's bounds: a merge may join two sides that each stayed within them.
      if (kind === 'diagram') {
        const { name, componentInstances, relations, textareas } = resource as Diagram;
        checkDiagramSize(name, { instances: componentInstances.length, relations: relations.length, textareas: textareas.length }, limits);
      }
      draft.put(kind, resource, true);
    }
  }
  checkOrgSize(draft.base.components.size, draft.model.components.size, limits);
  putOrganization(draft, target.organization);
  // The target held a valid model when it was committed; checked again, as every write is.
  checkModel(draft.model);
}
