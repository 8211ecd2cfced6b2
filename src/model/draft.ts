import { concerning, ModelError, quotedName } from '../errors.js';
import type { LayoutInput, LayoutResult } from '../layout/layout.js';
import type { Limits } from '../limits/limits.js';
import { collectionOf, ORGANIZATION_FILE, resourcePath, sameContent, serialize, serializeOrganization, type StoredKind } from './files.js';
import { LayeredMap } from './layered-map.js';
import { checkOneName, forgetRequiredIndex } from './rules.js';
import type { Attribute, Model, Organization } from './types.js';
import { turnIfDue } from './write/turns.js';

export interface Identified {
  id: string;
  ref?: string;
  apiContext?: string;
  name?: string;
}

export interface Change {
  kind: StoredKind | 'organization';
  action: 'create' | 'update' | 'delete';
  id: string;
  path: string;
  /** A human name for the commit message. */
  label: string;
  /** The file's new content; empty, and not written, for a delete. */
  content: string;
  apiContext?: string;
}

export interface WriteOptions {
  /** The request's `apiContext` default: its UTC time as `YYYY-MM-DD HH:MM:SS`. */
  apiContext: string;
  newId: () => string;
  /** `auto`: lay out afresh every element the request gives no position. */
  layout: 'keep' | 'auto';
  /** Bounds on diagrams and the organization (default: DEFAULT_LIMITS). */
  limits?: Limits;
  /** A large write still running after `at` (ms since the epoch) is cancelled (503). */
  deadline?: { at: number; seconds: number };
  /** Where automatic layout runs (default: layoutDiagram on this thread; the server: a worker). */
  runLayout?: LayoutRunner;
}

export type LayoutRunner = (input: LayoutInput) => Promise<LayoutResult>;

const NAMES: Record<StoredKind, string> = {
  type: 'Type',
  tag: 'Tag',
  attribute: 'Attribute',
  component: 'Component',
  diagram: 'Diagram',
};

export function kindName(kind: StoredKind): string {
  return NAMES[kind];
}

const refIndexes = new WeakMap<ReadonlyMap<string, Identified>, ReadonlyMap<string, string>>();

/** ref → id of one collection; built once per stored collection and reused across requests. */
export function refIndex(collection: ReadonlyMap<string, Identified>): ReadonlyMap<string, string> {
  let index = refIndexes.get(collection);
  if (!index) {
    const built = new Map<string, string>();
    for (const resource of collection.values()) if (resource.ref !== undefined) built.set(resource.ref, resource.id);
    refIndexes.set(collection, (index = built));
  }
  return index;
}

/** The resource whose id is `name`, or else the one whose ref is `name` (the single GETs and the agents' tools). */
export function byIdOrRef<T extends Identified>(collection: ReadonlyMap<string, T>, name: string): T | undefined {
  const byId = collection.get(name);
  if (byId !== undefined) return byId;
  const id = refIndex(collection).get(name);
  return id === undefined ? undefined : collection.get(id);
}

/**
 * The next model, built beside the model at HEAD: the first time the request puts into a
 * collection, the draft's collection becomes a LayeredMap over the stored one, which stays
 * untouched for the requests still reading it. Records which files the request changes.
 */
export class Draft {
  readonly model: Model;
  readonly changes: Change[] = [];
  private readonly layered = new Map<StoredKind, LayeredMap<string, Identified>>();
  /** Per kind, the resources this request created or gave a new ref: finish() checks their names. */
  private readonly renamed = new Map<StoredKind, Set<string>>();

  constructor(
    readonly base: Model,
    readonly options: WriteOptions,
  ) {
    this.model = { ...base };
  }

  collection<T>(kind: StoredKind): ReadonlyMap<string, T> {
    return collectionOf(this.model, kind) as ReadonlyMap<string, T>;
  }

