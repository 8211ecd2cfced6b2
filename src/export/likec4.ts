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

function elementLines(element: SceneElement): string[] {
  const body = [
    ...(element.desc ? [`    description ${likec4Text(element.desc)}`] : []),
    ...(element.typeName ? [`    technology ${likec4Text(element.typeName)}`] : []),
  ];
  const head = `  ${element.key} = ${element.kind} ${likec4Text(element.name)}`;
  return body.length === 0 ? [head] : [`${head} {`, ...body, '  }'];
}

export function likec4(scene: Scene): string {
  const relations = scene.relations.filter((r) => r.from !== r.to);
  return [
    SPECIFICATION,
    '',
    'model {',
    ...scene.elements.flatMap(elementLines),
    ...relations.map((r) => `  ${r.from} -> ${r.to}${r.label ? ` ${likec4Text(r.label)}` : ''}`),
    '}',
    '',
    'views {',
    ...scene.views.flatMap((view) => {
      const keys = Array.from(walk(view.nodes), (n) => n.element.key);
      return [
        `  view ${view.key} {`,
        `    title ${likec4Text(view.title)}`,
        ...(view.desc ? [`    description ${likec4Text(view.desc)}`] : []),
        ...(keys.length > 0 ? [`    include ${keys.join(', ')}`] : []),
        '  }',
      ];
    }),
    '}',
    '',
  ].join('\n');
}
