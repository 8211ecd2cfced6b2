/**
 * A synthetic C4 container diagram of any size, in the API's request form, for the drawing's
 * measurement test (test/drawing-browser.test.ts) and bench (bench/drawing.ts): people at the
 * top, software-system boundaries of up to 45 children (web apps, services, databases, queues),
 * external systems; relations flow from people to apps to services to stores and externals,
 * with a few going back up. Deterministic for a seed.
 */
import { layoutDiagram, type LayoutInput } from '../src/layout/layout.js';
import { emptyModel } from '../src/model/files.js';
import { GRID_PX, relationLabel } from '../src/drawing/svg.js';
import type { RouteEdge, RouteNode } from '../src/drawing/route.js';
import type { Diagram, Model } from '../src/model/types.js';

export interface SyntheticComponent {
  ref: string;
  name: string;
  typeSlug: string;
  desc: string;
}

export interface SyntheticDiagram {
  ref: string;
  name: string;
  level: 'C2';
  componentInstances: Array<{ ref: string; component?: string; placeholder?: string; isContainer?: boolean; parent?: string }>;
  relations: Array<{ fromComponentInstance: string; toComponentInstance: string; label: string }>;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = [
  'Order',
  'Catalog',
  'Payment',
  'Customer',
  'Invoice',
  'Shipping',
  'Inventory',
  'Pricing',
  'Search',
  'Review',
  'Loyalty',
  'Refund',
];
const SERVICE = ['Service', 'API', 'Worker', 'Gateway', 'Processor'];
const LABELS = [
  'Reads and writes (SQL)',
  'Calls (JSON/HTTPS)',
  'Publishes events to',
  'Sends e-mails via (SMTP)',
  'Makes API calls to',
  'Uses',
  'Subscribes to',
];

/**
 * `instances` instances (at least 20) with about 1.4 relations each. The first boundary holds
 * `firstBoundaryChildren` children (default 40).
 */
export function syntheticDiagram(
  instances: number,
  seed = 7,
  firstBoundaryChildren = 40,
): { components: SyntheticComponent[]; diagram: SyntheticDiagram } {
  const rnd = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const components: SyntheticComponent[] = [];
  const diagram: SyntheticDiagram = {
    ref: `synthetic-${instances}`,
    name: `Synthetic ${instances}`,
    level: 'C2',
    componentInstances: [],
    relations: [],
  };
  const add = (typeSlug: string, name: string, parent?: string): string => {
    const ref = `e${components.length}`;
    components.push({ ref, name, typeSlug, desc: `${name}: does its part of the ${pick(WORDS).toLowerCase()} flow.` });
    diagram.componentInstances.push({ ref, component: ref, ...(parent ? { parent } : {}) });
    return ref;
  };
  const people = Math.max(2, Math.round(instances * 0.06));
  const externals = Math.max(2, Math.round(instances * 0.12));
  const personRefs = Array.from({ length: people }, (_, i) =>
    add('person', `${pick(WORDS)} ${['Customer', 'Agent', 'Manager', 'Clerk'][i % 4]} ${i}`),
  );
  const boundaries: string[] = [];
  const apps: string[] = [];
  const services: string[] = [];
  const stores: string[] = [];
  let left = instances - people - externals;
  let first = true;
  while (left > 1) {
    const ref = `b${boundaries.length}`;
    diagram.componentInstances.push({ ref, placeholder: `${pick(WORDS)} Platform ${boundaries.length}`, isContainer: true });
    boundaries.push(ref);
    left--;
    const children = Math.min(left, first ? firstBoundaryChildren : 30 + Math.floor(rnd() * 15));
    first = false;
    for (let k = 0; k < children; k++) {
      const roll = k / children;
      if (roll < 0.15) apps.push(add('container', `${pick(WORDS)} Web App ${components.length}`, ref));
      else if (roll < 0.65) services.push(add('container', `${pick(WORDS)} ${pick(SERVICE)} ${components.length}`, ref));
      else if (roll < 0.85) stores.push(add('database', `${pick(WORDS)} Database ${components.length}`, ref));
      else stores.push(add('queue', `${pick(WORDS)} Events ${components.length}`, ref));
    }
    left -= children;
  }
  const externalRefs = Array.from({ length: externals }, () => add('software-system', `${pick(WORDS)} Provider ${components.length}`));
  const relate = (from: string, to: string) => {
    if (from === to) return;
    diagram.relations.push({ fromComponentInstance: from, toComponentInstance: to, label: pick(LABELS) });
  };
  for (const p of personRefs) relate(p, pick(apps));
  for (const a of apps) {
    relate(a, pick(services));
    if (rnd() < 0.5) relate(a, pick(services));
  }
  for (const s of services) {
    relate(s, pick(stores));
    if (rnd() < 0.5) relate(s, pick(stores));
    if (rnd() < 0.5) relate(s, pick(services));
    if (rnd() < 0.3) relate(s, pick(externalRefs));
  }
  for (const e of externalRefs) if (rnd() < 0.3) relate(e, pick(services));
  return { components, diagram };
}

/** A synthetic diagram as the automatic layout takes it: its instances labelled with their components' names. */
export function layoutInputOf({ components, diagram }: ReturnType<typeof syntheticDiagram>): LayoutInput {
  const names = new Map(components.map((c) => [c.ref, c.name]));
  return {
    instances: diagram.componentInstances.map((i) => ({
      id: i.ref,
      parent: i.parent ?? null,
      isContainer: i.isContainer === true,
      label: i.component ? names.get(i.component)! : (i.placeholder ?? ''),
    })),
    relations: diagram.relations.map((r) => ({ from: r.fromComponentInstance, to: r.toComponentInstance })),
    textareas: [],
  };
}

const TYPES = ['person', 'software-system', 'container', 'component', 'database', 'queue'];

/**
 * `syntheticDiagram(n, seed)` as the drawing takes it: its components in a model, the diagram laid out
 * by the service's automatic layout (timed `runs` more times, for the bench).
 */
export async function laidOutDiagram(n: number, runs = 0, seed = 7): Promise<{ diagram: Diagram; model: Model; layoutTimes: number[] }> {
  const synthetic = syntheticDiagram(n, seed);
  const { components, diagram: posted } = synthetic;
  const model = emptyModel({ name: 'bench', slug: 'bench', members: [] });
  for (const slug of TYPES) model.types.set(slug, { id: slug, slug, name: slug });
  for (const c of components) {
    model.components.set(c.ref, {
      id: c.ref,
      name: c.name,
      desc: c.desc,
      state: 'ACTIVE',
      typeId: c.typeSlug,
      linksTo: [],
      attributes: [],
    });
  }
  const input = layoutInputOf(synthetic);
  const layoutTimes: number[] = [];
  let layout = await layoutDiagram(input);
  for (let run = 0; run < runs; run++) {
    const began = performance.now();
    layout = await layoutDiagram(input);
    layoutTimes.push(performance.now() - began);
  }
  const diagram: Diagram = {
    id: 'd',
    name: posted.name,
    desc: null,
    state: 'ACTIVE',
    level: 'C2',
    tags: [],
    textareas: [],
    componentInstances: posted.componentInstances.map((i) => {
      const b = layout.instances.get(i.ref)!;
      return {
        id: i.ref,
        component: i.component ?? null,
        placeholder: i.placeholder ?? '',
        isContainer: i.isContainer === true,
        parent: i.parent ?? null,
        position: b.position,
        width: b.width,
        height: b.height,
      };
    }),
    relations: posted.relations.map((r, k) => ({
      id: `r${k}`,
      fromComponentInstance: r.fromComponentInstance,
      toComponentInstance: r.toComponentInstance,
      label: r.label,
      desc: null,
      linksTo: [],
    })),
  };
  return { diagram, model, layoutTimes };
}

/** What routeEdges is given for `diagram`: its instances' boxes in pixels, and its relations. */
export function routingInput(diagram: Diagram): { nodes: RouteNode[]; edges: RouteEdge[] } {
  return {
    nodes: diagram.componentInstances.map((i) => ({
      id: i.id,
      parent: i.parent,
      x: i.position.x * GRID_PX,
      y: i.position.y * GRID_PX,
      w: i.width * GRID_PX,
      h: i.height * GRID_PX,
    })),
    edges: diagram.relations.map((r) => {
      // As the drawing passes them (its labels' sizes: relations between the same two boxes are drawn apart by them).
      const label = relationLabel(r.label);
      return {
        id: r.id,
        from: r.fromComponentInstance,
        to: r.toComponentInstance,
        ...(label ? { label: { w: label.w, h: label.h } } : {}),
      };
    }),
  };
}
