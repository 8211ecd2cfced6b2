import { isMap, isScalar, LineCounter, parseDocument, type Node } from 'yaml';

/**
 * Where in a YAML file a problem sits: the line of the field a schema message names
 * (`componentInstances.2.width: …`), or of the first value equal to the id a rule's message
 * quotes (`Component with id '…' does not exist.`). Line 1 when neither can be found.
 */
export function lineOf(text: string, message: string): number {
  const counter = new LineCounter();
  let document: ReturnType<typeof parseDocument>;
  try {
    document = parseDocument(text, { lineCounter: counter, uniqueKeys: false });
  } catch {
    return 1;
  }
  const line = (offset: number | undefined) => (offset === undefined ? 1 : counter.linePos(offset).line);
  const syntax = /\bline (\d+)/.exec(message);
  if (syntax) return Number(syntax[1]);
  const field = /^([A-Za-z0-9_.]+): /.exec(message);
  if (field) {
    // The deepest node on the path that exists: a missing field is reported at its parent.
    let node: unknown = document.contents;
    let at = 0;
    for (const step of field[1].split('.')) {
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
    if (at > 0 || field[1] !== '') return line(at);
  }
  const quoted = /'([^']+)'/.exec(message);
  if (quoted) {
    const index = text.split('\n').findIndex((l) => l.includes(quoted[1]));
    if (index >= 0) return index + 1;
  }
  return 1;
}
