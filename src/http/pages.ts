/**
 * Pages of a list in the list's own order, the cursor found without a scan: a cursor deep in
 * a 100,000-item list costs what the first page does. Each collection's index (the items in
 * list order, and each id's place) is built once, in one pass, and kept while the collection
 * is: a snapshot's collections never change.
 *
 * List order is the collections' own: id order (model/layered-map.ts keeps a write's snapshot
 * in it, loads fill in it), which for generated ids is creation order. A cursor whose resource
 * is gone since (deleted between two pages) continues at the first item after it, found by
 * binary search over the ids.
 */
interface ListIndex<T extends { id: string }> {
  list: readonly T[];
  place: ReadonlyMap<string, number>;
  /** Built only for a cursor that is no longer in the list. */
  sorted?: readonly T[];
}

const indexes = new WeakMap<ReadonlyMap<string, unknown>, ListIndex<{ id: string }>>();

function indexOf<T extends { id: string }>(items: ReadonlyMap<string, T>): ListIndex<T> {
  let index = indexes.get(items) as ListIndex<T> | undefined;
  if (index === undefined) {
    const list = Array.from(items.values());
    index = { list, place: new Map(list.map((item, i) => [item.id, i])) };
    indexes.set(items, index as ListIndex<{ id: string }>);
  }
  return index;
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

function startAfter<T extends { id: string }>(index: ListIndex<T>, cursor: string): number {
  const at = index.place.get(cursor);
  if (at !== undefined) return at + 1;
  index.sorted ??= [...index.list].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const next = index.sorted[firstAfter(index.sorted, cursor)];
  return next === undefined ? index.list.length : index.place.get(next.id)!;
}

/** Up to `limit` items after `cursor` (from the start without one), and whether more follow. */
export function pageAfter<T extends { id: string }>(
  items: ReadonlyMap<string, T>,
  cursor: string | undefined,
  limit: number,
): { page: T[]; more: boolean } {
  const index = indexOf(items);
  const start = cursor === undefined ? 0 : startAfter(index, cursor);
  return { page: index.list.slice(start, start + limit), more: start + limit < index.list.length };
}
