import { collectionOf, DIRECTORIES, type StoredKind } from '../files.js';
import { checkModel } from '../rules.js';
import type { Model } from '../types.js';
import { type Draft, type Identified, putOrganization } from '../draft.js';

/**
 * The model as it was at an earlier commit, as one new write on top of the current one:
 * every resource of `target` stored exactly as it was there (its `apiContext` included),
 * every resource created since removed. History is never rewritten.
 */
export function revertTo(draft: Draft, target: Model): void {
  for (const kind of Object.keys(DIRECTORIES) as StoredKind[]) {
    const wanted = collectionOf(target, kind) as ReadonlyMap<string, Identified>;
    const current = collectionOf(draft.base, kind) as ReadonlyMap<string, Identified>;
    if (wanted === current) continue;
    for (const id of current.keys()) if (!wanted.has(id)) draft.remove(kind, id);
    // The same object is the same resource (snapshots share what a commit left unchanged): no need to compare.
    for (const resource of wanted.values()) if (current.get(resource.id) !== resource) draft.put(kind, resource, true);
  }
  putOrganization(draft, target.organization);
  // The target held a valid model when it was committed; checked again, as every write is.
  checkModel(draft.model);
}
