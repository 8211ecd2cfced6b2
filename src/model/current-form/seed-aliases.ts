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
