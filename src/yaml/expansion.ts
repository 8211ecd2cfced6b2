/**
 * Whether a parsed YAML value holds more than `limit` characters once what its aliases (and
 * merge keys) repeat is counted as often as it is repeated: every string and key by its length,
 * anything else as at least one character, as in any text that writes it. A body without
 * aliases never does (its text holds each of them at least once), but the alias count the
 * parser bounds says nothing of the size of what an alias repeats: a 9 MB body naming one 9 MB
 * string 99 times more made a 900 MB commit and a 900 MB answer. Held to the body limit as
 * what it expands to, a YAML body (http/body-parse.ts) or a pushed model file (format.ts
 * parseYaml, incoming) is refused where the same data written out would be.
 * Iterative, and it stops at the limit, so the count costs at most `limit` steps.
 */
export function expandsPast(value: unknown, limit: number): boolean {
  let chars = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'string') chars += item.length;
    else if (item === null || typeof item !== 'object' || item instanceof Date) chars += 1;
    else if (ArrayBuffer.isView(item))
      chars += item.byteLength; // !!binary of a YAML 1.1 body
    else {
      chars += 1;
      if (item instanceof Map) for (const [key, entry] of item) pending.push(key, entry);
      else if (item instanceof Set || Array.isArray(item)) for (const entry of item) pending.push(entry);
      else {
        for (const [key, entry] of Object.entries(item)) {
          chars += key.length;
          pending.push(entry);
        }
      }
    }
    if (chars > limit) return true;
  }
  return false;
}
