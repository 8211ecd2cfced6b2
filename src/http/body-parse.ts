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
import { quotedName } from '../errors.js';
import { DEFAULT_BODY_LIMIT } from '../limits/limits.js';
import { expandsPast } from '../yaml/expansion.js';
import { MAX_YAML_NESTING, yamlNestingExceeds } from '../yaml/format.js';
import { bodyReader, incomingProblem, mergesKeys, positionIn } from '../yaml/incoming.js';
import { numberProblem } from '../yaml/numbers.js';
import { yaml11AsClientsMeanIt } from '../yaml/yaml11.js';

/** Deepest JSON nesting accepted. A model body needs 6 levels (diagrams.0.componentInstances.0.position.x). */
export const MAX_JSON_DEPTH = 100;

/** Alias expansions allowed in one YAML body: an alias bomb is refused, not expanded. */
export const MAX_YAML_ALIASES = 100;

/** A body's value, or why it is refused: 400 unless `status` says otherwise. */
export type Parsed = { value: unknown } | { error: string; status?: 413 };

/**
 * What one linear pass over a JSON text finds, before and without parsing it (strings are
 * skipped whole): whether it nests more than `max` deep (it stops there), how many object
 * members it holds (one per `:`), and where the number literals are that a double may not hold
 * as written (numberProblem decides).
 */
export interface JsonScan {
  tooDeep: boolean;
  members: number;
  /** Where the number literals to look at closely (numberProblem) start and end, in pairs; usually none. */
  numbers: number[];
}

/** Where the quote is that closes the JSON string opening at `open`, escaped quotes stepped over; -1 when none does. */
function closingQuote(text: string, open: number): number {
  for (let quote = text.indexOf('"', open + 1); quote >= 0; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    for (let j = quote - 1; text.charCodeAt(j) === 0x5c; j--) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}

export function scanJson(text: string, max: number): JsonScan {
  let depth = 0;
  let members = 0;
  const numbers: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = closingQuote(text, i);
      if (i < 0) return { tooDeep: false, members, numbers }; // unterminated: JSON.parse will say so
    } else if (c === 0x3a /* : */) {
      members++;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return { tooDeep: true, members, numbers };
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      // A number literal: digits, sign, '.', 'e'. Only three sorts can change when read: an
      // integer of 16 digits or more, and, turning 0, one with an exponent of 3 digits or more or
      // one of 300 characters or more. All the others (nearly every number) are passed by.
      const start = i;
      let fraction = false;
      let exponent = -1;
      for (
        let d = c;
        d === 0x2d || d === 0x2b || d === 0x2e || (d >= 0x30 && d <= 0x39) || d === 0x65 || d === 0x45;
        d = text.charCodeAt(++i)
      ) {
        if (d === 0x2e) fraction = true;
        else if (d === 0x65 || d === 0x45) exponent = i;
      }
      const length = i - start;
      if ((exponent < 0 && !fraction && length >= 16) || (exponent >= 0 && i - exponent >= 4) || length >= 300) numbers.push(start, i);
      i--;
    }
  }
  return { tooDeep: false, members, numbers };
}

/** A JSON path as the schema check writes it (`0.componentInstances.2.width`). */
type PathPart = string | number;

/**
 * Walks a text that JSON.parse accepted, token by token, keeping the path to where it is, and
 * stops at the first key an object gives twice (`duplicate`), or at the value starting at
 * offset `stopAt` (`path`). Only run once the fast checks found something: it builds a Set of
 * keys per object and is several times slower than they are.
 */
function explore(text: string, stopAt?: number): { duplicate?: { object: PathPart[]; key: string }; path?: PathPart[] } {
  interface Frame {
    keys: Set<string> | null; // null: an array
    at: PathPart;
  }
  const stack: Frame[] = [];
  const pathTo = (frames: Frame[]) => frames.map((frame) => frame.at);
  let expectKey = false;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (i === stopAt) return { path: pathTo(stack) };
    if (c === 0x7b /* { */) {
      stack.push({ keys: new Set(), at: '' });
      expectKey = true;
      i++;
    } else if (c === 0x5b /* [ */) {
      stack.push({ keys: null, at: 0 });
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
      i++;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1]!;
      if (top.keys === null) top.at = (top.at as number) + 1;
      else expectKey = true;
      i++;
    } else if (c === 0x22 /* " */) {
      const end = closingQuote(text, i);
      const top = stack[stack.length - 1];
      if (expectKey && top?.keys) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (top.keys.has(key)) return { duplicate: { object: pathTo(stack.slice(0, -1)), key } };
        top.keys.add(key);
        top.at = key;
        expectKey = false;
      }
      i = end + 1;
    } else {
      i++; // whitespace, ':', and the characters of numbers and literals
    }
  }
  return {};
}

