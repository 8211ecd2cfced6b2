import { checkFile, checkStoredFile, OrganizationFile } from './file-schemas.js';
import { collectionOf, emptyModel, FileError, parseFile } from './files.js';
import { isGeneratedId, isId } from './ids.js';
import { classifyPath, layoutOf, ORGANIZATION_FILE, placementProblem, type StoredKind } from './paths.js';
import { checkModel } from './rules.js';
import type { Model, Organization } from './types.js';

export interface ModelSource {
  read(oid: string): Promise<string>;
  /** A model that already holds the resource of `path` at blob `oid`, if any. */
  reuse?(path: string, oid: string): Model | undefined;
}

const READ_CONCURRENCY = 64;

interface Placed {
  path: string;
  oid: string;
  kind: StoredKind;
  id: string;
}

/** The organization held by the text of `organization.yaml`. */
export function organizationOfFile(text: string): Organization {
  return checkFile(ORGANIZATION_FILE, OrganizationFile, parseFile(ORGANIZATION_FILE, text));
}

/** The resource held by the text of the file at `path`, which `classifyPath` placed as (`kind`, `id`). */
export function resourceOfFile(path: string, kind: StoredKind, id: string, text: string): { id: string } {
  if (!isId(id)) throw new FileError(path, 'the file name is not a valid id');
  const resource = checkStoredFile(path, kind, parseFile(path, text));
  if (resource.id !== id) {
    // A name in the generated pattern names a resource; any other name (a client-chosen
    // id) is only an id at all when it is the id of the resource the file holds.
    throw new FileError(
      path,
      isGeneratedId(id) ? `the id inside (${resource.id}) differs from the file name` : 'the file name is not a valid id',
    );
  }
  return resource;
}

/**
 * The model held by a tree of files (path → blob id), checked against every model rule and
 * against the repository layout (paths.ts): a resource file anywhere but where the tree's
 * layout keeps it is refused, naming the right path. Files c4store does not own (a README,
 * say) are left alone.
 */
export async function loadModel(files: Map<string, string>, source: ModelSource): Promise<Model> {
  const organizationOid = files.get(ORGANIZATION_FILE);
  if (organizationOid === undefined) throw new FileError(ORGANIZATION_FILE, 'missing');
  const model = emptyModel(
    source.reuse?.(ORGANIZATION_FILE, organizationOid)?.organization ?? organizationOfFile(await source.read(organizationOid)),
  );
  const layout = layoutOf(files.keys());
  const placed: Placed[] = [];
  for (const [path, oid] of files) {
    const place = classifyPath(path);
    if (place === null || place === 'organization') continue;
    if (!isId(place.id)) throw new FileError(path, 'the file name is not a valid id');
    const problem = placementProblem(path, place, layout);
    if (problem !== null) throw new FileError(path, problem);
    placed.push({ path, oid, kind: place.kind, id: place.id });
  }
  // Each collection is filled in id order, which is creation order: shards scatter ids across the tree.
  if (!inIdOrder(placed)) placed.sort((a, b) => compare(a.kind, b.kind) || compare(a.id, b.id));
  const toRead: Placed[] = [];
  for (const file of placed) {
    const reused = source.reuse?.(file.path, file.oid);
    const resource = reused && collectionOf(reused, file.kind).get(file.id);
    collectionOf(model, file.kind).set(file.id, resource ?? { id: file.id });
    if (!resource) toRead.push(file);
  }
  for (let i = 0; i < toRead.length; i += READ_CONCURRENCY) {
    await Promise.all(
      toRead.slice(i, i + READ_CONCURRENCY).map(async ({ path, oid, kind, id }) => {
        collectionOf(model, kind).set(id, resourceOfFile(path, kind, id, await source.read(oid)));
      }),
    );
  }
  checkModel(model);
  return model;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether each kind's files already come in id order (a flat tree, or one shard). */
function inIdOrder(placed: readonly Placed[]): boolean {
  const last = new Map<StoredKind, string>();
  for (const { kind, id } of placed) {
    if (id < (last.get(kind) ?? '')) return false;
    last.set(kind, id);
  }
  return true;
}
