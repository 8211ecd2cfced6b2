import Type, { type TSchema } from 'typebox';
import { ApiError, ModelError } from '../../errors.js';
import { checkBody } from '../check-body.js';
import { asCurrentInput, attributeFromCurrent, componentFromCurrent, diagramFromCurrent } from '../current-form/normalize.js';
import {
  CURRENT_SCHEMAS,
  CURRENT_UPDATE_SCHEMAS,
  type CurrentComponent,
  type CurrentDiagram,
  type WritableKind,
} from '../current-form/schemas.js';
import { kindName, refIndex, type Draft, type Identified, type Target } from '../draft.js';
import { collectionOf, type StoredKind } from '../files.js';
import { CLIENT_ID_RULE, clientIdProblem } from '../ids.js';
import type { AttributeInput, TagInput } from '../schemas.js';
import type { Attribute, Component, Diagram, Tag } from '../types.js';
import { writeAttributesResolved } from './attributes.js';
import { writeResolved } from './model.js';
import { writeTagsResolved } from './tags.js';

/**
 * Writes of the current form of the API: single create with a client-chosen id, PATCH,
 * upsert-batch and template. Each decides which resource an element writes and merges a
 * partial element into the stored one; the result is checked against the current form's
 * schema (so a PATCH fails exactly as a full write would) and built by the same builders and
 * rules as every other write (writeResolved, writeTagsResolved, writeAttributesResolved).
 *
 * - `create`: a new resource; a given `id` is the client's choice (409 if taken).
 * - `upsert` (upsert-batch, template, PATCH): with an `id` the resource of that id, updated
 *   partially, or created with that id when there is none; with a `ref` held by a stored
 *   resource, that one; otherwise created.
 */
export type Mode = 'create' | 'upsert';

/**
 * What decides which resource an element writes: its id and ref, as the element's schema has
 * them. The id rule the schema states is checkNewId's to apply (wordedByWrite), to an id that
 * names nothing yet, with the texts of docs/api.md §13.
 */
const ELEMENT_KEYS = Object.fromEntries(
  Object.entries(CURRENT_UPDATE_SCHEMAS).map(([kind, schema]) => [kind, Type.Pick(schema, ['id', 'ref'])]),
) as unknown as Record<WritableKind, TSchema>;

export type Written = Tag | Attribute | Component | Diagram;

interface Planned {
  kind: WritableKind;
  target: Target;
  /** The element as the request sent it, merged into the stored resource for an update. */
  merged: Record<string, unknown>;
  /**
   * A diagram update that sends instances and no relations: its relations are the stored ones,
   * and those whose ends are no longer among the instances go (write/diagrams.ts).
   */
  storedRelations?: boolean;
}

/** Refuses an id a client may not choose, or one the organization already has (in any kind). */
export function checkNewId(draft: Draft, kind: StoredKind, id: string, taken: ReadonlySet<string>): void {
  const problem = clientIdProblem(id);
  if (problem === 'rule' || problem === 'reserved') {
    throw new ModelError(`Invalid id '${id}': ${CLIENT_ID_RULE}${problem === 'reserved' ? `; '${id}' is reserved` : ''}.`);
  }
  if (problem === 'device')
    throw new ModelError(`Invalid id '${id}': '${id.split('.')[0]}' names a device on Windows, so no clone there could hold its file.`);
  const kinds: StoredKind[] = ['type', 'tag', 'attribute', 'component', 'diagram'];
  const holder = kinds.find((k) => collectionOf(draft.base, k).has(id));
  if (taken.has(id) || holder === kind) throw new ApiError(409, `${kindName(kind)} with id '${id}' already exists.`);
  if (holder !== undefined)
    throw new ApiError(
      409,
      `${kindName(kind)} with id '${id}' already exists: the ${holder} '${id}' has this id, and ids are unique across the organization.`,
    );
}

/**
 * `stored` with the fields `patch` sends: `null` clears, an array replaces. Only fields of
 * the current form's schema are taken, so unknown fields never reach the model.
 */
