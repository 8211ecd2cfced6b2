import { concerning, ModelError, quotedName } from '../errors.js';
import { ORGANIZATION_FILE, resourcePath } from './paths.js';
import type { Attribute, AttributeValueType, Component, ComponentType, Diagram, Model, Organization, ResourceKind } from './types.js';

/**
 * The organization's member that `address` names, spelt as the organization keeps it: e-mail
 * addresses are compared without regard to case, as mail systems compare them.
 */
export function memberCalled(members: readonly string[], address: string): string | undefined {
  const wanted = address.toLowerCase();
  return members.find((member) => member.toLowerCase() === wanted);
}

/**
 * The model rules. Each check looks at one resource against the model it lives in and
 * throws a ModelError with the contract's text; writes run them on what they touch,
 * loading a repository runs them on everything.
 */

function typeSlugOf(model: Model, typeId: string | null): string | null {
  return typeId === null ? null : (model.types.get(typeId)?.slug ?? null);
}

export function appliesTo(attribute: Attribute, typeSlug: string | null): boolean {
  return attribute.forTypes.length === 0 || (typeSlug !== null && attribute.forTypes.includes(typeSlug));
}

function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

export function checkAttributeValue(model: Model, attribute: Attribute, value: AttributeValueType): void {
  const id = attribute.id;
  switch (attribute.type) {
    case 'STRING':
      if (typeof value !== 'string') throw new ModelError(`Value for STRING attribute '${id}' must be a string.`);
      return;
    case 'NUMBER':
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw new ModelError(`Value for NUMBER attribute '${id}' must be a number.`);
      return;
    case 'BOOLEAN':
      if (typeof value !== 'boolean') throw new ModelError(`Value for BOOLEAN attribute '${id}' must be a boolean.`);
      return;
    case 'LINK':
      if (typeof value !== 'string' || (value !== '' && !isWebUrl(value))) {
        throw new ModelError(`Value for LINK attribute '${id}' must be a valid URL.`);
      }
      return;
    case 'LIST': {
      const list = attribute.list ?? [];
      if (typeof value !== 'string' || !list.includes(value)) {
        if (list.length === 0) throw new ModelError(`LIST attribute '${id}' has no list values yet: it cannot hold a value.`);
        throw new ModelError(`Value for LIST attribute '${id}' must be one of: ${list.join(', ')}.`);
      }
      return;
    }
    case 'USERLIST':
      if (value !== null && (typeof value !== 'string' || !model.organization.members.includes(value))) {
        throw new ModelError(`Value for USERLIST attribute '${id}' must be the e-mail address of an organization member.`);
      }
      return;
  }
}

function hasValue(value: AttributeValueType | undefined): boolean {
  return value !== undefined && value !== null && value !== '';
}

/**
 * The required attributes that apply to components of one type, in id order. Built once per
 * attributes map and type (a snapshot's maps never change; a draft forgets its index when it
 * puts an attribute), so checking a component costs its own values and the attributes required
 * of its type, not every attribute of the model.
 */
const requiredIndexes = new WeakMap<ReadonlyMap<string, Attribute>, { all: Attribute[]; byType: Map<string | null, Attribute[]> }>();

export function forgetRequiredIndex(attributes: ReadonlyMap<string, Attribute>): void {
  requiredIndexes.delete(attributes);
}

function requiredAttributes(model: Model, typeSlug: string | null): Attribute[] {
  let index = requiredIndexes.get(model.attributes);
  if (!index) {
    const all: Attribute[] = [];
    for (const attribute of model.attributes.values()) if (attribute.required) all.push(attribute);
    requiredIndexes.set(model.attributes, (index = { all, byType: new Map() }));
  }
  let required = index.byType.get(typeSlug);
  if (!required) index.byType.set(typeSlug, (required = index.all.filter((attribute) => appliesTo(attribute, typeSlug))));
  return required;
}

const typeSlugSets = new WeakMap<ReadonlyMap<string, { slug: string }>, ReadonlySet<string>>();

function typeSlugs(model: Model): ReadonlySet<string> {
  let slugs = typeSlugSets.get(model.types);
  if (!slugs) typeSlugSets.set(model.types, (slugs = new Set([...model.types.values()].map((t) => t.slug))));
  return slugs;
}

/** What a refusal about one attribute names besides the rule's text. */
function aboutAttribute(attribute: Attribute): string {
  return `attribute ${quotedName(attribute.name)}`;
}

