import type { Draft } from '../model/draft.js';
import {
  collectionOf,
  DIRECTORIES,
  ORGANIZATION_FILE,
  resourcePath,
  serialize,
  serializeOrganization,
  type StoredKind,
} from '../model/files.js';

/**
 * `c4store upgrade <org>`: the step of one commit that rewrites every file of the model as the
 * service writes it today (with its schema line); the write itself adds `.c4store/schemas/` to
 * a repository that lacks them (OrgModel.writeUnderLock), as any write does. Ordinary writes never
 * touch a file they do not change, so an older repository reaches this state file by file;
 * this gets it there at once, in one commit of its own.
 */
export function rewriteEveryFile(draft: Draft): void {
  const organization = draft.base.organization;
  draft.changes.push({
    kind: 'organization',
    action: 'update',
    id: organization.slug,
    path: ORGANIZATION_FILE,
    label: organization.name,
    content: serializeOrganization(organization),
  });
  for (const kind of Object.keys(DIRECTORIES) as StoredKind[]) {
    for (const resource of collectionOf(draft.base, kind).values()) {
      draft.changes.push({
        kind,
        action: 'update',
        id: resource.id,
        path: resourcePath(kind, resource.id),
        label: (resource as { name?: string }).name ?? resource.id,
        content: serialize(kind, resource),
      });
    }
  }
}
