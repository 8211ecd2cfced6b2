/**
 * A map made of a shared base and a few changes of its own: what a write step builds instead
 * of copying a 10,000-entry Map (~3 ms per write at 10,000 components, more than the commit)
 * to change one entry in it.
 *
 * It iterates in key order, given a base in key order: a changed key keeps its place and new
 * keys are merged in where they sort. The model's collections are keyed by id and loaded in id
 * order, so every snapshot of a commit lists its resources in one order, whether it was loaded
 * or made by a write (where a Map would put new keys last: a client-chosen id `alpha` created
 * after `zeta` came after it until the next restart, and two processes answered one commit, and
 * one ETag, with two orders).
 *
 * Layers never stack: a map over a LayeredMap shares that map's base and copies only its
 * changes. Once there are more than √(2n) of them (n: the base's size) they are merged into a
 * new plain Map: a write then copies about √(n/2) changes on average plus one n-entry merge
 * every √(2n) writes, √(2n) in all, the least that scheme allows (~140 entries at n = 10,000).
 * A lookup is at most two Map lookups.
 *
 * Only whoever called over() may set or delete, and only before handing the map to others:
 * the model's collections are ReadonlyMaps everywhere else.
 */
const REMOVED: unique symbol = Symbol('removed');

export class LayeredMap<K, V> implements ReadonlyMap<K, V> {
  /** The keys set here that the base does not have, in key order (built when first iterated). */
  private added: K[] | null = null;

  private constructor(
    private readonly base: ReadonlyMap<K, V>,
    private readonly changes: Map<K, V | typeof REMOVED>,
    private count: number,
  ) {}

  /** A map with the same entries as `source`, which set() and delete() may then change without touching `source`. */
  static over<K, V>(source: ReadonlyMap<K, V>): LayeredMap<K, V> {
    if (!(source instanceof LayeredMap)) return new LayeredMap(source, new Map(), source.size);
    const layered = source as LayeredMap<K, V>;
    if (layered.changes.size > Math.sqrt(2 * layered.base.size)) {
      return new LayeredMap(layered.merged(), new Map(), layered.count);
    }
    return new LayeredMap(layered.base, new Map(layered.changes), layered.count);
  }

  get size(): number {
    return this.count;
  }

  get(key: K): V | undefined {
    const changed = this.changes.get(key);
    if (changed === REMOVED) return undefined;
    return changed !== undefined || this.changes.has(key) ? (changed as V) : this.base.get(key);
  }

  has(key: K): boolean {
    const changed = this.changes.get(key);
    if (changed === REMOVED) return false;
    return changed !== undefined || this.changes.has(key) || this.base.has(key);
  }

  set(key: K, value: V): this {
    if (!this.has(key)) this.count++;
    this.changes.set(key, value);
    this.added = null;
    return this;
  }

  delete(key: K): boolean {
    if (!this.has(key)) return false;
    this.count--;
    this.added = null;
    if (this.base.has(key)) this.changes.set(key, REMOVED);
    else this.changes.delete(key);
    return true;
  }

  *entries(): MapIterator<[K, V]> {
    if (this.changes.size === 0) {
      yield* this.base.entries();
      return;
    }
    const added = this.addedInOrder();
    let next = 0;
    for (const [key, value] of this.base) {
      for (; next < added.length && added[next]! < key; next++) yield [added[next]!, this.changes.get(added[next]!) as V];
      if (!this.changes.has(key)) yield [key, value];
      else {
        const changed = this.changes.get(key)!;
        if (changed !== REMOVED) yield [key, changed];
      }
    }
    for (; next < added.length; next++) yield [added[next]!, this.changes.get(added[next]!) as V];
  }

  /**
   * The entries as one plain Map. When no key was added (updates and deletions: every key keeps
   * its place) that is a native copy of the base with the changes applied: at 10,000 entries
   * ~1.9 ms against ~3 ms for walking entries() (bundled code), once every √(2n) writes.
   */
  private merged(): Map<K, V> {
    if (this.addedInOrder().length > 0) return new Map(this);
    const merged = new Map(this.base);
    for (const [key, value] of this.changes) {
      if (value === REMOVED) merged.delete(key);
      else merged.set(key, value);
    }
    return merged;
  }

  private addedInOrder(): K[] {
    if (this.added === null) {
      this.added = [];
      for (const [key, value] of this.changes) if (value !== REMOVED && !this.base.has(key)) this.added.push(key);
      this.added.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    }
    return this.added;
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }
}
