import { walk, type Scene, type SceneElement } from './scene.js';

/**
 * Structurizr DSL: a workspace with the model and one view per scene view. c4store's model is
 * flat (a diagram's containers are not the model's), so every element is a person or a
 * software system, tagged with its c4store type; views are system landscapes of their boxes.
 * Structurizr wants the names of people and software systems unique: later namesakes get
 * ` (2)`, ` (3)`, … appended.
 */

/**
 * A double-quoted DSL token: `\"` for a quote (the DSL tokenizer's escape), a backslash doubled so
 * it can never escape the closing quote, and a line break as `\n`, which Structurizr draws as one.
 */
export function structurizrText(text: string): string {
  return `"${text
    .replace(/\r\n?/g, '\n')
    .replace(/[\\"]/g, (c) => `\\${c}`)
    .replace(/\n/g, '\\n')
    .replace(/[\u0000-\u001f\u007f]/g, ' ')}"`;
}

/** Tags are a comma-separated list in one token: a comma in a type name would split it. */
const tagOf = (element: SceneElement) =>
  element.kind === 'placeholder' ? 'Placeholder' : (element.typeName ?? 'Untyped').replace(/,/g, ' ');

/** Pauses after each element, as the scene's builder does (src/slices.ts); returns the names. */
function* uniqueNames(elements: SceneElement[]): Generator<undefined, Map<string, string>> {
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const element of elements) {
    let name = element.name.trim() === '' ? element.key : element.name;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${element.name} (${n})`;
    taken.add(name.toLowerCase());
    names.set(element.key, name);
    yield;
  }
  return names;
}

/** The workspace, line by line (each ending in a line break). */
export function* structurizr(scene: Scene): Generator<string | undefined> {
  const names = yield* uniqueNames(scene.elements);
  yield `workspace ${structurizrText(scene.name)} ${structurizrText(scene.desc ?? '')} {\n`;
  yield '    model {\n';
  for (const e of scene.elements) {
    const kind = e.kind === 'person' ? 'person' : 'softwareSystem';
    yield `        ${e.key} = ${kind} ${structurizrText(names.get(e.key) as string)} ${structurizrText(e.desc ?? '')} ${structurizrText(tagOf(e))}\n`;
  }
  for (const r of scene.relations) if (r.from !== r.to) yield `        ${r.from} -> ${r.to} ${structurizrText(r.label ?? '')}\n`;
  yield '    }\n';
  yield '    views {\n';
  for (const view of scene.views) {
    yield `        systemLandscape ${view.key} {\n`;
    yield `            title ${structurizrText(view.title)}\n`;
    if (view.desc) yield `            description ${structurizrText(view.desc)}\n`;
    // Key by key: the landscape of every component includes them all on this one line.
    let first = true;
    for (const node of walk(view.nodes)) {
      yield `${first ? '            include' : ''} ${node.element.key}`;
      first = false;
    }
    if (!first) yield '\n';
    yield '            autoLayout\n';
    yield '        }\n';
  }
  yield '    }\n';
  yield '}\n';
}
