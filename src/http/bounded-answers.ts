/**
 * Answers kept for the whole server in one store of bounded size, least recently used first
 * out, for the answers whose keys a client can vary without end: filtered lists (every filter
 * and value, filtered-list.ts) and pictures (a PNG at any `?scale=`, viewer/svg-response.ts).
 * Kept in a snapshot's own `responses`, whose other keys are few, they would grow with every
 * new key asked for until the next commit. Each snapshot sees a view of its own, so that its
 * keys are its own.
 */
import type { Snapshot } from '../service/org.js';
import type { AnswerStore } from './respond.js';

export class BoundedAnswers {
  private readonly entries = new Map<string, Buffer>();
  private used = 0;
  /** One view per snapshot, so that its keys are its own and builds under way are shared. */
  private readonly views = new WeakMap<Snapshot['responses'], AnswerStore>();
  private serial = 0;

  constructor(readonly capacity: number) {}

  /** Bytes held now: never more than `capacity`. */
  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  of(snapshot: Snapshot): AnswerStore {
    let view = this.views.get(snapshot.responses);
    if (view === undefined) {
      const prefix = `${++this.serial}\0`;
      view = { get: (key) => this.get(prefix + key), set: (key, body) => this.set(prefix + key, body) };
      this.views.set(snapshot.responses, view);
    }
    return view;
  }

  private get(key: string): Buffer | undefined {
    const body = this.entries.get(key);
    if (body !== undefined) {
      // Most recently used last: a Map keeps insertion order.
      this.entries.delete(key);
      this.entries.set(key, body);
    }
    return body;
  }

  private set(key: string, body: Buffer): void {
    if (body.length > this.capacity) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.used -= old.length;
    }
    for (const [oldest, oldBody] of this.entries) {
      if (this.used + body.length <= this.capacity) break;
      this.entries.delete(oldest);
      this.used -= oldBody.length;
    }
    this.entries.set(key, body);
    this.used += body.length;
  }
}
