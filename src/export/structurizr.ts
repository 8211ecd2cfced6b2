import { joinsAncestor, LINE_BREAK, walk, type Scene, type SceneElement, type SceneView } from './scene.js';

/**
 * Structurizr DSL: a workspace with the model nested as the scene nests it (people and software
 * systems, containers in systems, components in containers), relations, one view of the kind its
 * diagram's level asks for, and styles. The DSL allows three levels; an element the scene nests
 * deeper (a placeholder inside a component on a code diagram) is written as a component of the
 * nearest container above it. The keyword follows the depth, which is the type's level wherever
 * the diagrams nest components as C4 does: a container enclosed by no system is a software
 * system, a component directly in a system a container.
 */

/**
 * The DSL substitutes `${NAME}` in every token with the constant of that name or, failing that,
 * the environment variable of the machine that parses it, and has no escape for `$`. So every `$`
 * before a `{` is written as a reference to a constant whose value is `$`. The parser replaces,
 * for each reference it found in the token, every occurrence of it in the token as it stands by
 * then, so the constant's name must not occur in the text itself: `uniqueDollarName` picks one
 * the scene's texts do not hold.
 */
const DOLLAR_BASE = 'C4STORE_DOLLAR';

/** `C4STORE_DOLLAR` followed by more underscores than follow it anywhere in the texts. */
export function uniqueDollarName(texts: Iterable<string>): string {
  let longest = -1;
  const needle = `\${${DOLLAR_BASE}`;
  for (const text of texts) {
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
      let end = at + needle.length;
      while (text.charCodeAt(end) === 95 /* _ */) end++;
      longest = Math.max(longest, end - at - needle.length);
    }
  }
  return `${DOLLAR_BASE}${'_'.repeat(longest + 1)}`;
}

/**
 * A double-quoted DSL token: `\"` for a quote (the DSL tokenizer's escape), a backslash doubled so
 * it can never escape the closing quote, a line break as `\n`, which Structurizr draws as one, and
 * `$` before `{` as a reference to the constant `dollar` (see `uniqueDollarName`).
 */
export function structurizrText(text: string, dollar = DOLLAR_BASE): string {
  return `"${text
    .replace(LINE_BREAK, '\n')
    .replace(/[\\"]/g, (c) => `\\${c}`)
    .replace(/\n/g, '\\n')
    .replace(/\$(?=\{)/g, `\${${dollar}}`)
    .replace(/[\u0000-\u001f\u007f]/g, ' ')}"`;
}

/**
 * Structurizr wants the names of people and software systems unique, those of containers unique
 * in their system and those of components in their container: a later namesake gets ` (2)`,
 * ` (3)`, … appended. Each base name remembers the next number to try, so n namesakes cost O(n)
 * lookups (`probes` counts them), not O(n²).
 */
export class UniqueNames {
  probes = 0;
  private readonly taken = new Map<string, Set<string>>();
  private readonly next = new Map<string, number>();

  name(scope: string, wanted: string): string {
    let taken = this.taken.get(scope);
    if (taken === undefined) this.taken.set(scope, (taken = new Set()));
    const base = wanted.toLowerCase();
    this.probes++;
    if (!taken.has(base)) {
      taken.add(base);
      return wanted;
    }
    const counter = `${scope}\u0000${base}`;
    let n = (this.next.get(counter) ?? 2) - 1;
    let name: string;
    do {
      n++;
      name = `${wanted} (${n})`;
      this.probes++;
    } while (taken.has(name.toLowerCase()));
    taken.add(name.toLowerCase());
    this.next.set(counter, n + 1);
    return name;
  }
}

type Keyword = 'person' | 'softwareSystem' | 'container' | 'component';

/** The scene's nesting cut to the DSL's three levels. */
class Tree {
  readonly parent = new Map<string, string | null>();
  readonly depth = new Map<string, number>();
  readonly children = new Map<string | null, SceneElement[]>();

  constructor(scene: Scene) {
    for (const e of scene.elements) {
      let parent = e.parent;
      // Elements come parents first, so a parent's own place is known: climb to one that may hold children.
      while (parent !== null && (this.depth.get(parent) as number) > 1) parent = this.parent.get(parent) ?? null;
      const depth = parent === null ? 0 : (this.depth.get(parent) as number) + 1;
      this.parent.set(e.key, parent);
      this.depth.set(e.key, depth);
      const siblings = this.children.get(parent);
      if (siblings) siblings.push(e);
      else this.children.set(parent, [e]);
    }
  }

