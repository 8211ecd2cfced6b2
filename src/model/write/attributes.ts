import { distinct } from './references.js';
import type { AttributeInput } from '../schemas.js';
import type { Attribute } from '../types.js';
import { resolveTargets, type Draft, type Target } from '../draft.js';
import { concerning, quotedName } from '../../errors.js';
import { checkAttribute, checkComponentsAgainstAttribute } from '../rules.js';

/** `createOnly`: the PUT form, where an element with an id is refused. */
export async function writeAttributes(draft: Draft, body: AttributeInput[], createOnly: boolean): Promise<Attribute[]> {
  const targets = await resolveTargets(draft, 'attribute', body, {
    refuseIds: createOnly ? 'An id must not be supplied when creating attributes with PUT; use POST to update.' : undefined,
  });
  return writeAttributesResolved(
    draft,
    body.map((input, i) => ({ input, target: targets[i] })),
  );
}

/**
 * Attributes whose targets are decided (by resolveTargets, or by the current form's rules in
 * current.ts). A refusal names the element of the body (`element 0 'Team'`), or, for a body of one
 * object (`single`), the attribute (`attribute 'Team'`).
 */
export function writeAttributesResolved(
  draft: Draft,
  items: Array<{ input: AttributeInput; target: Target }>,
  single = false,
): Attribute[] {
  const element = (i: number, attribute: { name: string }) =>
    single ? `attribute ${quotedName(attribute.name)}` : `element ${i} ${quotedName(attribute.name)}`;
  const attributes = items.map(({ input, target }, i) =>
    draft.put<Attribute>(
      'attribute',
      {
        id: target.id,
        ref: input.ref,
        name: input.name,
        type: input.type,
        desc: input.desc ?? null,
        required: input.required ?? false,
        forTypes: concerning(element(i, input), () =>
          distinct(input.forTypes ?? [], (slug) => `Type '${slug}' is given more than once in forTypes.`),
        ),
        apiContext: input.apiContext ?? draft.options.apiContext,
        list: input.list,
      },
      input.apiContext !== undefined,
    ),
  );
  for (const [i, attribute] of attributes.entries()) concerning(element(i, attribute), () => checkAttribute(draft.model, attribute));
  // Only what changed is checked against the components; an unchanged attribute is the stored object.
  for (const [i, attribute] of attributes.entries()) {
    if (attribute === draft.base.attributes.get(attribute.id)) continue;
    concerning(element(i, attribute), () => checkComponentsAgainstAttribute(draft.model, attribute));
  }
  return attributes;
}
