import { type Draft, organizationChange } from '../model/draft.js';
import { collectionOf, DIRECTORIES, type StoredKind } from '../model/files.js';

/**
 * `c4store upgrade <org>`: the step of one commit that rewrites every file of the model as the
 * service writes it today (with its schema line); the write itself adds `.c4store/schemas/` to
 * a repository that lacks them (OrgModel.writeUnderLock), as any write does, and leaves out the
 * files that come out as they were (WriteRequest.mayRewriteUnchanged). Ordinary writes never
 * touch a file they do not change, so an older repository reaches this state file by file;
 * this gets it there at once, in one commit of its own.
 */
export function rewriteEveryFile(draft: Draft): void {
  draft.changes.push(organizationChange(draft.base.organization));
  for (const kind of Object.keys(DIRECTORIES) as StoredKind[]) {
    for (const resource of collectionOf(draft.base, kind).values()) draft.rewrite(kind, resource);
  }
}
