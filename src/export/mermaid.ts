import type { Level } from '../model/types.js';
import { LINE_BREAK, walk, type Scene, type SceneElement, type SceneView, type ViewNode } from './scene.js';

/**
 * Mermaid's C4 diagrams (`C4Context`, `C4Container`, `C4Component`). A Mermaid text holds one
 * diagram: a diagram exports as itself; the whole model as one `C4Container` in which every
 * diagram is a boundary of its own (titled by the diagram, its elements' aliases prefixed `d<n>_`
 * so an element drawn by several diagrams is a box in each), then the components no diagram
 * draws. Relations to a boundary are left out: Mermaid draws relations between boxes only.
 * Mermaid has no notes: text areas are not exported here.
 */

/** Mermaid's entity codes, which it turns into placeholders before it parses and back when it draws. */
const ENTITIES: Record<string, string> = { '#': '#35;', '%': '#37;', ';': '#59;', '"': '#quot;', '<': '#lt;', '>': '#gt;' };

/**
 * A label inside double quotes, or a title: Mermaid's entity codes for `#`, `%`, `;`, `"`, `<` and
 * `>` (in one pass: the codes hold `#` and `;` themselves), and `<br>` for a line break. `%`
 * matters most: Mermaid looks for `%%{…}%%` directives anywhere in the text before it parses
 * anything, quotes or not, and applies them (themes, CSS, fonts fetched from URLs); with no `%`
 * left in a label no directive can form. `;` and `#` end a title line.
 */
