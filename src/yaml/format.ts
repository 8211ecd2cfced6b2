import YAML, { Lexer } from 'yaml';
import { isList } from '../slices.js';
import { incomingProblem, positionIn } from './incoming.js';
import { inexactNumber } from './numbers.js';
import { expandsPast } from './expansion.js';
import { DEFAULT_BODY_LIMIT } from '../limits/limits.js';

/**
 * A small, fast YAML emitter and parser for the files c4store writes.
 *
 * `emitYaml` writes a fixed, conservative subset of YAML in the style of
 * `YAML.stringify(value, { lineWidth: 0 })`: block mappings and sequences (two-space indent,
 * sequences indented under their key), `[]` / `{}` for empty collections, plain scalars only
 * where they provably read back as the same string under both the YAML 1.2 core schema and
 * YAML 1.1, literal block scalars (`|-`, `|`, `|+`) for safe multi-line strings, and JSON-style
 * double-quoted scalars for everything else.
 *
 * `parseYaml` reads that subset with a hand-written line parser and hands anything else
 * (comments, anchors, tags, flow collections, other scalar styles, explicit keys, odd
 * indentation, duplicate keys, …) to the `yaml` package, so every valid YAML file still loads
 * and the result is always the one the `yaml` package would give.
 */

export type Plain = string | number | boolean | null | Plain[] | { [key: string]: Plain };

// ---------------------------------------------------------------------------------------------
// Shared character rules

/** Words that some YAML schema (1.2 core or 1.1) reads as null or a boolean, compared lower-cased. */
const VALUE_KEYWORDS = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n', '~']);
/**
 * Keywords that force a mapping key to be quoted. `y` and `n` are deliberately absent: every
 * diagram file has `position: { x, y }`, which `YAML.stringify` (and so every existing file)
 * writes as a plain `y:`; the YAML 1.2 core schema reads it as the string "y".
 */
const KEY_KEYWORDS = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off']);

/** First letters of the keywords above: t, f, n, y, o (either case). */
function mayBeKeyword(c0: number): boolean {
  const c = c0 | 0x20;
  return c === 0x74 || c === 0x66 || c === 0x6e || c === 0x79 || c === 0x6f;
}

/** First characters that rule out a plain scalar: indicators, signs, dot, space, controls, … */
const PLAIN_FIRST_BAD = new Uint8Array(128);
for (let c = 0; c < 0x21; c++) PLAIN_FIRST_BAD[c] = 1;
PLAIN_FIRST_BAD[0x7f] = 1;
for (const ch of '-?:,[]{}#&*!|>\'"%@`+.~<=') PLAIN_FIRST_BAD[ch.charCodeAt(0)] = 1;
/**
 * A plain scalar starting with a digit (ids such as 01jnjrh0m02c25ysw1gj6adcs3) must be
 * letters and digits only, contain a letter beyond the hexadecimal ones, and not start with `0`
 * and a letter. Every number, date, time and timestamp form of YAML 1.1 and 1.2 (decimal, 0x/0o/0b,
 * 1e5, 1_000, 1:30, 2026-11-22, 2026-11-22 00:41:14, …) fails one of these.
 */
function isDigitLedPlain(s: string): boolean {
  let beyondHex = false;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) continue;
    const lower = c | 0x20;
    if (c < 65 || c > 122 || lower < 97 || lower > 122) return false; // not an ASCII letter
    if (i === 1 && s.charCodeAt(0) === 48) return false; // 0x…, 0o…, 0b…
    if (lower >= 103) beyondHex = true; // g-z
  }
  return beyondHex;
}