/** One value a component holds (or lacks) for one attribute. */
function checkHeldValue(
  model: Model,
  attribute: Attribute,
  typeSlug: string | null,
  held: { value: AttributeValueType } | undefined,
): void {
  concerning(aboutAttribute(attribute), () => {
    if (held !== undefined) {
      if (!appliesTo(attribute, typeSlug)) {
        throw new ModelError(`Attribute '${attribute.id}' does not apply to components of type '${typeSlug ?? '(none)'}'.`);
      }
      checkAttributeValue(model, attribute, held.value);
    }
    if (attribute.required && appliesTo(attribute, typeSlug) && !hasValue(held?.value)) {
      throw new ModelError(`Required attribute '${attribute.id}' has no value.`);
    }
  });
}

export function checkComponent(model: Model, component: Component): void {
  if (component.typeId !== null && !model.types.has(component.typeId)) {
    throw new ModelError(`Type with id '${component.typeId}' does not exist.`);
  }
  for (const target of component.linksTo) {
    if (!model.components.has(target)) throw new ModelError(`Component with id '${target}' does not exist.`);
  }
  for (const tagId of component.tags ?? []) {
    if (!model.tags.has(tagId)) throw new ModelError(`Tag with id '${tagId}' does not exist.`);
  }
  for (const target of component.linksToDiagrams ?? []) {
    if (!model.diagrams.has(target)) throw new ModelError(`Diagram with id '${target}' does not exist.`);
  }
  const typeSlug = typeSlugOf(model, component.typeId);
  const values = new Map<string, AttributeValueType>();
  for (const { id, value } of component.attributes) {
    const attribute = model.attributes.get(id);
    if (!attribute) throw new ModelError(`Attribute with id '${id}' does not exist.`);
    if (values.has(id)) throw new ModelError(`Attribute '${id}' is given more than once.`, [aboutAttribute(attribute)]);
    values.set(id, value);
    checkHeldValue(model, { ...attribute, required: false }, typeSlug, { value });
  }
  for (const attribute of requiredAttributes(model, typeSlug)) {
    if (!hasValue(values.get(attribute.id))) {
      throw new ModelError(`Required attribute '${attribute.id}' has no value.`, [aboutAttribute(attribute)]);
    }
  }
}

export function checkAttribute(model: Model, attribute: Attribute): void {
  if (attribute.type === 'LIST') {
    if (attribute.list === undefined) throw new ModelError(`A LIST attribute needs a list of values.`);
    const seen = new Set<string>();
    for (const item of attribute.list) {
      if (seen.has(item)) throw new ModelError(`Duplicate list values are not allowed, got several of: ${item}`);
      seen.add(item);
    }
  } else if (attribute.list !== undefined) {
    throw new ModelError(`Only a LIST attribute may have a list; this one is ${attribute.type}.`);
  }
  const slugs = typeSlugs(model);
  for (const slug of attribute.forTypes) {
    if (!slugs.has(slug)) throw new ModelError(`Type with slug '${slug}' does not exist.`);
  }
}

/**
 * An attribute changed: no component may be left with a value (or a gap) it now forbids.
 * Only this attribute's rules are checked, once per component: the others did not change.
 */
export function checkComponentsAgainstAttribute(model: Model, attribute: Attribute): void {
  for (const component of model.components.values()) {
    const held = component.attributes.find((value) => value.id === attribute.id);
    if (held === undefined && !attribute.required) continue;
    try {
      checkHeldValue(model, attribute, typeSlugOf(model, component.typeId), held);
    } catch (err) {
      if (err instanceof ModelError) {
        throw new ModelError(`Component '${component.id}' (${component.name}) would become invalid: ${err.text}`, err.context);
      }
      throw err;
    }
  }
}

export function checkDiagram(model: Model, diagram: Diagram): void {
  for (const tagId of diagram.tags) {
    if (!model.tags.has(tagId)) throw new ModelError(`Tag with id '${tagId}' does not exist.`);
  }
  const instances = new Map(diagram.componentInstances.map((i) => [i.id, i]));
  for (const instance of diagram.componentInstances) {
    const name = instance.ref ?? instance.id;
    if (instance.component !== null && !model.components.has(instance.component)) {
      throw new ModelError(`Component with id '${instance.component}' does not exist.`);
    }
    if (instance.typeId !== undefined && !model.types.has(instance.typeId)) {
      throw new ModelError(`Type with id '${instance.typeId}' does not exist.`);
    }
    if (instance.parent !== null) {
      if (instance.isContainer) throw new ModelError(`Container instance '${name}' cannot have a parent.`);
      if (!instances.get(instance.parent)?.isContainer) {
        throw new ModelError(`Parent '${instance.parent}' is not a container instance of this diagram.`);
      }
    }
  }
  for (const relation of diagram.relations) {
    for (const end of [relation.fromComponentInstance, relation.toComponentInstance]) {
      if (!instances.has(end)) throw new ModelError(`Component instance '${end}' does not exist in this diagram.`);
    }
    for (const target of relation.linksTo) {
      if (!model.diagrams.has(target)) throw new ModelError(`Diagram with id '${target}' does not exist.`);
    }
  }
}

