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

function uniqueNames(elements: SceneElement[]): Map<string, string> {
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const element of elements) {
    let name = element.name.trim() === '' ? element.key : element.name;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${element.name} (${n})`;
    taken.add(name.toLowerCase());
    names.set(element.key, name);
  }
  return names;
}

export function structurizr(scene: Scene): string {
  const names = uniqueNames(scene.elements);
  const relations = scene.relations.filter((r) => r.from !== r.to);
  const elementLine = (e: SceneElement) =>
    `        ${e.key} = ${e.kind === 'person' ? 'person' : 'softwareSystem'} ${structurizrText(names.get(e.key) as string)} ${structurizrText(e.desc ?? '')} ${structurizrText(tagOf(e))}`;
  return [
    `workspace ${structurizrText(scene.name)} ${structurizrText(scene.desc ?? '')} {`,
    '    model {',
    ...scene.elements.map(elementLine),
    ...relations.map((r) => `        ${r.from} -> ${r.to} ${structurizrText(r.label ?? '')}`),
    '    }',
    '    views {',
    ...scene.views.flatMap((view) => {
      const keys = Array.from(walk(view.nodes), (n) => n.element.key);
      return [
        `        systemLandscape ${view.key} {`,
        `            title ${structurizrText(view.title)}`,
        ...(view.desc ? [`            description ${structurizrText(view.desc)}`] : []),
        ...(keys.length > 0 ? [`            include ${keys.join(' ')}`] : []),
        '            autoLayout',
        '        }',
      ];
    }),
    '    }',
    '}',
    '',
  ].join('\n');
}
