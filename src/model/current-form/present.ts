import { definedFields } from '../fields.js';
import { fileOf } from '../files.js';
import type { Component, ComponentInstance, Diagram, Model, Relation } from '../types.js';
import { diagramUrl, typeSlugOf } from '../present.js';

/**
 * Resources as the current form of the API answers them (the plural paths). Tags, attributes
 * and types look as in the seed's forms; components and diagrams use the current spellings:
 * `inlineDesc`, `tags` and `linksTo` (diagram ids) on components; tag ids, `componentId`,
 * `placeholder: {text, typeId}`, `parentId` and `fromRef`/`toRef` on diagrams.
 */
export const presentCurrent = {
  type: fileOf.type,
  tag: fileOf.tag,
  attribute: fileOf.attribute,

  component: (c: Component, model: Model) =>
    definedFields({
      id: c.id,
      ref: c.ref,
      name: c.name,
      desc: c.desc,
      inlineDesc: c.inlineDesc ?? false,
      state: c.state,
      typeId: c.typeId,
      typeSlug: typeSlugOf(c.typeId, model),
      tags: c.tags ?? [],
      linksTo: c.linksToDiagrams ?? [],
      attributes: c.attributes.map((v) => ({ id: v.id, value: v.value })),
      apiContext: c.apiContext,
    }),

  diagram: (d: Diagram, model: Model, publicUrl: string) => {
    const names = new Map(d.componentInstances.map((i) => [i.id, i.ref ?? i.id]));
    return definedFields({
      id: d.id,
      ref: d.ref,
      name: d.name,
      desc: d.desc,
      state: d.state,
      level: d.level,
      url: diagramUrl(publicUrl, model, d.id),
      tags: d.tags,
      componentInstances: d.componentInstances.map(instance),
      textareas: d.textareas.map((t) =>
        definedFields({
          id: t.id,
          ref: t.ref,
          position: { x: t.position.x, y: t.position.y },
          width: t.width,
          text: t.text,
        }),
      ),
      relations: d.relations.map((r) => relation(r, names)),
      apiContext: d.apiContext,
    });
  },
};

/** A placeholder is an instance without a component; it answers `{text, typeId}`, others `null`. */
function instance(i: ComponentInstance) {
  return definedFields({
    id: i.id,
    ref: i.ref,
    componentId: i.component,
    placeholder: i.component === null ? { text: i.placeholder, typeId: i.typeId ?? null } : null,
    isContainer: i.isContainer,
    parentId: i.parent,
    position: { x: i.position.x, y: i.position.y },
    width: i.width,
    height: i.height,
  });
}

/** Ends are named by the instance's ref where it has one (how the current form names them), else by its id. */
function relation(r: Relation, names: ReadonlyMap<string, string>) {
  return definedFields({
    id: r.id,
    ref: r.ref,
    fromRef: names.get(r.fromComponentInstance) ?? r.fromComponentInstance,
    toRef: names.get(r.toComponentInstance) ?? r.toComponentInstance,
    label: r.label,
    desc: r.desc,
    linksTo: r.linksTo,
  });
}
