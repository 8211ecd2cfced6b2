import { collectionOf, DIRECTORIES, type StoredKind } from '../model/files.js';
import type { Model, Organization } from '../model/types.js';

/**
 * What changed between two models, resource by resource and field by field: the answer to
 * "what did the last import change?". Pure: two models in, a plain object out.
 */

/**
 * A resource as the answer shows it, read against its own side's model. The API's answers give
 * resources as its GETs do (src/drafts/conflict-shape.ts `answeredDiff`: a component's `typeSlug`,
 * a diagram's `url` and tag objects); without one, as stored.
 */
export type ResourceShape = (kind: StoredKind, resource: object, model: Model) => object;

const AS_STORED: ResourceShape = (_kind, resource) => resource;

export interface ResourceRef {
  kind: StoredKind;
  id: string;
  name: string | null;
}

export interface FieldChange {
  /** Dotted path; items of nested arrays that carry an id are named by it (`componentInstances.<id>.position`). */
  field: string;
  old: unknown;
  new: unknown;
}

export interface ModelDiff {
  added: ResourceRef[];
  removed: ResourceRef[];
  changed: Array<ResourceRef & { fields: FieldChange[] }>;
  /** The organization's own change (see OrganizationChange), when it changed. */
  organization?: OrganizationChange;
}

const KINDS = Object.keys(DIRECTORIES) as StoredKind[];

/**
 * Which resources changed is read from the models as stored (a resource the write left alone is
 * the very object it was); how a changed one's fields changed, from each side in `shape`.
 */
export function diffModels(from: Model, to: Model, shape: ResourceShape = AS_STORED): ModelDiff {
  const diff: ModelDiff = { added: [], removed: [], changed: [] };
  for (const kind of KINDS) {
    const before = collectionOf(from, kind) as ReadonlyMap<string, { id: string; name?: string }>;
    const after = collectionOf(to, kind) as ReadonlyMap<string, { id: string; name?: string }>;
    if (before === after) continue;
    for (const [id, resource] of after) {
      const old = before.get(id);
      if (old === undefined) diff.added.push({ kind, id, name: resource.name ?? null });
      else if (old !== resource) {
        const fields: FieldChange[] = [];
        compare(shape(kind, old, from), shape(kind, resource, to), '', fields);
        if (fields.length > 0) diff.changed.push({ kind, id, name: resource.name ?? null, fields });
      }
    }
    for (const [id, resource] of before) {
      if (!after.has(id)) diff.removed.push({ kind, id, name: resource.name ?? null });
    }
  }
  const organization = diffOrganizations(from.organization, to.organization);
  if (organization !== undefined) diff.organization = organization;
  return diff;
}

/**
 * A change of the organization itself (`organization.yaml`: its name, slug and members), which
 * is no resource: `name` is the organization's name after, `fields` its changed fields as a
 * resource's are (`members` old and new as whole lists).
 */
export interface OrganizationChange {
  name: string;
  fields: FieldChange[];
}

/** What changed of the organization between two models; undefined when nothing did. */
function diffOrganizations(from: Organization, to: Organization): OrganizationChange | undefined {
  if (from === to) return undefined;
  const fields: FieldChange[] = [];
  for (const field of ['name', 'slug', 'members'] as const) compare(from[field], to[field], field, fields);
  return fields.length === 0 ? undefined : { name: to.name, fields };
}

function compare(a: unknown, b: unknown, path: string, out: FieldChange[]): void {
  // A list a resource leaves out is an empty one: emptied, it is `[]`, as the API answers it.
  if (Array.isArray(a) && b === undefined) b = [];
  if (Array.isArray(b) && a === undefined) a = [];
  if (Object.is(a, b)) return;
  if (Array.isArray(a) && Array.isArray(b) && isIdList([...a, ...b])) {
    const before = new Map((a as Array<{ id: string }>).map((item) => [item.id, item]));
    const after = new Map((b as Array<{ id: string }>).map((item) => [item.id, item]));
    for (const [id, item] of after) compare(before.get(id), item, join(path, id), out);
    for (const [id, item] of before) if (!after.has(id)) out.push({ field: join(path, id), old: item, new: null });
    return;
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) compare(a[key], b[key], join(path, key), out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => equal(item, b[i]))) return;
  if (equal(a, b)) return;
  out.push({ field: path, old: a ?? null, new: b ?? null });
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIdList(items: unknown[]): items is Array<{ id: string }> {
  return items.length > 0 && items.every((item) => isRecord(item) && typeof item.id === 'string');
}
