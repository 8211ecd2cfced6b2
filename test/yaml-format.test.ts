import test from 'ava';
import fc from 'fast-check';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import { emitYaml, emitYamlPieces, parseYaml, parseYamlFast, type Plain } from '../src/yaml/format.js';
import { jsonPieces, mapped, textInSlices } from '../src/slices.js';
import { fileOf, stringify } from '../src/model/files.js';
import type { Attribute, Component, ComponentType, Diagram, Organization, Tag } from '../src/model/types.js';
import { pyyamlLoad } from './support/pyyaml.js';

const projectRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const sampleRepo = path.join(projectRoot, 'sample-repo');

type Doc = { [key: string]: Plain } | Plain[];

/** What the yaml package makes of a text, or the error it reports (same options as the fallback). */
function reference(text: string): { value: unknown } | { error: string } {
  const doc = YAML.parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) return { error: doc.errors[0].message };
  try {
    return { value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (err) {
    return { error: (err as Error).message }; // unresolved alias, alias count exceeded
  }
}

/** -0 is written as 0. */
function normalized(v: unknown): unknown {
  if (typeof v === 'number') return Object.is(v, -0) ? 0 : v;
  if (Array.isArray(v)) return v.map(normalized);
  if (v !== null && typeof v === 'object') {
    const out: { [key: string]: unknown } = {};
    for (const [k, x] of Object.entries(v)) {
      Object.defineProperty(out, k, { value: normalized(x), writable: true, enumerable: true, configurable: true });
    }
    return out;
  }
  return v;
}

async function sampleFiles(): Promise<{ name: string; text: string }[]> {
  const out: { name: string; text: string }[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.name.endsWith('.yaml')) out.push({ name: path.relative(sampleRepo, full), text: await fsp.readFile(full, 'utf8') });
    }
  }
  await walk(sampleRepo);
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

// ---------------------------------------------------------------------------------------------
// Examples

const EXAMPLE_TEXT = `id: 01m80b6d2p1wqftrvrq57qb1kn
name: Web Shop
desc: null
required: false
count: 3
linksTo:
  - 01m80b6d2p1wqftrvrq57qb1kq
list: []
attributes:
  - id: abc
    value: gold
  - id: def
    value: 12.5
position:
  x: -2
  y: 4
empty: {}
text: |-
  first line
  second line
`;

const EXAMPLE_VALUE = {
  id: '01m80b6d2p1wqftrvrq57qb1kn',
  name: 'Web Shop',
  desc: null,
  required: false,
  count: 3,
  linksTo: ['01m80b6d2p1wqftrvrq57qb1kq'],
  list: [],
  attributes: [
    { id: 'abc', value: 'gold' },
    { id: 'def', value: 12.5 },
  ],
  position: { x: -2, y: 4 },
  empty: {},
  text: 'first line\nsecond line',
};

test('the example is written exactly as specified, like YAML.stringify', (t) => {
  t.is(emitYaml(EXAMPLE_VALUE), EXAMPLE_TEXT);
  t.is(emitYaml(EXAMPLE_VALUE), YAML.stringify(EXAMPLE_VALUE, { lineWidth: 0 }));
  t.deepEqual(parseYamlFast(EXAMPLE_TEXT), EXAMPLE_VALUE);
  t.deepEqual(parseYaml(EXAMPLE_TEXT), EXAMPLE_VALUE);
});

test('every sample-repo file: fast path, same value as YAML.parse, re-emitted byte for byte', async (t) => {
  const files = await sampleFiles();
  t.true(files.length >= 50);
  for (const { name, text } of files) {
    const expected = YAML.parse(text);
    t.deepEqual(parseYamlFast(text), expected, name);
    t.deepEqual(parseYaml(text), expected, name);
    t.is(emitYaml(expected), text, name);
  }
});