/** A resource as far as naming it goes: its id, its ref, and a name to quote. */
interface Named {
  id: string;
  ref?: string;
  name?: string;
}

/** The kinds of resource that have an id and may have a ref (types have an id and a slug). */
const NAMED_KINDS = ['tag', 'attribute', 'component', 'diagram'] as const;

/** `model`'s resources of one of NAMED_KINDS. */
function namedOf(model: Model, kind: (typeof NAMED_KINDS)[number]): ReadonlyMap<string, Named> {
  return kind === 'tag' ? model.tags : kind === 'attribute' ? model.attributes : kind === 'component' ? model.components : model.diagrams;
}

/**
 * An id or a ref names one resource of its kind: the single GETs, PATCH, DELETE, the search
 * filters, the agents' tools and a request's own references (`linksTo`, an instance's
 * `component`) all take either. A ref that is the id of another resource of the kind, or an id
 * that is another's ref, would name two, and each of those ways in would pick a different one.
 * So neither may come in: `resource` is checked against `collection` (its kind's resources as
 * they now stand, `refs` their ref → id) and against `before`, itself as it stood before the
 * write or push that brings it (undefined: new). Only a pair this brings in is refused: a ref
 * the resource already had, beside an id that was already there, is still read and written.
 * A diagram's component instances are named by id or ref within the diagram (a `parent`, a
 * relation's ends) and are held to the same rule there.
 */
export function checkOneName(
  kind: ResourceKind,
  collection: ReadonlyMap<string, Named>,
  refs: ReadonlyMap<string, string>,
  resource: Named,
  before: Named | undefined,
): void {
  const clash = refClash(kind, collection, resource, before) ?? idClash(kind, collection, refs, resource, before);
  if (clash !== undefined) throw new ModelError(clash);
  if (kind === 'diagram') {
    const [nested] = nestedRefClashes(resource as Diagram, before as Diagram | undefined);
    if (nested !== undefined) throw new ModelError(nested.message);
  }
}

/** The refusal of a ref `resource` brings in that is the id of another resource of its kind (checkOneName). */
function refClash(
  kind: ResourceKind,
  collection: ReadonlyMap<string, Named>,
  resource: Named,
  before: Named | undefined,
): string | undefined {
  const { ref } = resource;
  if (ref === undefined || ref === resource.id || ref === before?.ref) return undefined;
  const holder = collection.get(ref);
  if (holder === undefined) return undefined;
  return `Ref '${ref}' is taken: it is the id of the ${kind} ${quotedName(holder.name ?? holder.id)}, and an id or a ref names one ${kind}.`;
}

/** The refusal of a new resource whose id is another resource's ref (checkOneName). */
function idClash(
  kind: ResourceKind,
  collection: ReadonlyMap<string, Named>,
  refs: ReadonlyMap<string, string>,
  resource: Named,
  before: Named | undefined,
): string | undefined {
  if (before !== undefined) return undefined;
  const holderId = refs.get(resource.id);
  const holder = holderId === undefined || holderId === resource.id ? undefined : collection.get(holderId);
  if (holder === undefined) return undefined;
  return `Id '${resource.id}' is taken: it is the ref of the ${kind} ${quotedName(holder.name ?? holder.id)}, and an id or a ref names one ${kind}.`;
}

/**
 * The same rule among one diagram's nested elements (see checkOneName), each clash at its field
 * (`componentInstances.2.ref`): an instance's ref that is another instance's id; and a ref held by
 * two instances, two text areas or two relations, which a write of the diagram could then name
 * neither by (a write refuses it: `Ref '…' is used more than once.`), while a merge of two sides
 * or a push could bring it. A pair the diagram already had, named so, is its own.
 */
