import { ModelError } from '../../errors.js';
import { checkDiagramSize, DEFAULT_LIMITS } from '../../limits/limits.js';
import { eitherSpelling } from '../fields.js';
import { type DiagramInput, POSITION_LIMIT } from '../schemas.js';
import type { ComponentInstance, Diagram, Level, Position, Relation, TextArea } from '../types.js';
import type { Draft, Target } from '../draft.js';
import { layoutDiagram, needsLayout, type LayoutInput } from '../../layout/layout.js';
import { distinct, type References } from './references.js';
import { nextTurn } from './turns.js';

/** A diagram as written: the seed's DiagramInput, or the current form's (whose level may be null). */
export type DiagramWrite = Omit<DiagramInput, 'level'> & { level: Level | null };

/** The current form's own fields of a diagram's elements. */
export interface DiagramExtras {
  /** Per component instance, in request order: the placeholder's type id (null: none). */
  instanceTypeIds: Array<string | null>;
  /**
   * The relations are the stored ones, kept by a partial update that sent instances and no
   * relations: those whose ends are no longer among the instances go.
   */
  storedRelations?: boolean;
}

interface Nested {
  id: string;
  ref?: string;
}

/** How a stored element and a sent one are compared when the sent one has neither id nor ref. */
interface Likeness<T, I> {
  stored: (element: T) => string;
  input: (input: I, index: number) => string;
}

/**
 * Nested elements are replaced by what the request sends; one sent back with its id, or with
 * the ref of an element already in the diagram, keeps its id (and its layout). One sent with
 * neither keeps the id of a stored element without ref whose content it repeats (`same`), so
 * that re-posting an unchanged diagram changes nothing; failing that, of one left unmatched that
 * it resembles (`near`: a relation between the same two instances whose label was edited is
 * still that relation); otherwise it gets a new id.
 */
function matchNested<T extends Nested, I extends { id?: string; ref?: string }>(
  stored: readonly T[],
  inputs: readonly I[],
  what: string,
  newId: () => string,
  same: Likeness<T, I>,
  near?: Likeness<T, I>,
): Array<{ id: string; existing: T | undefined }> {
  const byId = new Map(stored.map((e) => [e.id, e]));
  const byRef = new Map(stored.filter((e) => e.ref !== undefined).map((e) => [e.ref!, e]));
  const unnamed = stored.filter((e) => e.ref === undefined);
  const claimed = new Set(inputs.map((input) => input.id).filter((id) => id !== undefined));
  // Elements without ref by likeness key, in stored order; `next` skips those already claimed.
  const buckets = new Map<Likeness<T, I>, Map<string, { items: T[]; next: number }>>();
  const bucketsOf = (likeness: Likeness<T, I>) => {
    let byKey = buckets.get(likeness);
    if (byKey === undefined) {
      byKey = new Map();
      for (const element of unnamed) {
        const key = likeness.stored(element);
        const bucket = byKey.get(key);
        if (bucket) bucket.items.push(element);
        else byKey.set(key, { items: [element], next: 0 });
      }
      buckets.set(likeness, byKey);
    }
    return byKey;
  };
  /** The first unclaimed element without ref that `likeness` finds equal to input `index`, claimed. */
  const claim = (likeness: Likeness<T, I>, input: I, index: number): T | undefined => {
    const bucket = bucketsOf(likeness).get(likeness.input(input, index));
    while (bucket !== undefined && bucket.next < bucket.items.length) {
      const element = bucket.items[bucket.next++]!;
      if (!claimed.has(element.id)) {
        claimed.add(element.id);
        return element;
      }
    }
    return undefined;
  };
  const seenRefs = new Set<string>();
  const matched = inputs.map((input, index) => {
    let existing: T | undefined;
    if (input.id !== undefined) {
      existing = byId.get(input.id);
      if (!existing) throw new ModelError(`${what} with id '${input.id}' does not exist in this diagram.`);
    } else if (input.ref !== undefined) {
      existing = byRef.get(input.ref);
    } else {
      existing = claim(same, input, index);
    }
    if (input.ref !== undefined) {
      if (seenRefs.has(input.ref)) throw new ModelError(`Ref '${input.ref}' is used more than once.`);
      seenRefs.add(input.ref);
    }
    return existing;
  });
  // Only once every exact repetition has its element may a resemblance take one.
  if (near) {
    inputs.forEach((input, index) => {
      if (matched[index] === undefined && input.id === undefined && input.ref === undefined) matched[index] = claim(near, input, index);
    });
  }
  const seenIds = new Set<string>();
  return matched.map((existing) => {
    const id = existing?.id ?? newId();
    if (seenIds.has(id)) throw new ModelError(`${what} with id '${id}' is given more than once.`);
    seenIds.add(id);
    return { id, existing };
  });
}

