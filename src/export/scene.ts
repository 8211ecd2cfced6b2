import type { ComponentInstance, Diagram, Level, Model } from '../model/types.js';

/**
 * What every export format draws, worked out once from the model: elements with an
 * identifier safe in every format, relations between them, and views (a diagram's
 * instances as a tree of boundaries and boxes). Each format then only spells this out.
 */

export type ElementKind = 'person' | 'system' | 'container' | 'component' | 'database' | 'queue' | 'placeholder';

export interface SceneElement {
  /** `[A-Za-z][A-Za-z0-9_]*`: an identifier in Structurizr, PlantUML, Mermaid and LikeC4 alike. */
  key: string;
  name: string;
  desc: string | null;
  kind: ElementKind;
  /** The c4store type's name (shown as technology where a format has one). */
  typeName: string | null;
}

export interface SceneRelation {
  from: string;
  to: string;
  label: string | null;
  desc: string | null;
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
  nodes: ViewNode[];
  relations: SceneRelation[];
}

export interface Scene {
  name: string;
  desc: string | null;
  elements: SceneElement[];
  relations: SceneRelation[];
  views: SceneView[];
}

const KIND_OF_TYPE_SLUG: Record<string, ElementKind> = {
  person: 'person',
  'software-system': 'system',
  container: 'container',
  component: 'component',
  database: 'database',
  queue: 'queue',
};

/**
 * An identifier from a c4store id, one to one: ids may hold `.`, `-` and `_` (client-chosen ids
 * of the newer API form), which become `_d`, `_h` and `__`, so two ids never meet in one key.
 */
export function keyOf(prefix: 'c' | 'p' | 'v', id: string): string {
  return `${prefix}_${id.replace(/[^A-Za-z0-9]/g, (c) => (c === '_' ? '__' : c === '.' ? '_d' : c === '-' ? '_h' : `_${c.charCodeAt(0)}_`))}`;
}

function componentElement(model: Model, id: string): SceneElement | undefined {
  const component = model.components.get(id);
  if (component === undefined) return undefined;
  const type = component.typeId === null ? undefined : model.types.get(component.typeId);
  return {
    key: keyOf('c', id),
    name: component.name,
    desc: component.desc,
    kind: (type && KIND_OF_TYPE_SLUG[type.slug]) ?? 'system',
    typeName: type?.name ?? null,
  };
}

function instanceElement(model: Model, instance: ComponentInstance): SceneElement {
  const element = instance.component === null ? undefined : componentElement(model, instance.component);
  return (
    element ?? {
      key: keyOf('p', instance.id),
      name: instance.placeholder === '' ? 'Placeholder' : instance.placeholder,
      desc: null,
      kind: 'placeholder',
      typeName: null,
    }
  );
}

/** Relations keep their first occurrence of each (from, to, label): tools refuse or double duplicates. */
function addRelation(relations: SceneRelation[], seen: Set<string>, relation: SceneRelation): void {
  const identity = JSON.stringify([relation.from, relation.to, relation.label ?? '']);
  if (seen.has(identity)) return;
  seen.add(identity);
  relations.push(relation);
}

/**
 * A diagram as a view. An instance of a component already drawn in the same view adds no second
 * box (one element has one box in every format); its children move into the first one's place.
 */