function nestedRefClashes(diagram: Diagram, before: Diagram | undefined): Array<{ field: string; message: string }> {
  const clashes: Array<{ field: string; message: string }> = [];
  const instances = diagram.componentInstances;
  const ids = new Set(instances.map((i) => i.id));
  for (const list of ['componentInstances', 'textareas', 'relations'] as const) {
    const elements: ReadonlyArray<{ id: string; ref?: string }> = diagram[list];
    if (!elements.some((e) => e.ref !== undefined)) continue;
    const old = new Map((before?.[list] ?? []).map((e: { id: string; ref?: string }) => [e.id, e.ref]));
    const holders = new Map<string, string>();
    for (const [index, element] of elements.entries()) {
      const { ref } = element;
      if (ref === undefined) continue;
      const field = `${list}.${index}.ref`;
      if (list === 'componentInstances' && ref !== element.id && ids.has(ref) && !(old.get(element.id) === ref && old.has(ref))) {
        clashes.push({
          field,
          message: `Ref '${ref}' is taken: it is the id of another component instance of this diagram, and an id or a ref names one instance.`,
        });
      }
      const holder = holders.get(ref);
      if (holder === undefined) holders.set(ref, element.id);
      else if (!(old.get(element.id) === ref && old.get(holder) === ref))
        clashes.push({ field, message: `Ref '${ref}' is used more than once.` });
    }
  }
  return clashes;
}

/**
 * A type's slug names one type (a component's `typeSlug`, an attribute's `forTypes`, the drawing's
 * shape): the refusal of a type that brings in a slug another type of `types` has. Types come
 * only by push; a type whose slug did not change (`previous`: the type as it was) is not refused,
 * so a pair already stored is still read and pushed back.
 */
function slugClash(
  types: ReadonlyMap<string, ComponentType>,
  type: ComponentType,
  previous: ComponentType | undefined,
): string | undefined {
  if (previous?.slug === type.slug) return undefined;
  for (const other of types.values()) {
    if (other.id !== type.id && other.slug === type.slug) return `Slug '${type.slug}' is used more than once.`;
  }
  return undefined;
}

/**
 * checkOneName on every resource of `model` that is not the very object of `before` (a push:
 * the commit before it; files that did not change are loaded as the same objects), each
 * problem on the resource that brings it.
 */
export function nameProblems(model: Model, before: Model | undefined): ModelProblem[] {
  const problems: ModelProblem[] = [];
  if (model.types !== before?.types) {
    for (const type of model.types.values()) {
      const previous = before?.types.get(type.id);
      if (previous === type) continue;
      const clash = slugClash(model.types, type, previous);
      if (clash !== undefined) problems.push({ kind: 'type', id: type.id, message: clash });
    }
  }
  for (const kind of NAMED_KINDS) {
    const resources = namedOf(model, kind);
    const old = before && namedOf(before, kind);
    if (resources === old) continue;
    let refs: Map<string, string> | undefined;
    for (const resource of resources.values()) {
      const previous = old?.get(resource.id);
      if (previous === resource) continue;
      if (refs === undefined) {
        refs = new Map();
        for (const each of resources.values()) if (each.ref !== undefined) refs.set(each.ref, each.id);
      }
      try {
        checkOneName(kind, resources, refs, resource, previous);
      } catch (err) {
        if (err instanceof ModelError) problems.push({ kind, id: resource.id, message: err.message, context: err.context });
        else throw err;
      }
    }
  }
  return problems;
}

/** A broken rule, on the resource (`kind`, `id`) whose file holds it. */
export interface ModelProblem {
  kind: 'type' | 'tag' | 'attribute' | 'component' | 'diagram';
  id: string;
  /** The rule's text. */
  message: string;
  /** What it concerns besides (ModelError.context: `attribute 'Team'`); none when absent. */
  context?: readonly string[];
  /** The field of the file the rule is broken at (`ref`, `componentInstances.2.ref`), where the message does not say. */
  field?: string;
}