/** `parent` and `parentId` are two spellings of one field; if both are sent they must agree. */
function parentOf(input: { parent?: string | null; parentId?: string | null }): string | null {
  return eitherSpelling('', ['parent', 'parentId'], input.parent, input.parentId) ?? null;
}

interface Pending<T> {
  element: T;
  /** The request itself gave a width or height (not merely kept from the stored diagram). */
  sizeGiven?: boolean;
  position?: Position;
  width?: number;
  height?: number;
}

export async function buildDiagram(
  draft: Draft,
  input: DiagramWrite,
  target: Target,
  components: References,
  diagrams: References,
  extras?: DiagramExtras,
): Promise<Diagram> {
  const stored = target.existing as Diagram | undefined;
  const keepLayout = draft.options.layout === 'keep';
  const newId = draft.options.newId;
  const instanceInputs = input.componentInstances ?? [];
  const textareaInputs = input.textareas ?? [];
  const sentRelations = input.relations ?? [];
  checkDiagramSize(
    input.name ?? input.ref ?? target.id,
    {
      instances: instanceInputs.length,
      relations: sentRelations.length,
      textareas: textareaInputs.length,
    },
    draft.options.limits ?? DEFAULT_LIMITS,
  );

  const componentOf = (i: { component?: string | null; componentId?: string | null }) => {
    // Two spellings, each naming the component by id or by ref: they agree when they name the same one.
    const { componentId, component } = i;
    if (componentId !== undefined && component !== undefined && componentId !== component) {
      const same = componentId !== null && component !== null && sameComponent(componentId, component);
      if (!same) eitherSpelling('', ['componentId', 'component'], componentId, component);
    }
    const name = componentId !== undefined ? componentId : component;
    return name == null ? null : components.resolve(name);
  };
  function sameComponent(a: string, b: string): boolean {
    try {
      return components.resolve(a) === components.resolve(b);
    } catch {
      return false;
    }
  }
  const instanceTargets = matchNested(stored?.componentInstances ?? [], instanceInputs, 'Component instance', newId, {
    stored: (i) => JSON.stringify([i.component, i.placeholder, i.isContainer]),
    input: (i) => JSON.stringify([componentOf(i), i.placeholder ?? '', i.isContainer ?? false]),
  });
  // Stored relations kept by a partial update name their ends by stored id: they stay while both
  // ends do, however the instance was sent (by id, by ref, or again unchanged without either).
  const keptInstances = new Set(instanceTargets.filter((target) => target.existing !== undefined).map((target) => target.id));
  const relationInputs = extras?.storedRelations
    ? sentRelations.filter((r) => keptInstances.has(r.fromComponentInstance) && keptInstances.has(r.toComponentInstance))
    : sentRelations;
  const instanceNames = new Map<string, string>();
  const containers = new Set<string>();
  instanceInputs.forEach((i, n) => {
    instanceNames.set(instanceTargets[n].id, instanceTargets[n].id);
    if (i.ref !== undefined) instanceNames.set(i.ref, instanceTargets[n].id);
    if (i.isContainer) containers.add(instanceTargets[n].id);
  });

  const instances: Pending<ComponentInstance>[] = instanceInputs.map((i, n) => {
    const { id, existing } = instanceTargets[n];
    const isContainer = i.isContainer ?? false;
    const parentName = parentOf(i);
    let parent: string | null = null;
    if (parentName !== null) {
      if (isContainer) throw new ModelError(`Container instance '${i.ref ?? id}' cannot have a parent.`);
      // Checked here, not only by checkDiagram, so that the message names the parent as sent.
      parent = instanceNames.get(parentName) ?? null;
      if (parent === null || !containers.has(parent)) {
        throw new ModelError(`Parent '${parentName}' is not a container instance of this diagram.`);
      }
    }
    // An instance moved to another container (or out of one) without a position of its own is
    // laid out anew there, like a new child; its kept position belongs to where it was.
    const moved = existing !== undefined && existing.parent !== parent;
    const kept = keepLayout ? existing : undefined;
    return {
      element: {
        id,
        ref: i.ref,
        component: componentOf(i),
        placeholder: i.placeholder ?? '',
        // The seed's forms cannot name a placeholder's type: they keep the stored one.
        typeId: (extras ? extras.instanceTypeIds[n] : existing?.typeId) ?? undefined,
        isContainer,
        parent,
        position: { x: 0, y: 0 },
        width: 0,
        height: 0,
      },
      sizeGiven: i.width !== undefined || i.height !== undefined,
      position: i.position ?? (moved ? undefined : kept?.position),
      width: i.width ?? kept?.width,
      height: i.height ?? kept?.height,
    };
  });

  await nextTurn(draft, instanceInputs.length);
  const textareaTargets = matchNested(stored?.textareas ?? [], textareaInputs, 'Text area', newId, {
    stored: (t) => t.text,
    input: (t) => t.text ?? '',
  });
  const textareas: Pending<TextArea>[] = textareaInputs.map((t, n) => {
    const { id, existing } = textareaTargets[n];
    const kept = keepLayout ? existing : undefined;
    return {
      element: { id, ref: t.ref, position: { x: 0, y: 0 }, width: 0, text: t.text ?? '' },
      position: t.position ?? kept?.position,
      width: t.width ?? kept?.width,
    };
  });

  const instanceEnd = (name: string) => {
    const id = instanceNames.get(name);
    if (id === undefined) throw new ModelError(`Component instance '${name}' does not exist in this diagram.`);
    return id;
  };
  await nextTurn(draft, textareaInputs.length);
  const relationContents = relationInputs.map((r) => ({
    fromComponentInstance: instanceEnd(r.fromComponentInstance),
    toComponentInstance: instanceEnd(r.toComponentInstance),
    label: r.label ?? null,
    desc: r.desc ?? null,
    linksTo: distinct(
      (r.linksTo ?? []).map((name) => diagrams.resolve(name)),
      (id) => `Diagram with id '${id}' is given more than once in linksTo.`,
    ),
  }));
  const relationKey = (r: Omit<Relation, 'id'>) =>
    JSON.stringify([r.fromComponentInstance, r.toComponentInstance, r.label, r.desc, r.linksTo]);
  const relationEnds = (r: Omit<Relation, 'id'>) => JSON.stringify([r.fromComponentInstance, r.toComponentInstance]);
  const relationTargets = matchNested(
    stored?.relations ?? [],
    relationInputs,
    'Relation',
    newId,
    { stored: relationKey, input: (_, n) => relationKey(relationContents[n]) },
    { stored: relationEnds, input: (_, n) => relationEnds(relationContents[n]) },
  );
  const relations: Relation[] = relationInputs.map((r, n) => ({
    id: relationTargets[n].id,
    ref: r.ref,
    ...relationContents[n],
  }));

  await nextTurn(draft, relationInputs.length);
  await placeElements(draft, instances, textareas, relations);
  await nextTurn(draft, instanceInputs.length + relationInputs.length);

  return {
    id: target.id,
    ref: input.ref,
    name: input.name,
    desc: input.desc ?? null,
    state: input.state ?? 'DRAFT',
    level: input.level,
    tags: distinct(
      (input.tags ?? []).map((t) => t.id),
      (id) => `Tag with id '${id}' is given more than once.`,
    ),
    componentInstances: instances.map((p) => p.element),
    textareas: textareas.map((p) => p.element),
    relations,
    apiContext: input.apiContext ?? draft.options.apiContext,
  };
}