const organization: Organization = {
  name: 'Northwind: Traders',
  slug: 'demo',
  members: ['anna.berg@northwind.example', 'yes', '2026-11-22'],
};
const type: ComponentType = { id: '01jndkqjm003ad9z282pn5zvk4', slug: 'person', name: 'Person' };
const tag: Tag = {
  id: '01jng649m0b5b0rgsswzakkrj6',
  ref: 'core',
  name: 'Core',
  desc: null,
  color: 'blue',
  apiContext: '2026-11-22 00:41:14',
};
const attribute: Attribute = {
  id: '01jng9qn10fn9etrz8bvypt0j0',
  ref: 'team',
  name: 'Team',
  type: 'LIST',
  desc: 'The team that builds and runs it.\nEvery deployable unit must have one.\n',
  required: true,
  forTypes: ['container', 'database'],
  apiContext: '2026-11-22 00:41:14',
  list: ['Storefront', 'true', '12', 'Back Office'],
};
const component: Component = {
  id: '01jnjrh0m02c25ysw1gj6adcs3',
  ref: 'customer',
  name: 'Customer',
  desc: 'Shops online: browses the catalog, fills a cart, pays and tracks orders.',
  state: 'ACTIVE',
  typeId: null,
  apiContext: '2026-11-22 00:41:14',
  linksTo: ['01jnjsea40be1vh0wgc09d04cr', '01jnjv1jr084nyxk6s176vasbs'],
  attributes: [
    { id: '01jng9j5800tfc0p5nxtx52nfg', value: 'anna.berg@northwind.example' },
    { id: '01jng9x4t023r2xvat8aqd77tz', value: '' },
    { id: '01jngak3y0d7jcyntaabszq8w8', value: true },
    { id: '01jngarkq08cxj6yt6vrx32x74', value: 2650.4 },
    { id: '01jngay3g082bqxmxhhycyhmyf', value: -3 },
    { id: '01jnga84c0bg1e7axcfbyysdmn', value: null },
    { id: '01jnga2mk0bhthm9frp6fqrbgb', value: '4' },
  ],
};
const diagram: Diagram = {
  id: '01jnqxaem0avedamrt8c3z4bwa',
  ref: 'shop-context',
  name: 'Northwind Shop - System Context',
  desc: null,
  state: 'DRAFT',
  level: 'C1',
  tags: ['01jng649m0b5b0rgsswzakkrj6'],
  componentInstances: [
    {
      id: '01jnqxafk8fqehyzwbsw57tt04',
      ref: 'customer',
      component: '01jnjrh0m02c25ysw1gj6adcs3',
      placeholder: '',
      isContainer: false,
      parent: null,
      position: { x: 0, y: -4.5 },
      width: 18,
      height: 8,
    },
    {
      id: '01jnqxafmtcy7s5bctn3mqsjev',
      component: null,
      placeholder: 'Placeholder: #1',
      isContainer: true,
      parent: '01jnqxafk8fqehyzwbsw57tt04',
      position: { x: 24, y: 0 },
      width: 18,
      height: 8,
    },
  ],
  textareas: [
    { id: '01jnqxag2w5zr8h8wh84xc07qk', position: { x: 0, y: 54 }, width: 64, text: 'Only Northwind Shop\n\n  - indented: yes\n' },
    { id: '01jnqxag2w5zr8h8wh84xc07qm', position: { x: 0, y: 60 }, width: 64, text: '  leading spaces\nsecond' },
    { id: '01jnqxag2w5zr8h8wh84xc07qn', position: { x: 0, y: 66 }, width: 64, text: 'kept\n\n\n' },
  ],
  relations: [
    {
      id: '01jnqxag4e511skp38r9g71w3n',
      fromComponentInstance: '01jnqxafk8fqehyzwbsw57tt04',
      toComponentInstance: '01jnqxafmtcy7s5bctn3mqsjev',
      label: 'Browses "products"',
      desc: null,
      linksTo: [],
    },
  ],
  apiContext: '2026-11-22 00:41:14',
};

const RESOURCES: [string, object][] = [
  ['organization', fileOf.organization(organization)],
  ['type', fileOf.type(type)],
  ['tag', fileOf.tag(tag)],
  ['attribute', fileOf.attribute(attribute)],
  ['component', fileOf.component(component)],
  ['diagram', fileOf.diagram(diagram)],
];

for (const [kind, file] of RESOURCES) {
  test(`${kind} file: round trip through the fast path and through the yaml package`, (t) => {
    const value = JSON.parse(JSON.stringify(file)) as { [key: string]: Plain };
    const text = emitYaml(value);
    t.deepEqual(parseYamlFast(text), value);
    t.deepEqual(parseYaml(text), value);
    t.deepEqual(YAML.parse(text), value);
    // position.y is written `y:` as in every existing file; YAML 1.1 reads that key as true.
    if (kind !== 'diagram') t.deepEqual(YAML.parse(text, { version: '1.1' }), value);
  });
}

