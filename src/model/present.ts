import { definedFields } from './fields.js';
import { fileOf, instanceFile, relationFile, textAreaFile } from './files.js';
import type { Component, Diagram, Model, Tag } from './types.js';

/**
 * A diagram's page in the viewer: the organization in the path finds the diagram (docs/api.md,
 * "The diagram viewer"). Every answer that carries a diagram's `url` takes it from here.
 */
export function diagramUrl(publicUrl: string, model: Model, diagramId: string): string {
  return `${publicUrl}/orgs/${model.organization.slug}/diagrams/${diagramSegment(diagramId)}`;
}

/**
 * A diagram id as the last segment of its page's path. `<id>.svg` and `<id>.png` are the
 * drawing's addresses, so an id that itself ends so has that dot written `%2E`: its page is
 * then never taken for another diagram's drawing.
 */
export function diagramSegment(diagramId: string): string {
  return encodeURIComponent(diagramId).replace(/\.(svg|png)$/, '%2E$1');
}

/** The slug of a component's type, for answers that carry both `typeId` and `typeSlug`. */
export function typeSlugOf(typeId: string | null, model: Model): string | null {
  return typeId === null ? null : (model.types.get(typeId)?.slug ?? null);
}

/**
 * Resources as the API returns them: as stored, except that components carry both `typeId`
 * and `typeSlug` (so clients of either contract form work) and diagrams carry their `url` and
 * full tag objects.
 */
export const present = {
  type: fileOf.type,
  tag: fileOf.tag,
  attribute: fileOf.attribute,

  component: (c: Component, model: Model) =>
    definedFields({
      id: c.id,
      ref: c.ref,
      name: c.name,
      desc: c.desc,
      typeId: c.typeId,
      typeSlug: typeSlugOf(c.typeId, model),
      state: c.state,
      apiContext: c.apiContext,
      linksTo: c.linksTo,
      attributes: c.attributes.map((v) => ({ id: v.id, value: v.value })),
    }),

  diagram: (d: Diagram, model: Model, publicUrl: string) =>
    definedFields({
      id: d.id,
      ref: d.ref,
      name: d.name,
      desc: d.desc,
      state: d.state,
      level: d.level,
      url: diagramUrl(publicUrl, model, d.id),
      tags: tagObjects(d.tags, model),
      componentInstances: d.componentInstances.map(instanceFile),
      textareas: d.textareas.map(textAreaFile),
      relations: d.relations.map(relationFile),
      apiContext: d.apiContext,
    }),
};

/** A diagram's tags (ids) as the seed form answers them: the tag objects, those that still exist. */
export function tagObjects(ids: readonly string[], model: Model) {
  return ids
    .map((id) => model.tags.get(id))
    .filter((t): t is Tag => t !== undefined)
    .map(fileOf.tag);
}
