import YAML from 'yaml';
import { inexactYamlNumber } from './numbers.js';

/**
 * What YAML coming in may say, wherever it comes in: a pushed model file (and a folder that
 * `c4store check` reads as a push would bring it), or a request body, YAML 1.2 or, with the
 * `%YAML 1.1` directive, YAML 1.1. The `yaml` package reads several things as something other
 * than what their author wrote, and says nothing:
 *
 * - an unknown tag (`!custom x`, `!!python/object:foo {}`) as if it were not there;
 * - a number a double cannot hold (`9007199254740993`) as another number;
 * - a merge key (`<<: *defaults`), in YAML 1.2, as a field named `<<`, dropping what it merges;
 * - a model file under `%YAML 1.1` with 1.1's types (`y` true, `1:20` the number 80, `017` 15).
 *
 * One walk over the parsed document finds the first of these in document order, and
 * `tagRule` alone decides which tags each reader takes. Each caller says where in its words:
 * a file's message names its path, a body's starts `Invalid YAML:`.
 */

/** Who reads the YAML: a model file (YAML 1.2, stored as written), or a request body of either version. */
export type YamlReader = 'model file' | 'body' | 'body 1.1';

const YAML_TAG = 'tag:yaml.org,2002:';
const CORE_TYPES = ['str', 'int', 'float', 'bool', 'null', 'map', 'seq'];
/** The types YAML 1.1 adds (yaml.org/type): what a YAML 1.1 client such as PyYAML may tag a value with. */
const YAML_11_TYPES = ['binary', 'timestamp', 'set', 'omap', 'pairs', 'merge'];

/** `!!name` for a tag of YAML's own (`tag:yaml.org,2002:name`), the tag itself otherwise. */
function shortTag(tag: string): string {
  return tag.startsWith(YAML_TAG) ? `!!${tag.slice(YAML_TAG.length)}` : tag;
}

interface TagRule {
  /** The tags taken, resolved (`tag:yaml.org,2002:str`); `!` (only "not a plain scalar") is always taken. */
  allowed: ReadonlySet<string>;
  /** What the reader holds, for the refusal of any other tag. */
  holds: string;
}

const tagSet = (types: readonly string[]) => new Set(['!', ...types.map((type) => YAML_TAG + type)]);
const listed = (types: readonly string[]) => types.map((type) => `!!${type}`).join(', ');

const TAG_RULES: Record<YamlReader, TagRule> = {
  // A model file says what is stored: `!!binary`, `!!timestamp`, `!!set` would be values no field
  // holds, read back as something else than the file shows.
  'model file': {
    allowed: tagSet(CORE_TYPES),
    holds: `a model file holds strings, numbers, booleans, null, mappings and sequences, written plain or with YAML's core tags (${listed(CORE_TYPES)}).`,
  },
  // A body is read once, as its author meant it: its merge keys are merged (mergeKeys below), so `!!merge` is taken too.
  body: {
    allowed: tagSet([...CORE_TYPES, 'merge']),
    holds: `a request body holds strings, numbers, booleans, null, mappings and sequences, written plain or with YAML's core tags (${listed(CORE_TYPES)}) and !!merge.`,
  },
  // The tags of YAML 1.1's own types, as PyYAML's safe_dump writes them (`!!binary` for bytes,
  // `!!set` for a set): taken as YAML, then held to the body's schema like any other value.
  'body 1.1': {
    allowed: tagSet([...CORE_TYPES, ...YAML_11_TYPES]),
    holds: `a YAML 1.1 request body holds strings, numbers, booleans, null, mappings and sequences, written plain or with the tags of YAML 1.1's types (${listed([...CORE_TYPES, ...YAML_11_TYPES])}).`,
  },
};

/** The tags `reader` takes, and what to tell whoever wrote another: the one place that decides it for every reader. */
function tagRule(reader: YamlReader): TagRule {
  return TAG_RULES[reader];
}

/**
 * Whether `reader` merges `<<` keys (the `yaml` package's `merge` option). A body is read once,
 * by c4store, and `<<: *defaults` means a merge to whoever wrote it: YAML 1.1 defines it, and
 * most YAML 1.2 libraries (js-yaml, Go's yaml.v3, SnakeYAML) merge too. A model file stays in
 * git for every reader of the repository, and YAML 1.2 readers take `<<` for a field: refused.
 */
export function mergesKeys(reader: YamlReader): boolean {
  return reader !== 'model file';
}

/** The reader of a request body parsed with the `yaml` package: its `%YAML` directive decides. */
export function bodyReader(doc: YAML.Document): YamlReader {
  return doc.directives?.yaml.version === '1.1' ? 'body 1.1' : 'body';
}

/** A problem with a YAML document: `<subject> <predicate>`, written at offset `at` of its text. */
export interface IncomingProblem {
  at: number;
  /** What it is about, lower-case: `the tag '!foo'`, `the number 9007199254740993`. */
  subject: string;
  /** What is wrong with it: `is not read here: …`, `has more digits than …; send it as a string`. */
  predicate: string;
}

/** The most characters of a tag a refusal quotes. */
const QUOTED_TAG_CHARS = 100;

