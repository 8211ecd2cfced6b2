import { ModelError } from '../errors.js';
import { collectionOf, DIRECTORIES, type StoredKind } from '../model/files.js';
import { checkModel, checkNewNames } from '../model/rules.js';
import type { Model, Organization } from '../model/types.js';

/**
 * The three-way merge of two models that grew apart from one base: resource by resource, and
 * within a resource changed on both sides field by field (nested lists of things with ids —
 * instances, text areas, relations, attribute values — item by item, so one side's moved box
 * and the other's relabelled relation both survive). A field changed on one side takes that
 * side; changed alike on both, that value; changed differently, a conflict, unless a resolution
 * settles it. Pure: three models in, a model or the reasons it cannot be made out.
 *
 * The sides are called `main` and `draft` whichever way the merge goes (a draft merged into
 * main, or main into a draft to catch up): the result is the same either way.
 */

export type MergeKind = StoredKind | 'organization';

export interface MergeConflict {
  kind: MergeKind;
  id: string;
  name: string | null;
  /**
   * Dotted path of the field (`name`, `componentInstances.<id>.position`); `*` when one side
   * deleted the resource and the other changed it; `componentInstances.<id>` when one side
   * deleted that item of a nested list and the other changed it.
   */
  field: string;
  base: unknown;
  main: unknown;
  draft: unknown;
}

export interface Resolution {
  kind: MergeKind;
  id: string;
  field: string;
  take: 'main' | 'draft';
}

export type MergeOutcome =
  | { outcome: 'merged'; model: Model }
  | { outcome: 'conflicts'; conflicts: MergeConflict[] }
  /** The merged model breaks a rule (e.g. one side deleted a component the other's new work uses): the rule's refusal. */
  | { outcome: 'invalid'; error: ModelError };

const KINDS = Object.keys(DIRECTORIES) as StoredKind[];
/** A deleted resource, or a deleted item of a nested list, against a change on the other side. */
export const WHOLE = '*';

type Resource = { id: string; name?: string } & Record<string, unknown>;

export function mergeModels(base: Model, main: Model, draft: Model, resolutions: readonly Resolution[] = []): MergeOutcome {
  const settle = new Map(resolutions.map((r) => [resolutionKey(r.kind, r.id, r.field), r.take]));
  const conflicts: MergeConflict[] = [];
  const merged: Record<string, unknown> = {};
  for (const kind of KINDS) {
    merged[collectionKey(kind)] = mergeCollection(
      kind,
      collectionOf(base, kind) as ReadonlyMap<string, Resource>,
      collectionOf(main, kind) as ReadonlyMap<string, Resource>,
      collectionOf(draft, kind) as ReadonlyMap<string, Resource>,
      settle,
      conflicts,
    );
  }
  const organization = mergeResource(
    'organization',
    base.organization.slug,
    base.organization as unknown as Resource,
    main.organization as unknown as Resource,
    draft.organization as unknown as Resource,
    settle,
    conflicts,
  ) as unknown as Organization | undefined;
  if (conflicts.length > 0) return { outcome: 'conflicts', conflicts };
  const model = { ...(merged as unknown as Model), organization: organization ?? main.organization };
  try {
    checkModel(model);
    // An id or ref that either side brought in must not name a second resource (the write step's
    // finish() would refuse the merge commit too; said here, a draft's summary says it before).
    checkNewNames(model, base);
  } catch (err) {
    if (err instanceof ModelError) return { outcome: 'invalid', error: err };
    throw err;
  }
  return { outcome: 'merged', model };
}

function resolutionKey(kind: string, id: string, field: string): string {
  return `${kind}\0${id}\0${field}`;
}

function collectionKey(kind: StoredKind): keyof Model {
  return ({ type: 'types', tag: 'tags', attribute: 'attributes', component: 'components', diagram: 'diagrams' } as const)[kind];
}

/**
 * One kind's resources. Where the draft left the kind alone the result is main's own map (and
 * the other way round), so merging a draft that touched a hundred components into a main of
 * ten thousand compares identities, not contents, for the rest.
 */
function mergeCollection(
  kind: StoredKind,
  base: ReadonlyMap<string, Resource>,
  main: ReadonlyMap<string, Resource>,
  draft: ReadonlyMap<string, Resource>,
  settle: Map<string, 'main' | 'draft'>,
  conflicts: MergeConflict[],
): ReadonlyMap<string, Resource> {
  if (draft === base || draft === main) return main;
  if (main === base) return draft;
  const result = new Map<string, Resource>();
  let differsFromMain = false;
  const ids = new Set([...main.keys(), ...draft.keys(), ...base.keys()]);
  for (const id of [...ids].sort()) {
    const m = main.get(id);
    const resource = mergeResource(kind, id, base.get(id), m, draft.get(id), settle, conflicts);
    if (resource !== m) differsFromMain = true;
    if (resource !== undefined) result.set(id, resource);
  }
  return differsFromMain ? result : main;
}