const shownPath = (path: PathPart[]) => path.join('.');

/** The refusal of a text JSON.parse took, but whose members `scan` counted more of than `value` holds, or whose numbers it flagged. */
function jsonProblem(text: string, scan: JsonScan, value: unknown): string | undefined {
  if (scan.members !== 0 && countMembers(value) !== scan.members) {
    const { duplicate } = explore(text);
    if (duplicate !== undefined) {
      const where = duplicate.object.length === 0 ? 'the top-level object' : `the object at ${shownPath(duplicate.object)}`;
      return `Invalid JSON: key ${quotedName(duplicate.key)} is given more than once in ${where}.`;
    }
  }
  const { numbers } = scan;
  for (let n = 0; n < numbers.length; n += 2) {
    const problem = numberProblem(text.slice(numbers[n], numbers[n + 1]));
    if (problem === undefined) continue;
    const path = explore(text, numbers[n]).path ?? [];
    return `Invalid JSON: ${path.length === 0 ? '' : `${shownPath(path)}: `}${problem}.`;
  }
  return undefined;
}

/** The members of every object in `value` (a parsed JSON value: no cycles). */
function countMembers(value: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const item of node) if (item !== null && typeof item === 'object') stack.push(item);
    } else {
      for (const key in node) {
        count++;
        const item = (node as Record<string, unknown>)[key];
        if (item !== null && typeof item === 'object') stack.push(item);
      }
    }
  }
  return count;
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
  const scan = scanJson(text, MAX_JSON_DEPTH);
  if (scan.tooDeep) return { error: `Invalid JSON: nested more than ${MAX_JSON_DEPTH} levels deep.` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `Invalid JSON: ${(err as Error).message}` };
  }
  // JSON.parse keeps the last of two equal keys and rounds every number to a double, silently.
  const problem = jsonProblem(text, scan, value);
  if (problem !== undefined) return { error: problem };
  // Kept from the body parser used before (co-body with @hapi/bourne): an own `__proto__`
  // key is refused, so no later Object.assign can ever turn it into a prototype.
  if (PROTO_KEY.test(text) && hasProtoKey(value)) {
    return { error: 'Invalid JSON: Object contains forbidden prototype property' };
  }
  return { value };
}

/** `limit`: the body limit, which the value is held to with what its aliases repeat (expandsPast). */
export function parseYamlText(text: string, limit = DEFAULT_BODY_LIMIT): Parsed {
  if (text.trim() === '') return { error: 'Invalid YAML: the request body is empty.' };
  try {
    if (yamlNestingExceeds(text, MAX_YAML_NESTING)) return { error: 'Invalid YAML: nested too deeply.' };
    // logLevel 'error': a warning (a collection used as a key, say) would otherwise go to the
    // process's stderr on every such request.
    // A `%YAML 1.1` directive is honoured (the package then uses its 1.1 schema), read as 1.1 clients mean it.
    // `<<` merges in a body of either version: its author meant it so (incoming.ts, mergesKeys).
    const doc = YAML.parseDocument(text, {
      uniqueKeys: true,
      prettyErrors: false,
      logLevel: 'error',
      customTags: yaml11AsClientsMeanIt,
      merge: mergesKeys('body'),
    });
    const [error] = doc.errors;
    // The parser's own text names its API ('please use YAML.parseAllDocuments()'): say it to a client.
    if (error?.code === 'MULTIPLE_DOCS')
      return { error: "Invalid YAML: a body is one document, and this one holds several (a second '---')." };
    if (error !== undefined) return { error: `Invalid YAML: ${error.message}` };
    // An unknown tag, a number a double would change, a merge key given no mapping: where it is.
    const problem = incomingProblem(doc, text, bodyReader(doc));
    if (problem !== undefined) {
      const { line, col } = positionIn(text, problem.at);
      return { error: `Invalid YAML: line ${line}, column ${col}: ${problem.subject} ${problem.predicate}` };
    }
    const value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
    if (expandsPast(value, limit)) return { error: 'Request body too large.', status: 413 };
    return { value };
  } catch (err) {
    return { error: `Invalid YAML: ${(err as Error).message}` };
  }
}
