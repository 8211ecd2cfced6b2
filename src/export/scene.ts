import { type C4Shape, c4OfSlug, isExternalTag } from '../model/c4-kinds.js';
import type { Component, ComponentInstance, Diagram, Level, Model } from '../model/types.js';

/**
 * What every export format draws, worked out once from the model: elements with an identifier
 * safe in every format, nested as the diagrams nest them (see `nest`), relations between them,
 * and views (a diagram's instances as a tree of boundaries and boxes, its relations, its text
 * areas). Each format then only spells this out.
 */

export type ElementKind = 'person' | 'system' | 'container' | 'component' | 'database' | 'queue' | 'placeholder';

export interface SceneElement {
  /** `[A-Za-z][A-Za-z0-9_]*`: an identifier in Structurizr, PlantUML, Mermaid and LikeC4 alike. */
  key: string;
  name: string;
  desc: string | null;
  kind: ElementKind;
  /** The c4store type's name. */
  typeName: string | null;
  /** The value of the component's attribute named Technology (any case), if it has one. */
  technology: string | null;
  /** Names of the component's tags. */
  tags: string[];
  archived: boolean;
  /** Outside the system described: its type's slug starts with `external`, or it is tagged `External` (as the drawing greys it). */
  external: boolean;
  /** The key of the element that encloses this one in the model, if any (see `nest`). */
  parent: string | null;
}

export interface SceneRelation {
  from: string;
  to: string;
  label: string | null;
  desc: string | null;
  /** Keys of the views (diagrams) that draw this relation; empty for one known from `linksTo` only. */
  views: string[];
}

export interface ViewNode {
  element: SceneElement;
  /** Drawn as a boundary around its children (a container instance). */
  boundary: boolean;
  children: ViewNode[];
}

export interface SceneView {
  key: string;
  title: string;
  desc: string | null;
  level: Level | null;
  /** Names of the diagram's tags. */
  tags: string[];
  archived: boolean;
  nodes: ViewNode[];
  /** Exactly the relations the diagram draws (one per from, to and label). */
  relations: SceneRelation[];
  /** The diagram's text areas, in their order. */
  notes: string[];
}

export interface Scene {
  name: string;
  desc: string | null;
  /** Parents before their children. */
  elements: SceneElement[];
  relations: SceneRelation[];
  views: SceneView[];
  /** Every tag name used by an element or a view, once each. */
  tags: string[];
}

/**
 * A line break in any of its forms: CR LF, CR, LF, and the Unicode ones (NEL U+0085, LINE
 * SEPARATOR U+2028, PARAGRAPH SEPARATOR U+2029) that some tools split lines on and others
 * refuse. Every format writes each of them as its own line break.
 */
export const LINE_BREAK = /\r\n?|[\n\u0085\u2028\u2029]/g;

/** The element kind of each shape a type's slug names (src/model/c4-kinds.ts, the drawing's rule); other types are systems. */
const KIND_OF_SHAPE: Record<C4Shape, ElementKind> = {
  person: 'person',
  'software-system': 'system',
  container: 'container',
  component: 'component',
  database: 'database',
  queue: 'queue',
};

/**
 * How far down the C4 levels a kind sits: a system encloses containers (databases and queues are
 * containers too), a container encloses components. People neither enclose nor are enclosed.
 * A placeholder sits one level below whatever encloses it.
 */
const RANK: Record<Exclude<ElementKind, 'person' | 'placeholder'>, number> = {
  system: 1,
  container: 2,
  database: 2,
  queue: 2,
  component: 3,
};

/**
 * An identifier from a c4store id, one to one: ids may hold `.`, `-` and `_` (client-chosen ids
 * of the newer API form), which become `_d`, `_h` and `__`, so two ids never meet in one key.
 */
export function keyOf(prefix: 'c' | 'p' | 'v', id: string): string {
  return `${prefix}_${id.replace(/[^A-Za-z0-9]/g, (c) => (c === '_' ? '__' : c === '.' ? '_d' : c === '-' ? '_h' : `_${c.charCodeAt(0)}_`))}`;
}

