import { isExternalTag } from '../model/c4-kinds.js';
import type { Level } from '../model/types.js';
import { LINE_BREAK, type Scene, type SceneElement, type SceneRelation, type SceneView, type ViewNode } from './scene.js';

/**
 * PlantUML with the C4-PlantUML macros of PlantUML's own standard library (`!include <C4/…>`,
 * in every PlantUML jar, so it renders offline). One `@startuml … @enduml` block per view, its
 * text areas as floating notes. Only macros of the C4-PlantUML that older jars carry are used (no
 * queue macros, no tags: tags and the archived state are a line of the description).
 */

const unicode = (c: string) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`;

/**
 * A label inside a macro's double quotes. Characters the preprocessor or Creole would act on
 * (`"`, `%` functions, `$` variables, `\` escapes, `<b>` tags, `~`, and doubled markup such as
 * `**`, `//`, `--`, `[[`) are written as PlantUML's `<U+XXXX>` character escapes; so is a `(`
 * right after a letter, digit or `_`: the preprocessor calls a procedure or function written
 * `Name(` anywhere in a line, quotes or not, and C4-PlantUML's are `Person(`, `Rel(`, `System(`, …
 * (a component named `Person(evil, Evil)` drew a second person; one named `Rel(a, b)` made
 * PlantUML refuse the file). A line break in any form is C4-PlantUML's `\n` (PlantUML refuses a
 * file holding U+0085, U+2028 or U+2029).
 */
export function plantumlText(text: string): string {
  return text
    .replace(LINE_BREAK, '\n')
    .replace(/["\\%$<>~]/g, unicode)
    .replace(/(?<=[\p{L}\p{N}_])\(/gu, unicode)
    .replace(/([-/_*^=[\]`'#|])\1+/g, (run) => Array.from(run, unicode).join(''))
    .replace(/\n/g, '\\n')
    .replace(/[\u0000-\u001f\u007f]/g, ' ');
}

const quoted = (text: string | null) => `"${plantumlText(text ?? '')}"`;

/**
 * The description, then the element's tags (C4-PlantUML of older jars has no `$tags`), archived
 * first, and `external` for an external element drawn without an `_Ext` macro (see `macro`).
 */
function describe(element: SceneElement, externalMacro: boolean): string | null {
  const external = element.external && !externalMacro && !element.tags.some(isExternalTag) ? ['external'] : [];
  const tags = [...(element.archived ? ['archived'] : []), ...external, ...element.tags];
  if (tags.length === 0) return element.desc;
  const line = `tags: ${tags.join(', ')}`;
  return element.desc ? `${element.desc}\n${line}` : line;
}

/**
 * The element's macro. An external element is drawn by the `_Ext` macro where older jars have
 * one (`Person_Ext`, `System_Ext`, `SystemDb_Ext`); a container or component of theirs has none,
 * so its tags line says `external` (see `describe`).
 */
function macro(element: SceneElement, level: Level | null): string {
  const { key, name } = element;
  const technology = quoted(element.technology);
  const system = level === null || level === 'C0' || level === 'C1';
  const inner = level === 'C3' || level === 'C4' ? 'Component' : 'Container';
  const outer = (base: 'Person' | 'System' | 'SystemDb') => {
    const ext = element.external ? '_Ext' : '';
    return `${base}${ext}(${key}, ${quoted(name)}, ${quoted(describe(element, true))})`;
  };
  const within = (base: string) => `${base}(${key}, ${quoted(name)}, ${technology}, ${quoted(describe(element, false))})`;
  switch (element.kind) {
    case 'person':
      return outer('Person');
    case 'database':
      return system ? outer('SystemDb') : within(`${inner}Db`);
    case 'container':
      return within('Container');
    case 'component':
      return within('Component');
    case 'queue':
      return system ? outer('System') : within(inner);
    default:
      return outer('System');
  }
}

function* nodeLines(node: ViewNode, level: Level | null, indent: string): Generator<string> {
  if (!node.boundary) {
    yield `${indent}${macro(node.element, level)}\n`;
    return;
  }
  const boundary =
    node.element.kind === 'system' ? 'System_Boundary' : node.element.kind === 'container' ? 'Container_Boundary' : 'Boundary';
  yield `${indent}${boundary}(${node.element.key}, ${quoted(node.element.name)}) {\n`;
  for (const child of node.children) yield* nodeLines(child, level, `${indent}  `);
  yield `${indent}}\n`;
}

/**
 * C4-PlantUML's `Rel` writes its label in bold markup, which an empty label turns into a stray
 * `=`: a relation without a label is a plain arrow. A relation's description is a second line.
 */
function relation(r: SceneRelation): string {
  if (r.label) {
    const text = r.desc ? `${plantumlText(r.label)}\\n${italic(r.desc)}` : plantumlText(r.label);
    return `Rel(${r.from}, ${r.to}, "${text}")\n`;
  }
  return r.desc ? `${r.from} --> ${r.to} : ${italic(r.desc)}\n` : `${r.from} --> ${r.to}\n`;
}

/** Creole italics end at a line break (a `<i>` across one was drawn as a literal `}</i>`): each line its own. */
function italic(text: string): string {
  return text
    .split(LINE_BREAK)
    .map((line) => (line === '' ? '' : `<i>${plantumlText(line)}</i>`))
    .join('\\n');
}

/**
 * The view's `title` line, or none for a blank title (PlantUML refuses a bare `title`). PlantUML
 * also refuses some titles of punctuation alone (`{`, `/`, `- -`, an emoji): a title without a
 * letter or digit is written character by character as `<U+XXXX>` escapes, which it draws as such.
 */
function titleLine(title: string): string {
  if (title.trim() === '') return '';
  if (/[\p{L}\p{N}]/u.test(title)) return `title ${plantumlText(title)}\n`;
  const escaped = Array.from(title.replace(LINE_BREAK, ' ').replace(/[\u0000-\u001f\u007f]/g, ' '), (c) =>
    c === ' ' ? c : `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`,
  );
  return `title ${escaped.join('')}\n`;
}

function* plantumlView(view: SceneView): Generator<string> {
  yield `@startuml ${view.key}\n`;
  yield '!include <C4/C4_Component>\n';
  yield titleLine(view.title);
  for (const node of view.nodes) yield* nodeLines(node, view.level, '');
  for (const r of view.relations) yield relation(r);
  for (const [i, note] of view.notes.entries()) yield `note ${quoted(note)} as N_${i + 1}\n`;
  yield '@enduml\n';
}

/** One `@startuml … @enduml` block per view, a blank line between them, line by line. */
export function* plantuml(scene: Scene): Generator<string> {
  for (let i = 0; i < scene.views.length; i++) {
    if (i > 0) yield '\n';
    yield* plantumlView(scene.views[i]!);
  }
}
