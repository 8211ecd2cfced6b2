import Type from 'typebox';
import { FILE_SCHEMAS } from '../model/file-schemas.js';

/**
 * Response bodies, from the stored files' schemas (src/model/file-schemas.ts): the API answers
 * resources as stored (src/model/present.ts), except that components also carry `typeSlug` and
 * diagrams their `url` and full tag objects.
 */

export const ErrorResponse = Type.Object({ error: Type.String() }, { description: 'Every failure: one string field, in the words of CONTRACT.md §3.' });

export const TypeResponse = FILE_SCHEMAS.type;
export const TagResponse = FILE_SCHEMAS.tag;
export const AttributeResponse = FILE_SCHEMAS.attribute;

export const ComponentResponse = Type.Object({
  ...FILE_SCHEMAS.component.properties,
  typeSlug: Type.Union([Type.String(), Type.Null()]),
});

export const DiagramResponse = Type.Object({
  ...FILE_SCHEMAS.diagram.properties,
  url: Type.String({ description: '`<public url>/diagrams/<id>`' }),
  tags: Type.Array(TagResponse),
});

export const ModelResponse = Type.Object({
  types: Type.Array(TypeResponse),
  tags: Type.Array(TagResponse),
  attributes: Type.Array(AttributeResponse),
  components: Type.Array(ComponentResponse),
  diagrams: Type.Array(DiagramResponse),
});

export const ModelWriteResponse = Type.Object({
  components: Type.Array(ComponentResponse),
  diagrams: Type.Array(DiagramResponse),
});

export const HealthResponse = Type.Object({ ok: Type.Boolean() });
