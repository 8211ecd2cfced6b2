/**
 * What a component type's slug says of its element in the C4 notation, by one rule for the
 * drawing (src/drawing/notation.ts) and the exports (src/export/scene.ts), as docs/api.md (The
 * drawing) states it: `person`, `software-system`, `container`, `component`; a database for any
 * slug containing `database`, `datastore` or `data-store`, a queue for any containing `queue` or
 * `topic`; external when it starts with `external` (an `external-…person…` slug is a person).
 */

export type C4Shape = 'person' | 'software-system' | 'container' | 'component' | 'database' | 'queue';

/** The shape the slug names (null: none, another type) and whether it names an external element. */
export function c4OfSlug(slug: string): { shape: C4Shape | null; external: boolean } {
  const external = slug.startsWith('external');
  if (slug === 'person' || (external && slug.includes('person'))) return { shape: 'person', external };
  if (slug.includes('database') || slug.includes('datastore') || slug.includes('data-store')) return { shape: 'database', external };
  if (slug.includes('queue') || slug.includes('topic')) return { shape: 'queue', external };
  if (slug === 'software-system' || slug === 'container' || slug === 'component') return { shape: slug, external };
  return { shape: null, external };
}

/** Whether a tag of this name marks its component external (`External`, any case). */
export const isExternalTag = (name: string | undefined): boolean => name?.toLowerCase() === 'external';