function mergeResource(
  kind: MergeKind,
  id: string,
  base: Resource | undefined,
  main: Resource | undefined,
  draft: Resource | undefined,
  settle: Map<string, 'main' | 'draft'>,
  conflicts: MergeConflict[],
): Resource | undefined {
  if (same(main, base)) return draft;
  if (same(draft, base) || same(main, draft)) return main;
  const name = (draft?.name ?? main?.name ?? base?.name ?? null) as string | null;
  if (main === undefined || draft === undefined) {
    const take = settle.get(resolutionKey(kind, id, WHOLE));
    if (take !== undefined) return take === 'main' ? main : draft;
    conflicts.push({ kind, id, name, field: WHOLE, base: base ?? null, main: main ?? null, draft: draft ?? null });
    return main;
  }
  const conflict = (field: string, b: unknown, m: unknown, d: unknown): unknown => {
    const take = settle.get(resolutionKey(kind, id, field));
    if (take !== undefined) return take === 'main' ? m : d;
    conflicts.push({ kind, id, name, field, base: b ?? null, main: m ?? null, draft: d ?? null });
    return m;
  };
  return mergeFields(base ?? {}, main, draft, '', conflict, true) as Resource;
}

type OnConflict = (field: string, base: unknown, main: unknown, draft: unknown) => unknown;

/** Field by field; `nested`: lists of things with ids are merged item by item (one level down only). */
function mergeFields(
  base: Record<string, unknown>,
  main: Record<string, unknown>,
  draft: Record<string, unknown>,
  path: string,
  conflict: OnConflict,
  nested: boolean,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  // The draft's order of fields, then any only main has: files are written in a fixed order anyway.
  for (const key of new Set([...Object.keys(draft), ...Object.keys(main), ...Object.keys(base)])) {
    const b = base[key];
    const m = main[key];
    const d = draft[key];
    const field = path + key;
    // `apiContext` is when (and by what) a resource was last written, defaulted to the time of
    // the write: both sides writing one resource is no disagreement about it; the later stands.
    // Two labels a client gave (`import #42`) say no time: a conflict, as any field's (CONTRACT §4).
    const later = key === 'apiContext' && path === '' ? laterApiContext(m, d) : undefined;
    let value: unknown;
    if (same(m, b)) value = d;
    else if (same(d, b) || same(m, d)) value = m;
    else if (later !== undefined) value = later;
    else if (nested && isIdList(b ?? []) && isIdList(m ?? []) && isIdList(d ?? [])) {
      value = mergeIdLists((b ?? []) as Resource[], (m ?? []) as Resource[], (d ?? []) as Resource[], `${field}.`, conflict);
    } else value = conflict(field, b, m, d);
    if (value !== undefined) result[key] = value;
  }
  return result;
}

/**
 * Of two `apiContext` values that are both times, the later (compared as times, not as text: an
 * offset or a `T` would sort wrong); undefined when either is no time. One instant spelt two
 * ways: the greater text, so that which side is called main does not matter.
 */
function laterApiContext(main: unknown, draft: unknown): string | undefined {
  if (typeof main !== 'string' || typeof draft !== 'string') return undefined;
  const [m, d] = [apiContextTime(main), apiContextTime(draft)];
  if (m === undefined || d === undefined) return undefined;
  if (m !== d) return m > d ? main : draft;
  return main > draft ? main : draft;
}

/**
 * An `apiContext` as a time (ms since the epoch): the service's default `YYYY-MM-DD HH:MM:SS`
 * (UTC), or ISO 8601 with `T`, a fraction, `Z` or an offset (no zone: UTC, as the default is);
 * undefined for anything else, such as a label a client gave.
 */
function apiContextTime(value: string): number | undefined {
  const parts = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)(Z|[+-]\d{2}:\d{2})?$/.exec(value);
  if (parts === null) return undefined;
  const time = Date.parse(`${parts[1]}T${parts[2]}${parts[3] ?? 'Z'}`);
  return Number.isNaN(time) ? undefined : time;
}

function mergeIdLists(base: Resource[], main: Resource[], draft: Resource[], path: string, conflict: OnConflict): Resource[] {
  const byId = (items: Resource[]) => new Map(items.map((item) => [item.id, item]));
  const [b, m, d] = [byId(base), byId(main), byId(draft)];
  // The draft's order, then what only main has, in main's order.
  const order = [...new Set([...d.keys(), ...m.keys(), ...b.keys()])];
  const result: Resource[] = [];
  for (const id of order) {
    const [bi, mi, di] = [b.get(id), m.get(id), d.get(id)];
    let item: unknown;
    if (same(mi, bi)) item = di;
    else if (same(di, bi) || same(mi, di)) item = mi;
    else if (mi === undefined || di === undefined) item = conflict(`${path}${id}`, bi, mi, di);
    else item = mergeFields(bi ?? {}, mi, di, `${path}${id}.`, conflict, false);
    if (item !== undefined && item !== null) result.push(item as Resource);
  }
  return result;
}

function isIdList(value: unknown): value is Resource[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'object' && item !== null && typeof item.id === 'string');
}

/** Equal as stored: a field present as `undefined` is the same as one that is absent. */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => same(item, other[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const key of keys) if (!same(x[key], y[key])) return false;
  return true;
}