  keyword(element: SceneElement): Keyword {
    const depth = this.depth.get(element.key);
    if (depth === 0) return element.kind === 'person' ? 'person' : 'softwareSystem';
    return depth === 1 ? 'container' : 'component';
  }

  /** The element's ancestor at `depth`, or the element itself when it sits no deeper. */
  at(key: string, depth: number): string {
    let k = key;
    while ((this.depth.get(k) as number) > depth) k = this.parent.get(k) as string;
    return k;
  }
}

/** The tags Structurizr styles by, besides its own (`Person`, `Software System`, …). */
const KIND_TAG: Partial<Record<SceneElement['kind'], string>> = { database: 'Database', queue: 'Queue', placeholder: 'Placeholder' };
const ARCHIVED = 'Archived';
/** The tag of external elements (tagged `External`, any case, or by their type's slug), styled grey as the drawing has them. */
const EXTERNAL = 'External';

/** Tags are a comma-separated list in one token: a comma in a name would split it. */
function tagList(tags: Array<string | null | undefined>): string {
  const unique = new Set<string>();
  for (const tag of tags) if (tag) unique.add(tag.replace(/,/g, ' ').trim());
  unique.delete('');
  return [...unique].join(',');
}

const STYLES = `    styles {
        element "Person" {
            shape Person
            background #08427b
            color #ffffff
        }
        element "Software System" {
            background #1168bd
            color #ffffff
        }
        element "Container" {
            background #438dd5
            color #ffffff
        }
        element "Component" {
            background #85bbf0
            color #000000
        }
        element "Database" {
            shape Cylinder
        }
        element "Queue" {
            shape Pipe
        }
        element "External" {
            background #6b6b6b
            color #ffffff
        }
        element "Placeholder" {
            border Dashed
            background #f5f5f5
            color #555555
        }
        element "Archived" {
            opacity 50
        }
        relationship "Relationship" {
            routing Orthogonal
        }
    }
`;

interface ViewPlan {
  header: string;
  include: string[];
}

/**
 * The view a diagram's level asks for, over the elements it draws: a system context (C1) of the
 * software system most related in the diagram, a container view (C2, D1, P0) of the system whose
 * containers it draws most, a component view (C3, C4) of the container whose components it draws
 * most; a system landscape for C0, for no level, and where no such system or container is drawn.
 * Each view includes what its kind may hold: an element it may not is replaced by its ancestor
 * that it may (the system or container in scope is the view's boundary, never an element of it).
 */
function planView(view: SceneView, tree: Tree, isPerson: (key: string) => boolean): ViewPlan {
  const drawn = Array.from(walk(view.nodes), (n) => n.element.key);
  const most = (candidates: Iterable<string>): string | undefined => {
    const count = new Map<string, number>();
    for (const c of candidates) count.set(c, (count.get(c) ?? 0) + 1);
    let best: string | undefined;
    for (const [key, n] of count) if (best === undefined || n > (count.get(best) as number)) best = key;
    return best;
  };
  const distinct = (keys: Array<string | undefined>) => [...new Set(keys.filter((k): k is string => k !== undefined))];
  const level = view.level;
  if (level === 'C3' || level === 'C4') {
    const container = most(drawn.filter((k) => (tree.depth.get(k) as number) >= 2).map((k) => tree.at(k, 1)));
    if (container !== undefined) {
      const system = tree.at(container, 0);
      const include = distinct(
        drawn.map((k) => {
          if (tree.at(k, 1) === container) return k === container ? undefined : tree.at(k, 2);
          if (tree.at(k, 0) === system) return k === system ? undefined : tree.at(k, 1);
          return tree.at(k, 0);
        }),
      );
      return { header: `component ${container} ${view.key}`, include };
    }
  }
  if (level === 'C2' || level === 'C3' || level === 'C4' || level === 'D1' || level === 'P0') {
    const system = most(drawn.filter((k) => (tree.depth.get(k) as number) >= 1).map((k) => tree.at(k, 0)));
    if (system !== undefined) {
      const include = distinct(drawn.map((k) => (tree.at(k, 0) === system ? (k === system ? undefined : tree.at(k, 1)) : tree.at(k, 0))));
      return { header: `container ${system} ${view.key}`, include };
    }
  }
  const top = distinct(drawn.map((k) => tree.at(k, 0)));
  if (level !== null && level !== 'C0') {
    const ends = view.relations.flatMap((r) => [tree.at(r.from, 0), tree.at(r.to, 0)]);
    const systems = new Set(top.filter((k) => !isPerson(k)));
    const subject = most([...systems, ...ends.filter((k) => systems.has(k))]);
    if (subject !== undefined) return { header: `systemContext ${subject} ${view.key}`, include: top };
  }
  return { header: `systemLandscape ${view.key}`, include: top };
}

