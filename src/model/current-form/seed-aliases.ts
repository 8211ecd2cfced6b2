import Type from 'typebox';
import { ComponentInput, DiagramInput, oneOfSpellingsRequired, RelationInput } from '../schemas.js';

/**
 * The seed's paths (`/diagram`, `/model`) accept the current form's relation ends too:
 * `fromRef`/`toRef` stand for `fromComponentInstance`/`toComponentInstance` where those are
 * absent. Done on the parsed body before the schema check, so the seed's schema and its error
 * texts stay as they are. Only the known path diagrams → relations is walked.
 */
export function acceptRelationAliases(diagrams: unknown): void {
  if (!Array.isArray(diagrams)) return;
  for (const diagram of diagrams) {
    const relations = isRecord(diagram) ? diagram.relations : undefined;
    if (!Array.isArray(relations)) continue;
    for (const relation of relations) {
      if (!isRecord(relation)) continue;
      if (relation.fromComponentInstance === undefined && typeof relation.fromRef === 'string')
        relation.fromComponentInstance = relation.fromRef;
      if (relation.toComponentInstance === undefined && typeof relation.toRef === 'string') relation.toComponentInstance = relation.toRef;
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The seed's diagram bodies as clients send them, for the OpenAPI document: each relation end in
 * either spelling (one of the two required), which acceptRelationAliases turns into the seed's
 * before the seed's own schema (../schemas.ts) checks the body with its own texts.
 */
export const RelationWire = Type.Object(
  {
    ...RelationInput.properties,
    fromComponentInstance: Type.Optional(Type.String()),
    toComponentInstance: Type.Optional(Type.String()),
    fromRef: Type.Optional(Type.String({ description: 'Another spelling of `fromComponentInstance`.' })),
    toRef: Type.Optional(Type.String({ description: 'Another spelling of `toComponentInstance`.' })),
  },
  {
    allOf: [oneOfSpellingsRequired('fromComponentInstance', 'fromRef'), oneOfSpellingsRequired('toComponentInstance', 'toRef')],
  } as never,
);
export const DiagramWire = Type.Object({ ...DiagramInput.properties, relations: Type.Optional(Type.Array(RelationWire)) });
export const DiagramWireBody = Type.Array(DiagramWire);
export const ModelWireBody = Type.Object({
  components: Type.Optional(Type.Array(ComponentInput)),
  diagrams: Type.Optional(Type.Array(DiagramWire)),
});
