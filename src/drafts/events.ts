/**
 * The seam for the change feed: every change of a draft's life is told here, once it is done.
 * Writes to a draft's branch are told like every commit, by OrgSettings.afterCommit with the
 * draft's ref; this adds what is not a plain write: opened, merged (or updated with main),
 * closed, reopened. Listeners must not throw or block: they are called synchronously.
 */
export interface DraftEvent {
  type: 'opened' | 'updated' | 'merged' | 'closed' | 'reopened';
  org: string;
  draft: string;
  /** The draft's head; for `merged`, the merge commit on main; for `updated`, the merge commit on the draft. */
  commit: string;
}

export type DraftListener = (event: DraftEvent) => void;

const listeners = new Set<DraftListener>();

/** Starts telling `listener` of draft events; returns how to stop. */
export function onDraftEvent(listener: DraftListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function emitDraftEvent(event: DraftEvent): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // A listener's failure is its own; the draft's change is done.
    }
  }
}
