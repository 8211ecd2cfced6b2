import { checkFile, checkStoredFile, OrganizationFile } from './file-schemas.js';
import { classifyPath, collectionOf, emptyModel, FileError, ORGANIZATION_FILE, parseFile, type StoredKind } from './files.js';
import { isId } from './ids.js';
import { checkModel } from './rules.js';
import type { Model, Organization } from './types.js';

export interface ModelSource {
  read(oid: string): Promise<string>;
  /** A model that already holds the resource of `path` at blob `oid`, if any. */
  reuse?(path: string, oid: string): Model | undefined;
}

const READ_CONCURRENCY = 64;

/** The organization held by the text of `organization.yaml`. */
export function organizationOfFile(text: string): Organization {
  return checkFile(ORGANIZATION_FILE, OrganizationFile, parseFile(ORGANIZATION_FILE, text));
}

/** The resource held by the text of the file at `path`, which `classifyPath` placed as (`kind`, `id`). */
export function resourceOfFile(path: string, kind: StoredKind, id: string, text: string): { id: string } {
  if (!isId(id)) throw new FileError(path, 'the file name is not a valid id');
  const resource = checkStoredFile(path, kind, parseFile(path, text));
  if (resource.id !== id) throw new FileError(path, `the id inside (${resource.id}) differs from the file name`);
  return resource;
}

/**
 * The model held by a tree of files (path → blob id), checked against every model rule.
 * Files c4store does not own (a README, say) are left alone.
 */
export async function loadModel(files: Map<string, string>, source: ModelSource): Promise<Model> {
  const organizationOid = files.get(ORGANIZATION_FILE);
  if (organizationOid === undefined) throw new FileError(ORGANIZATION_FILE, 'missing');
  const model = emptyModel(
    source.reuse?.(ORGANIZATION_FILE, organizationOid)?.organization
      ?? organizationOfFile(await source.read(organizationOid)),
  );
  const toRead: Array<{ path: string; oid: string; kind: StoredKind; id: string }> = [];
  // Tree order is id order, which is creation order: maps are filled in that order.
  for (const [path, oid] of files) {
    const place = classifyPath(path);
    if (place === null || place === 'organization') continue;
    if (!isId(place.id)) throw new FileError(path, 'the file name is not a valid id');
    const reused = source.reuse?.(path, oid);
    const resource = reused && collectionOf(reused, place.kind).get(place.id);
    collectionOf(model, place.kind).set(place.id, resource ?? { id: place.id });
    if (!resource) toRead.push({ path, oid, ...place });
  }
  for (let i = 0; i < toRead.length; i += READ_CONCURRENCY) {
    await Promise.all(toRead.slice(i, i + READ_CONCURRENCY).map(async ({ path, oid, kind, id }) => {
      collectionOf(model, kind).set(id, resourceOfFile(path, kind, id, await source.read(oid)));
    }));
  }
  checkModel(model);
  return model;
}
