import { isExternalTag } from '../model/c4-kinds.js';
import { joinsAncestor, LINE_BREAK, walk, type Scene, type SceneElement, type SceneRelation, type SceneView } from './scene.js';

/**
 * LikeC4: a specification (element kinds, tags), the model (elements nested as the scene nests
 * them, relations) and one view per scene view. A view includes exactly its diagram's elements,
 * and exactly its diagram's relations: each relation carries a tag per view that draws it
 * (`#v_<diagram id>`), and the view excludes every relation without its tag — otherwise LikeC4
 * would draw every model relation among the included elements.
 */

/** A single-quoted LikeC4 string: backslash and quote escaped; line breaks may stand in it as they are. */
export function likec4Text(text: string): string {
  return `'${text
    .replace(LINE_BREAK, '\n')
    .replace(/[\\']/g, (c) => `\\${c}`)
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, ' ')}'`;
}

const KINDS = `  element person {
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
`;

export const ARCHIVED_TAG = 'archived';
/** The tag of external elements whose own tags do not say so already (their type's slug starts with `external`). */
export const EXTERNAL_TAG = 'external';

/**
 * LikeC4 tags are identifiers: each c4store tag name becomes `t_` and its letters, digits and `_`
 * (others `_`), made unique by a numeric suffix, and never one of the tags this export adds.
 */
function tagIdentifiers(names: string[], reserved: Set<string>): Map<string, string> {
  const taken = new Set(reserved);
  const identifiers = new Map<string, string>();
  for (const name of names) {
    const base = `t_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
    let identifier = base;
    for (let n = 2; taken.has(identifier.toLowerCase()); n++) identifier = `${base}_${n}`;
    taken.add(identifier.toLowerCase());
    identifiers.set(name, identifier);
  }
  return identifiers;
}

class Writer {
  readonly fqn = new Map<string, string>();
  readonly parentOf = new Map<string, string | null>();
  readonly tag: Map<string, string>;
  readonly viewsWithScope: Set<string>;

  constructor(readonly scene: Scene) {
    for (const e of scene.elements) this.parentOf.set(e.key, e.parent);
    for (const e of scene.elements) this.fqn.set(e.key, e.parent === null ? e.key : `${this.fqn.get(e.parent)}.${e.key}`);
    this.viewsWithScope = new Set(scene.views.filter((v) => v.key !== 'v_index').map((v) => v.key));
    this.tag = tagIdentifiers(scene.tags, new Set([ARCHIVED_TAG, EXTERNAL_TAG, ...this.viewsWithScope]));
  }

  tagsLine(names: string[], archived: boolean, extra: string[] = []): string {
    const tags = [...(archived ? [ARCHIVED_TAG] : []), ...names.map((n) => this.tag.get(n) as string), ...extra];
    return tags.map((t) => `#${t}`).join(' ');
  }

  *specification(): Generator<string> {
    yield `specification {\n${KINDS}`;
    yield `  tag ${ARCHIVED_TAG}\n`;
    yield `  tag ${EXTERNAL_TAG}\n`;
    for (const identifier of this.tag.values()) yield `  tag ${identifier}\n`;
    for (const view of this.viewsWithScope) yield `  tag ${view}\n`;
    yield '}\n';
  }

  /** The elements as a tree: children are written inside their parent's body. */
  *elements(): Generator<string> {
    const children = new Map<string | null, SceneElement[]>();
    for (const e of this.scene.elements) {
      const siblings = children.get(e.parent);
      if (siblings) siblings.push(e);
      else children.set(e.parent, [e]);
    }
    const write = function* (this: Writer, element: SceneElement, indent: string): Generator<string> {
      const head = `${indent}${element.key} = ${element.kind} ${likec4Text(element.name)}`;
      const inner = children.get(element.key) ?? [];
      const external = element.external && !element.tags.some(isExternalTag) ? [EXTERNAL_TAG] : [];
      const tags = this.tagsLine(element.tags, element.archived, external);
      if (!element.desc && !element.technology && tags === '' && inner.length === 0) {
        yield `${head}\n`;
        return;
      }
      yield `${head} {\n`;
      if (tags !== '') yield `${indent}  ${tags}\n`;
      if (element.technology) yield `${indent}  technology ${likec4Text(element.technology)}\n`;
      if (element.desc) yield `${indent}  description ${likec4Text(element.desc)}\n`;
      for (const child of inner) yield* write.call(this, child, `${indent}  `);
      yield `${indent}}\n`;
    };
    for (const element of children.get(null) ?? []) yield* write.call(this, element, '  ');
  }

  relation(r: SceneRelation): string {
    const head = `  ${this.fqn.get(r.from)} -> ${this.fqn.get(r.to)}${r.label ? ` ${likec4Text(r.label)}` : ''}`;
    const tags = r.views.filter((v) => this.viewsWithScope.has(v)).map((v) => `#${v}`);
    if (tags.length === 0 && !r.desc) return `${head}\n`;
    return `${head} {\n${tags.length > 0 ? `    ${tags.join(' ')}\n` : ''}${r.desc ? `    description ${likec4Text(r.desc)}\n` : ''}  }\n`;
  }

  *view(view: SceneView): Generator<string> {
    yield `  view ${view.key} {\n`;
    const tags = this.tagsLine(view.tags, view.archived);
    if (tags !== '') yield `    ${tags}\n`;
    yield `    title ${likec4Text(view.title)}\n`;
    const description = [view.desc ?? '', ...view.notes].filter((text) => text.trim() !== '').join('\n\n');
    if (description) yield `    description ${likec4Text(description)}\n`;
    // Key by key: the landscape of every component includes them all on this one line.
    let first = true;
    for (const node of walk(view.nodes)) {
      yield `${first ? '    include ' : ', '}${this.fqn.get(node.element.key)}`;
      first = false;
    }
    if (!first) yield '\n';
    // LikeC4 draws the enclosing element of nested ones even when not included: not what the diagram drew.
    const drawn = new Set(Array.from(walk(view.nodes), (n) => n.element.key));
    const undrawnAncestors = new Set<string>();
    for (const key of drawn) {
      for (let parent = this.parentOf.get(key); parent; parent = this.parentOf.get(parent)) {
        if (!drawn.has(parent)) undrawnAncestors.add(parent);
      }
    }
    if (undrawnAncestors.size > 0) yield `    exclude ${Array.from(undrawnAncestors, (k) => this.fqn.get(k)).join(', ')}\n`;
    if (this.viewsWithScope.has(view.key)) yield `    exclude * -> * where tag is not #${view.key}\n`;
    yield '  }\n';
  }
}

/** The LikeC4 source, line by line (each ending in a line break). */
export function* likec4(scene: Scene): Generator<string> {
  const writer = new Writer(scene);
  yield* writer.specification();
  yield '\nmodel {\n';
  yield* writer.elements();
  const parentOf = new Map(scene.elements.map((e) => [e.key, e.parent]));
  for (const r of scene.relations) {
    if (r.from !== r.to && !joinsAncestor(r, (key) => parentOf.get(key))) yield writer.relation(r);
  }
  yield '}\n\nviews {\n';
  for (const view of scene.views) yield* writer.view(view);
  yield '}\n';
}
