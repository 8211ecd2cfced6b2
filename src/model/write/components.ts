import { ApiError, ModelError } from '../../errors.js';
import type { ComponentInput } from '../schemas.js';
import type { AttributeValueType, Component, ComponentType, Model } from '../types.js';
import type { Draft, Target } from '../draft.js';
import { memberCalled } from '../rules.js';
import { distinct, type References } from './references.js';

function resolveType(model: Model, input: ComponentInput): string | null {
  const byId = input.typeId ?? null;
  const bySlug = input.typeSlug ?? null;
  let type: ComponentType | undefined;
  if (byId !== null) {
    type = model.types.get(byId);
    if (!type) throw new ModelError(`Type with id '${byId}' does not exist.`);
  }
  if (bySlug !== null) {
    const slugged = [...model.types.values()].find((t) => t.slug === bySlug);
    if (!slugged) throw new ModelError(`Type with slug '${bySlug}' does not exist.`);
    if (type && type.id !== slugged.id) {
      throw new ModelError(`typeId '${byId}' and typeSlug '${bySlug}' name different types.`);
    }
    type = slugged;
  }
  return type?.id ?? null;
}

/** The current form's own fields of a component, already in the shape they are stored. */
export interface ComponentExtras {
  inlineDesc: boolean;
  /** Tag ids. */
  tags: string[];
  /** Ids or refs (of the request) of diagrams: the current form's `linksTo`. */
  linksToDiagrams: string[];
}

/**
 * Builds the full overwrite of one component. `name` is required to create; an update that
 * omits it keeps the stored name, since a nameless component could not be told apart.
 */
export function buildComponent(
  draft: Draft,
  input: ComponentInput,
  target: Target,
  components: References,
  path: string,
  extras?: ComponentExtras,
  diagrams?: References,
): Component {
  const existing = target.existing as Component | undefined;
  const name = input.name ?? existing?.name;
  // A schema-style refusal: its path already names the element.
  if (name === undefined) throw new ApiError(400, `Invalid JSON: ${path === '' ? '' : `${path}.`}name: Required`);
  // A form writes only the fields it knows: the seed's forms keep the diagram links as stored,
  // and `inlineDesc` and `tags` unless they send them.
  const linksToDiagrams = extras
    ? distinct(
        extras.linksToDiagrams.map((name) => diagrams!.resolve(name)),
        (id) => `Diagram with id '${id}' is given more than once in linksTo.`,
      )
    : existing?.linksToDiagrams;
  const tagIds = extras ? extras.tags : (input.tags ?? existing?.tags);
  const tags = tagIds && distinct(tagIds, (id) => `Tag with id '${id}' is given more than once.`);
  const inlineDesc = extras ? extras.inlineDesc : (input.inlineDesc ?? existing?.inlineDesc);
  return {
    id: target.id,
    ref: input.ref,
    name,
    desc: input.desc ?? null,
    state: input.state ?? 'DRAFT',
    typeId: resolveType(draft.base, input),
    apiContext: input.apiContext ?? draft.options.apiContext,
    linksTo: distinct(
      (input.linksTo ?? []).map((name) => components.resolve(name)),
      (id) => `Component with id '${id}' is given more than once in linksTo.`,
    ),
    attributes: (input.attributes ?? []).map((a) => ({ id: a.id, value: asMember(draft.model, a.id, a.value) })),
    inlineDesc: inlineDesc || undefined,
    tags: tags?.length ? tags : undefined,
    linksToDiagrams: linksToDiagrams?.length ? linksToDiagrams : undefined,
  };
}

/**
 * A USERLIST value names a member as the organization spells the address: e-mail addresses are
 * compared without regard to case (as mail systems do), so `Ada@Example.com` is the member
 * `ada@example.com`, stored so. Any other value is left to the rules to judge.
 */
function asMember(model: Model, attributeId: string, value: AttributeValueType): AttributeValueType {
  if (typeof value !== 'string' || model.attributes.get(attributeId)?.type !== 'USERLIST') return value;
  return memberCalled(model.organization.members, value) ?? value;
}
