import type { TagInput } from '../schemas.js';
import type { Tag } from '../types.js';
import { resolveTargets, type Draft } from '../draft.js';

export function writeTags(draft: Draft, body: TagInput[]): Tag[] {
  const targets = resolveTargets(draft, 'tag', body);
  return body.map((input, i) =>
    draft.put<Tag>('tag', {
      id: targets[i].id,
      ref: input.ref,
      name: input.name,
      desc: input.desc ?? null,
      color: input.color,
      apiContext: input.apiContext ?? draft.options.apiContext,
    }, input.apiContext !== undefined),
  );
}
