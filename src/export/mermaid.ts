import type { Level } from '../model/types.js';
import { walk, type Scene, type SceneElement, type ViewNode } from './scene.js';

/**
 * Mermaid's C4 diagrams (`C4Context`, `C4Container`, `C4Component`). A Mermaid text holds one
 * diagram: a diagram exports as itself, the whole model as its landscape view of all components.
 * Relations to a boundary are left out: Mermaid draws relations between boxes only.
 */

/**
 * A label inside double quotes: Mermaid's entity codes for `#`, `"`, `<` and `>` (decoded when
 * drawn), and `<br>` for a line break.
 */
export function mermaidText(text: string): string {
  return text
    .replace(/#/g, '#35;')
    .replace(/"/g, '#quot;')
    .replace(/</g, '#lt;')
    .replace(/>/g, '#gt;')
    .replace(/\r\n?|\n/g, '<br>')
    .replace(/[\u0000-\u001f\u007f]/g, ' ');
}

const quoted = (text: string | null) => `"${mermaidText(text ?? '')}"`;

// The current API form's landscape, deployment and process levels have no Mermaid C4 diagram of
// their own that takes the same elements: a landscape is drawn as a context, the others as containers.
const HEADER: Record<Level, string> = {
  C0: 'C4Context',
  C1: 'C4Context',
  C2: 'C4Container',
  C3: 'C4Component',
  C4: 'C4Component',
  D1: 'C4Container',
  P0: 'C4Container',
};

function shape(element: SceneElement, level: Level | null): string {
  const { key, name, desc } = element;
  const technology = quoted(element.typeName);
  const inner = level === 'C3' || level === 'C4' ? 'Component' : 'Container';
  const system = level === null || level === 'C1';
  const suffix = element.kind === 'database' ? 'Db' : element.kind === 'queue' ? 'Queue' : '';
  switch (element.kind) {
    case 'person':
      return `Person(${key}, ${quoted(name)}, ${quoted(desc)})`;
    case 'container':
      return `Container(${key}, ${quoted(name)}, ${technology}, ${quoted(desc)})`;
    case 'component':
      return `Component(${key}, ${quoted(name)}, ${technology}, ${quoted(desc)})`;
    case 'database':
    case 'queue':
      return system
        ? `System${suffix}(${key}, ${quoted(name)}, ${quoted(desc)})`
        : `${inner}${suffix}(${key}, ${quoted(name)}, ${technology}, ${quoted(desc)})`;
    default:
      return `System(${key}, ${quoted(name)}, ${quoted(desc)})`;
  }
}

function* nodeLines(node: ViewNode, level: Level | null, indent: string): Generator<string> {
  if (!node.boundary) {
    yield `${indent}${shape(node.element, level)}\n`;
    return;
  }
  yield `${indent}Boundary(${node.element.key}, ${quoted(node.element.name)}) {\n`;
  for (const child of node.children) yield* nodeLines(child, level, `${indent}  `);
  yield `${indent}}\n`;
}

/** The first view as a Mermaid C4 diagram, line by line (each ending in a line break). */
export function* mermaid(scene: Scene): Generator<string> {
  const view = scene.views[0];
  const boundaries = new Set<string>();
  for (const node of walk(view.nodes)) if (node.boundary) boundaries.add(node.element.key);
  yield `${HEADER[view.level ?? 'C1']}\n`;
  yield `  title ${mermaidText(view.title)}\n`;
  for (const node of view.nodes) yield* nodeLines(node, view.level, '  ');
  for (const r of view.relations) {
    if (!boundaries.has(r.from) && !boundaries.has(r.to)) yield `  Rel(${r.from}, ${r.to}, ${quoted(r.label)})\n`;
  }
}