test('`y` is a plain key, as YAML.stringify and the existing files write it; the value "y" is quoted', (t) => {
  const text = emitYaml({ position: { x: 1, y: 'y' } });
  t.is(text, 'position:\n  x: 1\n  y: "y"\n');
  t.deepEqual(parseYamlFast(text), { position: { x: 1, y: 'y' } });
});

test('ordinary files are written exactly as the yaml package writes them', (t) => {
  const ordinary = { ...component, apiContext: undefined };
  for (const file of [fileOf.organization({ ...organization, members: ['a@b.example'] }), fileOf.type(type), fileOf.component(ordinary)]) {
    t.is(emitYaml(file as { [key: string]: Plain }), stringify(file));
  }
});

test('apiContext date-times and other look-alikes are quoted and stay strings in YAML 1.2 and 1.1', (t) => {
  const value = {
    apiContext: '2026-11-22 00:41:14',
    date: '2026-11-22',
    ts: '2026-11-22T00:41:14Z',
    time: '12:30',
    octal: '0o17',
    hex: '0x1F',
    exp: '1e5',
    under: '1_000',
    inf: '.inf',
    letter: 'y',
    no: 'No',
    tilde: '~',
    id: '01jnjrh0m02c25ysw1gj6adcs3',
    hexish: '1f',
    bad: '0abcdefgh',
  };
  const text = emitYaml(value);
  t.true(text.includes('apiContext: "2026-11-22 00:41:14"\n'));
  t.true(text.includes('id: 01jnjrh0m02c25ysw1gj6adcs3\n'));
  t.true(text.includes('hexish: "1f"\n'));
  t.true(text.includes('letter: "y"\n'));
  t.deepEqual(parseYamlFast(text), value);
  t.deepEqual(YAML.parse(text), value);
  t.deepEqual(YAML.parse(text, { version: '1.1' }), value);
});

test('scalar and collection forms', (t) => {
  t.is(emitYaml({}), '{}\n');
  t.is(emitYaml([]), '[]\n');
  t.is(
    emitYaml({ a: -0, b: 1e21, c: 1e-7, d: 0.1, e: -12.5, f: Number.MAX_SAFE_INTEGER }),
    'a: 0\nb: 1.0e+21\nc: 1.0e-7\nd: 0.1\ne: -12.5\nf: 9007199254740991\n',
  );
  t.is(emitYaml([{ id: 'x' }, [1, [2]], [], {}, 'a\nb\n']), '- id: x\n- - 1\n  - - 2\n- []\n- {}\n- |\n  a\n  b\n');
  t.is(emitYaml({ 'a b': 1, '': 2, true: 3, On: 4, y: 5, n: 6, '1': 7 }), '"1": 7\n"a b": 1\n"": 2\n"true": 3\n"On": 4\ny: 5\nn: 6\n');
  t.is(
    emitYaml({ s: 'x\n\n', t: '\nx', u: ' x\ny', v: 'a \nb', w: 'a\r\nb', x: 'a\tb\nc' }),
    's: |+\n  x\n\nt: |-\n\n  x\nu: " x\\ny"\nv: "a \\nb"\nw: "a\\r\\nb"\nx: "a\\tb\\nc"\n',
  );
  t.is(emitYaml({ s: '\u2028\u0085\ufeff\u007f\ud800' }), 's: "\\u2028\\u0085\\ufeff\\u007f\\ud800"\n');
  t.is(emitYaml({ a: undefined, b: 1 } as unknown as { [key: string]: Plain }), 'b: 1\n');
  t.is(emitYaml({ a: { b: undefined } } as unknown as { [key: string]: Plain }), 'a: {}\n');
  for (const doc of [{}, [], { a: { b: { c: [[], [[]], {}] } } }] as Doc[]) {
    t.deepEqual(parseYamlFast(emitYaml(doc)), doc);
  }
});

