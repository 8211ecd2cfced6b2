import { isMap, isScalar, LineCounter, parseDocument, type Node } from 'yaml';

/**
 * Where in a YAML file a problem sits: the line of `field` when the problem says which
 * (`componentInstances.2.ref`), or of the field a schema message names
 * (`componentInstances.2.width: …`), or of the first value equal to the id a rule's message
 * quotes (`Component with id '…' does not exist.`). Line 1 when none can be found.
 */
export function lineOf(text: string, message: string, field?: string): number {
  const counter = new LineCounter();
  let document: ReturnType<typeof parseDocument>;
  try {
    document = parseDocument(text, { lineCounter: counter, uniqueKeys: false });
  } catch {
    return 1;
  }
  const line = (offset: number | undefined) => (offset === undefined ? 1 : counter.linePos(offset).line);
  const syntax = field === undefined ? /\bline (\d+)/.exec(message) : null;
  if (syntax) return Number(syntax[1]);
  const path = field ?? /^([A-Za-z0-9_.]+): /.exec(message)?.[1];
  if (path !== undefined) {
    // The deepest node on the path that exists: a missing field is reported at its parent.
    let node: unknown = document.contents;
    let at = 0;
    for (const step of path.split('.')) {
      const next = isMap(node) ? node.items.find((pair) => isScalar(pair.key) && String(pair.key.value) === step) : undefined;
      if (next) {
        at = (next.key as Node).range?.[0] ?? at;
        node = next.value;
        continue;
      }
      const items = (node as { items?: unknown[] } | null)?.items;
      if (!isMap(node) && Array.isArray(items) && /^\d+$/.test(step) && items[Number(step)]) {
        node = items[Number(step)];
        at = (node as Node).range?.[0] ?? at;
        continue;
      }
      break;
    }
    if (at > 0 || path !== '') return line(at);
  }
  const quoted = /'([^']+)'/.exec(message);
  if (quoted) {
    const index = text.split('\n').findIndex((l) => l.includes(quoted[1]));
    if (index >= 0) return index + 1;
  }
  return 1;
}
