import { walk, type Scene, type SceneElement } from './scene.js';

/**
 * LikeC4: a specification of element kinds, the model (elements and relations) and one view
 * per scene view. Boundaries are not nested in the model (c4store's containers belong to a
 * diagram, not to the model): a view includes the boxes of its diagram, boundaries among them.
 */

/** A single-quoted LikeC4 string: backslash and quote escaped; line breaks may stand in it as they are. */
export function likec4Text(text: string): string {
  return `'${text
    .replace(/\r\n?/g, '\n')
    .replace(/[\\']/g, (c) => `\\${c}`)
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, ' ')}'`;
}

const SPECIFICATION = `specification {
  element person {
    style {
      shape person
    }
  }
  element system
  element container
  element component
  element database {
    style {
      shape cylinder
    }
  }
  element queue {
    style {
      shape queue
    }
  }
  element placeholder {
    style {
      border dashed
    }
  }
}`;

function* elementLines(element: SceneElement): Generator<string> {
  const head = `  ${element.key} = ${element.kind} ${likec4Text(element.name)}`;
  if (!element.desc && !element.typeName) {
    yield `${head}\n`;
    return;
  }
  yield `${head} {\n`;
  if (element.desc) yield `    description ${likec4Text(element.desc)}\n`;
  if (element.typeName) yield `    technology ${likec4Text(element.typeName)}\n`;
  yield '  }\n';
}

/** The LikeC4 source, line by line (each ending in a line break). */
export function* likec4(scene: Scene): Generator<string> {
  yield `${SPECIFICATION}\n\nmodel {\n`;
  for (const element of scene.elements) yield* elementLines(element);
  for (const r of scene.relations) if (r.from !== r.to) yield `  ${r.from} -> ${r.to}${r.label ? ` ${likec4Text(r.label)}` : ''}\n`;
  yield '}\n\nviews {\n';
  for (const view of scene.views) {
    yield `  view ${view.key} {\n`;
    yield `    title ${likec4Text(view.title)}\n`;
    if (view.desc) yield `    description ${likec4Text(view.desc)}\n`;
    // Key by key: the landscape of every component includes them all on this one line.
    let first = true;
    for (const node of walk(view.nodes)) {
      yield `${first ? '    include ' : ', '}${node.element.key}`;
      first = false;
    }
    if (!first) yield '\n';
    yield '  }\n';
  }
  yield '}\n';
}
