import { ModelError } from '../errors.js';
import { checkFile, checkStoredFile, OrganizationFile } from './file-schemas.js';
import { collectionOf, emptyModel, FileError, type ModelUnderConstruction, parseFile } from './files.js';
import { isGeneratedId, isId } from './ids.js';
import {
  classifyPath,
  layoutOf,
  ORGANIZATION_FILE,
  placementProblem,
  resourcePath,
  SHARDED_KINDS,
  type StoredKind,
  type TreeLayout,
} from './paths.js';
import {
  type ChangedResource,
  checkModel,
  checkModelChange,
  folderNameProblems,
  type ModelChange,
  modelProblems,
  RefIndex,
} from './rules.js';
import type { Model, Organization } from './types.js';

export interface ModelSource {
  read(oid: string): Promise<string>;
  /** A model that already holds the resource of `path` at blob `oid`, if any. */
  reuse?(path: string, oid: string): Model | undefined;
  /** The resource blob `oid` gave as a `kind` when this code last parsed and checked it, if known. */
  parsed?(kind: StoredKind, oid: string): { id: string } | undefined;
  /**
   * Files coming in (a push, `c4store check`), held to what a push may bring: no YAML tag but
   * the core ones, no number a double would change, no merge key (yaml/format.ts parseYaml,
   * yaml/incoming.ts). What is already committed is read without it.
   */
  incoming?: boolean;
}

const READ_CONCURRENCY = 64;

interface Placed {
  path: string;
  oid: string;
  kind: StoredKind;
  id: string;
}

/** The organization held by the text of `organization.yaml`. */
export function organizationOfFile(text: string, incoming = false): Organization {
  return checkFile(ORGANIZATION_FILE, OrganizationFile, parseFile(ORGANIZATION_FILE, text, { incoming }));
}