test('values outside Plain are refused', (t) => {
  const bad: unknown[] = [NaN, Infinity, -Infinity, 1n, () => 1, Symbol('s'), new Date(0), new Map()];
  for (const v of bad) t.throws(() => emitYaml({ a: v } as never), { instanceOf: TypeError }, String(v));
  t.throws(() => emitYaml([undefined] as never), { instanceOf: TypeError });
  t.throws(() => emitYaml('x' as never), { instanceOf: TypeError });
  t.throws(() => emitYaml(null as never), { instanceOf: TypeError });
});

test('mapping keys longer than 1024 characters use an explicit key (read by the fallback)', (t) => {
  const long = 'k'.repeat(1030);
  const quoted = 'a b'.repeat(400);
  const value = { [long]: [1, { a: 'b\nc' }], [quoted]: 'x', short: { [long]: {} } };
  const text = emitYaml(value);
  t.true(text.startsWith(`? ${long}\n: - 1\n`));
  t.is(parseYamlFast(text), undefined);
  t.deepEqual(parseYaml(text), value);
  t.deepEqual(YAML.parse(text), value);
  const limit = { ['k'.repeat(1024)]: 1, ['"'.repeat(511)]: 2 };
  t.deepEqual(parseYamlFast(emitYaml(limit)), limit);
  t.deepEqual(YAML.parse(emitYaml(limit)), limit);
  const forms = { [long]: 'multi\nline', [quoted]: null, [`${long}2`]: [], [`${long}3`]: { a: { b: 1 } } };
  t.deepEqual(YAML.parse(emitYaml(forms)), forms);
  t.deepEqual(parseYaml(emitYaml([forms, [forms]])), [forms, [forms]]);
});

test('trivial variations: CRLF line ends, no final line break', (t) => {
  const crlf = EXAMPLE_TEXT.replace(/\n/g, '\r\n');
  t.deepEqual(parseYamlFast(crlf), EXAMPLE_VALUE);
  t.deepEqual(parseYaml(crlf), YAML.parse(crlf));
  t.deepEqual(parseYamlFast('a: 1\nb: x'), { a: 1, b: 'x' });
  t.deepEqual(parseYamlFast('{}'), {});
  // A block scalar running to the end of a text without a final line break: left to the yaml package.
  for (const text of ['a: |\n  x', 'a: |-\n  x', 'a: |+\n  x']) {
    t.is(parseYamlFast(text), undefined);
    t.deepEqual(parseYaml(text), YAML.parse(text));
  }
  t.is(parseYamlFast('a: 1\rb: 2\n'), undefined);
});

test('inherited property names become own properties, as in the yaml package', (t) => {
  const text = '"__proto__": 1\nconstructor: 2\ntoString:\n  - 3\n';
  const value = parseYaml(text) as { [key: string]: unknown };
  t.deepEqual(value, YAML.parse(text));
  t.is(Object.getPrototypeOf(value), Object.prototype);
  t.true(Object.hasOwn(value as object, '__proto__'));
  t.deepEqual(Object.keys(value), ['__proto__', 'constructor', 'toString']);
  t.deepEqual(parseYamlFast('constructor: 2\ntoString:\n  - 3\n'), YAML.parse('constructor: 2\ntoString:\n  - 3\n'));
  t.is(parseYamlFast('a:\n  __proto__:\n    polluted: true\n'), undefined);
  t.is(({} as { polluted?: unknown }).polluted, undefined);
});

// ---------------------------------------------------------------------------------------------
// Fallback, invalid YAML and duplicate keys