  /**
   * Stores `resource` unless it equals what is stored. An `apiContext` the request left to
   * its default does not count as a difference, so re-posting a model changes nothing.
   * Returns the resource as it now stands.
   */
  put<T extends Identified>(kind: StoredKind, resource: T, apiContextGiven: boolean): T {
    const stored = collectionOf(this.base, kind).get(resource.id) as T | undefined;
    if (stored) {
      const candidate = apiContextGiven ? resource : { ...resource, apiContext: stored.apiContext };
      if (sameContent(kind, candidate, stored)) return stored;
    }
    const content = serialize(kind, resource);
    const { collection, index } = this.layer(kind);
    if (index) {
      if (stored?.ref !== undefined && index.get(stored.ref) === stored.id) index.delete(stored.ref);
      if (resource.ref !== undefined) index.set(resource.ref, resource.id);
    }
    collection.set(resource.id, resource);
    if (kind === 'attribute') forgetRequiredIndex(collection as unknown as ReadonlyMap<string, Attribute>);
    if (stored === undefined || resource.ref !== stored.ref || kind === 'diagram') {
      let ids = this.renamed.get(kind);
      if (ids === undefined) this.renamed.set(kind, (ids = new Set()));
      ids.add(resource.id);
    }
    this.changes.push({ ...fileChange(kind, resource, stored ? 'update' : 'create', content), apiContext: resource.apiContext });
    return resource;
  }

  /**
   * The rules over the request as a whole, once its step has put everything: that no id or
   * ref it brings in names a second resource of its kind (rules.ts checkOneName). Checked at
   * the end, not as each resource is put, so that a request may create a resource with an id
   * that another element of it takes away as a ref. The write loop calls it after every step;
   * it is the one place every way of writing passes (both forms of the API, drafts and their
   * merges, revert, the agents' tools, the viewer).
   */
  finish(): void {
    for (const [kind, ids] of this.renamed) {
      const collection = collectionOf(this.model, kind) as ReadonlyMap<string, Identified>;
      const base = collectionOf(this.base, kind) as ReadonlyMap<string, Identified>;
      const refs = refIndex(collection);
      for (const id of ids) {
        const resource = collection.get(id);
        // Removed again by the same request: nothing of it stays to be named.
        if (resource === undefined) continue;
        concerning(`${kind} ${quotedName(resource.name ?? id)}`, () => checkOneName(kind, collection, refs, resource, base.get(id)));
      }
    }
  }

  /**
   * Writes a stored resource's file again as the service writes it today, as it is (`c4store
   * upgrade`). The request's apiContext stands for it; a file that comes out unchanged is no
   * change to git (WriteRequest.mayRewriteUnchanged).
   */
  rewrite(kind: StoredKind, resource: Identified): void {
    this.changes.push(fileChange(kind, resource, 'update', serialize(kind, resource)));
  }

  /** Removes a stored resource: its file is deleted by the commit (its history stays in git). */
  remove(kind: StoredKind, id: string): void {
    const stored = collectionOf(this.base, kind).get(id) as Identified | undefined;
    if (!stored) throw new Error(`No stored ${kind} ${id} to remove`);
    const { collection, index } = this.layer(kind);
    if (index && stored.ref !== undefined && index.get(stored.ref) === stored.id) index.delete(stored.ref);
    collection.delete(id);
    this.changes.push({
      kind,
      action: 'delete',
      id,
      path: resourcePath(kind, id),
      label: stored.name ?? id,
      content: '',
    });
  }

