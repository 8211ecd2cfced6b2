/**
 * Snapshots of earlier commits (`?at=`), kept for every organization of the server within one
 * budget of bytes, least recently used first out. A count would not bound memory: one snapshot
 * of a large model with its serialized responses can weigh hundreds of MB, one of a small
 * model a few KB. The tip of each organization's `main` is not counted here: it is needed anyway.
 */
import type { Model } from '../model/types.js';

/** Serialized GET bodies of one snapshot, keeping count of their bytes. */
export class ResponseCache extends Map<string, Buffer> {
  bytes = 0;
  /** Called after each new body, so that the cache holding the snapshot can stay in its budget. */
  onGrow: (() => void) | undefined;

  override set(key: string, body: Buffer): this {
    this.bytes += body.length - (super.get(key)?.length ?? 0);
    super.set(key, body);
    this.onGrow?.();
    return this;
  }
}

/** What a snapshot keeps in memory besides what is counted exactly (the responses). */
export interface Kept<S> {
  readonly snapshot: S;
  readonly modelBytes: number;
  readonly responses: ResponseCache;
}

export const DEFAULT_SNAPSHOT_CACHE_BYTES = 256 * 1024 * 1024;

/**
 * Memory a model takes, estimated from its JSON text: parsed objects, maps and strings cost more
 * than the text they came from. 20,000 components parsed into a Map took 1.6 times their JSON
 * length of heap (Node 20, after gc); 3 leaves room for what the loader's indexes add.
 */
export function estimateModelBytes(model: Model): number {
  let text = JSON.stringify(model.organization).length;
  for (const collection of [model.types, model.tags, model.attributes, model.components, model.diagrams] as ReadonlyMap<
    string,
    unknown
  >[]) {
    for (const resource of collection.values()) text += JSON.stringify(resource).length;
  }
  return 3 * text;
}

export class SnapshotCache<S> {
  private readonly entries = new Map<string, Kept<S>>();
  private used = 0;

  constructor(readonly capacity: number = DEFAULT_SNAPSHOT_CACHE_BYTES) {}

  /** Bytes held now: never more than `capacity` once a call has returned. */
  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  get(owner: string, commit: string): S | undefined {
    const key = `${owner}\0${commit}`;
    const kept = this.entries.get(key);
    if (kept === undefined) return undefined;
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(key);
    this.entries.set(key, kept);
    return kept.snapshot;
  }

  /** Keeps the snapshot if it fits at all, evicting the least recently used ones to make room. */
  put(owner: string, commit: string, kept: Kept<S>): void {
    const key = `${owner}\0${commit}`;
    this.remove(key);
    if (kept.modelBytes + kept.responses.bytes > this.capacity) return;
    this.entries.set(key, kept);
    this.used += kept.modelBytes + kept.responses.bytes;
    let counted = kept.responses.bytes;
    kept.responses.onGrow = () => {
      if (this.entries.get(key) !== kept) return;
      this.used += kept.responses.bytes - counted;
      counted = kept.responses.bytes;
      this.shrink();
    };
    this.shrink();
  }

  /** Drops every snapshot of one owner (an organization removed, or given a new identity). */
  dropOwner(owner: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(`${owner}\0`)) this.remove(key);
  }

  private shrink(): void {
    for (const key of this.entries.keys()) {
      if (this.used <= this.capacity) return;
      this.remove(key);
    }
  }

  private remove(key: string): void {
    const kept = this.entries.get(key);
    if (kept === undefined) return;
    this.entries.delete(key);
    kept.responses.onGrow = undefined;
    this.used -= kept.modelBytes + kept.responses.bytes;
  }
}
