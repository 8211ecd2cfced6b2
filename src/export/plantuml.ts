import type { Level } from '../model/types.js';
import type { Scene, SceneElement, SceneView, ViewNode } from './scene.js';

/**
 * PlantUML with the C4-PlantUML macros of PlantUML's own standard library (`!include <C4/…>`,
 * in every PlantUML jar, so it renders offline). One `@startuml … @enduml` block per view.
 * Only macros of the C4-PlantUML that older jars carry are used (no queue macros, no tags).
 */

const unicode = (c: string) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`;

/**
 * A label inside a macro's double quotes. Characters the preprocessor or Creole would act on
 * (`"`, `%` functions, `$` variables, `\` escapes, `<b>` tags, `~`, and doubled markup such as
 * `**`, `//`, `--`, `[[`) are written as PlantUML's `<U+XXXX>` character escapes; a line break
 * is C4-PlantUML's `\n`.
 */
export function plantumlText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/["\\%$<>~]/g, unicode)
    .replace(/([-/_*^=[\]`'#|])\1+/g, (run) => Array.from(run, unicode).join(''))
    .replace(/\n/g, '\\n')
    .replace(/[\u0000-\u001f\u007f]/g, ' ');
}

const quoted = (text: string | null) => `"${plantumlText(text ?? '')}"`;

function macro(element: SceneElement, level: Level | null): string {
  const { key, name, desc } = element;
  const technology = quoted(element.typeName);
  const system = level === null || level === 'C1';
  const inner = level === 'C3' || level === 'C4' ? 'Component' : 'Container';
  switch (element.kind) {
    case 'person':
      return `Person(${key}, ${quoted(name)}, ${quoted(desc)})`;
    case 'database':
      return system
        ? `SystemDb(${key}, ${quoted(name)}, ${quoted(desc)})`
        : `${inner}Db(${key}, ${quoted(name)}, ${technology}, ${quoted(desc)})`;
    case 'container':
      return `Container(${key}, ${quoted(name)}, ${technology}, ${quoted(desc)})`;
    case 'component':
      return `Component(${key}, ${quoted(name)}, ${technology}, ${quoted(desc)})`;
    case 'queue':
      return system
        ? `System(${key}, ${quoted(name)}, ${quoted(desc)})`
        : `${inner}(${key}, ${quoted(name)}, ${technology}, ${quoted(desc)})`;
    default:
      return `System(${key}, ${quoted(name)}, ${quoted(desc)})`;
  }
}

function nodeLines(node: ViewNode, level: Level | null, indent: string): string[] {
  if (!node.boundary) return [indent + macro(node.element, level)];
  return [
    `${indent}Boundary(${node.element.key}, ${quoted(node.element.name)}) {`,
    ...node.children.flatMap((child) => nodeLines(child, level, `${indent}  `)),
    `${indent}}`,
  ];
}

export function plantumlView(view: SceneView): string {
  return [
    `@startuml ${view.key}`,
    '!include <C4/C4_Component>',
    `title ${plantumlText(view.title)}`,
    ...view.nodes.flatMap((node) => nodeLines(node, view.level, '')),
    ...view.relations.map((r) => `Rel(${r.from}, ${r.to}, ${quoted(r.label)})`),
    '@enduml',
    '',
  ].join('\n');
}

export function plantuml(scene: Scene): string {
  return scene.views.map(plantumlView).join('\n');
}