/** The model's lookups an export needs, made once per scene. */
class Lookup {
  readonly technologyAttributes: string[];

  constructor(readonly model: Model) {
    this.technologyAttributes = [];
    for (const attribute of model.attributes.values()) {
      if (attribute.name.trim().toLowerCase() === 'technology') this.technologyAttributes.push(attribute.id);
    }
  }

  tagNames(ids: readonly string[] | undefined): string[] {
    const names: string[] = [];
    for (const id of ids ?? []) {
      const tag = this.model.tags.get(id);
      if (tag !== undefined && !names.includes(tag.name)) names.push(tag.name);
    }
    return names;
  }

  technologyOf(component: Component): string | null {
    for (const id of this.technologyAttributes) {
      const value = component.attributes.find((a) => a.id === id)?.value;
      if (value !== null && value !== undefined && String(value).trim() !== '') return String(value);
    }
    return null;
  }

  componentElement(id: string): SceneElement | undefined {
    const component = this.model.components.get(id);
    if (component === undefined) return undefined;
    const type = component.typeId === null ? undefined : this.model.types.get(component.typeId);
    const c4 = c4OfSlug(type?.slug ?? '');
    const tags = this.tagNames(component.tags);
    return {
      key: keyOf('c', id),
      name: component.name,
      desc: component.desc,
      kind: c4.shape === null ? 'system' : KIND_OF_SHAPE[c4.shape],
      typeName: type?.name ?? null,
      technology: this.technologyOf(component),
      tags,
      archived: component.state === 'ARCHIVED',
      external: c4.external || tags.some(isExternalTag),
      parent: null,
    };
  }

  instanceElement(instance: ComponentInstance): SceneElement {
    const element = instance.component === null ? undefined : this.componentElement(instance.component);
    if (element !== undefined) return element;
    const type = instance.typeId === undefined ? undefined : this.model.types.get(instance.typeId);
    return {
      key: keyOf('p', instance.id),
      name: instance.placeholder === '' ? 'Placeholder' : instance.placeholder,
      desc: null,
      kind: 'placeholder',
      typeName: type?.name ?? null,
      technology: null,
      tags: [],
      archived: false,
      external: false,
      parent: null,
    };
  }
}

/**
 * The model's nesting, worked out from the diagrams: an element drawn inside a container instance
 * is enclosed by that instance's element when the enclosing one sits higher in the C4 levels
 * (`RANK`: a system encloses containers, databases, queues and components; a container encloses
 * components; a component encloses only placeholders). An element takes the first such parent it
 * gets, diagrams in id order and instances in their order; later diagrams that draw it elsewhere
 * do not move it. Ranks only grow downwards, so no element can enclose itself.
 */
class Nesting {
  private readonly rankOf = new Map<string, number>();

  rank(element: SceneElement): number | undefined {
    if (element.kind === 'person') return undefined;
    if (element.kind === 'placeholder') return this.rankOf.get(element.key) ?? 1;
    return RANK[element.kind];
  }

  /** Offers `parent` as the enclosure of `child`; takes it if the rule allows. */
  offer(child: SceneElement, parent: SceneElement): void {
    if (child.parent !== null || child === parent || child.key === parent.key) return;
    const parentRank = this.rank(parent);
    if (parentRank === undefined || child.kind === 'person') return;
    if (child.kind === 'placeholder') {
      if (this.rankOf.has(child.key)) return;
      this.rankOf.set(child.key, parentRank + 1);
    } else if ((this.rank(child) as number) <= parentRank) {
      return;
    }
    child.parent = parent.key;
  }
}

/** Relations keep their first occurrence of each (from, to, label): tools refuse or double duplicates. */
function addRelation(relations: SceneRelation[], seen: Map<string, SceneRelation>, relation: SceneRelation): SceneRelation {
  const identity = JSON.stringify([relation.from, relation.to, relation.label ?? '']);
  const earlier = seen.get(identity);
  if (earlier !== undefined) {
    for (const view of relation.views) if (!earlier.views.includes(view)) earlier.views.push(view);
    return earlier;
  }
  seen.set(identity, relation);
  relations.push(relation);
  return relation;
}