const OUTSIDE_SUBSET = [
  'a: 1 # comment\n',
  '# comment\na: 1\n',
  'a: &x 1\nb: *x\n',
  'base: &b\n  x: 1\nother: *b\n',
  'a: {b: 1, c: [1, 2]}\n',
  'a: [1, two, "three"]\n',
  "a: 'single'\nb: 'it''s'\n",
  'a: >\n  folded\n  text\n',
  'a: >-\n  folded\n\n  text\n',
  'a: |2\n    indented\n',
  '---\na: 1\n',
  'a: 1\n...\n',
  '%YAML 1.2\n---\na: 1\n',
  'a: !!str 1\n',
  'a: !custom x\n',
  '? a\n: 1\n',
  'a:\n- 1\n- 2\n',
  'a:\n    b: 1\n',
  'a: 1\n\nb: 2\n',
  'a: plain\n  continued\n',
  'a: "multi\n  line"\n',
  'a: "esc \\x41 \\e \\N \\_ \\ "\n',
  'a: 0x1F\nb: 0o17\nc: 1_000\nd: +1\ne: .5\nf: 1.\ng: 007\nh: .inf\ni: -.Inf\nj: .nan\nk: 1E5\n',
  'a: True\nb: NULL\nc: ~\nd: yes\ne: y\n',
  'a:\nb: 1\n',
  'a b: 1\n1: 2\ntrue: 3\nnull: 4\n',
  'a:   spaced\n',
  'a: x \n',
  '- \n- x\n',
  '-\n  a: 1\n',
  '\ufeffa: 1\n',
  'a: "\\u0041"\n',
  'a: "\\/\\b\\f\\t\\""\n',
  '',
  'just a string\n',
  '42\n',
  'a: |\n  x\n\n\nb: 1\n',
  'a: |+\n  x\n\n   \nb: 1\n',
  'a: \u2028x\n',
  '<<: {a: 1}\nb: 2\n',
];

test('texts outside the subset give what the yaml package gives', (t) => {
  for (const text of OUTSIDE_SUBSET) {
    const ref = reference(text);
    t.false('error' in ref, JSON.stringify(text));
    if ('value' in ref) {
      t.deepEqual(parseYaml(text), ref.value, JSON.stringify(text));
      const fast = parseYamlFast(text);
      if (fast !== undefined) t.deepEqual(fast, ref.value, JSON.stringify(text));
    }
  }
  // These need the full parser.
  for (const text of OUTSIDE_SUBSET.slice(0, 21)) t.is(parseYamlFast(text), undefined, JSON.stringify(text));
});

const INVALID = [
  'a: 1\na: 2\n',
  'a: 1\n"a": 2\n',
  'list:\n  - id: x\n    id: y\n',
  'a:\n  b: 1\n  c: 2\n  b: 3\n',
  'a: [1, 2\n',
  'a: b: c\n',
  "a: 'open\n",
  'a: "open\n',
  '- a\nb: 1\n',
  'a: 1\n b: 2\n',
  'a: *missing\n',
  'a: 1\n---\nb: 2\n',
  'key: "\\q"\n',
  `"${'k'.repeat(1030)}": 1\n`,
  'a:\n  - 1\n  b: 2\n',
  'a:\n\tb: 1\n',
  'a: |-\n\n   x\n  y\n',
];