/** Every rule over the whole model, every problem (`c4store check` lists them all). */
export function modelProblems(model: Model): ModelProblem[] {
  const problems: ModelProblem[] = [];
  const check = (kind: ModelProblem['kind'], id: string, run: () => void) => {
    try {
      run();
    } catch (err) {
      if (err instanceof ModelError) problems.push({ kind, id, message: err.message, context: err.context });
      else throw err;
    }
  };
  for (const attribute of model.attributes.values()) check('attribute', attribute.id, () => checkAttribute(model, attribute));
  for (const component of model.components.values()) check('component', component.id, () => checkComponent(model, component));
  for (const diagram of model.diagrams.values()) check('diagram', diagram.id, () => checkDiagram(model, diagram));
  // An id names one resource of the organization (CONTRACT §7): the API refuses a second one,
  // and a merge or a push must not make one either.
  const holders = new Map<string, ResourceKind>();
  for (const id of model.types.keys()) holders.set(id, 'type');
  for (const kind of NAMED_KINDS) {
    const refs = new Set<string>();
    for (const resource of namedOf(model, kind).values()) {
      const holder = holders.get(resource.id);
      if (holder === undefined) holders.set(resource.id, kind);
      else
        problems.push({
          kind,
          id: resource.id,
          message: `Id '${resource.id}' is held by the ${holder} '${resource.id}' as well: ids are unique across the organization.`,
        });
      if (resource.ref === undefined) continue;
      if (refs.has(resource.ref)) problems.push({ kind, id: resource.id, message: `Ref '${resource.ref}' is used more than once.` });
      refs.add(resource.ref);
    }
  }
  return problems;
}

/** Every rule over the whole model: a repository's content is only served when this passes. */
export function checkModel(model: Model): void {
  const [first] = modelProblems(model);
  if (first) throw new ModelError(`${resourcePath(first.kind, first.id)}: ${first.message}`, first.context);
}

/**
 * The one-name rule (checkOneName) on a model without a history, a folder that `c4store check`
 * reads: each ref is held against the ids of its kind as if it came in now, beside ids that were
 * already there, which is what a push bringing the folder in would be refused for. Each clash is
 * one problem, on the resource whose ref takes another's id, at that ref (`field`): the other
 * side of the same pair (`Id '…' is taken`, which a push may say instead, depending on which of
 * the two it brings) would only say it again. A pair committed before the rule, which the
 * service still reads and a push leaving it alone still passes, is reported all the same: a
 * folder does not tell which of its refs is older.
 */
export function folderNameProblems(model: Model): ModelProblem[] {
  const problems: ModelProblem[] = [];
  // Each type whose slug an earlier one has, at its slug.
  const slugs = new Map<string, ComponentType>();
  for (const type of model.types.values()) {
    const clash = slugClash(slugs, type, undefined);
    if (clash !== undefined) problems.push({ kind: 'type', id: type.id, message: clash, field: 'slug' });
    else slugs.set(type.id, type);
  }
  for (const kind of NAMED_KINDS) {
    const resources = namedOf(model, kind);
    for (const resource of resources.values()) {
      const clash = refClash(kind, resources, resource, { id: resource.id });
      if (clash !== undefined) problems.push({ kind, id: resource.id, message: clash, field: 'ref' });
      if (kind !== 'diagram') continue;
      for (const { field, message } of nestedRefClashes(resource as Diagram, undefined)) {
        problems.push({ kind, id: resource.id, message, field });
      }
    }
  }
  return problems;
}

/** nameProblems' first problem, thrown as checkModel throws (a push: its commits one by one). */
export function checkNewNames(model: Model, before: Model | undefined): void {
  checkSlugKept(model.organization, before?.organization);
  const [first] = nameProblems(model, before);
  if (first) throw new ModelError(`${resourcePath(first.kind, first.id)}: ${first.message}`, first.context);
}

/** A resource a change brought or replaced: as it now is, and what it replaced (undefined: new). */
export interface ChangedResource {
  kind: ResourceKind;
  now: Named;
  before: Named | undefined;
}

/**
 * What a change did to a model that passed checkModel and checkNewNames before it (a pushed
 * commit against the one checked before it, push/check.ts): the resources it brought or replaced,
 * the ones it removed, and whether it changed organization.yaml.
 */
export interface ModelChange {
  changed: readonly ChangedResource[];
  removed: ReadonlyArray<{ kind: ResourceKind; id: string }>;
  /** What organization.yaml held before, when the change rewrote it. */
  organization: Organization | undefined;
}

/**
 * The refs of a model's resources of each named kind (ref → id), kept through its changes, so
 * that a change is checked against them without going over every resource (checkModelChange).
 * Made from a model that passed checkModel: no ref is held twice.
 */
export class RefIndex {
  private readonly byKind = new Map<ResourceKind, Map<string, string>>();

  constructor(model: Model) {
    for (const kind of NAMED_KINDS) {
      const refs = new Map<string, string>();
      for (const resource of namedOf(model, kind).values()) if (resource.ref !== undefined) refs.set(resource.ref, resource.id);
      this.byKind.set(kind, refs);
    }
  }

  /** ref → id of the resources of `kind`. */
  of(kind: ResourceKind): ReadonlyMap<string, string> {
    return this.byKind.get(kind) ?? new Map();
  }