/** The resource held by the text of the file at `path`, which `classifyPath` placed as (`kind`, `id`). */
export function resourceOfFile(path: string, kind: StoredKind, id: string, text: string, incoming = false): { id: string } {
  if (!isId(id)) throw new FileError(path, 'the file name is not a valid id');
  const resource = checkStoredFile(path, kind, parseFile(path, text, { incoming }));
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
 * The blob ids of a tree in the order loadModel reads them: organization.yaml, then the
 * resource files by kind and id (the order of `placed` below, found from the paths alone). A
 * reader that reads ahead (Repo.readBlobs on a worker) hands them over so that each is parsed
 * as it arrives: in tree order, where shards scatter the ids, loadModel waited for the worker
 * to read nearly all of them before the first batch it parses was whole.
 */
export function readingOrder(files: ReadonlyMap<string, string>): string[] {
  const keyed: Array<{ key: string; oid: string }> = [];
  const first: string[] = [];
  for (const [path, oid] of files) {
    if (path === ORGANIZATION_FILE) first.push(oid);
    // `<kind>s/[<shard>/]<id>.yaml` sorts as (kind, id): the plural adds the same letter to every kind.
    else {
      const name = path.slice(path.lastIndexOf('/') + 1);
      keyed.push({ key: `${path.slice(0, path.indexOf('/'))}/${name.endsWith('.yaml') ? name.slice(0, -5) : name}`, oid });
    }
  }
  keyed.sort((a, b) => compare(a.key, b.key));
  return [...first, ...keyed.map((entry) => entry.oid)];
}

/** A problem of one file, as `c4store check` lists it: the message without the path. */
export interface FileProblem {
  path: string;
  message: string;
  /** The field it is at, where the message does not say (ModelProblem.field). */
  field?: string;
}

/**
 * The model held by a tree of files (path → blob id), checked against every model rule and
 * against the repository layout (paths.ts): a resource file anywhere but where the tree's
 * layout keeps it is refused, naming the right path. Files c4store does not own (a README,
 * say) are left alone.
 *
 * Serving a commit and checking a push throw at the first problem. `c4store check` passes
 * `problems` and gets every problem instead, by the same code: a file that cannot be read
 * is one problem, and what other resources say about it (a link to that component, say) is
 * not reported again, since its cause already is. It also gets the one-name rule a push
 * holds what it brings to (push/check.ts checkNewNames), for a folder brought in whole.
 */
export async function loadModel(files: Map<string, string>, source: ModelSource, collect?: { problems: FileProblem[] }): Promise<Model> {
  const unreadable = new Set<string>();
  const fileProblem = (err: unknown, kind?: StoredKind, id?: string) => {
    if (!(err instanceof FileError) || collect === undefined) throw err;
    collect.problems.push({ path: err.path, message: err.message.slice(err.path.length + 2) });
    if (kind !== undefined && id !== undefined) unreadable.add(id);
  };
  // The files are placed before organization.yaml is read: on a cold start the blobs are still
  // arriving from a worker meanwhile (readingOrder).
  const layout = layoutOf(files.keys());
  const placed: Placed[] = [];
  const misplaced: Array<{ err: unknown; kind: StoredKind; id: string }> = [];
  for (const [path, oid] of files) {
    const place = classifyPath(path);
    if (place === null || place === 'organization') continue;
    try {
      if (!isId(place.id)) throw new FileError(path, 'the file name is not a valid id');
      const problem = placementProblem(path, place, layout);
      if (problem !== null) throw new FileError(path, problem);
      placed.push({ path, oid, kind: place.kind, id: place.id });
    } catch (err) {
      misplaced.push({ err, kind: place.kind, id: place.id });
    }
  }
  // Each collection is filled in id order, which is creation order: shards scatter ids across the tree.
  if (!inIdOrder(placed)) placed.sort((a, b) => compare(a.kind, b.kind) || compare(a.id, b.id));
  const organizationOid = files.get(ORGANIZATION_FILE);
  let organization: Organization = { name: '', slug: '', members: [] };
  try {
    if (organizationOid === undefined) throw new FileError(ORGANIZATION_FILE, 'missing');
    organization =
      source.reuse?.(ORGANIZATION_FILE, organizationOid)?.organization ??
      organizationOfFile(await source.read(organizationOid), source.incoming);
  } catch (err) {
    fileProblem(err);
  }
  for (const { err, kind, id } of misplaced) fileProblem(err, kind, id);
  const model = emptyModel(organization);
  const toRead: Placed[] = [];
  for (const file of placed) {
    const reused = source.reuse?.(file.path, file.oid);
    // A blob parsed before stands for its file only under the id it was parsed with (the
    // same check resourceOfFile makes); any other file name is parsed, and refused, anew.
    const known = source.parsed?.(file.kind, file.oid);
    const resource = (reused && collectionOf(reused, file.kind).get(file.id)) || (known?.id === file.id ? known : undefined);
    collectionOf(model, file.kind).set(file.id, resource ?? { id: file.id });
    if (!resource) toRead.push(file);
  }
  for (let i = 0; i < toRead.length; i += READ_CONCURRENCY) {
    await Promise.all(
      toRead.slice(i, i + READ_CONCURRENCY).map(async ({ path, oid, kind, id }) => {
        try {
          collectionOf(model, kind).set(id, resourceOfFile(path, kind, id, await source.read(oid), source.incoming));
        } catch (err) {
          collectionOf(model, kind).delete(id);
          fileProblem(err, kind, id);
        }
      }),
    );
  }
  if (collect === undefined) {
    checkModel(model);
    return model;
  }
  if (organizationOid !== undefined && collect.problems.every((problem) => problem.path !== ORGANIZATION_FILE)) {
    // Besides what checkModel holds a commit to, what a push holds the resources it brings to:
    // a folder is all brought in (folderNameProblems).
    for (const problem of [...modelProblems(model), ...folderNameProblems(model)]) {
      // Listed for a person, as the command line says a refusal: with what it concerns (ModelError.detailed).
      const message = new ModelError(problem.message, problem.context).detailed;
      if (namesAnyOf(message, unreadable)) continue;
      collect.problems.push({ path: resourcePathIn(files, problem.kind, problem.id, layout), message, field: problem.field });
    }
  }
  return model;
}

/** Whether a rule's message names (in quotes, as every message does) one of `ids`. */
function namesAnyOf(message: string, ids: ReadonlySet<string>): boolean {
  if (ids.size === 0) return false;
  for (const [, quoted] of message.matchAll(/'([^']*)'/g)) if (ids.has(quoted!)) return true;
  return false;
}

/** Where a resource of the model is in `files`: its path in the tree's layout. */
function resourcePathIn(files: Map<string, string>, kind: StoredKind, id: string, layout: ReturnType<typeof layoutOf>): string {
  const path = resourcePath(kind, id, layout);
  return files.has(path) ? path : resourcePath(kind, id);
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

/** A path whose blob a change replaced: the blob now there, or null where none is (removed, or now a folder). */
export interface TreeChange {
  path: string;
  oid: string | null;
}

/**
 * A model loaded from a tree and kept, so that the next tree is loaded from what changed between
 * them (push/check.ts: each pushed commit from the one checked before it), at a cost in
 * proportion to the change rather than to the model. Made from a tree (path → blob id) and the
 * model loadModel made of it, without a problem; each `apply` makes it the model loadModel would
 * make of the changed tree with reuse from the one before: the resource of a file that did not
 * change is the very object it was, a changed file is placed, read and checked as loadModel
 * places, reads and checks it (placementProblem, resourceOfFile, organizationOfFile), and the
 * model rules run on what the change can have broken (rules.ts checkModelChange), by the same code.
 *
 * A change with a problem throws, not necessarily the problem loadModel would name first, and
 * leaves the object spent: loadModel then says which. Its model's collections are not in id
 * order, as loadModel's are: what reads it here (the checks, finding nothing) does not depend on it.
 */
export class LoadedTree {
  private readonly files: Map<string, string>;
  private readonly model: ModelUnderConstruction;
  /** The refs of its model's resources, as they now stand. */
  readonly refs: RefIndex;
  /** Components and diagrams in a shard directory, and directly in their folder: the tree's layout (layoutOf). */
  private sharded = 0;
  private flat = 0;

  constructor(files: ReadonlyMap<string, string>, model: Model) {
    this.files = new Map(files);
    this.model = {
      organization: model.organization,
      types: new Map(model.types),
      tags: new Map(model.tags),
      attributes: new Map(model.attributes),
      components: new Map(model.components),
      diagrams: new Map(model.diagrams),
    };
    this.refs = new RefIndex(this.model);
    for (const path of this.files.keys()) this.count(path, 1);
  }

  /** The model as it now stands. */
  get current(): Model {
    return this.model;
  }

  /** What `apply` changed of the model, for the checks that look at what a commit brings (push/check.ts). */
  async apply(changes: readonly TreeChange[], source: ModelSource): Promise<ModelChange> {
    const layoutBefore = this.layout();
    const removedFiles: Array<{ kind: StoredKind; id: string }> = [];
    const toRead: Placed[] = [];
    let organizationOid: string | null | undefined;
    for (const { path, oid } of changes) {
      const was = this.files.get(path);
      if (was === oid) continue;
      const place = classifyPath(path);
      if (was !== undefined) {
        this.count(path, -1);
        this.files.delete(path);
        if (place !== null && place !== 'organization') removedFiles.push({ kind: place.kind, id: place.id });
      }
      if (oid !== null) {
        this.count(path, 1);
        this.files.set(path, oid);
        if (place !== null && place !== 'organization') toRead.push({ path, oid, kind: place.kind, id: place.id });
      }
      if (place === 'organization') organizationOid = oid;
    }
    // Where each file is: a change of layout (layout-upgrade.ts's commit) places every file anew.
    const layout = this.layout();
    const placing = layout === layoutBefore ? toRead : [...this.files].map(([path, oid]) => ({ path, oid }));
    for (const { path } of placing) {
      const place = classifyPath(path);
      if (place === null || place === 'organization') continue;
      if (!isId(place.id)) throw new FileError(path, 'the file name is not a valid id');
      const problem = placementProblem(path, place, layout);
      if (problem !== null) throw new FileError(path, problem);
    }
    if (organizationOid === null) throw new FileError(ORGANIZATION_FILE, 'missing');
    const organizationBefore = this.model.organization;
    if (organizationOid !== undefined) {
      this.model.organization = organizationOfFile(await source.read(organizationOid), source.incoming);
    }
    const read: Array<Placed & { resource: { id: string } }> = [];
    for (let i = 0; i < toRead.length; i += READ_CONCURRENCY) {
      read.push(
        ...(await Promise.all(
          toRead.slice(i, i + READ_CONCURRENCY).map(async (file) => ({
            ...file,
            resource: resourceOfFile(file.path, file.kind, file.id, await source.read(file.oid), source.incoming),
          })),
        )),
      );
    }
    // The model's rules cache what they find of the types and the attributes by map (rules.ts
    // typeSlugs, requiredAttributes): those maps are replaced, never changed in place.
    for (const kind of new Set([...removedFiles, ...read].map(({ kind }) => kind))) {
      if (kind === 'type') this.model.types = new Map(this.model.types);
      if (kind === 'attribute') this.model.attributes = new Map(this.model.attributes);
    }
    const before = new Map<string, { kind: StoredKind; id: string; resource: { id: string } | undefined }>();
    const key = (kind: StoredKind, id: string) => `${kind}/${id}`;
    for (const { kind, id } of [...removedFiles, ...read]) {
      if (!before.has(key(kind, id))) before.set(key(kind, id), { kind, id, resource: collectionOf(this.model, kind).get(id) });
    }
    for (const { kind, id } of removedFiles) collectionOf(this.model, kind).delete(id);
    for (const { kind, id, resource } of read) collectionOf(this.model, kind).set(id, resource);
    const change: ModelChange = { changed: [], removed: [], organization: organizationOid === undefined ? undefined : organizationBefore };
    for (const { kind, id, resource } of before.values()) {
      const now = collectionOf(this.model, kind).get(id);
      if (now === undefined) (change.removed as Array<{ kind: StoredKind; id: string }>).push({ kind, id });
      else (change.changed as ChangedResource[]).push({ kind, now, before: resource });
    }
    checkModelChange(this.model, change, this.refs);
    return change;
  }

  private layout(): TreeLayout {
    return this.sharded > 0 ? 'sharded' : this.flat > 0 ? 'flat' : 'sharded';
  }

  /** layoutOf's count of one path coming (1) or going (-1). */
  private count(path: string, by: 1 | -1): void {
    const place = classifyPath(path);
    if (place === null || place === 'organization' || !SHARDED_KINDS.has(place.kind)) return;
    if (place.inSubdirectory) this.sharded += by;
    else this.flat += by;
  }
}
