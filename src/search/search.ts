import type { Component, Diagram, Model } from '../model/types.js';
import { diagramUrl } from '../model/present.js';

/**
 * The current form's search (issue 11): pure functions over one model snapshot. Filters
 * combine with AND; `name` matches a part of the name, ignoring case; an attribute value is
 * compared as text. At least one filter is required: SearchError otherwise.
 */
export class SearchError extends Error {}

export type Filters = Partial<Record<string, string>>;

function requireSome(filters: Filters, names: readonly string[]): void {
  if (!names.some((n) => filters[n] !== undefined)) {
    throw new SearchError(`Give at least one filter: ${names.join(', ')}.`);
  }
}

const contains = (text: string, part: string) => text.toLowerCase().includes(part.toLowerCase());

export const COMPONENT_FILTERS = ['name', 'typeId', 'tagId', 'attributeId', 'attributeValue', 'state'] as const;
export const DIAGRAM_FILTERS = ['componentId', 'tagId', 'name', 'level', 'state'] as const;

export function searchComponents(model: Model, f: Filters) {
  requireSome(f, COMPONENT_FILTERS);
  if (f.attributeValue !== undefined && f.attributeId === undefined) throw new SearchError('attributeValue needs attributeId.');
  const matches = (c: Component) =>
    (f.name === undefined || contains(c.name, f.name)) &&
    (f.typeId === undefined || c.typeId === f.typeId) &&
    (f.tagId === undefined || (c.tags ?? []).includes(f.tagId)) &&
    (f.state === undefined || c.state === f.state) &&
    (f.attributeId === undefined ||
      c.attributes.some(
        (a) => a.id === f.attributeId && (f.attributeValue === undefined || (a.value === null ? '' : String(a.value)) === f.attributeValue),
      ));
  return [...model.components.values()].filter(matches).map((c) => {
    const type = c.typeId === null ? undefined : model.types.get(c.typeId);
    return {
      id: c.id,
      name: c.name,
      state: c.state,
      desc: c.desc,
      type: type ? { id: type.id, name: type.name } : null,
      tags: c.tags ?? [],
      attributes: c.attributes.map((a) => ({ id: a.id, value: a.value })),
    };
  });
}

export function searchDiagrams(model: Model, f: Filters, publicUrl: string) {
  requireSome(f, DIAGRAM_FILTERS);
  const matches = (d: Diagram) =>
    (f.name === undefined || contains(d.name, f.name)) &&
    (f.componentId === undefined || d.componentInstances.some((i) => i.component === f.componentId)) &&
    (f.tagId === undefined || d.tags.includes(f.tagId)) &&
    (f.level === undefined || (d.level ?? 'null') === f.level) &&
    (f.state === undefined || d.state === f.state);
  return [...model.diagrams.values()].filter(matches).map((d) => ({
    id: d.id,
    name: d.name,
    url: diagramUrl(publicUrl, model, d.id),
    state: d.state,
    level: d.level,
    tags: d.tags,
  }));
}

/**
 * The components directly related to `componentId`: by a relation between instances of the
 * two on any diagram (downstream: the relation goes from it; upstream: to it), each with the
 * diagrams that draw it, and by the component's own links (seed form `linksTo`: downstream)
 * and links to it (upstream), which are drawn on no diagram.
 */
export function searchDependencies(model: Model, f: Filters) {
  requireSome(f, ['componentId']);
  const self = f.componentId!;
  const found = new Map<
    string,
    { component: { id: string; name: string }; direction: 'upstream' | 'downstream'; diagrams: Array<{ id: string; name: string }> }
  >();
  const add = (other: string, direction: 'upstream' | 'downstream', diagram?: Diagram) => {
    const component = model.components.get(other);
    if (!component || other === self) return;
    const key = `${direction}:${other}`;
    let entry = found.get(key);
    if (!entry) found.set(key, (entry = { component: { id: component.id, name: component.name }, direction, diagrams: [] }));
    if (diagram && !entry.diagrams.some((d) => d.id === diagram.id)) entry.diagrams.push({ id: diagram.id, name: diagram.name });
  };
  for (const diagram of model.diagrams.values()) {
    const componentOf = new Map(diagram.componentInstances.map((i) => [i.id, i.component]));
    for (const r of diagram.relations) {
      const from = componentOf.get(r.fromComponentInstance);
      const to = componentOf.get(r.toComponentInstance);
      if (from === self && to) add(to, 'downstream', diagram);
      if (to === self && from) add(from, 'upstream', diagram);
    }
  }
  for (const target of model.components.get(self)?.linksTo ?? []) add(target, 'downstream');
  for (const c of model.components.values()) if (c.linksTo.includes(self)) add(c.id, 'upstream');
  return [...found.values()];
}