/**
 * The first thing in `doc` (parsed from `text` without errors) that `reader` does not take as
 * written, in document order: a tag it does not take, a number a double would change, a merge
 * key where merges are not read (a model file) or one given something else than mappings to
 * merge (a body, where the `yaml` package would throw without saying where). Undefined when
 * there is none.
 */
export function incomingProblem(doc: YAML.Document, text: string, reader: YamlReader): IncomingProblem | undefined {
  const { allowed, holds } = tagRule(reader);
  const merges = mergesKeys(reader);
  const version = doc.directives?.yaml.version;
  if (reader === 'model file' && version !== undefined && version !== '1.2') {
    return {
      at: Math.max(0, text.indexOf('%YAML')),
      subject: `the directive '%YAML ${version}'`,
      predicate: `is not supported in a model file: a model file is YAML 1.2, read alike by every reader of the repository, and YAML ${version} reads some of its values as others (\`y\` as true, \`1:20\` as 80); remove the directive.`,
    };
  }
  let found: IncomingProblem | undefined;
  const look = (node: unknown) => {
    if (!YAML.isNode(node)) return;
    const { tag } = node;
    if (tag !== undefined && !allowed.has(tag)) {
      const name = shortTag(tag);
      found = {
        at: tagOffset(doc, text, node, tag, name),
        subject: `the tag '${name.length > QUOTED_TAG_CHARS ? `${name.slice(0, QUOTED_TAG_CHARS)}…` : name}'`,
        predicate: `is not read here: ${holds}`,
      };
      return;
    }
    if (YAML.isScalar(node) && typeof node.value === 'number' && node.source !== undefined) {
      const inexact = inexactYamlNumber(node.source);
      if (inexact === undefined) return;
      const advice = inexact.keepAsString ? (reader === 'model file' ? '; write it as a string' : '; send it as a string') : '';
      found = { at: node.range?.[0] ?? 0, subject: `the number ${inexact.shown}`, predicate: `${inexact.problem}${advice}.` };
    }
  };
  YAML.visit(doc, {
    Pair(_key, pair) {
      look(pair.key);
      if (found === undefined && isMergeKey(pair.key)) found = merges ? mergeSourceProblem(doc, pair.value) : mergeKeyProblem(pair.key);
      if (found !== undefined) return YAML.visit.BREAK;
    },
    Node(_key, node) {
      look(node);
      if (found !== undefined) return YAML.visit.BREAK;
    },
  });
  return found;
}

/**
 * A merge key: a plain `<<` (what YAML 1.1, and the `yaml` package's `merge` option, read as one),
 * or any key the package resolved to its merge symbol (`!!merge "<<"`). A quoted `'<<'` is a
 * field of that name in every version.
 */
function isMergeKey(key: unknown): key is YAML.Scalar {
  if (!YAML.isScalar(key)) return false;
  const { value } = key;
  if (typeof value === 'symbol') return value.description === '<<';
  return value === '<<' && (key.type === undefined || key.type === YAML.Scalar.PLAIN);
}

function mergeKeyProblem(key: YAML.Scalar): IncomingProblem {
  return {
    at: key.range?.[0] ?? 0,
    subject: "the merge key '<<'",
    predicate:
      "is not supported in a model file: a model file is read as YAML 1.2, where '<<' is a field of that name and what it would merge is dropped; write the fields out.",
  };
}

/** Where a merge key is given something else than a mapping, an alias of one, or a list of them. */
function mergeSourceProblem(doc: YAML.Document, value: unknown): IncomingProblem | undefined {
  const resolved = (node: unknown) => (YAML.isAlias(node) ? node.resolve(doc) : node);
  const sources = YAML.isSeq(resolved(value)) ? (resolved(value) as YAML.YAMLSeq).items : [value];
  for (const source of sources) {
    if (YAML.isMap(resolved(source))) continue;
    const at = (YAML.isNode(source) ? source.range?.[0] : undefined) ?? (YAML.isNode(value) ? value.range?.[0] : undefined) ?? 0;
    return {
      at,
      subject: "what '<<' merges here",
      predicate: 'is not a mapping: a merge key takes a mapping, an alias of one, or a list of them.',
    };
  }
  return undefined;
}

/**
 * Where the tag of `node` is written. The `yaml` package warns of a tag it cannot resolve, at the
 * tag; a tag it knows is found before the node's value: on the value's line, or on a line before
 * it with nothing but blanks between (`name: !!binary` above its indented content); else the value.
 */
function tagOffset(doc: YAML.Document, text: string, node: YAML.Node, tag: string, name: string): number {
  const warning = doc.warnings.find((w) => w.code === 'TAG_RESOLVE_FAILED' && /^Unresolved tag: (\S+)/.exec(w.message)?.[1] === tag);
  if (warning !== undefined) return warning.pos[0];
  const at = node.range?.[0] ?? 0;
  for (const spelling of [name, `!<${tag}>`]) {
    const written = text.lastIndexOf(spelling, at);
    if (written === -1) continue;
    const between = text.slice(written + spelling.length, at);
    if (!text.slice(written, at).includes('\n') || between.trim() === '') return written;
  }
  return at;
}

/** Line and column (both from 1) of `offset` in `text`. */
export function positionIn(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, col: offset - start + 1 };
}