/** The workspace, line by line (each ending in a line break); pauses (`undefined`) let other work run. */
export function* structurizr(scene: Scene): Generator<string | undefined> {
  const dollar = uniqueDollarName(textsOf(scene));
  const q = (text: string | null | undefined) => structurizrText(text ?? '', dollar);
  const tree = new Tree(scene);
  const names = new UniqueNames();
  const nameOf = new Map<string, string>();
  for (const e of scene.elements) {
    const parent = tree.parent.get(e.key) ?? null;
    nameOf.set(e.key, names.name(parent ?? '', e.name.trim() === '' ? e.key : e.name));
    yield;
  }
  const personKeys = new Set(scene.elements.filter((e) => tree.keyword(e) === 'person').map((e) => e.key));

  yield `!const ${dollar} "$"\n\n`;
  yield `workspace ${q(scene.name)} ${q(scene.desc)} {\n`;
  yield '    model {\n';
  // Each view draws the relations of its diagram only, not relations implied by nesting.
  yield '        !impliedRelationships false\n';
  const writeElement = function* (e: SceneElement, indent: string): Generator<string> {
    const keyword = tree.keyword(e);
    // The style's tag exactly as spelt: an own tag `external` is left as it is, beside it.
    const external = e.external ? EXTERNAL : null;
    const tags = q(tagList([e.typeName, KIND_TAG[e.kind], external, ...e.tags, e.archived ? ARCHIVED : null]));
    const technology = keyword === 'container' || keyword === 'component' ? ` ${q(e.technology)}` : '';
    const head = `${indent}${e.key} = ${keyword} ${q(nameOf.get(e.key))} ${q(e.desc)}${technology} ${tags}`;
    const children = tree.children.get(e.key) ?? [];
    const property = technology === '' && e.technology ? e.technology : null;
    if (children.length === 0 && property === null) {
      yield `${head}\n`;
      return;
    }
    yield `${head} {\n`;
    if (property !== null) yield `${indent}    properties {\n${indent}        "Technology" ${q(property)}\n${indent}    }\n`;
    for (const child of children) yield* writeElement(child, `${indent}    `);
    yield `${indent}}\n`;
  };
  for (const e of tree.children.get(null) ?? []) yield* writeElement(e, '        ');
  const scoped = new Set(scene.views.filter((v) => v.key !== 'v_index').map((v) => v.key));
  for (const r of scene.relations) {
    if (r.from === r.to || joinsAncestor(r, (key) => tree.parent.get(key))) continue;
    const head = `        ${r.from} -> ${r.to} ${q(r.label ?? '')} "" ${q(tagList(r.views.filter((v) => scoped.has(v))))}`;
    if (r.desc) yield `${head} {\n            properties {\n                "Description" ${q(r.desc)}\n            }\n        }\n`;
    else yield `${head}\n`;
  }
  yield '    }\n';
  yield '    views {\n';
  for (const view of scene.views) {
    const plan: ViewPlan =
      view.key === 'v_index' ? { header: 'systemLandscape v_index', include: ['*'] } : planView(view, tree, (k) => personKeys.has(k));
    yield `        ${plan.header} {\n`;
    yield `            title ${q(view.title)}\n`;
    const description = [view.desc ?? '', ...view.notes].filter((text) => text.trim() !== '').join('\n\n');
    if (description) yield `            description ${q(description)}\n`;
    // Key by key: the landscape of every component includes them all on this one line.
    let first = true;
    for (const key of plan.include) {
      yield `${first ? '            include' : ''} ${key}`;
      first = false;
    }
    if (!first) yield '\n';
    if (scoped.has(view.key)) yield `            exclude ${q(`relationship.tag!=${view.key}`)}\n`;
    yield '            autoLayout\n';
    yield '        }\n';
  }
  yield STYLES;
  yield '    }\n';
  yield '}\n';
}

/** Every text of the scene that the workspace quotes. */
function* textsOf(scene: Scene): Generator<string> {
  yield scene.name;
  if (scene.desc) yield scene.desc;
  for (const e of scene.elements) {
    yield e.name;
    if (e.desc) yield e.desc;
    if (e.technology) yield e.technology;
    if (e.typeName) yield e.typeName;
    yield* e.tags;
  }
  for (const r of scene.relations) {
    if (r.label) yield r.label;
    if (r.desc) yield r.desc;
  }
  for (const v of scene.views) {
    yield v.title;
    if (v.desc) yield v.desc;
    yield* v.notes;
  }
}
