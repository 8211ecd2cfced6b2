import { ApiError, ModelError } from '../../errors.js';
import type { ComponentInput } from '../schemas.js';
import type { Component, ComponentType, Model } from '../types.js';
import type { Draft, Target } from '../draft.js';
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
): Component {
  const name = input.name ?? (target.existing as Component | undefined)?.name;
  // A schema-style refusal: its path already names the element.
  if (name === undefined) throw new ApiError(400, `Invalid JSON: ${path}.name: Required`);
  return {
    id: target.id,
    ref: input.ref,
    name,
    desc: input.desc ?? null,
    state: input.state ?? 'DRAFT',
    typeId: resolveType(draft.base, input),
    apiContext: input.apiContext ?? draft.options.apiContext,
    linksTo: distinct((input.linksTo ?? []).map((name) => components.resolve(name)),
      (id) => `Component with id '${id}' is given more than once in linksTo.`),
    attributes: (input.attributes ?? []).map((a) => ({ id: a.id, value: a.value })),
  };
}