export function mermaidText(text: string): string {
  return text
    .replace(/[#%;"<>]/g, (character) => ENTITIES[character]!)
    .replace(LINE_BREAK, '<br>')
    .replace(/[\u0000-\u001f\u007f]/g, ' ');
}

/** A `title` line, or none for a blank title: Mermaid refuses a bare `title`. */
function titleLine(title: string): string {
  return title.trim() === '' ? '' : `  title ${mermaidText(title)}\n`;
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

/** Tags as Mermaid keeps them (`$tags`, comma-separated); archived elements are drawn greyed. */
function tagsOf(element: SceneElement): string {
  const tags = [...(element.archived ? ['archived'] : []), ...element.tags].map((t) => t.replace(/,/g, ' '));
  return tags.length === 0 ? '' : `, $tags=${quoted(tags.join(','))}`;
}

function shape(element: SceneElement, alias: string, level: Level | null): string {
  const { name, desc } = element;
  const technology = quoted(element.technology);
  const inner = level === 'C3' || level === 'C4' ? 'Component' : 'Container';
  const system = level === null || level === 'C0' || level === 'C1';
  const suffix = element.kind === 'database' ? 'Db' : element.kind === 'queue' ? 'Queue' : '';
  // Every shape has its external form: `Person_Ext`, `System_Ext`, `ContainerDb_Ext`, …
  const ext = element.external ? '_Ext' : '';
  const tags = tagsOf(element);
  switch (element.kind) {
    case 'person':
      return `Person${ext}(${alias}, ${quoted(name)}, ${quoted(desc)}${tags})`;
    case 'container':
      return `Container${ext}(${alias}, ${quoted(name)}, ${technology}, ${quoted(desc)}${tags})`;
    case 'component':
      return `Component${ext}(${alias}, ${quoted(name)}, ${technology}, ${quoted(desc)}${tags})`;
    case 'database':
    case 'queue':
      return system
        ? `System${suffix}${ext}(${alias}, ${quoted(name)}, ${quoted(desc)}${tags})`
        : `${inner}${suffix}${ext}(${alias}, ${quoted(name)}, ${technology}, ${quoted(desc)}${tags})`;
    default:
      return `System${ext}(${alias}, ${quoted(name)}, ${quoted(desc)}${tags})`;
  }
}

/**
 * Mermaid lays boxes out in rows of `c4ShapeInRow` (default 4) and boundaries in rows of
 * `c4BoundaryInRow` (default 2), whatever their number: a wide diagram runs off to the right and
 * boundaries crowd their neighbours. Rows of about the square root of the largest group of boxes
 * (2 to 5) keep a diagram near a square; one boundary per row when a boundary holds many boxes.
 */
export function layoutConfig(nodes: ViewNode[], boundaryInRow?: number): string {
  let widest = 0;
  let largestBoundary = 0;
  const visit = (group: ViewNode[]) => {
    const boxes = group.filter((n) => !n.boundary).length;
    widest = Math.max(widest, boxes);
    for (const node of group) {
      if (!node.boundary) continue;
      largestBoundary = Math.max(largestBoundary, node.children.length);
      visit(node.children);
    }
  };
  visit(nodes);
  const shapeInRow = Math.min(5, Math.max(2, Math.ceil(Math.sqrt(widest))));
  const boundaries = boundaryInRow ?? (largestBoundary > shapeInRow ? 1 : 2);
  return `UpdateLayoutConfig($c4ShapeInRow="${shapeInRow}", $c4BoundaryInRow="${boundaries}")`;
}

class ViewWriter {
  readonly boundaries = new Set<string>();

  constructor(
    readonly view: SceneView,
    readonly level: Level | null,
    readonly prefix: string,
  ) {
    for (const node of walk(view.nodes)) if (drawnAsBoundary(node)) this.boundaries.add(node.element.key);
  }

  alias(key: string): string {
    return `${this.prefix}${key}`;
  }

  *nodes(nodes: ViewNode[], indent: string): Generator<string> {
    for (const node of nodes) {
      const alias = this.alias(node.element.key);
      if (!drawnAsBoundary(node)) {
        yield `${indent}${shape(node.element, alias, this.level)}\n`;
        if (node.element.archived) yield `${indent}UpdateElementStyle(${alias}, $fontColor="#777777", $borderColor="#999999")\n`;
        continue;
      }
      // Mermaid labels a boundary `[system]` unless told its type.
      yield `${indent}Boundary(${alias}, ${quoted(node.element.name)}, ${quoted(node.element.typeName ?? node.element.kind)}) {\n`;
      yield* this.nodes(node.children, `${indent}  `);
      yield `${indent}}\n`;
    }
  }

  *relations(indent: string): Generator<string> {
    for (const r of this.view.relations) {
      if (this.boundaries.has(r.from) || this.boundaries.has(r.to)) continue;
      const desc = r.desc ? `, "", ${quoted(r.desc)}` : '';
      yield `${indent}Rel(${this.alias(r.from)}, ${this.alias(r.to)}, ${quoted(r.label)}${desc})\n`;
    }
  }
}

/**
 * Mermaid's grammar has no empty boundary (`Boundary(…) { }` does not parse): a container box
 * with nothing in it is drawn as the element it shows, and keeps its relations.
 */
function drawnAsBoundary(node: ViewNode): boolean {
  return node.boundary && node.children.length > 0;
}

/** One diagram as a Mermaid C4 diagram, line by line (each ending in a line break). */
function* diagram(view: SceneView): Generator<string> {
  const writer = new ViewWriter(view, view.level, '');
  yield `${HEADER[view.level ?? 'C1']}\n`;
  yield titleLine(view.title);
  yield `  ${layoutConfig(view.nodes)}\n`;
  yield* writer.nodes(view.nodes, '  ');
  yield* writer.relations('  ');
}

/** The whole model: each diagram a boundary of its own, then the components on no diagram. */
function* model(scene: Scene): Generator<string> {
  const [index, ...views] = scene.views;
  const drawn = new Set<string>();
  for (const view of views) for (const node of walk(view.nodes)) drawn.add(node.element.key);
  const undrawn = Array.from(walk(index.nodes))
    .filter((n) => !drawn.has(n.element.key))
    .map((n): ViewNode => ({ element: n.element, boundary: false, children: [] }));
  yield 'C4Container\n';
  yield titleLine(scene.name);
  yield `  ${layoutConfig(views.flatMap((v) => v.nodes).concat(undrawn), 1)}\n`;
  for (const [i, view] of views.entries()) {
    // Mermaid has no empty boundary (`{ }` is a parse error): a diagram without boxes is left out.
    if (view.nodes.length === 0) continue;
    const writer = new ViewWriter(view, view.level, `d${i + 1}_`);
    yield `  Boundary(${writer.alias(view.key)}, ${quoted(view.title)}, "diagram") {\n`;
    yield* writer.nodes(view.nodes, '    ');
    yield '  }\n';
    yield* writer.relations('  ');
  }
  if (undrawn.length > 0) {
    const writer = new ViewWriter(index, null, 'd0_');
    yield `  Boundary(d0_undrawn, "On no diagram") {\n`;
    yield* writer.nodes(undrawn, '    ');
    yield '  }\n';
  }
}

/** A diagram's scene as itself; the model's as every diagram in one text. */
export function* mermaid(scene: Scene): Generator<string> {
  if (scene.views.length === 1) yield* diagram(scene.views[0]);
  else yield* model(scene);
}