/** Characters never written raw: C0/C1 controls, DEL, NEL, line/paragraph separators, BOM, U+FFFE/F. */
const UNSAFE_CHAR = /[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;
const UNSAFE_CHAR_G = /[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/g;
/** Same, for whole documents: line feeds allowed (carriage returns are normalized before). */
const UNSAFE_TEXT = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;
const PLAIN_BAD = /[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]|: | #/;
/** What String(n) gives for a finite number. */
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-][0-9]+)?$/;
const EXPONENT_ONLY = /^[eE][-+]?[0-9]/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A mapping key longer than this must be written as an explicit `? key` (YAML's 1024 limit). */
const MAX_IMPLICIT_KEY = 1024;

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** True when `s` can be written as a plain scalar and reads back as the same string everywhere. */
function isPlainString(s: string): boolean {
  const n = s.length;
  if (n === 0) return false;
  const c0 = s.charCodeAt(0);
  if (c0 >= 48 && c0 <= 57) return isDigitLedPlain(s);
  if (c0 < 128 && PLAIN_FIRST_BAD[c0] === 1) return false;
  const cl = s.charCodeAt(n - 1);
  if (cl === 32 || cl === 58 /* : */) return false;
  if (n <= 5 && mayBeKeyword(c0) && VALUE_KEYWORDS.has(s.toLowerCase())) return false;
  // The yaml package's YAML 1.1 schema reads e4, E-5, … as (NaN) floats.
  if ((c0 === 101 || c0 === 69) && EXPONENT_ONLY.test(s)) return false;
  if (PLAIN_BAD.test(s)) return false;
  return isWellFormed(s);
}

/** For a key already known to be an identifier: not a keyword, not an e4-like (YAML 1.1) float. */
function isPlainIdentifierKey(key: string): boolean {
  const c0 = key.charCodeAt(0);
  if (key.length <= 5 && mayBeKeyword(c0) && KEY_KEYWORDS.has(key.toLowerCase())) return false;
  return !((c0 === 101 || c0 === 69) && EXPONENT_ONLY.test(key));
}

function isPlainKey(key: string): boolean {
  return IDENTIFIER.test(key) && isPlainIdentifierKey(key);
}

// ---------------------------------------------------------------------------------------------
// Emitter

/** JSON string syntax is YAML double-quoted syntax; also escape what YAML does not allow raw. */
function quote(s: string): string {
  const q = JSON.stringify(s);
  return UNSAFE_CHAR.test(q) ? q.replace(UNSAFE_CHAR_G, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : q;
}

/**
 * A multi-line string that can be a literal block scalar with auto-detected indentation:
 * only "safe" characters, no trailing spaces on any line, the first non-empty line does not
 * start with a space, and at least one line is non-empty.
 */
function isBlockSafe(s: string): boolean {
  if (/[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]| \n| $|^\n* /.test(s)) return false;
  if (!/[^\n]/.test(s)) return false;
  return isWellFormed(s);
}

const SPACES: string[] = [''];
function spaces(n: number): string {
  while (SPACES.length <= n) SPACES.push(SPACES[SPACES.length - 1] + ' ');
  return SPACES[n];
}

function blockScalar(s: string, contentIndent: number): string {
  let trailing = 0;
  while (trailing < s.length && s.charCodeAt(s.length - 1 - trailing) === 10) trailing++;
  const header = trailing === 0 ? '|-\n' : trailing === 1 ? '|\n' : '|+\n';
  const lines = s.split('\n');
  if (trailing > 0) lines.pop();
  const pad = spaces(contentIndent);
  let out = header;
  for (const line of lines) out += line === '' ? '\n' : pad + line + '\n';
  return out;
}

/**
 * A number as both YAML 1.2 and YAML 1.1 read it. String(n) writes 1e21 as `1e+21` and 1e-7 as
 * `1e-7`, which YAML 1.1 (PyYAML, Psych, SnakeYAML) reads as strings: its floats need a dot in
 * the mantissa and a sign in the exponent. So exponents are written `1.0e+21`, `1.0e-7`.
 */
function emitNumber(n: number): string {
  if (!Number.isFinite(n)) throw new TypeError(`Cannot write ${n} as YAML`);
  if (n === 0) return '0';
  const text = String(n);
  const e = text.indexOf('e');
  if (e === -1) return text;
  const mantissa = text.slice(0, e);
  const exponent = text.slice(e + 1);
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}e${exponent[0] === '-' || exponent[0] === '+' ? exponent : `+${exponent}`}`;
}

function isPlainObject(v: object): v is { [key: string]: unknown } {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Keys with a value: like JSON and YAML.stringify, properties set to undefined are left out. */
function definedKeys(o: { [key: string]: unknown }): string[] {
  const keys = Object.keys(o);
  for (const k of keys) if (o[k] === undefined) return keys.filter((key) => o[key] !== undefined);
  return keys;
}

function emitKey(key: string): string {
  return isPlainKey(key) ? key : quote(key);
}

/**
 * The text after `key:` (compact = false) or after `-` / explicit `:` (compact = true), including
 * the leading space or line break and the final line break. `col` is the column of the key or dash.
 */
function emitValue(v: unknown, col: number, compact: boolean): string {
  switch (typeof v) {
    case 'string':
      if (isPlainString(v)) return ' ' + v + '\n';
      if (v.includes('\n') && isBlockSafe(v)) return ' ' + blockScalar(v, col + 2);
      return ' ' + quote(v) + '\n';
    case 'number':
      return ' ' + emitNumber(v) + '\n';
    case 'boolean':
      return v ? ' true\n' : ' false\n';
    case 'object':
      if (v === null) return ' null\n';
      if (Array.isArray(v)) {
        if (v.length === 0) return ' []\n';
        return compact ? ' ' + emitSequence(v, col + 2, true) : '\n' + emitSequence(v, col + 2, false);
      }
      if (isPlainObject(v)) {
        const keys = definedKeys(v);
        if (keys.length === 0) return ' {}\n';
        return compact ? ' ' + emitMapping(v, keys, col + 2, true) : '\n' + emitMapping(v, keys, col + 2, false);
      }
      throw new TypeError(`Cannot write ${Object.prototype.toString.call(v)} as YAML`);
    default:
      throw new TypeError(`Cannot write ${typeof v} as YAML`);
  }
}

function emitSequence(items: unknown[], col: number, inline: boolean): string {
  let out = '';
  for (let i = 0; i < items.length; i++) {
    if (i > 0 || !inline) out += spaces(col);
    out += '-' + emitValue(items[i], col, true);
  }
  return out;
}

function emitMapping(o: { [key: string]: unknown }, keys: string[], col: number, inline: boolean): string {
  let out = '';
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 || !inline) out += spaces(col);
    const key = emitKey(keys[i]);
    if (key.length > MAX_IMPLICIT_KEY) out += '? ' + key + '\n' + spaces(col) + ':' + emitValue(o[keys[i]], col, true);
    else out += key + ':' + emitValue(o[keys[i]], col, false);
  }
  return out;
}

/**
 * The YAML text of a mapping or sequence: deterministic, keys in insertion order, ends with "\n".
 * Throws a TypeError for values outside Plain (undefined in arrays, NaN, Infinity, bigint, Date, …);
 * object properties set to undefined are left out.
 */
export function emitYaml(value: { [key: string]: Plain } | Plain[]): string {
  if (Array.isArray(value)) return value.length === 0 ? '[]\n' : emitSequence(value, 0, false);
  if (value !== null && typeof value === 'object' && isPlainObject(value)) {
    const keys = definedKeys(value);
    return keys.length === 0 ? '{}\n' : emitMapping(value, keys, 0, false);
  }
  throw new TypeError('emitYaml expects a plain object or an array');
}

/**
 * The text of `emitYaml(value)` in pieces, for a caller that yields to other work between them
 * (src/slices.ts): one piece per item of a top-level sequence, or of a sequence directly under a
 * top-level key (a list of resources, the whole model); those sequences may be lazy iterables.
 * Joined, the pieces are exactly `emitYaml` of the same value with its sequences as arrays.
 */
export function* emitYamlPieces(value: unknown): Generator<string> {
  if (isList(value)) {
    let empty = true;
    for (const item of value) {
      empty = false;
      yield '-' + emitValue(item, 0, true);
    }
    if (empty) yield '[]\n';
    return;
  }
  if (value === null || typeof value !== 'object' || !isPlainObject(value))
    throw new TypeError('emitYaml expects a plain object or an array');
  const keys = definedKeys(value);
  if (keys.length === 0) yield '{}\n';
  for (const key of keys) {
    const item = value[key];
    const emittedKey = emitKey(key);
    if (!isList(item) || emittedKey.length > MAX_IMPLICIT_KEY) {
      yield emitMapping({ [key]: isList(item) ? Array.from(item) : item }, [key], 0, false);
      continue;
    }
    let empty = true;
    for (const element of item) {
      if (empty) yield emittedKey + ':\n';
      empty = false;
      yield '  -' + emitValue(element, 2, true);
    }
    if (empty) yield emittedKey + ': []\n';
  }
}

// ---------------------------------------------------------------------------------------------
// Fast parser for exactly the subset above. Anything unexpected throws FALLBACK.

const FALLBACK = new Error('not in the canonical YAML subset');
const NO_LINES: string[] = [];

let lines: string[] = NO_LINES;
let lineCount = 0;
let li = 0; // index of the current line
let openEnd = false; // the text does not end with a line break

function fail(): never {
  throw FALLBACK;
}

function indentOf(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  return i;
}

function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

function isIdentChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/** Index of the `"` closing the double-quoted scalar that opens at `start` on this line. */
function quoteEnd(line: string, start: number): number {
  let j = line.indexOf('"', start + 1);
  while (j !== -1) {
    let backslashes = 0;
    while (line.charCodeAt(j - 1 - backslashes) === 92) backslashes++;
    if ((backslashes & 1) === 0) return j;
    j = line.indexOf('"', j + 1);
  }
  return fail();
}

/** JSON escapes mean the same in YAML; any other escape (\x, \e, \N, \ , …) goes to the fallback. */
function unquote(line: string, start: number, end: number): string {
  const raw = line.slice(start + 1, end);
  if (raw.indexOf('\\') === -1) return raw;
  try {
    return JSON.parse(line.slice(start, end + 1)) as string;
  } catch {
    return fail();
  }
}

function plainValue(s: string): unknown {
  switch (s) {
    case 'null':
      return null;
    case 'true':
      return true;
    case 'false':
      return false;
    case '[]':
      return [];
    case '{}':
      return {};
  }
  const c0 = s.charCodeAt(0);
  if ((c0 === 45 || (c0 >= 48 && c0 <= 57)) && NUMBER.test(s)) {
    // Exactly what the yaml package's core schema does for these forms.
    const value = s.indexOf('.') === -1 && s.indexOf('e') === -1 ? parseInt(s, 10) : parseFloat(s);
    // A number the double changes (9007199254740993, 1e-400) is read by the yaml package, to the
    // same value, where an incoming file is refused for it, saying where (incoming.ts).
    if ((value === 0 || !Number.isSafeInteger(value)) && inexactNumber(s) !== undefined) fail();
    return value;
  }
  if (!isPlainString(s)) fail();
  return s;
}

/** A literal block scalar whose header is on the current line; content at column `indent`. */
function blockValue(chomp: string, indent: number): string {
  const start = li + 1;
  let j = start;
  let last = -1;
  while (j < lineCount) {
    const line = lines[j];
    if (line.length > 0) {
      const sp = indentOf(line);
      if (sp === line.length) fail(); // whitespace-only line
      if (sp < indent) break;
      if (last === -1 && sp !== indent) fail(); // would auto-detect a deeper indentation
      last = j;
    }
    j++;
  }
  if (last === -1) fail();
  if (j === lineCount && openEnd) fail();
  const trailingEmpty = j - 1 - last;
  if (trailingEmpty > 0 && chomp !== '+') fail();
  let out = lines[start].length === 0 ? '' : lines[start].slice(indent);
  for (let k = start + 1; k <= last; k++) out += lines[k].length === 0 ? '\n' : '\n' + lines[k].slice(indent);
  if (chomp === '') out += '\n';
  else if (chomp === '+') out += '\n'.repeat(trailingEmpty + 1);
  li = j;
  return out;
}

/** The scalar or empty collection from `start` to the end of the current line; `col`: key or dash column. */
function inlineValue(line: string, start: number, col: number): unknown {
  const c = line.charCodeAt(start);
  if (c === 34 /* " */) {
    const end = quoteEnd(line, start);
    if (end !== line.length - 1) fail();
    li++;
    return unquote(line, start, end);
  }
  if (c === 124 /* | */) {
    const header = line.length - start;
    if (header === 1) return blockValue('', col + 2);
    const chomp = line[start + 1];
    if (header !== 2 || (chomp !== '-' && chomp !== '+')) fail();
    return blockValue(chomp, col + 2);
  }
  li++;
  return plainValue(line.slice(start));
}

/** A block collection starting on the next line, at exactly `indent`. */
function nestedValue(indent: number): unknown {
  if (li >= lineCount) fail();
  const line = lines[li];
  if (indentOf(line) !== indent) fail();
  return line.charCodeAt(indent) === 45 && line.charCodeAt(indent + 1) === 32 ? parseSequence(indent, false) : parseMapping(indent, false);
}

/**
 * Whether `line` holds the next entry of a block at `indent` (false: the block has ended).
 * An inline block's first entry follows a `- ` on the caller's line; other indentation fails.
 */
function continuesBlock(line: string, indent: number, inline: boolean, first: boolean): boolean {
  if (first && inline) return true;
  const sp = indentOf(line);
  if (sp === indent) return true;
  if (sp < indent && !first) return false;
  return fail();
}

/** `inline`: the first entry is on the current line, after a `- ` that the caller checked. */
function parseMapping(indent: number, inline: boolean): { [key: string]: unknown } {
  const o: { [key: string]: unknown } = {};
  let entries = 0;
  let first = true;
  while (li < lineCount) {
    const line = lines[li];
    if (!continuesBlock(line, indent, inline, first)) break;
    first = false;
    let p = indent;
    let key: string;
    const c = line.charCodeAt(p);
    if (c === 34 /* " */) {
      const end = quoteEnd(line, p);
      key = unquote(line, p, end);
      p = end + 1;
    } else {
      if (!isIdentStart(c)) fail();
      p++;
      while (isIdentChar(line.charCodeAt(p))) p++;
      key = line.slice(indent, p);
      if (!isPlainIdentifierKey(key)) fail();
    }
    if (line.charCodeAt(p) !== 58 /* : */ || p - indent > MAX_IMPLICIT_KEY) fail();
    let value: unknown;
    if (p + 1 === line.length) {
      li++;
      value = nestedValue(indent + 2);
    } else {
      if (line.charCodeAt(p + 1) !== 32) fail();
      value = inlineValue(line, p + 2, indent);
    }
    o[key] = value;
    entries++;
  }
  // A duplicate key overwrote an entry, or `__proto__` set the prototype: let the yaml package
  // decide (it throws on duplicates and makes `__proto__` an own property).
  if (Object.keys(o).length !== entries) fail();
  return o;
}

function parseSequence(indent: number, inline: boolean): unknown[] {
  const items: unknown[] = [];
  let first = true;
  while (li < lineCount) {
    const line = lines[li];
    if (!continuesBlock(line, indent, inline, first)) break;
    first = false;
    if (line.charCodeAt(indent) !== 45 || line.charCodeAt(indent + 1) !== 32) fail();
    items.push(sequenceItem(line, indent + 2, indent));
  }
  return items;
}

/** The item after the `- ` at column `dash`; its content starts at column `p`. */
function sequenceItem(line: string, p: number, dash: number): unknown {
  const c = line.charCodeAt(p);
  if (c === 45 /* - */ && line.charCodeAt(p + 1) === 32) return parseSequence(p, true);
  if (c === 34 /* " */) {
    const end = quoteEnd(line, p);
    if (end === line.length - 1) {
      li++;
      return unquote(line, p, end);
    }
    if (line.charCodeAt(end + 1) === 58) return parseMapping(p, true);
    fail();
  }
  if (isIdentStart(c)) {
    let q = p + 1;
    while (isIdentChar(line.charCodeAt(q))) q++;
    if (line.charCodeAt(q) === 58 && (q + 1 === line.length || line.charCodeAt(q + 1) === 32)) {
      return parseMapping(p, true);
    }
  }
  return inlineValue(line, p, dash);
}

/**
 * The fast path alone: the value of a text in the canonical subset, or undefined when the text
 * needs the full parser (which may also mean it is invalid). Never returns a value that differs
 * from what the `yaml` package gives for the same text.
 */
export function parseYamlFast(text: string): unknown {
  if (text.indexOf('\r') !== -1) {
    text = text.replace(/\r\n/g, '\n');
    if (text.indexOf('\r') !== -1) return undefined;
  }
  if (UNSAFE_TEXT.test(text) || !isWellFormed(text)) return undefined;
  if (text === '{}\n' || text === '{}') return {};
  if (text === '[]\n' || text === '[]') return [];
  const split = text.split('\n');
  openEnd = split[split.length - 1] !== '';
  if (!openEnd) split.pop();
  if (split.length === 0) return undefined;
  lines = split;
  lineCount = split.length;
  li = 0;
  try {
    const head = split[0];
    const value = head.charCodeAt(0) === 45 && head.charCodeAt(1) === 32 ? parseSequence(0, false) : parseMapping(0, false);
    return li === lineCount ? value : undefined;
  } catch {
    // FALLBACK, or anything unexpected (deep nesting overflowing the stack, …): let the yaml package decide.
    return undefined;
  } finally {
    lines = NO_LINES;
  }
}

export interface ParseYamlOptions {
  /**
   * Hold the text to what a push may bring into a model file (incoming.ts): no tag but YAML's
   * core ones, no number a double would change, no merge key (`<<`). The `yaml` package reads an
   * unknown tag as if it were not there, `!!binary` or `!!timestamp` as values no model field
   * holds, `9007199254740993` as 9007199254740992, and `<<: *defaults` as a field named `<<`; a
   * file that says more than the model holds is refused rather than read as something else.
   * Loading what is already committed does not refuse them, so a repository pushed to before
   * stays readable.
   */
  incoming?: boolean;
}

/**
 * Parse a YAML document: the fast path for the subset emitYaml writes (after the comment lines
 * that open a file, the editors' schema line), otherwise the `yaml` package (`uniqueKeys:
 * true`, `maxAliasCount: 100`) on the whole text, so that its messages count lines as the file
 * does. Throws the yaml package's error for invalid YAML; a key given twice is named.
 */
export function parseYaml(text: string, options: ParseYamlOptions = {}): unknown {
  const fast = parseYamlFast(withoutLeadingComments(text));
  if (fast !== undefined) return fast;
  // The yaml package recurses once per level; a stack overflow inside it can abort the process.
  if (yamlNestingExceeds(text, MAX_YAML_NESTING)) throw new Error('nested too deeply');
  const doc = YAML.parseDocument(text, { uniqueKeys: true });
  const [error] = doc.errors;
  if (error !== undefined) {
    const key = error.code === 'DUPLICATE_KEY' ? keyAt(doc, error.pos[0]) : undefined;
    if (key !== undefined)
      error.message = error.message.replace(/^Map keys must be unique/, `Map keys must be unique: ${key} is given twice`);
    throw error;
  }
  if (options.incoming) {
    const problem = incomingProblem(doc, text, 'model file');
    if (problem !== undefined) {
      const { line, col } = positionIn(text, problem.at);
      const subject = problem.subject[0]!.toUpperCase() + problem.subject.slice(1);
      throw new Error(`${subject} at line ${line}, column ${col} ${problem.predicate}`);
    }
  }
  const value = doc.toJS({ maxAliasCount: 100 });
  if (options.incoming && expandsPast(value, DEFAULT_BODY_LIMIT)) {
    const mb = (DEFAULT_BODY_LIMIT / 2 ** 20).toFixed(1);
    throw new Error(`Its aliases repeat what they name past ${mb} MB, more than one write may carry: write it out, or repeat less.`);
  }
  return value;
}

/** `text` without the comment lines it starts with (the fast path reads no comments). */
function withoutLeadingComments(text: string): string {
  let start = 0;
  while (text.charCodeAt(start) === 0x23 /* # */) {
    const end = text.indexOf('\n', start);
    if (end === -1) return '';
    start = end + 1;
  }
  return start === 0 ? text : text.slice(start);
}

/** The key (quoted as written, shortened) of the mapping entry whose key starts at `offset`. */
function keyAt(doc: YAML.Document, offset: number): string | undefined {
  let found: string | undefined;
  YAML.visit(doc, {
    Pair(_key, pair) {
      const key = pair.key as YAML.Node | null;
      if (key?.range?.[0] !== offset) return;
      const name = String(YAML.isScalar(key) ? key.value : key);
      found = `'${name.length > 100 ? `${name.slice(0, 100)}…` : name}'`.replace(/[\r\n]+/g, ' ');
      return YAML.visit.BREAK;
    },
  });
  return found;
}

// ---------------------------------------------------------------------------------------------
// Nesting bound

/**
 * Bound on a YAML document's nesting estimate (see yamlNestingExceeds). A model body in the
 * usual two-space style scores about 25; the `yaml` package overflows its stack beyond about
 * a thousand real levels.
 */
export const MAX_YAML_NESTING = 200;

/**
 * True when the YAML text may nest more than `max` levels. Computed on the lexer's tokens
 * (linear, iterative), as an upper bound on the depth of any node on a line:
 * 2 × (indentation + 1) — one column of indentation holds at most a mapping and a sequence —
 * plus the block indicators (`-`, `?`, `:`) before it on that line, plus 2 per open flow
 * collection (`[a: [b: …]]` nests a mapping in each). Stops at the first token over the bound,
 * so a hostile document costs only the prefix that exposes it.
 */
export function yamlNestingExceeds(text: string, max: number): boolean {
  let flow = 0;
  let indent = 0;
  let indicators = 0;
  let lineStart = true;
  let skipScalar = false;
  for (const token of new Lexer().lex(text)) {
    if (skipScalar) {
      // The source of a scalar (plain or block) follows the scalar marker: never structure.
      skipScalar = false;
      continue;
    }
    if (token === '\u001f') {
      skipScalar = true;
      lineStart = false;
      continue;
    }
    if (token === '\n' || token === '\r\n') {
      lineStart = true;
      indent = 0;
      indicators = 0;
      continue;
    }
    const first = token.charCodeAt(0);
    if (first === 0x20 || first === 0x09) {
      if (lineStart) indent = token.length;
      continue;
    }
    lineStart = false;
    if (token === '[' || token === '{') flow++;
    else if (token === ']' || token === '}') flow = Math.max(0, flow - 1);
    else if (flow === 0 && (token === '-' || token === '?' || token === ':')) indicators++;
    if (2 * (indent + 1) + indicators + 2 * flow > max) return true;
  }
  return false;
}
