import type { TSchema } from 'typebox';

/**
 * The fields of a request body that its schema does not declare, and that the service therefore
 * ignores (CONTRACT.md §3), as paths in the style of schema errors: `0.componentId`,
 * `0.componentInstances.2.colour`, `components.1.descr`.
 *
 * Derived from the schema itself, so a field becomes "known" the moment a schema declares it.
 * Like the schema-error walk (check-body.ts), this descends only into declared fields: an
 * unknown field is named, never looked into, so the work is bounded by the known part of the
 * body and the recursion by the depth of the schema.
 */

/** The JSON Schema subset of schemas.ts that can hold fields (see check-body.ts). */
interface Node {
  type?: string;
  properties?: Record<string, Node>;
  items?: Node;
  anyOf?: Node[];
}

export interface IgnoredFields {
  paths: string[];
  /** True when there were more than `limit` and only the first `limit` are in `paths`. */
  more: boolean;
}

export function ignoredFields(schema: TSchema, body: unknown, limit = 100): IgnoredFields {
  const paths: string[] = [];
  let more = false;
  const path: Array<string | number> = [];
  const visit = (node: Node, value: unknown): void => {
    if (more || value === null || typeof value !== 'object') return;
    const shaped = node.anyOf?.find((branch) => branch.type === (Array.isArray(value) ? 'array' : 'object')) ?? node;
    if (shaped.type === 'array' && Array.isArray(value) && shaped.items) {
      for (let i = 0; i < value.length && !more; i++) {
        path.push(i);
        visit(shaped.items, value[i]);
        path.pop();
      }
    } else if (shaped.type === 'object' && !Array.isArray(value)) {
      const properties = shaped.properties ?? {};
      for (const key of Object.keys(value)) {
        path.push(key);
        if (Object.hasOwn(properties, key)) visit(properties[key], (value as Record<string, unknown>)[key]);
        else if (paths.length === limit) more = true;
        else paths.push(path.join('.'));
        path.pop();
        if (more) return;
      }
    }
  };
  visit(schema as Node, body);
  return { paths, more };
}
