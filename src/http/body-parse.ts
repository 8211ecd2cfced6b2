/**
 * Turning a request body's text into a value, with the limits that keep hostile input cheap.
 * Pure functions: the body middleware runs them in the request's thread for small bodies,
 * and yaml-worker.ts runs the YAML one on a worker thread for large bodies.
 *
 * Nesting is bounded before anything recursive runs. V8's JSON.parse is iterative but takes
 * seconds and hundreds of MB on a 10 MB `[[[[…`; the `yaml` package's composer and toJS
 * recurse once per level, and a stack overflow inside it has been seen to abort the whole
 * process (`FATAL ERROR: RegExpCompiler Allocation failed`) on the next request. So the
 * text is scanned first, linearly and without recursion, and refused at the first sign of
 * nesting beyond the bound.
 */
import YAML from 'yaml';
import { MAX_YAML_NESTING, yamlNestingExceeds } from '../yaml/format.js';
import { yaml11AsClientsMeanIt } from '../yaml/yaml11.js';

/** Deepest JSON nesting accepted. A model body needs 6 levels (diagrams.0.componentInstances.0.position.x). */
export const MAX_JSON_DEPTH = 100;

/** Alias expansions allowed in one YAML body: an alias bomb is refused, not expanded. */
export const MAX_YAML_ALIASES = 100;

export type Parsed = { value: unknown } | { error: string };

/** True when the JSON text nests arrays/objects more than `max` deep (strings are skipped). */
export function jsonNestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string: find its closing quote, stepping over escapes.
      for (;;) {
        const quote = text.indexOf('"', i + 1);
        if (quote < 0) return false; // unterminated: JSON.parse will say so
        let backslashes = 0;
        for (let j = quote - 1; text.charCodeAt(j) === 0x5c; j--) backslashes++;
        i = quote;
        if (backslashes % 2 === 0) break;
      }
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

// An own `__proto__` key, possibly written with \u escapes (as @hapi/bourne detects it).
const PROTO_KEY =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;

function hasProtoKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (!Array.isArray(node) && Object.hasOwn(node, '__proto__')) return true;
    for (const child of Object.values(node)) stack.push(child);
  }
  return false;
}

export function parseJsonText(text: string): Parsed {
  if (text.trim() === '') return { error: 'Invalid JSON: the request body is empty.' };
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) {
    return { error: `Invalid JSON: nested more than ${MAX_JSON_DEPTH} levels deep.` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `Invalid JSON: ${(err as Error).message}` };
  }
  // Kept from the body parser used before (co-body with @hapi/bourne): an own `__proto__`
  // key is refused, so no later Object.assign can ever turn it into a prototype.
  if (PROTO_KEY.test(text) && hasProtoKey(value)) {
    return { error: 'Invalid JSON: Object contains forbidden prototype property' };
  }
  return { value };
}

export function parseYamlText(text: string): Parsed {
  if (text.trim() === '') return { error: 'Invalid YAML: the request body is empty.' };
  try {
    if (yamlNestingExceeds(text, MAX_YAML_NESTING)) return { error: 'Invalid YAML: nested too deeply.' };
    // logLevel 'error': a warning (a collection used as a key, say) would otherwise go to the
    // process's stderr on every such request.
    // A `%YAML 1.1` directive is honoured (the package then uses its 1.1 schema), read as 1.1 clients mean it.
    const doc = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: false, logLevel: 'error', customTags: yaml11AsClientsMeanIt });
    const [error] = doc.errors;
    // The parser's own text names its API ('please use YAML.parseAllDocuments()'): say it to a client.
    if (error?.code === 'MULTIPLE_DOCS')
      return { error: "Invalid YAML: a body is one document, and this one holds several (a second '---')." };
    if (error !== undefined) return { error: `Invalid YAML: ${error.message}` };
    return { value: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) };
  } catch (err) {
    return { error: `Invalid YAML: ${(err as Error).message}` };
  }
}