/**
 * A diagram as a view. An instance of a component already drawn in the same view adds no second
 * box (one element has one box in every format); its children move into the first one's place.
 * `elementOf` gives each key one element object across the views of a scene, so that nesting
 * found in one diagram holds in all.
 */
function diagramView(
  lookup: Lookup,
  nesting: Nesting,
  diagram: Diagram,
  elementOf: (element: SceneElement) => SceneElement,
): { view: SceneView; drawn: SceneElement[] } {
  const key = keyOf('v', diagram.id);
  const elementOfInstance = new Map(diagram.componentInstances.map((i) => [i.id, elementOf(lookup.instanceElement(i))]));
  const childrenOf = new Map<string | null, ComponentInstance[]>();
  for (const instance of diagram.componentInstances) {
    const parent = instance.parent !== null && elementOfInstance.has(instance.parent) ? instance.parent : null;
    const siblings = childrenOf.get(parent);
    if (siblings) siblings.push(instance);
    else childrenOf.set(parent, [instance]);
  }
  const drawn = new Map<string, ViewNode>();
  const build = (parent: SceneElement | null, parentInstance: string | null): ViewNode[] => {
    const nodes: ViewNode[] = [];
    for (const instance of childrenOf.get(parentInstance) ?? []) {
      const element = elementOfInstance.get(instance.id) as SceneElement;
      if (parent !== null && parent.key !== element.key) nesting.offer(element, parent);
      // Known before its children are built: an instance of the same component inside it (a
      // container holding a box of itself) is then that one box, not a second of the same name.
      const node = drawn.get(element.key) ?? { element, boundary: instance.isContainer, children: [] };
      if (!drawn.has(element.key)) {
        drawn.set(element.key, node);
        nodes.push(node);
      }
      node.children.push(...build(node.element, instance.id));
      node.boundary ||= node.children.length > 0;
    }
    return nodes;
  };
  const nodes = build(null, null);
  const relations: SceneRelation[] = [];
  const seen = new Map<string, SceneRelation>();
  for (const relation of diagram.relations) {
    const from = elementOfInstance.get(relation.fromComponentInstance);
    const to = elementOfInstance.get(relation.toComponentInstance);
    if (from && to) addRelation(relations, seen, { from: from.key, to: to.key, label: relation.label, desc: relation.desc, views: [key] });
  }
  const view: SceneView = {
    key,
    title: diagram.name,
    desc: diagram.desc,
    level: diagram.level,
    tags: lookup.tagNames(diagram.tags),
    archived: diagram.state === 'ARCHIVED',
    nodes,
    relations,
    notes: diagram.textareas.map((t) => t.text).filter((text) => text.trim() !== ''),
  };
  return { view, drawn: Array.from(drawn.values(), (n) => n.element) };
}

/** Parents before children, otherwise in the given order. */
function parentsFirst(elements: Iterable<SceneElement>): SceneElement[] {
  const byKey = new Map<string, SceneElement>();
  for (const element of elements) byKey.set(element.key, element);
  const ordered: SceneElement[] = [];
  const placed = new Set<string>();
  const place = (element: SceneElement): void => {
    if (placed.has(element.key)) return;
    const parent = element.parent === null ? undefined : byKey.get(element.parent);
    if (parent === undefined) element.parent = null;
    else place(parent);
    placed.add(element.key);
    ordered.push(element);
  };
  for (const element of byKey.values()) place(element);
  return ordered;
}

function tagsOf(elements: SceneElement[], views: SceneView[]): string[] {
  const tags = new Set<string>();
  for (const element of elements) for (const tag of element.tags) tags.add(tag);
  for (const view of views) for (const tag of view.tags) tags.add(tag);
  return [...tags];
}

/** One element object per key across a scene. */
function unique(): (element: SceneElement) => SceneElement {
  const elements = new Map<string, SceneElement>();
  return (element) => {
    const earlier = elements.get(element.key);
    if (earlier !== undefined) return earlier;
    elements.set(element.key, element);
    return element;
  };
}