export function mergePatch(kind: WritableKind, stored: Identified, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = (asCurrentInput[kind] as (r: Identified) => Record<string, unknown>)(stored);
  const known = Object.keys((CURRENT_SCHEMAS[kind] as unknown as { properties: Record<string, unknown> }).properties);
  for (const key of known) {
    if (key === 'id' || patch[key] === undefined) continue;
    merged[key] = patch[key];
  }
  // A list belongs to a LIST attribute: made another type, it leaves its stored list behind.
  if (kind === 'attribute' && patch.type !== undefined && patch.type !== 'LIST' && patch.list === undefined) delete merged.list;
  // The type is named by id or by slug: naming it one way replaces both.
  if (kind === 'component' && (patch.typeId !== undefined || patch.typeSlug !== undefined)) {
    merged.typeId = patch.typeId;
    merged.typeSlug = patch.typeSlug;
  }
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  if (merged.ref === null) delete merged.ref;
  return merged;
}

/**
 * Decides the target of each element of one kind and merges updates. `path(i)` is how the
 * body names element i in error texts (`` for a single object, `0.`, `components.0.`).
 */
function plan(draft: Draft, kind: WritableKind, elements: unknown[], mode: Mode, taken: Set<string>): Planned[] {
  const stored = collectionOf(draft.base, kind) as ReadonlyMap<string, Identified>;
  const byRef = refIndex(stored);
  const seen = new Set<string>();
  return elements.map((element) => {
    const raw = element as Record<string, unknown>;
    const id = raw.id as string | undefined;
    // `ref: null` removes a ref (mergePatch); it names no resource.
    const ref = (raw.ref ?? undefined) as string | undefined;
    let existing: Identified | undefined;
    if (id !== undefined) {
      if (seen.has(id)) throw new ModelError(`${kindName(kind)} with id '${id}' is given more than once.`);
      existing = stored.get(id);
      if (mode === 'create' || !existing) {
        checkNewId(draft, kind, id, taken);
        existing = undefined;
        taken.add(id);
      }
    } else if (ref !== undefined) {
      const holder = byRef.get(ref);
      if (holder !== undefined && mode === 'create')
        throw new ApiError(409, `${kindName(kind)} with ref '${ref}' already exists (id '${holder}').`);
      existing = holder === undefined ? undefined : stored.get(holder);
    }
    const targetId = existing?.id ?? id ?? draft.options.newId();
    if (seen.has(targetId)) {
      throw new ModelError(
        id !== undefined ? `${kindName(kind)} with id '${targetId}' is given more than once.` : `Ref '${ref}' is used more than once.`,
      );
    }
    seen.add(targetId);
    const storedRelations =
      existing !== undefined && kind === 'diagram' && raw.componentInstances !== undefined && raw.relations === undefined;
    return { kind, target: { id: targetId, existing }, merged: existing ? mergePatch(kind, existing, raw) : stripId(raw), storedRelations };
  });
}

function stripId(raw: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, ...rest } = raw;
  if (rest.ref === null) delete rest.ref;
  return rest;
}

/** A ref the request sets must not stay on a stored resource the request leaves alone. */
function checkRefs(draft: Draft, kind: WritableKind, planned: Planned[]): void {
  const byRef = refIndex(collectionOf(draft.base, kind) as ReadonlyMap<string, Identified>);
  const targets = new Set(planned.map((p) => p.target.id));
  const seen = new Set<string>();
  for (const { merged } of planned) {
    const ref = merged.ref;
    if (typeof ref !== 'string') continue;
    const holder = byRef.get(ref);
    if (seen.has(ref) || (holder !== undefined && !targets.has(holder))) throw new ModelError(`Ref '${ref}' is used more than once.`);
    seen.add(ref);
  }
}

export interface CurrentRequest {
  tags?: unknown[];
  attributes?: unknown[];
  components?: unknown[];
  diagrams?: unknown[];
}

export interface CurrentResult {
  tags: Tag[];
  attributes: Attribute[];
  components: Component[];
  diagrams: Diagram[];
}

const PLURAL = { tag: 'tags', attribute: 'attributes', component: 'components', diagram: 'diagrams' } as const;