/** Fills in every position and size the request and the stored diagram leave open. */
async function placeElements(
  draft: Draft,
  instances: Pending<ComponentInstance>[],
  textareas: Pending<TextArea>[],
  relations: Relation[],
): Promise<void> {
  // A container whose kept size the request did not give grows from it to take in its new
  // children (it never shrinks below it: a boundary sized by hand stays at least that large).
  const receivingNewChildren = new Set(instances.filter((p) => p.position === undefined).map((p) => p.element.parent));
  const grows = (p: Pending<ComponentInstance>) => p.element.isContainer && !p.sizeGiven && receivingNewChildren.has(p.element.id);
  const layoutInput: LayoutInput = {
    instances: instances.map((p) => ({
      id: p.element.id,
      parent: p.element.parent,
      isContainer: p.element.isContainer,
      label: (p.element.component !== null ? draft.model.components.get(p.element.component)?.name : undefined) ?? p.element.placeholder,
      position: p.position,
      ...(grows(p) ? { minWidth: p.width, minHeight: p.height } : { width: p.width, height: p.height }),
    })),
    textareas: textareas.map(({ element, position, width }) => ({ id: element.id, text: element.text, position, width })),
    relations: relations.map((r) => ({ from: r.fromComponentInstance, to: r.toComponentInstance })),
  };
  if (needsLayout(layoutInput)) {
    const result = await (draft.options.runLayout ?? layoutDiagram)(layoutInput);
    for (const pending of instances) Object.assign(pending, result.instances.get(pending.element.id));
    for (const pending of textareas) Object.assign(pending, result.textareas.get(pending.element.id));
  }
  for (const { element, position, width, height } of instances) {
    element.position = withinBounds(position!);
    element.width = width!;
    element.height = height!;
  }
  for (const { element, position, width } of textareas) {
    element.position = withinBounds(position!);
    element.width = width!;
  }
}

/**
 * A position within what a request may send (±POSITION_LIMIT): placed beside a box at the edge,
 * a new one would lie beyond it, and the diagram could not be read and written back unchanged.
 */
function withinBounds({ x, y }: Position): Position {
  const bound = (n: number) => Math.max(-POSITION_LIMIT, Math.min(POSITION_LIMIT, n));
  return { x: bound(x), y: bound(y) };
}