/** One diagram: its elements, nested as this diagram nests them, its relations and one view. */
export function diagramScene(model: Model, diagram: Diagram): Scene {
  const { view, drawn } = diagramView(new Lookup(model), new Nesting(), diagram, unique());
  const elements = parentsFirst(drawn);
  return { name: diagram.name, desc: diagram.desc, elements, relations: view.relations, views: [view], tags: tagsOf(elements, [view]) };
}

/**
 * The whole model: every component, nested as the diagrams nest them; the relations of every
 * diagram, plus a component's `linksTo` where no diagram relates the two already; a landscape
 * view of all components (key `v_index`, every relation among them) and one view per diagram.
 * A generator that pauses (yields) after each component and diagram, so that a large model's
 * scene can be built in slices (src/slices.ts); its return value is the scene.
 */
export function* modelScene(model: Model): Generator<undefined, Scene> {
  const lookup = new Lookup(model);
  const nesting = new Nesting();
  const elementOf = unique();
  const all = new Map<string, SceneElement>();
  for (const id of model.components.keys()) {
    const element = elementOf(lookup.componentElement(id) as SceneElement);
    all.set(element.key, element);
    yield;
  }
  const components = new Set(all.keys());
  const relations: SceneRelation[] = [];
  const seen = new Map<string, SceneRelation>();
  const views: SceneView[] = [];
  for (const diagram of model.diagrams.values()) {
    const { view, drawn } = diagramView(lookup, nesting, diagram, elementOf);
    for (const element of drawn) if (!all.has(element.key)) all.set(element.key, element);
    // The view and the model share each relation object, so a relation drawn by several diagrams lists them all.
    view.relations = view.relations.map((relation) => addRelation(relations, seen, relation));
    views.push(view);
    yield;
  }
  const related = new Set<string>();
  for (const r of relations) related.add(`${r.from} ${r.to}`);
  for (const component of model.components.values()) {
    for (const target of component.linksTo) {
      const from = keyOf('c', component.id);
      const to = keyOf('c', target);
      if (all.has(to) && from !== to && !related.has(`${from} ${to}`)) {
        related.add(`${from} ${to}`);
        relations.push({ from, to, label: null, desc: null, views: [] });
      }
    }
    yield;
  }
  const elements = parentsFirst(all.values());
  const nodeOf = new Map<string, ViewNode>();
  const landscape: ViewNode[] = [];
  for (const element of elements) {
    if (!components.has(element.key)) continue;
    const node: ViewNode = { element, boundary: false, children: [] };
    nodeOf.set(element.key, node);
    const parent = element.parent === null ? undefined : nodeOf.get(element.parent);
    if (parent) {
      parent.children.push(node);
      parent.boundary = true;
    } else {
      landscape.push(node);
    }
  }
  const index: SceneView = {
    key: 'v_index',
    title: `${model.organization.name}: all components`,
    desc: null,
    level: null,
    tags: [],
    archived: false,
    nodes: landscape,
    relations: relations.filter((r) => components.has(r.from) && components.has(r.to)),
    notes: [],
  };
  return { name: model.organization.name, desc: null, elements, relations, views: [index, ...views], tags: tagsOf(elements, views) };
}

/** Every node of a view, depth first. */
export function* walk(nodes: ViewNode[]): Generator<ViewNode> {
  for (const node of nodes) {
    yield node;
    yield* walk(node.children);
  }
}

/**
 * Whether the relation joins an element and one that encloses it. LikeC4 and Structurizr refuse
 * such relations (a diagram may draw them from a boundary to a box inside it).
 */
export function joinsAncestor(relation: SceneRelation, parentOf: (key: string) => string | null | undefined): boolean {
  for (let k = parentOf(relation.from); k; k = parentOf(k)) if (k === relation.to) return true;
  for (let k = parentOf(relation.to); k; k = parentOf(k)) if (k === relation.from) return true;
  return false;
}

/** Each element's depth in the model's nesting (0: not enclosed). Elements must come parents first. */
export function depths(elements: SceneElement[]): Map<string, number> {
  const depth = new Map<string, number>();
  for (const e of elements) depth.set(e.key, e.parent === null ? 0 : (depth.get(e.parent) ?? -1) + 1);
  return depth;
}