test('invalid YAML and duplicate keys throw the yaml package error, a duplicate key named in it', (t) => {
  for (const text of INVALID) {
    const ref = reference(text);
    t.true('error' in ref, JSON.stringify(text));
    t.is(parseYamlFast(text), undefined, JSON.stringify(text));
    const error = t.throws(() => parseYaml(text), undefined, JSON.stringify(text));
    // The one addition: which key a `Map keys must be unique` means.
    if ('error' in ref) t.is(error?.message.replace(/^(Map keys must be unique): '[^']*' is given twice/, '$1'), ref.error);
  }
  t.regex(
    (t.throws(() => parseYaml('a: 1\na: 2\n')) as Error).message,
    /^Map keys must be unique: 'a' is given twice at line 2, column 1:/,
  );
  t.regex(
    (t.throws(() => parseYaml('list:\n  - id: x\n    id: y\n')) as Error).message,
    /^Map keys must be unique: 'id' is given twice at line 3, column 5:/,
  );
  // A file's opening comment lines (the schema line) count: the line is the file's own.
  t.regex((t.throws(() => parseYaml('# yaml-language-server: $schema=x\na: 1\na: 2\n')) as Error).message, /at line 3, column 1:/);
});

// ---------------------------------------------------------------------------------------------
// Properties

const TRICKY = [
  '',
  ' ',
  '  ',
  'null',
  'Null',
  'NULL',
  '~',
  'true',
  'False',
  'TRUE',
  'yes',
  'No',
  'on',
  'OFF',
  'y',
  'N',
  'n',
  '0',
  '-0',
  '1',
  '01',
  '1.5',
  '1.',
  '.5',
  '1e5',
  '1E5',
  '0x1F',
  '0o17',
  '0b101',
  '1_000',
  '12:30',
  '190:20:30',
  '.inf',
  '-.inf',
  '.nan',
  '+1',
  '2026-11-22',
  '2026-11-22 00:41:14',
  '2026-11-22T00:41:14Z',
  '2026-1-2',
  'e4',
  'E-5',
  'e+3x',
  'e-mail',
  '01jnjrh0m02c25ysw1gj6adcs3',
  '0a',
  '0g',
  '1f',
  '7z',
  '1g',
  '0x1p5',
  '1p5',
  '- x',
  '-',
  '--- x',
  '---',
  '...',
  '? x',
  '?',
  ': x',
  'a: b',
  'a:b',
  'a:',
  'a #b',
  'a#b',
  '#x',
  'x:',
  '&a',
  '*a',
  '!tag',
  '|',
  '>',
  "'q'",
  '"q"',
  '%x',
  '@x',
  '`x',
  '{a}',
  '[a]',
  'a, b',
  '<<',
  '=',
  'x\n',
  'x\n\n',
  '\nx',
  '\n',
  '\n\n',
  ' x\ny',
  'a\n b',
  'a \nb',
  'a\r\nb',
  'a\rb',
  'a\tb',
  '\t',
  '\u0085',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffe',
  '\ud800',
  '\udc00x',
  'x\ud83d',
  '😀',
  'é',
  '\u00a0x',
  'x\u00a0',
  '\\',
  '\\n',
  'a\\"b',
  '\u0000',
  '\u001b',
  '\u007f',
  'C#',
  'https://x.example/a?b=c#d',
  'a - b',
  'key: "value"',
  '  - item',
  'line1\n  - line2\n',
];
const PIECES = [
  'a',
  'Z',
  ' ',
  '  ',
  ':',
  ': ',
  '#',
  ' #',
  '-',
  '- ',
  '"',
  "'",
  '\\',
  '\n',
  '\n\n',
  '\r',
  '\t',
  '0',
  '1',
  '.',
  'e',
  'x',
  '+',
  '|',
  '>',
  '{',
  '}',
  '[',
  ']',
  ',',
  '&',
  '*',
  '!',
  '%',
  '@',
  '`',
  '~',
  '?',
  'null',
  'true',
  'y',
  '2026-11-22',
  ' 00:41:14',
  'é',
  '😀',
  '\u2028',
  '\u0085',
  '\ufeff',
  '\ud800',
  '\u0000',
  '\u007f',
  'g',
];

const stringArb = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(...TRICKY),
  fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }).map((parts) => parts.join('')),
);
const numberArb = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 0.1, 12.5, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53),
);
const scalarArb: fc.Arbitrary<Plain> = fc.oneof(stringArb, numberArb, fc.boolean(), fc.constant(null));
const keyArb = fc.oneof(
  fc.constantFrom(
    'id',
    'name',
    'x',
    'y',
    'n',
    'Y',
    'N',
    'on',
    'On',
    'true',
    'null',
    'yes',
    '_',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'e4',
    'E5x',
    'e_1',
    '',
    ' ',
    '1',
    '01',
    'a b',
    'a:b',
    '- a',
    '"',
    '#',
    'ü',
    '<<',
    '?',
  ),
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/),
  stringArb,
);
const { docArb } = fc.letrec<{ value: Plain; array: Plain[]; object: { [key: string]: Plain }; docArb: Doc }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalarArb, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(keyArb, tie('value'), { maxKeys: 6, noNullPrototype: true }),
  docArb: fc.oneof(tie('object'), tie('array')),
}));

/** YAML_FORMAT_RUNS=20 npx ava test/yaml-format.test.ts multiplies the number of runs. */
const SCALE = Number(process.env.YAML_FORMAT_RUNS ?? '1');

const EXPLICIT_KEY = /^ *(- )*\? /m;
/** A `__proto__` key is left to the yaml package. */
const PROTO_KEY = /^ *(- )*"?__proto__"?:/m;