  /**
   * Takes in a change (its refs as they now are), and returns the resources whose ref another
   * resource of their kind holds as well: modelProblems' `Ref '…' is used more than once.`,
   * asked of what changed alone.
   */
  apply(change: ModelChange): ChangedResource[] {
    const refsOf = (kind: ResourceKind) => this.byKind.get(kind);
    // Every ref the change took away first: two resources may trade refs in one change.
    for (const { kind, before } of change.changed) {
      const refs = refsOf(kind);
      if (refs && before?.ref !== undefined && refs.get(before.ref) === before.id) refs.delete(before.ref);
    }
    const clashes: ChangedResource[] = [];
    for (const changed of change.changed) {
      const refs = refsOf(changed.kind);
      const { ref, id } = changed.now;
      if (refs === undefined || ref === undefined) continue;
      const holder = refs.get(ref);
      if (holder !== undefined && holder !== id) clashes.push(changed);
      else refs.set(ref, id);
    }
    return clashes;
  }
}

/** `model`'s resources of `kind`, types included. */
function resourcesOf(model: Model, kind: ResourceKind): ReadonlyMap<string, Named> {
  return kind === 'type' ? model.types : namedOf(model, kind);
}

/**
 * checkModel on a model that passed it before `change` (ModelChange): the same rules, run only on
 * what the change can have broken. A resource's own rules (checkAttribute, checkComponent,
 * checkDiagram) look at the resource and at whether the ids it names exist, at the types' slugs,
 * at the attributes and at the organization's members: so a change that removes a resource,
 * or changes a type, an attribute or organization.yaml, is checked over the whole model, as
 * checkModel does; any other is checked on the resources it brought or replaced, with the
 * model-wide rules (an id held once across the organization, a ref once in its kind) asked of
 * those alone (`refs`, the model's refs after the change).
 *
 * Throws a ModelError when the model breaks a rule, though not necessarily at the problem
 * checkModel names first: for checkModel's message, ask checkModel.
 */
export function checkModelChange(model: Model, change: ModelChange, refs: RefIndex): void {
  const clashes = refs.apply(change);
  if (change.organization || change.removed.length > 0 || change.changed.some(({ kind }) => kind === 'type' || kind === 'attribute')) {
    checkModel(model);
  }
  for (const { kind, now } of clashes) throw new ModelError(`${resourcePath(kind, now.id)}: Ref '${now.ref}' is used more than once.`);
  for (const { kind, now } of change.changed) {
    const id = now.id;
    if (kind === 'component') checkComponent(model, now as Component);
    else if (kind === 'diagram') checkDiagram(model, now as Diagram);
    else if (kind === 'attribute') checkAttribute(model, now as Attribute);
    for (const other of ['type', ...NAMED_KINDS] as const) {
      if (other !== kind && resourcesOf(model, other).has(id)) {
        throw new ModelError(
          `${resourcePath(kind, id)}: Id '${id}' is held by the ${other} '${id}' as well: ids are unique across the organization.`,
        );
      }
    }
  }
}

/**
 * An organization's slug is the name of its repository, in every address of it (a diagram's `url`,
 * the viewer's pages, git's): organization.yaml keeps the one it was made with. Only a push or a
 * merge of a pushed draft could change it; `before`: the organization as the commit before held it.
 */
function checkSlugKept(organization: Organization, before: Organization | undefined): void {
  if (before === undefined || organization.slug === before.slug) return;
  throw new ModelError(
    `${ORGANIZATION_FILE}: The slug stays '${before.slug}': it is the organization's name in every address of it, not '${organization.slug}'.`,
  );
}

/** checkNewNames on what `change` brought or replaced alone, the model's refs after it in `refs`. */
export function checkNewNamesOfChange(model: Model, change: ModelChange, refs: RefIndex): void {
  checkSlugKept(model.organization, change.organization);
  for (const { kind, now, before } of change.changed) {
    if (kind === 'type') {
      const clash = slugClash(model.types, now as ComponentType, before as ComponentType | undefined);
      if (clash !== undefined) throw new ModelError(`${resourcePath(kind, now.id)}: ${clash}`);
      continue;
    }
    try {
      checkOneName(kind, namedOf(model, kind as (typeof NAMED_KINDS)[number]), refs.of(kind), now, before);
    } catch (err) {
      if (err instanceof ModelError) throw new ModelError(`${resourcePath(kind, now.id)}: ${err.text}`, err.context);
      throw err;
    }
  }
}
