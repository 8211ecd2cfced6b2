/**
 * Small models and diagrams built in memory for the drawing's tests (drawing.test.ts, png.test.ts):
 * a type of each kind, an External tag, components, instances and a diagram of given parts.
 */
import { emptyModel, type ModelUnderConstruction } from '../../src/model/files.js';
import type { ComponentInstance, Diagram, Relation } from '../../src/model/types.js';

export const TYPES = ['person', 'software-system', 'container', 'component', 'database', 'queue'];

export function model(): ModelUnderConstruction {
  const m = emptyModel({ name: 'Acme', slug: 'acme', members: [] });
  for (const slug of TYPES) m.types.set(`t-${slug}`, { id: `t-${slug}`, slug, name: slug.replace('-', ' ') });
  m.tags.set('ext', { id: 'ext', name: 'External', desc: null, color: 'grey' } as never);
  return m;
}

export function component(
  m: ModelUnderConstruction,
  id: string,
  name: string,
  type: string,
  extra: { desc?: string; tags?: string[] } = {},
): void {
  m.components.set(id, {
    id,
    name,
    desc: extra.desc ?? null,
    state: 'ACTIVE',
    typeId: `t-${type}`,
    linksTo: [],
    attributes: [],
    ...(extra.tags ? { tags: extra.tags } : {}),
  });
}

export function instance(
  id: string,
  componentId: string | null,
  x: number,
  y: number,
  extra: Partial<ComponentInstance> = {},
): ComponentInstance {
  return {
    id,
    component: componentId,
    placeholder: '',
    isContainer: false,
    parent: null,
    position: { x, y },
    width: 16,
    height: 8,
    ...extra,
  };
}

/** A relation between two instances of a diagram, with its label (null: none). */
export function relation(id: string, from: string, to: string, label: string | null): Relation {
  return { id, fromComponentInstance: from, toComponentInstance: to, label, desc: null, linksTo: [] };
}

export function diagram(parts: Partial<Diagram>): Diagram {
  return {
    id: 'd',
    name: 'D',
    desc: null,
    state: 'ACTIVE',
    level: 'C2',
    tags: [],
    componentInstances: [],
    textareas: [],
    relations: [],
    ...parts,
  };
}
