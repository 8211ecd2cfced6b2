import { eitherSpelling } from '../fields.js';
import type { AttributeInput, ComponentInput, ComponentInstanceInput, RelationInput } from '../schemas.js';
import type { Attribute, Component, Diagram, Model, Tag } from '../types.js';
import type { ComponentExtras } from '../write/components.js';
import type { DiagramExtras, DiagramWrite } from '../write/diagrams.js';
import type { CurrentComponent, CurrentDiagram, CurrentInstance, CurrentRelation } from './schemas.js';

/**
 * Between the current form's shapes and the one internal shape every write is built from
 * (src/model/write/). Only fields the schemas declare are copied: a checked body keeps its
 * unknown fields, which must never reach the model.
 */

/** A checked current-form component → the internal input; the seed form's `linksTo` (components) is kept as stored. */
export function componentFromCurrent(
  c: CurrentComponent,
  existing: Component | undefined,
): { input: ComponentInput; extras: ComponentExtras } {
  return {
    input: {
      // A create's `ref: null` is no ref (write/current.ts drops it before this).
      ref: c.ref ?? undefined,
      name: c.name,
      desc: c.desc,
      state: c.state,
      typeId: c.typeId,
      typeSlug: c.typeSlug,
      apiContext: c.apiContext,
      linksTo: existing?.linksTo ?? [],
      attributes: c.attributes,
    },
    extras: { inlineDesc: c.inlineDesc ?? false, tags: c.tags ?? [], linksToDiagrams: c.linksTo ?? [] },
  };
}

/**
 * A checked current-form attribute → the internal input: `forTypes` names types by slug (as
 * stored) or, as the current form's clients do, by id; each becomes the slug. A name that is
 * neither stays as sent, for the rule to refuse (`Type with slug 'x' does not exist.`).
 */
export function attributeFromCurrent(a: AttributeInput, model: Model): AttributeInput {
  if (a.forTypes === undefined) return a;
  const slugs = new Set<string>();
  for (const type of model.types.values()) slugs.add(type.slug);
  const forTypes = a.forTypes.map((name) => (slugs.has(name) ? name : (model.types.get(name)?.slug ?? name)));
  return { ...a, forTypes: [...new Set(forTypes)] };
}

function instanceFromCurrent(i: CurrentInstance, path: string): { input: ComponentInstanceInput; typeId: string | null } {
  const placeholder = i.placeholder;
  const text = typeof placeholder === 'string' ? placeholder : (placeholder?.text ?? undefined);
  return {
    input: {
      id: i.id,
      ref: i.ref,
      // Both spellings go on: they agree when they name one component, by id or by ref (write/diagrams.ts).
      component: i.component,
      componentId: i.componentId,
      placeholder: text,
      isContainer: i.isContainer,
      parent: i.parent,
      parentId: i.parentId,
      position: i.position,
      width: i.width,
      height: i.height,
    },
    typeId: typeof placeholder === 'object' && placeholder !== null ? (placeholder.typeId ?? null) : null,
  };
}

/** The schema (CurrentRelation's `allOf`) has required one spelling of each end; sent both, they must agree. */
function relationFromCurrent(r: CurrentRelation, path: string): RelationInput {
  const from = eitherSpelling(path, ['fromRef', 'fromComponentInstance'], r.fromRef, r.fromComponentInstance);
  const to = eitherSpelling(path, ['toRef', 'toComponentInstance'], r.toRef, r.toComponentInstance);
  return { id: r.id, ref: r.ref, fromComponentInstance: from!, toComponentInstance: to!, label: r.label, desc: r.desc, linksTo: r.linksTo };
}

/** A checked current-form diagram → the internal input. `path` prefixes error texts (`0.`, `diagrams.1.`). */
export function diagramFromCurrent(d: CurrentDiagram, path: string): { input: DiagramWrite; extras: DiagramExtras } {
  const instances = (d.componentInstances ?? []).map((i, n) => instanceFromCurrent(i, `${path}componentInstances.${n}.`));
  return {
    input: {
      ref: d.ref ?? undefined,
      name: d.name,
      desc: d.desc,
      state: d.state,
      level: d.level ?? null,
      tags: d.tags?.map((t) => ({ id: typeof t === 'string' ? t : t.id })),
      componentInstances: instances.map((i) => i.input),
      textareas: d.textareas?.map((t) => ({ id: t.id, ref: t.ref, position: t.position, width: t.width, text: t.text })),
      relations: d.relations?.map((r, n) => relationFromCurrent(r, `${path}relations.${n}.`)),
      apiContext: d.apiContext,
    },
    extras: { instanceTypeIds: instances.map((i) => i.typeId) },
  };
}

/**
 * A stored resource as a complete current-form body: what a PATCH is merged into. Lossless
 * for what the current form can write (a placeholder keeps its text even on an instance with
 * a component); `apiContext` is left out so an unchanged resource keeps its own.
 */
export const asCurrentInput = {
  tag: (t: Tag): Record<string, unknown> => ({ ref: t.ref, name: t.name, desc: t.desc, color: t.color }),
  attribute: (a: Attribute): Record<string, unknown> => ({
    ref: a.ref,
    name: a.name,
    type: a.type,
    desc: a.desc,
    required: a.required,
    forTypes: a.forTypes,
    list: a.list,
  }),
  component: (c: Component): Record<string, unknown> => ({
    ref: c.ref,
    name: c.name,
    desc: c.desc,
    inlineDesc: c.inlineDesc ?? false,
    state: c.state,
    typeId: c.typeId,
    tags: c.tags ?? [],
    linksTo: c.linksToDiagrams ?? [],
    attributes: c.attributes.map((v) => ({ id: v.id, value: v.value })),
  }),
  diagram: (d: Diagram): Record<string, unknown> => ({
    ref: d.ref,
    name: d.name,
    desc: d.desc,
    state: d.state,
    level: d.level,
    tags: [...d.tags],
    componentInstances: d.componentInstances.map((i) => ({
      id: i.id,
      ref: i.ref,
      componentId: i.component,
      placeholder: { text: i.placeholder, typeId: i.typeId ?? null },
      isContainer: i.isContainer,
      parentId: i.parent,
      position: { ...i.position },
      width: i.width,
      height: i.height,
    })),
    textareas: d.textareas.map((t) => ({ id: t.id, ref: t.ref, position: { ...t.position }, width: t.width, text: t.text })),
    relations: d.relations.map((r) => ({
      id: r.id,
      ref: r.ref,
      fromRef: r.fromComponentInstance,
      toRef: r.toComponentInstance,
      label: r.label,
      desc: r.desc,
      linksTo: [...r.linksTo],
    })),
  }),
};
