import { ModelError } from '../../errors.js';
import { isGeneratedId } from '../ids.js';
import { refIndex, type Draft, type Identified, type Target } from '../draft.js';

/**
 * Resolves what a request names by id or by ref: refs of the request itself first (they may
 * be used before the element that defines them), then ids, then refs already stored.
 */
export class References {
  private readonly requestRefs = new Map<string, string>();
  private readonly requestIds = new Set<string>();

  constructor(
    private readonly stored: ReadonlyMap<string, Identified>,
    elements: ReadonlyArray<{ ref?: string }>,
    targets: Target[],
    private readonly unresolved: (name: string) => string,
  ) {
    elements.forEach((element, i) => {
      this.requestIds.add(targets[i].id);
      if (element.ref !== undefined) this.requestRefs.set(element.ref, targets[i].id);
    });
  }

  resolve(name: string): string {
    const id = this.requestRefs.get(name) ?? (this.stored.has(name) || this.requestIds.has(name) ? name : refIndex(this.stored).get(name));
    if (id === undefined) throw new ModelError(this.unresolved(name));
    return id;
  }
}

export function componentReferences(draft: Draft, elements: ReadonlyArray<{ ref?: string }>, targets: Target[]) {
  return new References(draft.base.components, elements, targets, (name) =>
    isGeneratedId(name) ? `Component with id '${name}' does not exist.` : `Ref '${name}' does not resolve to a component.`,
  );
}

export function diagramReferences(draft: Draft, elements: ReadonlyArray<{ ref?: string }>, targets: Target[]) {
  return new References(draft.base.diagrams, elements, targets, (name) =>
    isGeneratedId(name) ? `Diagram with id '${name}' does not exist.` : `Ref '${name}' does not resolve to a diagram.`,
  );
}

/** `ids` as given, refused when one of them is named twice (directly, or by id and by ref). */
export function distinct(ids: string[], duplicate: (id: string) => string): string[] {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw new ModelError(duplicate(id));
    seen.add(id);
  }
  return ids;
}
