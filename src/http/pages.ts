/**
 * Pages of a list in id order, found by binary search: a cursor deep in a 100,000-item list
 * costs what the first page does. The sorted array of a collection is built once (one pass
 * over the map, a sort only if it is not already in id order) and kept while the collection
 * is: a snapshot's collections never change.
 */
const sortedCollections = new WeakMap<ReadonlyMap<string, unknown>, ReadonlyArray<{ id: string }>>();

function sortedById<T extends { id: string }>(items: ReadonlyMap<string, T>): readonly T[] {
  let sorted = sortedCollections.get(items) as readonly T[] | undefined;
  if (sorted === undefined) {
    const values = Array.from(items.values());
    let inOrder = true;
    for (let i = 1; i < values.length && inOrder; i++) inOrder = values[i - 1]!.id < values[i]!.id;
    if (!inOrder) values.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    sortedCollections.set(items, (sorted = values));
  }
  return sorted;
}

/** The index of the first item whose id sorts after `cursor`. */
function firstAfter(sorted: ReadonlyArray<{ id: string }>, cursor: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]!.id <= cursor) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Up to `limit` items with ids after `cursor` (from the start without one), and whether more follow. */
export function pageAfter<T extends { id: string }>(items: ReadonlyMap<string, T>, cursor: string | undefined, limit: number): { page: T[]; more: boolean } {
  const sorted = sortedById(items);
  const start = cursor === undefined ? 0 : firstAfter(sorted, cursor);
  return { page: sorted.slice(start, start + limit), more: start + limit < sorted.length };
}