test('property: emitYaml output reads back identically through parseYaml, the fast path and YAML.parse', (t) => {
  fc.assert(
    fc.property(docArb, (value) => {
      const text = emitYaml(value);
      const expected = normalized(value);
      t.true(text.endsWith('\n'));
      t.deepEqual(parseYaml(text), expected);
      t.deepEqual(YAML.parse(text), expected);
      if (!EXPLICIT_KEY.test(text) && !PROTO_KEY.test(text)) t.deepEqual(parseYamlFast(text), expected);
      t.is(emitYaml(value), text); // deterministic
    }),
    { numRuns: 5000 * SCALE },
  );
});

/** `value` with its top-level lists, and the lists under its top-level keys, as lazy iterables. */
function lazily(value: Doc): unknown {
  const lazy = (v: Plain) => (Array.isArray(v) ? mapped(v, (x) => x) : v);
  if (Array.isArray(value)) return lazy(value);
  const out: { [key: string]: unknown } = {};
  for (const [k, v] of Object.entries(value)) {
    Object.defineProperty(out, k, { value: lazy(v), writable: true, enumerable: true, configurable: true });
  }
  return out;
}

test('property: the pieces of a large answer join to exactly emitYaml / JSON.stringify, lists eager or lazy', async (t) => {
  await fc.assert(
    fc.asyncProperty(docArb, async (value) => {
      t.is([...emitYamlPieces(value)].join(''), emitYaml(value));
      t.is([...emitYamlPieces(lazily(value))].join(''), emitYaml(value));
      t.is([...jsonPieces(value)].join(''), JSON.stringify(value));
      t.is([...jsonPieces(lazily(value))].join(''), JSON.stringify(value));
      t.is((await textInSlices(emitYamlPieces(lazily(value)))).toString('utf8'), emitYaml(value));
    }),
    { numRuns: 2000 * SCALE },
  );
});

test('property: strings of every kind survive as values, keys and list items', (t) => {
  fc.assert(
    fc.property(stringArb, stringArb, (s, k) => {
      const value = { [k]: s, list: [s, [s], { [k]: [s] }], nested: { s } };
      const text = emitYaml(value);
      t.deepEqual(k === '__proto__' ? parseYaml(text) : parseYamlFast(text), value);
      t.deepEqual(YAML.parse(text), value);
    }),
    { numRuns: 5000 * SCALE },
  );
});

const Y_OR_N_KEY = /^[ -]*[yYnN]:/m;

test('property: YAML 1.1 reads the output the same way (apart from plain y/n keys)', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(
        docArb,
        stringArb.map((s) => [s]),
      ),
      (value) => {
        const text = emitYaml(value);
        if (!Y_OR_N_KEY.test(text)) t.deepEqual(YAML.parse(text, { version: '1.1' }), normalized(value));
      },
    ),
    { numRuns: 5000 * SCALE },
  );
});

/**
 * A real YAML 1.1 reader: PyYAML. (The yaml package's 1.1 schema reads `1e+21` as a number;
 * YAML 1.1 itself, and so PyYAML, Psych and SnakeYAML, read it as a string.)
 */
test('property: PyYAML (YAML 1.1) reads every emitted document as the same value, numbers as numbers', async (t) => {
  const exponents = fc.oneof(
    fc.constantFrom(1e21, -1e21, 1e-7, 5e-324, -5e-324, 1.5e-7, 2.5e300, Number.MAX_VALUE, Number.MIN_VALUE, 1e100, 123e-20),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e-6, max: 1e-6 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => Math.abs(n) >= 1e21),
  );
  const values: Plain[] = [
    ...fc.sample(
      fc.oneof(
        docArb,
        stringArb.map((s) => [s]),
      ),
      2000 * SCALE,
    ),
    ...fc.sample(fc.array(fc.oneof(exponents, numberArb), { minLength: 1, maxLength: 8 }), 500 * SCALE),
    ...fc.sample(fc.dictionary(keyArb, exponents, { minKeys: 1, maxKeys: 4, noNullPrototype: true }), 200 * SCALE),
  ];
  const texts = values.map((value) => emitYaml(value as Doc));
  const read = await pyyamlLoad(texts);
  let checked = 0;
  for (const [i, value] of values.entries()) {
    const answer = read[i];
    if (!('value' in answer) || !isDeepStrictEqual(answer.value, normalized(value))) {
      t.fail(`PyYAML reads ${JSON.stringify(texts[i])} as ${JSON.stringify(answer)}, written from ${JSON.stringify(value)}`);
      return;
    }
    checked++;
  }
  t.is(checked, values.length);
  t.is(emitYaml({ a: 1e21, b: 1e-7, c: 5e-324, d: -1.5e-7, e: 2e300 }), 'a: 1.0e+21\nb: 1.0e-7\nc: 5.0e-324\nd: -1.5e-7\ne: 2.0e+300\n');
});

