import { schemaHeader } from '../editor/header.js';
import { definedFields } from './fields.js';
import { emitYaml, parseYaml, type ParseYamlOptions, type Plain } from '../yaml/format.js';
import type {
  Attribute,
  Component,
  ComponentInstance,
  ComponentType,
  Diagram,
  Model,
  Organization,
  Relation,
  Tag,
  TextArea,
} from './types.js';
import { DIRECTORIES, ORGANIZATION_FILE, resourcePath, type StoredKind } from './paths.js';

/**
 * How the model is laid out as files in git: one YAML file per resource, keys in the order
 * of the API's field tables, so that `git diff` shows only what a request changed. Where
 * each file goes: paths.ts.
 */

export { ORGANIZATION_FILE, DIRECTORIES, type StoredKind, resourcePath, classifyPath } from './paths.js';

export function stringify(value: object): string {
  return emitYaml(value as { [key: string]: Plain });
}

export const fileOf = {
  organization: (o: Organization) => definedFields({ name: o.name, slug: o.slug, members: o.members }),
  type: (t: ComponentType) => definedFields({ id: t.id, slug: t.slug, name: t.name }),
  tag: (t: Tag) => definedFields({ id: t.id, ref: t.ref, name: t.name, desc: t.desc, color: t.color, apiContext: t.apiContext }),
  attribute: (a: Attribute) =>
    definedFields({
      id: a.id,
      ref: a.ref,
      name: a.name,
      type: a.type,
      desc: a.desc,
      required: a.required,
      forTypes: a.forTypes,
      apiContext: a.apiContext,
      list: a.list,
    }),
  component: (c: Component) =>
    definedFields({
      id: c.id,
      ref: c.ref,
      name: c.name,
      desc: c.desc,
      state: c.state,
      typeId: c.typeId,
      apiContext: c.apiContext,
      linksTo: c.linksTo,
      attributes: c.attributes.map((v) => ({ id: v.id, value: v.value })),
      inlineDesc: c.inlineDesc ? true : undefined,
      tags: nonEmpty(c.tags),
      linksToDiagrams: nonEmpty(c.linksToDiagrams),
    }),
  diagram: (d: Diagram) =>
    definedFields({
      id: d.id,
      ref: d.ref,
      name: d.name,
      desc: d.desc,
      state: d.state,
      level: d.level,
      tags: d.tags,
      componentInstances: d.componentInstances.map(instanceFile),
      textareas: d.textareas.map(textAreaFile),
      relations: d.relations.map(relationFile),
      apiContext: d.apiContext,
    }),
};

function nonEmpty(list: string[] | undefined): string[] | undefined {
  return list === undefined || list.length === 0 ? undefined : list;
}

export function instanceFile(i: ComponentInstance) {
  return definedFields({
    id: i.id,
    ref: i.ref,
    component: i.component,
    placeholder: i.placeholder,
    typeId: i.typeId,
    isContainer: i.isContainer,
    parent: i.parent,
    position: { x: i.position.x, y: i.position.y },
    width: i.width,
    height: i.height,
  });
}

export function textAreaFile(t: TextArea) {
  return definedFields({ id: t.id, ref: t.ref, position: { x: t.position.x, y: t.position.y }, width: t.width, text: t.text });
}

export function relationFile(r: Relation) {
  return definedFields({
    id: r.id,
    ref: r.ref,
    fromComponentInstance: r.fromComponentInstance,
    toComponentInstance: r.toComponentInstance,
    label: r.label,
    desc: r.desc,
    linksTo: r.linksTo,
  });
}

/** A resource's file: its schema line (src/editor/schemas.ts), then its fields. */
export function serialize(kind: StoredKind, resource: object): string {
  return (
    schemaHeader(resourcePath(kind, (resource as { id: string }).id), kind) + stringify((fileOf[kind] as (r: object) => object)(resource))
  );
}

/** Whether two versions of a resource would be written as the same file (JSON: far cheaper than YAML). */
export function sameContent(kind: StoredKind, a: object, b: object): boolean {
  const fields = fileOf[kind] as (r: object) => object;
  return JSON.stringify(fields(a)) === JSON.stringify(fields(b));
}

export function serializeOrganization(organization: Organization): string {
  return schemaHeader(ORGANIZATION_FILE, 'organization') + stringify(fileOf.organization(organization));
}

/** A file in the repository that does not hold a valid resource. */
export class FileError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`${path}: ${problem}`);
    this.name = 'FileError';
  }
}

/** A model file's content; `options.incoming` for what a push brings (parseYaml). */
export function parseFile(path: string, text: string, options: ParseYamlOptions = {}): unknown {
  let value: unknown;
  try {
    // Parsed whole (the schema line is a comment), so that a message's line is the file's.
    value = parseYaml(text, options);
  } catch (err) {
    throw new FileError(path, (err as Error).message);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new FileError(path, 'expected a mapping');
  }
  return value;
}

/** A model being filled in (by loading files): its collections are plain Maps until it is handed out as a Model. */
export interface ModelUnderConstruction extends Model {
  types: Map<string, ComponentType>;
  tags: Map<string, Tag>;
  attributes: Map<string, Attribute>;
  components: Map<string, Component>;
  diagrams: Map<string, Diagram>;
}

export function emptyModel(organization: Organization): ModelUnderConstruction {
  return {
    organization,
    types: new Map(),
    tags: new Map(),
    attributes: new Map(),
    components: new Map(),
    diagrams: new Map(),
  };
}

export function collectionOf(model: ModelUnderConstruction, kind: StoredKind): Map<string, { id: string }>;
export function collectionOf(model: Model, kind: StoredKind): ReadonlyMap<string, { id: string }>;
export function collectionOf(model: Model, kind: StoredKind): ReadonlyMap<string, { id: string }> {
  return { type: model.types, tag: model.tags, attribute: model.attributes, component: model.components, diagram: model.diagrams }[kind];
}

/** The kind of the resource with this id in the model, if it holds one (ids are unique across kinds). */
export function kindOfId(model: Model, id: string): StoredKind | undefined {
  return (Object.keys(DIRECTORIES) as StoredKind[]).find((kind) => collectionOf(model, kind).has(id));
}
