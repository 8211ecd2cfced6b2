import { refIndex, type Identified } from '../model/draft.js';
import {
  ALL_LEVELS,
  STATES,
  type Attribute,
  type Component,
  type ComponentType,
  type Diagram,
  type Model,
  type Tag,
} from '../model/types.js';

/**
 * Filters over one model snapshot, shared by the search paths (`/search/components`, …) and the
 * list GETs of the current form (`GET /components?name=…`): one reading of each filter for both.
 * Filters combine with AND; `name` matches a part of the name, ignoring case; a filter naming a
 * resource (`typeId`, `tagId`, `attributeId`, `componentId`) takes its id or its ref (a type also
 * its slug); an attribute value is compared as text (`null` as the empty text).
 */
export class SearchError extends Error {}

export type Filters = Partial<Record<string, string>>;

export type ListKind = 'type' | 'tag' | 'attribute' | 'component' | 'diagram';

export const COMPONENT_FILTERS = ['name', 'typeId', 'tagId', 'attributeId', 'attributeValue', 'state'] as const;
export const DIAGRAM_FILTERS = ['componentId', 'tagId', 'name', 'level', 'state'] as const;

/** The filters each list GET of the current form takes (the published form's, plus `name` on tags and attributes). */
export const LIST_FILTERS: Record<ListKind, readonly string[]> = {
  type: ['name'],
  tag: ['name'],
  attribute: ['name'],
  component: COMPONENT_FILTERS,
  diagram: DIAGRAM_FILTERS,
};

/** What every list GET takes besides its filters: paging, `?at=` and `?draft=`. */
export const LIST_PARAMETERS = ['limit', 'cursor', 'at', 'draft'] as const;

/**
 * The filters of a query string, refusing a parameter the path does not take: an ignored filter
 * would answer the whole list, which a client checking for duplicates reads as all matching.
 */
export function readFilters(
  query: Readonly<Record<string, string | string[] | undefined>>,
  filters: readonly string[],
  others: readonly string[],
  path: string,
): Filters {
  const found: Filters = {};
  for (const [name, value] of Object.entries(query)) {
    const isFilter = filters.includes(name);
    if (!isFilter && !others.includes(name)) {
      const takes = [...filters, ...others].join(', ');
      throw new SearchError(`Unknown query parameter '${name}': ${path} takes ${takes}.`);
    }
    if (Array.isArray(value)) throw new SearchError(`Query parameter '${name}' is given more than once.`);
    if (isFilter && value !== undefined) found[name] = value;
  }
  return found;
}

export const hasFilters = (filters: Filters) => Object.values(filters).some((v) => v !== undefined);

/** The filters as one text, the same for the same filters in any order: a cache key. */
export function filtersKey(filters: Filters): string {
  return JSON.stringify(
    Object.entries(filters)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

const contains = (text: string, part: string) => text.toLowerCase().includes(part.toLowerCase());

function oneOf(name: string, value: string, allowed: readonly string[]): void {
  if (!allowed.includes(value)) throw new SearchError(`Invalid ${name} '${value}': use ${allowed.join(', ')}.`);
}

/** The id a filter names: the resource's id, else the id of the resource holding that ref; unknown names stay as they are (and match nothing). */
export function idOf(collection: ReadonlyMap<string, Identified>, name: string): string {
  return collection.has(name) ? name : (refIndex(collection).get(name) ?? name);
}

function typeIdOf(model: Model, name: string): string {
  if (model.types.has(name)) return name;
  for (const type of model.types.values()) if (type.slug === name) return type.id;
  return name;
}

type Matcher<T> = (item: T) => boolean;

export function componentMatcher(model: Model, f: Filters): Matcher<Component> {
  if (f.attributeValue !== undefined && f.attributeId === undefined) throw new SearchError('attributeValue needs attributeId.');
  if (f.state !== undefined) oneOf('state', f.state, STATES);
  const typeId = f.typeId === undefined ? undefined : typeIdOf(model, f.typeId);
  const tagId = f.tagId === undefined ? undefined : idOf(model.tags, f.tagId);
  const attributeId = f.attributeId === undefined ? undefined : idOf(model.attributes, f.attributeId);
  return (c) =>
    (f.name === undefined || contains(c.name, f.name)) &&
    (typeId === undefined || c.typeId === typeId) &&
    (tagId === undefined || (c.tags ?? []).includes(tagId)) &&
    (f.state === undefined || c.state === f.state) &&
    (attributeId === undefined ||
      c.attributes.some(
        (a) => a.id === attributeId && (f.attributeValue === undefined || (a.value === null ? '' : String(a.value)) === f.attributeValue),
      ));
}

export function diagramMatcher(model: Model, f: Filters): Matcher<Diagram> {
  if (f.state !== undefined) oneOf('state', f.state, STATES);
  if (f.level !== undefined) oneOf('level', f.level, [...ALL_LEVELS, 'null']);
  const componentId = f.componentId === undefined ? undefined : idOf(model.components, f.componentId);
  const tagId = f.tagId === undefined ? undefined : idOf(model.tags, f.tagId);
  return (d) =>
    (f.name === undefined || contains(d.name, f.name)) &&
    (componentId === undefined || d.componentInstances.some((i) => i.component === componentId)) &&
    (tagId === undefined || d.tags.includes(tagId)) &&
    (f.level === undefined || (d.level ?? 'null') === f.level) &&
    (f.state === undefined || d.state === f.state);
}

const nameMatcher =
  (f: Filters): Matcher<{ name: string }> =>
  (item) =>
    f.name === undefined || contains(item.name, f.name);

/** The matcher of a list's filters; throws SearchError for filters that contradict themselves or take no such value. */
export function listMatcher(kind: 'component', model: Model, f: Filters): Matcher<Component>;
export function listMatcher(kind: 'diagram', model: Model, f: Filters): Matcher<Diagram>;
export function listMatcher(kind: 'type' | 'tag' | 'attribute', model: Model, f: Filters): Matcher<ComponentType | Tag | Attribute>;
export function listMatcher(kind: ListKind, model: Model, f: Filters): Matcher<never>;
export function listMatcher(kind: ListKind, model: Model, f: Filters): Matcher<never> {
  if (kind === 'component') return componentMatcher(model, f);
  if (kind === 'diagram') return diagramMatcher(model, f);
  return nameMatcher(f);
}
