import type { TagInput } from '../schemas.js';
import type { Tag } from '../types.js';
import { resolveTargets, type Draft, type Target } from '../draft.js';

export async function writeTags(draft: Draft, body: TagInput[]): Promise<Tag[]> {
  const targets = await resolveTargets(draft, 'tag', body);
  return writeTagsResolved(
    draft,
    body.map((input, i) => ({ input, target: targets[i] })),
  );
}

/** Tags whose targets are decided (by resolveTargets, or by the current form's rules in current.ts). */
export function writeTagsResolved(draft: Draft, items: Array<{ input: TagInput; target: Target }>): Tag[] {
  return items.map(({ input, target }) =>
    draft.put<Tag>(
      'tag',
      {
        id: target.id,
        ref: input.ref,
        name: input.name,
        desc: input.desc ?? null,
        color: input.color,
        apiContext: input.apiContext ?? draft.options.apiContext,
      },
      input.apiContext !== undefined,
    ),
  );
}
