import { ApiError } from '../../errors.js';
import { kindName, type Draft, type Identified } from '../draft.js';
import { collectionOf } from '../files.js';
import { checkComponent, checkDiagram } from '../rules.js';
import type { Component, Diagram, Model } from '../types.js';

export type DeletableKind = 'tag' | 'attribute' | 'component' | 'diagram';

/** A resource that names the one being deleted, and how to write it without that name. */
interface Referrer {
  kind: 'component' | 'diagram';
  id: string;
  name: string;
  /** What names the deleted resource, for the error text. */
  how: string;
  without: () => Component | Diagram;
}

function componentReferrers(model: Model, kind: DeletableKind, id: string): Referrer[] {
  const referrers: Referrer[] = [];
  for (const c of model.components.values()) {
    const hows: string[] = [];
    const next: Component = { ...c };
    if (kind === 'component' && c.linksTo.includes(id)) {
      hows.push('linksTo');
      next.linksTo = c.linksTo.filter((x) => x !== id);
    }
    if (kind === 'tag' && c.tags?.includes(id)) {
      hows.push('tags');
      const tags = c.tags.filter((x) => x !== id);
      next.tags = tags.length > 0 ? tags : undefined;
    }
    if (kind === 'attribute' && c.attributes.some((a) => a.id === id)) {
      hows.push('a value');
      next.attributes = c.attributes.filter((a) => a.id !== id);
    }
    if (kind === 'diagram' && c.linksToDiagrams?.includes(id)) {
      hows.push('linksTo');
      const links = c.linksToDiagrams.filter((x) => x !== id);
      next.linksToDiagrams = links.length > 0 ? links : undefined;
    }
    if (hows.length > 0) referrers.push({ kind: 'component', id: c.id, name: c.name, how: hows.join(', '), without: () => next });
  }
  return referrers;
}

function diagramReferrers(model: Model, kind: DeletableKind, id: string): Referrer[] {
  const referrers: Referrer[] = [];
  for (const d of model.diagrams.values()) {
    if (kind === 'diagram' && d.id === id) continue;
    const hows: string[] = [];
    let next: Diagram = d;
    if (kind === 'component' && d.componentInstances.some((i) => i.component === id)) {
      const component = model.components.get(id)!;
      hows.push('component instances');
      // An instance of a deleted component stays where it was drawn, as a placeholder carrying its name.
      next = {
        ...next,
        componentInstances: next.componentInstances.map((i) =>
          i.component !== id
            ? i
            : {
                ...i,
                component: null,
                placeholder: component.name,
                typeId: component.typeId ?? undefined,
              },
        ),
      };
    }
    if (kind === 'tag' && d.tags.includes(id)) {
      hows.push('tags');
      next = { ...next, tags: next.tags.filter((x) => x !== id) };
    }
    if (kind === 'diagram' && d.relations.some((r) => r.linksTo.includes(id))) {
      hows.push('relation linksTo');
      next = { ...next, relations: next.relations.map((r) => ({ ...r, linksTo: r.linksTo.filter((x) => x !== id) })) };
    }
    const result = next;
    if (hows.length > 0) referrers.push({ kind: 'diagram', id: d.id, name: d.name, how: hows.join(', '), without: () => result });
  }
  return referrers;
}

/**
 * Deletes one resource: its file goes in the commit (its history stays in git). While other
 * resources name it the delete is refused (409, listing them); with `cascade` they are
 * written without those names in the same commit. Types cannot be deleted.
 */
export function deleteResource(draft: Draft, kind: DeletableKind, id: string, cascade: boolean): Identified {
  const model = draft.base;
  const stored = (collectionOf(model, kind) as ReadonlyMap<string, Identified>).get(id);
  if (!stored) throw new ApiError(404, `${kindName(kind)} with id '${id}' does not exist.`);
  const referrers = [...componentReferrers(model, kind, id), ...diagramReferrers(model, kind, id)].filter(
    (r) => !(r.kind === kind && r.id === id),
  );
  if (referrers.length > 0 && !cascade) {
    const list = referrers.map((r) => `${r.kind} '${r.id}' (${r.name}: ${r.how})`).join(', ');
    throw new ApiError(
      409,
      `${kindName(kind)} with id '${id}' is still referred to by ${list}. ` +
        'Remove those references first, or delete with ?cascade=true to remove them in the same commit.',
    );
  }
  draft.remove(kind, id);
  for (const referrer of referrers) {
    const next = { ...referrer.without(), apiContext: draft.options.apiContext };
    draft.put(referrer.kind, next, true);
  }
  // The referrers are written by the same rules as any write (nothing else may have named the deleted resource).
  for (const referrer of referrers) {
    if (referrer.kind === 'component') checkComponent(draft.model, draft.model.components.get(referrer.id)!);
    else checkDiagram(draft.model, draft.model.diagrams.get(referrer.id)!);
  }
  return stored;
}
