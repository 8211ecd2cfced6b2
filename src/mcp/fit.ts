/**
 * Tool answers fitted to a prompt's size (docs/api.md §20: at most ANSWER_CHARS characters).
 * An answer too large keeps its shape and is still whole JSON: its largest lists lose their
 * last items (their length kept beside them as `<name>Total`) and its longest texts their ends,
 * largest first, until it fits. So an agent gets real data and knows what it did not get,
 * rather than text cut in the middle of a value.
 */

/** The most characters of text one tool answer carries: a large model is paged, never one huge result. */
export const ANSWER_CHARS = 60_000;

/** What a shortened text ends with. */
const ELLIPSIS = '…';

/**
 * A sentence (a refusal's) within `chars` characters: one longer loses its middle, not its end,
 * since a refusal names what it was given first and says what to use last (`Invalid draft name
 * '<300,000 characters>': use lowercase letters, …`).
 */
export function sentenceWithin(text: string, chars = ANSWER_CHARS): string {
  if (text.length <= chars) return text;
  const half = Math.floor((chars - ELLIPSIS.length) / 2);
  // Not between the two halves of a character outside the BMP.
  const head = /[\uD800-\uDBFF]$/.test(text.slice(0, half)) ? half - 1 : half;
  const tail = /^[\uDC00-\uDFFF]/.test(text.slice(-half)) ? half - 1 : half;
  return `${text.slice(0, head)}${ELLIPSIS}${text.slice(-tail)}`;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Place {
  parent: Json[] | { [key: string]: Json };
  key: string | number;
  /** Its length as JSON. */
  size: number;
}

/** `value` (plain JSON) within `budget` characters of compact JSON, and whether anything was left out. */
export function fitted<T>(value: T, budget = ANSWER_CHARS): { value: T; cut: boolean } {
  if (JSON.stringify(value).length <= budget) return { value, cut: false };
  const root = { value: JSON.parse(JSON.stringify(value)) as Json };
  for (;;) {
    const size = JSON.stringify(root.value).length;
    if (size <= budget) return { value: root.value as T, cut: true };
    const largest = largestPlace(root);
    if (largest === undefined) return { value: root.value as T, cut: true };
    shorten(largest, size - budget, largest.parent === (root as unknown));
  }
}

/**
 * The largest list of several items, or text worth shortening, anywhere in the value. A list
 * keeps its first item, and a list most of which is one item is left for that item's insides:
 * an item too large is shortened inside (a commit keeps its id and title and loses resources),
 * rather than the answer losing it whole.
 */
function largestPlace(root: { value: Json }): Place | undefined {
  let best: Place | undefined;
  const visit = (parent: Place['parent'], key: string | number, value: Json) => {
    if (value === null || typeof value !== 'object') {
      if (typeof value === 'string' && value.length > 2 * ELLIPSIS.length) {
        const size = JSON.stringify(value).length;
        if (best === undefined || size > best.size) best = { parent, key, size };
      }
      return;
    }
    const size = JSON.stringify(value).length;
    if (Array.isArray(value) && value.length > 1 && (best === undefined || size > best.size) && !dominated(value, size)) {
      best = { parent, key, size };
    }
    if (Array.isArray(value)) for (const [index, item] of value.entries()) visit(value, index, item);
    else for (const [name, item] of Object.entries(value)) visit(value, name, item);
  };
  visit(root as unknown as { [key: string]: Json }, 'value', root.value);
  return best;
}

/**
 * Whether one item makes up most of a list: then that item is shortened inside rather than the
 * list losing its others (a history keeps its commits when one of them touched thousands of files).
 */
function dominated(list: readonly Json[], size: number): boolean {
  return list.some((item) => 2 * JSON.stringify(item).length > size);
}

/** Takes `excess` characters out of the list or text at `place`, or as many as it has but its first item. */
function shorten(place: Place, excess: number, isRoot: boolean): void {
  const container = place.parent as Record<string | number, Json>;
  const value = container[place.key]!;
  if (typeof value === 'string') {
    container[place.key] = value.slice(0, Math.max(0, value.length - excess - 2 * ELLIPSIS.length)) + ELLIPSIS;
    return;
  }
  const list = value as Json[];
  const total = list.length;
  let removed = 0;
  while (list.length > 1 && removed < excess) removed += JSON.stringify(list.pop()).length + 1;
  // Where it is a field, its whole length stays beside it (a list in a list has no name to say it by).
  if (!isRoot && !Array.isArray(place.parent) && typeof place.key === 'string') {
    const totalKey = `${place.key}Total`;
    if (!(totalKey in place.parent)) place.parent[totalKey] = total;
  }
}
