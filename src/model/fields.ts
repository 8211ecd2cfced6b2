/** Drops undefined fields; key order is the order of the literal passed in. */
export function definedFields<T extends object>(fields: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as T;
}