export function diagramView(model: Model, diagram: Diagram): { view: SceneView; elements: SceneElement[] } {
  const elementOfInstance = new Map(diagram.componentInstances.map((i) => [i.id, instanceElement(model, i)]));
  const childrenOf = new Map<string | null, ComponentInstance[]>();
  for (const instance of diagram.componentInstances) {
    const parent = instance.parent !== null && elementOfInstance.has(instance.parent) ? instance.parent : null;
    const siblings = childrenOf.get(parent);
    if (siblings) siblings.push(instance);
    else childrenOf.set(parent, [instance]);
  }
  const drawn = new Map<string, ViewNode>();
  const build = (parent: string | null): ViewNode[] => {
    const nodes: ViewNode[] = [];
    for (const instance of childrenOf.get(parent) ?? []) {
      const element = elementOfInstance.get(instance.id) as SceneElement;
      const children = build(instance.id);
      const earlier = drawn.get(element.key);
      if (earlier) {
        earlier.children.push(...children);
        earlier.boundary ||= children.length > 0;
        continue;
      }
      const node: ViewNode = { element, boundary: instance.isContainer || children.length > 0, children };
      drawn.set(element.key, node);
      nodes.push(node);
    }
    return nodes;
  };
  const nodes = build(null);
  const relations: SceneRelation[] = [];
  const seen = new Set<string>();
  for (const relation of diagram.relations) {
    const from = elementOfInstance.get(relation.fromComponentInstance);
    const to = elementOfInstance.get(relation.toComponentInstance);
    if (from && to) addRelation(relations, seen, { from: from.key, to: to.key, label: relation.label, desc: relation.desc });
  }
  return {
    view: { key: keyOf('v', diagram.id), title: diagram.name, desc: diagram.desc, level: diagram.level, nodes, relations },
    elements: Array.from(drawn.values(), (n) => n.element),
  };
}

/** One diagram: its elements, its relations and one view. */
export function diagramScene(model: Model, diagram: Diagram): Scene {
  const { view, elements } = diagramView(model, diagram);
  return { name: diagram.name, desc: diagram.desc, elements, relations: view.relations, views: [view] };
}

/**
 * The whole model: every component; the relations of every diagram, plus a component's
 * `linksTo` where no diagram relates the two already; a landscape view of all components
 * (key `v_index`) and one view per diagram. A generator that pauses (yields) after each
 * component and diagram, so that a large model's scene can be built in slices (src/slices.ts);
 * its return value is the scene.
 */
export function* modelScene(model: Model): Generator<undefined, Scene> {
  const elements = new Map<string, SceneElement>();
  for (const id of model.components.keys()) {
    const element = componentElement(model, id) as SceneElement;
    elements.set(element.key, element);
    yield;
  }
  const landscape = Array.from(elements.values(), (element): ViewNode => ({ element, boundary: false, children: [] }));
  const relations: SceneRelation[] = [];
  const seen = new Set<string>();
  const views: SceneView[] = [];
  for (const diagram of model.diagrams.values()) {
    const { view, elements: drawn } = diagramView(model, diagram);
    for (const element of drawn) if (!elements.has(element.key)) elements.set(element.key, element);
    for (const relation of view.relations) addRelation(relations, seen, relation);
    views.push(view);
    yield;
  }
  const related = new Set<string>();
  for (const r of relations) {
    related.add(`${r.from} ${r.to}`);
    yield;
  }
  for (const component of model.components.values()) {
    for (const target of component.linksTo) {
      const from = keyOf('c', component.id);
      const to = keyOf('c', target);
      if (elements.has(to) && from !== to && !related.has(`${from} ${to}`)) {
        related.add(`${from} ${to}`);
        relations.push({ from, to, label: null, desc: null });
      }
    }
    yield;
  }
  const components = new Set<string>();
  for (const node of landscape) components.add(node.element.key);
  const between: SceneRelation[] = [];
  for (const r of relations) {
    if (components.has(r.from) && components.has(r.to)) between.push(r);
    yield;
  }
  const index: SceneView = {
    key: 'v_index',
    title: `${model.organization.name}: all components`,
    desc: null,
    level: null,
    nodes: landscape,
    relations: between,
  };
  return { name: model.organization.name, desc: null, elements: Array.from(elements.values()), relations, views: [index, ...views] };
}

/** Every node of a view, depth first. */
export function* walk(nodes: ViewNode[]): Generator<ViewNode> {
  for (const node of nodes) {
    yield node;
    yield* walk(node.children);
  }
}
