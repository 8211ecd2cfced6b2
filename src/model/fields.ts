import { ModelError } from '../errors.js';

/** Drops undefined fields; key order is the order of the literal passed in. */
export function definedFields<T extends object>(fields: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as T;
}

/**
 * A field with two spellings (`parent`/`parentId`, `component`/`componentId`): either may be
 * sent; sent both, they must be equal, `null` being a value like any other.
 */
export function eitherSpelling(
  path: string,
  [a, b]: readonly [string, string],
  first: string | null | undefined,
  second: string | null | undefined,
): string | null | undefined {
  if (first !== undefined && second !== undefined && first !== second) {
    const shown = (value: string | null) => (value === null ? 'null' : `'${value}'`);
    throw new ModelError(`${path}${a} ${shown(first)} and ${b} ${shown(second)} differ.`);
  }
  return first !== undefined ? first : second;
}