/**
 * One write of the current form. `shape` says how the body held its elements, for error
 * paths: `single` (one object), `array` (upsert-batch) or `template` ({components, diagrams}).
 */
export async function writeCurrent(
  draft: Draft,
  request: CurrentRequest,
  mode: Mode,
  shape: 'single' | 'array' | 'template',
): Promise<CurrentResult> {
  const kinds = (['tag', 'attribute', 'component', 'diagram'] as const).filter((k) => request[PLURAL[k]] !== undefined);
  const bodyOf = (byKind: Partial<Record<WritableKind, unknown[]>>): unknown => {
    // Only an omitted list is empty: one given as null is checked as sent, and refused (as /model refuses it).
    const listOf = (kind: WritableKind) => (byKind[kind] === undefined ? [] : byKind[kind]);
    if (shape === 'template') return { components: listOf('component'), diagrams: listOf('diagram') };
    const only = byKind[kinds[0]] ?? [];
    return shape === 'single' ? only[0] : only;
  };
  const schemaOf = (element: (k: WritableKind) => TSchema): TSchema => {
    if (shape === 'template')
      return Type.Object({ components: Type.Array(element('component')), diagrams: Type.Array(element('diagram')) });
    return shape === 'single' ? element(kinds[0]) : Type.Array(element(kinds[0]));
  };
  const pathOf = (kind: WritableKind, i: number) => (shape === 'template' ? `${PLURAL[kind]}.${i}.` : shape === 'array' ? `${i}.` : '');

  // The id and ref of every element first: they decide what the element writes.
  checkBody(
    schemaOf((k) => ELEMENT_KEYS[k]),
    bodyOf(Object.fromEntries(kinds.map((k) => [k, request[PLURAL[k]]]))),
  );
  const taken = new Set<string>();
  const planned = Object.fromEntries(kinds.map((k) => [k, plan(draft, k, request[PLURAL[k]]!, mode, taken)])) as Partial<
    Record<WritableKind, Planned[]>
  >;
  // Then the whole of every element, merged: one message lists every failure, as for a full write.
  const checked = checkBody(
    schemaOf((k) => CURRENT_SCHEMAS[k]),
    bodyOf(Object.fromEntries(kinds.map((k) => [k, planned[k]!.map((p) => p.merged)]))),
  ) as unknown;
  const checkedOf = (kind: WritableKind): Array<Record<string, unknown>> => {
    if (shape === 'template') return (checked as Record<string, Array<Record<string, unknown>>>)[PLURAL[kind]];
    return shape === 'single' ? [checked as Record<string, unknown>] : (checked as Array<Record<string, unknown>>);
  };
  for (const kind of kinds) checkRefs(draft, kind, planned[kind]!);

  const result: CurrentResult = { tags: [], attributes: [], components: [], diagrams: [] };
  if (planned.tag) {
    result.tags = writeTagsResolved(
      draft,
      planned.tag.map((p, i) => ({ input: checkedOf('tag')[i] as TagInput, target: p.target })),
    );
  }
  if (planned.attribute) {
    result.attributes = writeAttributesResolved(
      draft,
      planned.attribute.map((p, i) => ({
        input: attributeFromCurrent(checkedOf('attribute')[i] as AttributeInput, draft.model),
        target: p.target,
      })),
      shape === 'single',
    );
  }
  if (planned.component || planned.diagram) {
    const components = (planned.component ?? []).map((p, i) => ({
      target: p.target,
      ...componentFromCurrent(checkedOf('component')[i] as CurrentComponent, p.target.existing as Component | undefined),
    }));
    const diagrams = (planned.diagram ?? []).map((p, i) => {
      const { input, extras } = diagramFromCurrent(checkedOf('diagram')[i] as CurrentDiagram, pathOf('diagram', i));
      return { target: p.target, input, extras: { ...extras, storedRelations: p.storedRelations } };
    });
    const written = await writeResolved(draft, components, diagrams, shape === 'template' ? 'components.' : shape === 'array' ? '' : null);
    result.components = written.components;
    result.diagrams = written.diagrams;
  }
  return result;
}