const MUTATION_TOKENS = [
  ' ',
  '  ',
  '\n',
  '\n\n',
  '#',
  ' #',
  ': ',
  ':',
  '- ',
  '-',
  '"',
  "'",
  '\t',
  '&a ',
  '*a',
  '!!str ',
  '? ',
  '|',
  '|-',
  '>',
  '[',
  ']',
  '{',
  '}',
  ',',
  '---\n',
  '...\n',
  'x',
  '0',
  '1.5',
  '\\',
  'null',
  '~',
  '%',
  '\r',
  '\ufeff',
  '\u2028',
  'id: 1\n',
  '  - ',
  'y',
  '\\u0041',
  '\\x41',
];

const mutationArb = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), token: fc.constantFrom(...MUTATION_TOKENS) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('duplicate-line' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('indent-line' as const), at: fc.nat(), by: fc.integer({ min: -2, max: 2 }) }),
);
type Mutation = typeof mutationArb extends fc.Arbitrary<infer M> ? M : never;

function mutate(text: string, m: Mutation): string {
  if (m.kind === 'insert') {
    const at = m.at % (text.length + 1);
    return text.slice(0, at) + m.token + text.slice(at);
  }
  if (m.kind === 'delete') {
    const at = m.at % (text.length + 1);
    return text.slice(0, at) + text.slice(at + m.length);
  }
  const lines = text.split('\n');
  const i = m.at % lines.length;
  if (m.kind === 'duplicate-line') lines.splice(i, 0, lines[i]);
  else lines[i] = m.by > 0 ? ' '.repeat(m.by) + lines[i] : lines[i].slice(-m.by);
  return lines.join('\n');
}

const baseDocArb = fc.oneof(
  docArb,
  fc.constantFrom(EXAMPLE_VALUE as Doc, ...RESOURCES.map(([, file]) => JSON.parse(JSON.stringify(file)) as Doc)),
);

test('property: the fast path never disagrees with the yaml package, even on damaged texts', (t) => {
  let fastHits = 0;
  fc.assert(
    fc.property(baseDocArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 }), (value, mutations) => {
      const text = mutations.reduce(mutate, emitYaml(value));
      const fast = parseYamlFast(text);
      if (fast === undefined) return;
      fastHits++;
      const ref = reference(text);
      t.false('error' in ref, JSON.stringify(text));
      if ('value' in ref) t.deepEqual(fast, ref.value, JSON.stringify(text));
    }),
    { numRuns: 10000 * SCALE },
  );
  t.true(fastHits > 100);
});

test('a number a double would change leaves the fast path: committed files read it as the yaml package does, incoming ones are refused where it is', (t) => {
  for (const [text, value, column] of [
    ['id: x\nvalue: 9007199254740993\n', 9007199254740992, 8],
    ['id: x\nvalue: -9007199254740993\n', -9007199254740992, 8],
    ['id: x\nvalue: 1e-400\n', 0, 8],
  ] as const) {
    t.is(parseYamlFast(text), undefined, text);
    t.deepEqual(parseYaml(text), { id: 'x', value }, text);
    t.deepEqual(parseYaml(text), YAML.parse(text), text);
    const error = t.throws(() => parseYaml(text, { incoming: true }), undefined, text);
    t.regex(error?.message ?? '', new RegExp(`^The number \\S+ at line 2, column ${column} `), text);
  }
  // Numbers a double holds as written stay on the fast path, incoming or not.
  for (const text of [
    'id: x\nvalue: 9007199254740991\n',
    'id: x\nvalue: 12345678901234567000\n',
    'id: x\nvalue: 0\n',
    'id: x\nvalue: 1.5e-7\n',
  ]) {
    t.not(parseYamlFast(text), undefined, text);
    t.deepEqual(parseYaml(text, { incoming: true }), YAML.parse(text), text);
  }
});
