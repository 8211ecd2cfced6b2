import type { Diagram, Model } from '../model/types.js';
import { diagramUrl } from '../model/present.js';
import {
  componentMatcher,
  COMPONENT_FILTERS,
  diagramMatcher,
  DIAGRAM_FILTERS,
  hasFilters,
  idOf,
  SearchError,
  type Filters,
} from './filters.js';

/**
 * The current form's search paths (issue 11): pure functions over one model snapshot, with the
 * filters of ./filters.ts (the list GETs' too). At least one filter is required: SearchError
 * otherwise.
 */
export { COMPONENT_FILTERS, DIAGRAM_FILTERS, SearchError, type Filters };

function requireSome(filters: Filters, names: readonly string[]): void {
  if (!hasFilters(filters)) throw new SearchError(`Give at least one filter: ${names.join(', ')}.`);
}

export function searchComponents(model: Model, f: Filters) {
  requireSome(f, COMPONENT_FILTERS);
  const matches = componentMatcher(model, f);
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
  const matches = diagramMatcher(model, f);
  return [...model.diagrams.values()].filter(matches).map((d) => ({
    id: d.id,
    name: d.name,
    url: diagramUrl(publicUrl, model, d.id),
    state: d.state,
    level: d.level,
    tags: d.tags,
  }));
}

export interface Dependency {
  component: { id: string; name: string };
  direction: 'upstream' | 'downstream';
  diagrams: Array<{ id: string; name: string }>;
}

/**
 * The components directly related to component `self` (an id): by a relation between instances
 * of the two on any diagram (downstream: the relation goes from it; upstream: to it), each with
 * the diagrams that draw it, and by the component's own links (seed form `linksTo`: downstream)
 * and links to it (upstream), which are drawn on no diagram.
 */
export function dependenciesOf(model: Model, self: string): Dependency[] {
  const found = new Map<string, Dependency>();
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

/** `/search/dependencies?componentId=`: the component by id or ref. */
export function searchDependencies(model: Model, f: Filters): Dependency[] {
  requireSome(f, ['componentId']);
  return dependenciesOf(model, idOf(model.components, f.componentId!));
}