  /**
   * The draft's own collection of `kind`, made a LayeredMap over the stored one the first
   * time the request changes it, with its ref index carried forward (not rebuilt next time).
   */
  private layer(kind: StoredKind): { collection: LayeredMap<string, Identified>; index: LayeredMap<string, string> | undefined } {
    let collection = this.layered.get(kind);
    if (collection !== undefined) return { collection, index: refIndexes.get(collection) as LayeredMap<string, string> | undefined };
    const base = collectionOf(this.base, kind) as ReadonlyMap<string, Identified>;
    collection = LayeredMap.over(base);
    this.layered.set(kind, collection);
    (this.model as unknown as Record<string, unknown>)[collectionKey(kind)] = collection;
    // The stored collection's index (built once per snapshot) is carried forward, so that
    // finish() finds the draft's refs without going over the whole collection.
    const index = LayeredMap.over(refIndex(base) as ReadonlyMap<string, string>);
    refIndexes.set(collection, index);
    return { collection, index };
  }
}

function fileChange(kind: StoredKind, resource: Identified, action: 'create' | 'update', content: string): Change {
  return { kind, action, id: resource.id, path: resourcePath(kind, resource.id), label: resource.name ?? resource.id, content };
}

/** The change that writes the organization file with `organization`, as the service writes it today. */
export function organizationChange(organization: Organization): Change {
  return {
    kind: 'organization',
    action: 'update',
    id: organization.slug,
    path: ORGANIZATION_FILE,
    label: organization.name,
    content: serializeOrganization(organization),
  };
}

/** The organization file changes only through the command line (members). */
export function putOrganization(draft: Draft, organization: Organization): void {
  if (serializeOrganization(organization) === serializeOrganization(draft.base.organization)) return;
  draft.model.organization = organization;
  draft.changes.push(organizationChange(organization));
}

function collectionKey(kind: StoredKind): keyof Model {
  return ({ type: 'types', tag: 'tags', attribute: 'attributes', component: 'components', diagram: 'diagrams' } as const)[kind];
}

export interface Target {
  id: string;
  /** The stored resource this element overwrites, if any. */
  existing: Identified | undefined;
}

/**
 * Decides, per element of a write body, which resource it writes: `id` selects an existing
 * one, `ref` without `id` selects the resource holding that ref or creates one, neither
 * creates. Also refuses a request that names one resource twice or leaves two resources
 * with one ref.
 */
export async function resolveTargets(
  draft: Draft,
  kind: StoredKind,
  elements: ReadonlyArray<{ id?: string; ref?: string }>,
  options: { refuseIds?: string } = {},
): Promise<Target[]> {
  const stored = collectionOf(draft.base, kind) as ReadonlyMap<string, Identified>;
  const byRef = refIndex(stored);
  const seenIds = new Set<string>();
  const seenRefs = new Map<string, string>();
  const targets: Target[] = [];
  for (const element of elements) {
    // A request of 45,000 elements: other requests get turns in between (turns.ts).
    await turnIfDue(draft);
    let existing: Identified | undefined;
    if (element.id !== undefined) {
      if (options.refuseIds) throw new ModelError(options.refuseIds);
      existing = stored.get(element.id);
      if (!existing) throw new ModelError(`${kindName(kind)} with id '${element.id}' does not exist.`);
    } else if (element.ref !== undefined) {
      const id = byRef.get(element.ref);
      existing = id === undefined ? undefined : stored.get(id);
    }
    const id = existing?.id ?? draft.options.newId();
    if (seenIds.has(id)) {
      throw new ModelError(
        existing && element.id !== undefined
          ? `${kindName(kind)} with id '${id}' is given more than once.`
          : `Ref '${element.ref}' is used more than once.`,
      );
    }
    seenIds.add(id);
    if (element.ref !== undefined) {
      if (seenRefs.has(element.ref)) throw new ModelError(`Ref '${element.ref}' is used more than once.`);
      seenRefs.set(element.ref, id);
    }
    targets.push({ id, existing });
  }
  // A ref moved onto a resource by id must not stay on another resource the request leaves alone.
  for (const [ref, id] of seenRefs) {
    const holder = byRef.get(ref);
    if (holder !== undefined && holder !== id && !seenIds.has(holder)) {
      throw new ModelError(`Ref '${ref}' is used more than once.`);
    }
  }
  return targets;
}
