/**
 * Hostile input, generated: valid request bodies for every write endpoint (fast-check
 * arbitraries built on a fixture of existing tags, attributes, components and diagrams), and
 * from them invalid ones, each broken in exactly one place so that the refusal can be
 * predicted: the field's path in the schema message, or the exact semantic text.
 *
 * Shared by test/hostile-input.test.ts (short) and torture/hostile.ts (long).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import YAML from 'yaml';
import { errorContext, MEMBERS, type Reply, type TestServer } from './server.js';

/** A name as docs/api.md §5.4 says a refusal quotes it: on one line, cut after 100 characters with `…`. */
function asQuoted(name: string): string {
  const line = name.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ');
  const characters = Array.from(line);
  return characters.length <= 100 ? line : `${characters.slice(0, 100).join('')}…`;
}

export const API = '/api/external';
export const API_CONTEXT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
export const SERVICE_ID = /^[0-9a-hjkmnp-tv-z]{26}$/;
/** Shaped like a service id, names nothing. */
export const UNKNOWN_ID = '01aaaaaaaaaaaaaaaaaaaaaaaa';

const COLORS = ['gray', 'red', 'orange', 'yellow', 'green', 'blue', 'purple'];
const STATES = ['DRAFT', 'ACTIVE', 'ARCHIVED'];
const LEVELS = ['C1', 'C2', 'C3', 'C4'];
const ATTRIBUTE_TYPES = ['STRING', 'NUMBER', 'BOOLEAN', 'LINK', 'USERLIST', 'LIST'] as const;
type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

/** Ids made to name files outside the repository, or nothing at all. */
export const ESCAPING_IDS = [
  UNKNOWN_ID,
  '../../keys.yaml',
  '..%2F..%2Fkeys.yaml',
  '%2e%2e%2f%2e%2e%2fkeys.yaml',
  '/etc/passwd',
  '../orgs/other.git/HEAD',
  'a\u0000b',
  '\u0000',
  '..\\..\\keys.yaml',
  'components/../../../x',
  '',
  ' ',
  `${UNKNOWN_ID}/../../keys.yaml`,
  'file:///etc/passwd',
  '~/.ssh/id_rsa',
];

export interface Write {
  method: 'POST' | 'PUT';
  path: string;
  kind: 'tag' | 'attribute' | 'component' | 'diagram' | 'model';
}

/** Every write the API has (both spellings of the attribute path). */
export const WRITES: Write[] = [
  { method: 'POST', path: '/tag', kind: 'tag' },
  { method: 'PUT', path: '/attribute', kind: 'attribute' },
  { method: 'POST', path: '/attribute', kind: 'attribute' },
  { method: 'PUT', path: '/attributes', kind: 'attribute' },
  { method: 'POST', path: '/attributes', kind: 'attribute' },
  { method: 'PUT', path: '/component', kind: 'component' },
  { method: 'POST', path: '/component', kind: 'component' },
  { method: 'POST', path: '/diagram', kind: 'diagram' },
  { method: 'POST', path: '/model', kind: 'model' },
];

// ---------------------------------------------------------------------------------------------
// The fixture every generated body refers to

export interface Fixture {
  types: Map<string, string>; // slug → id
  tags: Array<{ id: string; ref: string }>;
  attributes: Record<AttributeType, string> & { requiredForQueue: string };
  listItems: string[];
  components: Array<{ id: string; ref: string }>;
  diagrams: Array<{ id: string; ref: string }>;
}

async function ok(s: TestServer, method: 'POST' | 'PUT', path: string, body: unknown): Promise<any> {
  const reply = await s.request(method, API + path, { body });
  if (reply.status !== 200) throw new Error(`fixture ${method} ${path}: ${reply.status} ${reply.text}`);
  return reply.body;
}

/** Tags, attributes (one per type, plus a required one that applies only to queues), components, a diagram. */
export async function createFixture(s: TestServer): Promise<Fixture> {
  const types = new Map<string, string>(((await s.get(`${API}/type`)).body as any[]).map((t) => [t.slug, t.id]));
  const tags = await ok(s, 'POST', '/tag', [
    { ref: 'fx-tag-1', name: 'Fixture tag 1', color: 'red' },
    { ref: 'fx-tag-2', name: 'Fixture tag 2', color: 'blue' },
  ]);
  const listItems = ['low', 'medium', 'high'];
  const attributes = await ok(s, 'PUT', '/attribute', [
    ...ATTRIBUTE_TYPES.map((type) => ({
      ref: `fx-attr-${type}`,
      name: `Fixture ${type}`,
      type,
      ...(type === 'LIST' ? { list: listItems } : {}),
    })),
    { ref: 'fx-attr-required', name: 'Queue owner', type: 'STRING', required: true, forTypes: ['queue'] },
  ]);
  const components = await ok(
    s,
    'POST',
    '/component',
    [1, 2, 3].map((n) => ({
      ref: `fx-comp-${n}`,
      name: `Fixture component ${n}`,
      typeSlug: n === 1 ? 'container' : 'database',
    })),
  );
  const diagrams = await ok(s, 'POST', '/diagram', [
    {
      ref: 'fx-diagram-1',
      name: 'Fixture diagram',
      level: 'C2',
      componentInstances: [{ ref: 'i1', component: components[0].id, position: { x: 0, y: 0 }, width: 10, height: 5 }],
    },
  ]);
  const byType = Object.fromEntries(ATTRIBUTE_TYPES.map((type, i) => [type, attributes[i].id])) as Record<AttributeType, string>;
  return {
    types,
    tags: tags.map((t: any) => ({ id: t.id, ref: t.ref })),
    attributes: { ...byType, requiredForQueue: attributes[ATTRIBUTE_TYPES.length].id },
    listItems,
    components: components.map((c: any) => ({ id: c.id, ref: c.ref })),
    diagrams: diagrams.map((d: any) => ({ id: d.id, ref: d.ref })),
  };
}

// ---------------------------------------------------------------------------------------------
// Expectations: a served resource compared with what its input implies

/** A value the service chooses: any value passing the check. */
class Chosen {
  constructor(
    readonly what: string,
    readonly check: (value: unknown) => boolean,
  ) {}
}
const anyId = new Chosen('a service id', (v) => typeof v === 'string' && SERVICE_ID.test(v));
const defaultApiContext = new Chosen('the default apiContext', (v) => typeof v === 'string' && API_CONTEXT.test(v));
const wholeNumber = new Chosen('a whole number', (v) => Number.isInteger(v));
const size = new Chosen('a size 1-100', (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 100);
const anyPosition = { x: wholeNumber, y: wholeNumber };

/** Where `actual` differs from `expected` (objects must have exactly the expected keys). */
export function differences(actual: unknown, expected: unknown, path = ''): string[] {
  if (expected instanceof Chosen)
    return expected.check(actual) ? [] : [`${path || '.'}: expected ${expected.what}, got ${JSON.stringify(actual)}`];
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return [`${path || '.'}: expected ${expected.length} items, got ${JSON.stringify(actual)?.slice(0, 200)}`];
    }
    return expected.flatMap((e, i) => differences(actual[i], e, `${path}.${i}`));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return [`${path || '.'}: expected an object, got ${JSON.stringify(actual)?.slice(0, 200)}`];
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    return [...keys].flatMap((key) => {
      if (!(key in expected)) return [`${path}.${key}: unexpected field (${JSON.stringify((actual as any)[key])?.slice(0, 100)})`];
      if (!(key in actual)) return [`${path}.${key}: missing`];
      return differences((actual as any)[key], (expected as any)[key], `${path}.${key}`);
    });
  }
  return Object.is(actual, expected)
    ? []
    : [`${path || '.'}: expected ${JSON.stringify(expected)?.slice(0, 200)}, got ${JSON.stringify(actual)?.slice(0, 200)}`];
}

const withRef = (ref: string | undefined) => (ref === undefined ? {} : { ref });
const apiContextOf = (given: string | undefined) => given ?? defaultApiContext;

// ---------------------------------------------------------------------------------------------
// Valid bodies

let refCounter = 0;
/** A ref no resource has yet: generated text (anything goes in a ref) made unique by a suffix. */
const freshRef = (base: string) => `${base}·${process.pid}·${++refCounter}`;

/** Strings that break naive YAML, path or shell handling, mixed with generated ones. */
const TRICKY = [
  '',
  ' ',
  'null',
  'Null',
  '~',
  'true',
  'no',
  'off',
  'y',
  '1e3',
  '0x1F',
  '0o7',
  '.inf',
  '-.nan',
  '1_000',
  '12:30:00',
  '2026-11-22',
  '- a',
  'a: b',
  '#c',
  '&a',
  '*a',
  '!!str x',
  '|',
  '>-',
  "'",
  '"',
  '\\',
  '\n',
  '\r\n',
  '\t',
  ' lead',
  'trail ',
  '---',
  '...',
  '../../keys.yaml',
  '/etc/passwd',
  'a\u0000b',
  '%2e%2e%2f',
  '__proto__',
  'constructor',
  'toString',
  '\ud800',
  '\udfff x',
  '\u2028',
  '\u0085',
  '\ufeff',
  'ümlaut ✓ 漢字 🏗️',
  '<script>alert(1)</script>',
  "'; DROP TABLE x; --",
  'x'.repeat(3000),
];
export const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.constantFrom(...TRICKY) },
);
const nullableText = fc.oneof(text, fc.constant(null));
const finite = fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n));
const int = fc.integer({ min: -1_000_000, max: 1_000_000 });
const sizeArb = fc.integer({ min: 1, max: 100 });
const position = fc.record({ x: int, y: int });

export interface ValidCase {
  body: unknown;
  /** What the response must hold, in request order (for /model: { components, diagrams }). */
  expected: unknown;
}

function tagCase() {
  return fc
    .record(
      { ref: text, name: text, desc: nullableText, color: fc.constantFrom(...COLORS), apiContext: text },
      { requiredKeys: ['name', 'color'] },
    )
    .map((raw) => {
      const input = { ...raw, ...(raw.ref !== undefined ? { ref: freshRef(raw.ref) } : {}) };
      return {
        input,
        expected: {
          id: anyId,
          ...withRef(input.ref),
          name: input.name,
          desc: input.desc ?? null,
          color: input.color,
          apiContext: apiContextOf(input.apiContext),
        },
      };
    });
}

function attributeCase(fx: Fixture) {
  const slugs = [...fx.types.keys()].filter((s) => s !== 'queue');
  return fc.constantFrom(...ATTRIBUTE_TYPES).chain((type) =>
    fc
      .record(
        {
          ref: text,
          name: text,
          desc: nullableText,
          required: fc.constant(false),
          forTypes: fc.subarray(slugs),
          apiContext: text,
          list: fc.uniqueArray(text, { maxLength: 5 }),
          requiredForQueue: fc.boolean(),
        },
        { requiredKeys: ['name', 'requiredForQueue'] },
      )
      .map(({ requiredForQueue, list, ...raw }) => {
        const input: Record<string, unknown> = { ...raw, type, ...(raw.ref !== undefined ? { ref: freshRef(raw.ref) } : {}) };
        if (type === 'LIST') input.list = list ?? [];
        // A required attribute is only safe where no component needs it: queues (none are made).
        if (requiredForQueue) Object.assign(input, { required: true, forTypes: ['queue'] });
        return {
          input,
          expected: {
            id: anyId,
            ...withRef(input.ref as string | undefined),
            name: input.name,
            type,
            desc: input.desc ?? null,
            required: input.required ?? false,
            forTypes: input.forTypes ?? [],
            apiContext: apiContextOf(input.apiContext as string | undefined),
            ...(type === 'LIST' ? { list: input.list } : {}),
          },
        };
      }),
  );
}

function attributeValue(fx: Fixture, type: AttributeType): fc.Arbitrary<string | number | boolean | null> {
  switch (type) {
    case 'STRING':
      return text;
    case 'NUMBER':
      return finite;
    case 'BOOLEAN':
      return fc.boolean();
    case 'LINK':
      return fc.oneof(fc.constantFrom('', 'https://example.com/a?b=c#d', 'http://10.0.0.1:8080/x'), fc.webUrl().filter(isWebUrl));
    case 'LIST':
      return fc.constantFrom(...fx.listItems);
    case 'USERLIST':
      return fc.constantFrom(...MEMBERS, null);
  }
}

function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Components of the fixture, by id or by ref. */
function existingComponent(fx: Fixture) {
  return fc.constantFrom(...fx.components).chain((c) => fc.constantFrom({ name: c.id, id: c.id }, { name: c.ref, id: c.id }));
}

function componentCase(fx: Fixture, refRequired = false) {
  const slugs = [...fx.types.keys()].filter((s) => s !== 'queue');
  const typeChoice = fc.oneof(
    fc.constant({}),
    fc.constantFrom(...slugs).map((slug) => ({ typeSlug: slug })),
    fc.constantFrom(...slugs).map((slug) => ({ typeId: fx.types.get(slug)! })),
    fc.constantFrom(...slugs).map((slug) => ({ typeId: fx.types.get(slug)!, typeSlug: slug })),
    fc.constant({ typeId: null }),
  );
  const values = fc
    .subarray([...ATTRIBUTE_TYPES])
    .chain((types) => fc.tuple(...types.map((type) => attributeValue(fx, type).map((value) => ({ id: fx.attributes[type], value })))));
  return fc
    .record(
      {
        ref: text,
        name: text,
        desc: nullableText,
        state: fc.constantFrom(...STATES),
        apiContext: text,
        linksTo: fc.uniqueArray(existingComponent(fx), { maxLength: 3, selector: (c) => c.id }),
        attributes: values,
        type: typeChoice,
      },
      { requiredKeys: refRequired ? ['name', 'type', 'ref'] : ['name', 'type'] },
    )
    .map(({ type, linksTo, ...raw }) => {
      const input: Record<string, unknown> = { ...raw, ...type, ...(raw.ref !== undefined ? { ref: freshRef(raw.ref) } : {}) };
      if (linksTo !== undefined) input.linksTo = linksTo.map((c) => c.name);
      const typeId = (type as { typeId?: string | null }).typeId ?? fx.types.get((type as { typeSlug?: string }).typeSlug ?? '') ?? null;
      const typeSlug = typeId === null ? null : [...fx.types].find(([, id]) => id === typeId)![0];
      return {
        input,
        expected: {
          id: anyId,
          ...withRef(input.ref as string | undefined),
          name: input.name,
          desc: input.desc ?? null,
          typeId,
          typeSlug,
          state: input.state ?? 'DRAFT',
          apiContext: apiContextOf(input.apiContext as string | undefined),
          linksTo: (linksTo ?? []).map((c) => c.id),
          attributes: input.attributes ?? [],
        },
      };
    });
}

interface InstanceDraft {
  component?: { name: string; id: string } | null;
  placeholder?: string | null;
  isContainer?: boolean;
  parentPick?: number;
  parentSpelling?: 'parent' | 'parentId';
  position?: { x: number; y: number };
  width?: number;
  height?: number;
}

/**
 * A diagram with instances (some containers, children attached by ref), text areas and
 * relations between its instances. `newComponents`: refs of components created by the same
 * request (the model endpoint), which instances may name.
 */
function diagramCase(fx: Fixture, newComponents: fc.Arbitrary<Array<{ ref: string }>> = fc.constant([])) {
  return newComponents.chain((created) => {
    const component = fc.oneof(
      existingComponent(fx),
      fc.constant(null),
      ...(created.length > 0 ? [fc.constantFrom(...created).map((c) => ({ name: c.ref, id: `ref:${c.ref}` }))] : []),
    );
    const instance = fc.record(
      {
        component,
        placeholder: nullableText,
        isContainer: fc.boolean(),
        parentPick: fc.nat(),
        parentSpelling: fc.constantFrom('parent', 'parentId'),
        position,
        width: sizeArb,
        height: sizeArb,
      },
      { requiredKeys: [] },
    ) as fc.Arbitrary<InstanceDraft>;
    const textarea = fc.record({ text: nullableText, position, width: sizeArb }, { requiredKeys: [] });
    return fc
      .record(
        {
          ref: text,
          name: text,
          desc: nullableText,
          state: fc.constantFrom(...STATES),
          level: fc.constantFrom(...LEVELS),
          apiContext: text,
          tags: fc.subarray(fx.tags),
          instances: fc.array(instance, { maxLength: 6 }),
          textareas: fc.array(textarea, { maxLength: 3 }),
          relations: fc.array(
            fc.record(
              {
                from: fc.nat(),
                to: fc.nat(),
                label: nullableText,
                desc: nullableText,
                linksTo: fc.subarray(
                  fx.diagrams.map((d) => d.id),
                  { maxLength: 1 },
                ),
              },
              { requiredKeys: ['from', 'to'] },
            ),
            { maxLength: 4 },
          ),
        },
        { requiredKeys: ['name', 'level', 'instances', 'textareas', 'relations'] },
      )
      .map((raw) => buildDiagramCase(raw));
  });
}

function buildDiagramCase(raw: {
  ref?: string;
  name: string;
  desc?: string | null;
  state?: string;
  level: string;
  apiContext?: string;
  tags?: Array<{ id: string; ref: string }>;
  instances: InstanceDraft[];
  textareas: Array<{ text?: string | null; position?: { x: number; y: number }; width?: number }>;
  relations: Array<{ from: number; to: number; label?: string | null; desc?: string | null; linksTo?: string[] }>;
}) {
  const input: Record<string, unknown> = {
    name: raw.name,
    level: raw.level,
    ...(raw.ref !== undefined ? { ref: freshRef(raw.ref) } : {}),
    ...(raw.desc !== undefined ? { desc: raw.desc } : {}),
    ...(raw.state !== undefined ? { state: raw.state } : {}),
    ...(raw.apiContext !== undefined ? { apiContext: raw.apiContext } : {}),
  };
  if (raw.tags !== undefined) input.tags = raw.tags.map((t) => ({ id: t.id }));
  const containers = raw.instances.map((i, n) => (i.isContainer ? n : -1)).filter((n) => n >= 0);
  const instances = raw.instances.map((i, n) => {
    const element: Record<string, unknown> = { ref: `inst-${n}` };
    if (i.component !== undefined) element.component = i.component === null ? null : i.component.name;
    if (i.placeholder !== undefined) element.placeholder = i.placeholder;
    if (i.isContainer !== undefined) element.isContainer = i.isContainer;
    let parent: number | null = null;
    if (!i.isContainer && i.parentPick !== undefined && containers.length > 0 && i.parentPick % 3 !== 0) {
      parent = containers[i.parentPick % containers.length]!;
      element[i.parentSpelling ?? 'parent'] = `inst-${parent}`;
    }
    if (i.position !== undefined) element.position = i.position;
    if (i.width !== undefined) element.width = i.width;
    if (i.height !== undefined) element.height = i.height;
    return { element, parent, draft: i };
  });
  input.componentInstances = instances.map((i) => i.element);
  input.textareas = raw.textareas.map((t) => ({ ...t }));
  const relations =
    instances.length === 0
      ? []
      : raw.relations.map((r) => ({
          fromComponentInstance: `inst-${r.from % instances.length}`,
          toComponentInstance: `inst-${r.to % instances.length}`,
          ...(r.label !== undefined ? { label: r.label } : {}),
          ...(r.desc !== undefined ? { desc: r.desc } : {}),
          ...(r.linksTo !== undefined ? { linksTo: r.linksTo } : {}),
        }));
  input.relations = relations;
  // Instance ids are chosen by the service: the expectation names instances by ref and the
  // check maps refs to the ids served (see expectDiagram).
  return {
    input,
    expected: (served: any) => {
      const idOfRef = new Map<string, string>((served?.componentInstances ?? []).map((i: any) => [i.ref, i.id]));
      const componentId = (c: InstanceDraft['component']) =>
        c == null
          ? null
          : c.id.startsWith('ref:')
            ? new Chosen(`the id of component ref ${c.name}`, (v) => typeof v === 'string' && SERVICE_ID.test(v))
            : c.id;
      return {
        id: anyId,
        ...withRef(input.ref as string | undefined),
        name: raw.name,
        desc: raw.desc ?? null,
        state: raw.state ?? 'DRAFT',
        level: raw.level,
        url: new Chosen('<public url>/diagrams/<id>', (v) => typeof v === 'string' && v.endsWith(`/diagrams/${served?.id}`)),
        tags: (raw.tags ?? []).map((t) => new Chosen(`tag ${t.id}`, (v) => (v as any)?.id === t.id && (v as any)?.ref === t.ref)),
        componentInstances: instances.map(({ element, parent, draft }) => ({
          id: anyId,
          ref: element.ref,
          component: componentId(draft.component),
          placeholder: draft.placeholder ?? '',
          isContainer: draft.isContainer ?? false,
          parent: parent === null ? null : (idOfRef.get(`inst-${parent}`) ?? 'unresolved'),
          position: draft.position ?? anyPosition,
          width: draft.width ?? size,
          height: draft.height ?? size,
        })),
        textareas: raw.textareas.map((t) => ({
          id: anyId,
          position: t.position ?? anyPosition,
          width: t.width ?? size,
          text: t.text ?? '',
        })),
        relations: relations.map((r) => ({
          id: anyId,
          fromComponentInstance: idOfRef.get(r.fromComponentInstance) ?? 'unresolved',
          toComponentInstance: idOfRef.get(r.toComponentInstance) ?? 'unresolved',
          label: r.label ?? null,
          desc: r.desc ?? null,
          linksTo: r.linksTo ?? [],
        })),
        apiContext: apiContextOf(raw.apiContext),
      };
    },
  };
}

/** A valid body for `write`, with what the response must hold. */
export function validCase(fx: Fixture, write: Write): fc.Arbitrary<ValidCase> {
  const many = <T>(arb: fc.Arbitrary<{ input: unknown; expected: T }>, max = 3) =>
    fc
      .array(arb, { minLength: 1, maxLength: max })
      .map((cases) => ({ body: cases.map((c) => c.input), expected: cases.map((c) => c.expected) }));
  switch (write.kind) {
    case 'tag':
      return many(tagCase());
    case 'attribute':
      return many(attributeCase(fx));
    case 'component':
      return many(componentCase(fx));
    case 'diagram':
      return many(diagramCase(fx), 2);
    case 'model': {
      return fc.array(componentCase(fx, true), { maxLength: 3 }).chain((components) =>
        fc
          .array(diagramCase(fx, fc.constant(components.map((c) => ({ ref: (c.input as { ref: string }).ref })))), { maxLength: 2 })
          .map((diagrams) => ({
            body: { components: components.map((c) => c.input), diagrams: diagrams.map((d) => d.input) },
            expected: { components: components.map((c) => c.expected), diagrams: diagrams.map((d) => d.expected) },
          })),
      );
    }
  }
}

/** Differences between a 200 response and the case's expectation. */
export function checkValidResponse(served: any, expected: any, kind: Write['kind']): string[] {
  if (kind === 'model') {
    return [
      ...differences(served?.components, expected.components, '.components'),
      ...checkDiagrams(served?.diagrams, expected.diagrams, '.diagrams'),
    ];
  }
  if (kind === 'diagram') return checkDiagrams(served, expected, '');
  return differences(served, expected);
}

function checkDiagrams(served: any, expected: Array<(served: any) => unknown>, path: string): string[] {
  if (!Array.isArray(served) || served.length !== expected.length)
    return [`${path}: expected ${expected.length} diagrams, got ${JSON.stringify(served)?.slice(0, 200)}`];
  return expected.flatMap((make, i) => differences(served[i], make(served[i]), `${path}.${i}`));
}

// ---------------------------------------------------------------------------------------------
// Invalid bodies: a valid one, broken in exactly one place

export interface InvalidCase {
  body: unknown;
  /** The exact `error` text, or a pattern for it. */
  error: string | RegExp;
  /** What the refusal concerns, in its C4store-Error-Context header; undefined: no header. */
  context?: string;
  what: string;
}

/**
 * Between a semantic case's text and what it concerns, as breakSemantics' cases write them
 * (`${text}${CONCERNS}element 0 'x'`): the API sends the text as `error` and the rest in a header.
 * No text holds it (ESCAPING_IDS hold a NUL, never this), nor a quoted name (asQuoted: no NUL).
 */
const CONCERNS = '\u0000concerns:';
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';
interface FieldSpec {
  types: JsonType[];
  required?: boolean;
  enum?: string[];
  range?: [number, number];
  items?: FieldSpec;
  fields?: Record<string, FieldSpec>;
}

const S: FieldSpec = { types: ['string'] };
const NS: FieldSpec = { types: ['string', 'null'] };
const REQ_S: FieldSpec = { types: ['string'], required: true };
const INT: FieldSpec = { types: ['integer'] };
const SIZE: FieldSpec = { types: ['integer'], range: [1, 100] };
const POSITION: FieldSpec = { types: ['object'], fields: { x: { ...INT, required: true }, y: { ...INT, required: true } } };
const STRINGS: FieldSpec = { types: ['array'], items: S };
const enumOf = (values: string[], required = false): FieldSpec => ({ types: ['string'], enum: values, required });

const SPECS: Record<'tag' | 'attribute' | 'component' | 'diagram', Record<string, FieldSpec>> = {
  tag: { id: S, ref: S, name: REQ_S, desc: NS, color: enumOf(COLORS, true), apiContext: S },
  attribute: {
    id: S,
    ref: S,
    name: REQ_S,
    type: enumOf([...ATTRIBUTE_TYPES], true),
    desc: NS,
    required: { types: ['boolean'] },
    forTypes: STRINGS,
    apiContext: S,
    list: STRINGS,
  },
  component: {
    id: S,
    ref: S,
    name: S,
    desc: NS,
    state: enumOf(STATES),
    typeId: NS,
    typeSlug: NS,
    apiContext: S,
    linksTo: STRINGS,
    attributes: {
      types: ['array'],
      items: { types: ['object'], fields: { id: REQ_S, value: { types: ['string', 'number', 'boolean', 'null'], required: true } } },
    },
  },
  diagram: {
    id: S,
    ref: S,
    name: REQ_S,
    desc: NS,
    state: enumOf(STATES),
    level: enumOf(LEVELS, true),
    apiContext: S,
    tags: { types: ['array'], items: { types: ['object'], fields: { id: REQ_S } } },
    componentInstances: {
      types: ['array'],
      items: {
        types: ['object'],
        fields: {
          id: S,
          ref: S,
          component: NS,
          placeholder: NS,
          isContainer: { types: ['boolean'] },
          parent: NS,
          parentId: NS,
          position: POSITION,
          width: SIZE,
          height: SIZE,
        },
      },
    },
    textareas: { types: ['array'], items: { types: ['object'], fields: { id: S, ref: S, position: POSITION, width: SIZE, text: NS } } },
    relations: {
      types: ['array'],
      items: {
        types: ['object'],
        fields: {
          id: S,
          ref: S,
          fromComponentInstance: REQ_S,
          toComponentInstance: REQ_S,
          label: NS,
          desc: NS,
          linksTo: STRINGS,
        },
      },
    },
  },
};

/** Values of every JSON type (integers that YAML keeps as integers, floats that stay floats). */
const SAMPLES: Record<Exclude<JsonType, 'integer'>, unknown[]> = {
  string: ['x', '', '../../keys.yaml', '12'],
  number: [1.5, -0.25, 42, 0],
  boolean: [true, false],
  null: [null],
  array: [[], ['x'], [[[]]], [{ a: 1 }]],
  object: [{}, { a: { b: [1] } }, { id: UNKNOWN_ID }],
};

function accepts(spec: FieldSpec, value: unknown): boolean {
  if (value === null) return spec.types.includes('null');
  if (Array.isArray(value)) return spec.types.includes('array');
  if (typeof value === 'number') return spec.types.includes('number') || (spec.types.includes('integer') && Number.isInteger(value));
  return spec.types.includes(typeof value as JsonType);
}

interface Site {
  /** The object holding the field, and the field. */
  holder: Record<string, unknown>;
  field: string;
  spec: FieldSpec;
  path: string;
}

/** Every field (present or not) of every object in a valid body, with its spec and error path. */
function sitesOf(body: unknown, kind: Write['kind']): Site[] {
  const sites: Site[] = [];
  const walk = (value: Record<string, unknown>, fields: Record<string, FieldSpec>, path: string) => {
    for (const [field, spec] of Object.entries(fields)) {
      sites.push({ holder: value, field, spec, path: `${path}${field}` });
      const child = value[field];
      if (spec.fields && child !== null && typeof child === 'object' && !Array.isArray(child)) {
        walk(child as Record<string, unknown>, spec.fields, `${path}${field}.`);
      }
      if (spec.items?.fields && Array.isArray(child)) {
        for (const [i, item] of child.entries()) walk(item as Record<string, unknown>, spec.items!.fields!, `${path}${field}.${i}.`);
      }
    }
  };
  if (kind === 'model') {
    const model = body as { components: Array<Record<string, unknown>>; diagrams: Array<Record<string, unknown>> };
    for (const [i, c] of model.components.entries()) walk(c, SPECS.component, `components.${i}.`);
    for (const [i, d] of model.diagrams.entries()) walk(d, SPECS.diagram, `diagrams.${i}.`);
  } else {
    for (const [i, e] of (body as Array<Record<string, unknown>>).entries()) walk(e, SPECS[kind], `${i}.`);
  }
  return sites;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One schema failure at `site`: a wrong type, a missing required field, a bad enum, a bad number. */
function breakSchema(site: Site, choice: number): InvalidCase {
  const { holder, field, spec, path } = site;
  const at = new RegExp(`^Invalid JSON: ${escapeRegExp(path)}: `);
  const options: Array<() => InvalidCase> = [];
  const wrong = Object.values(SAMPLES)
    .flat()
    .filter((v) => !accepts(spec, v));
  if (wrong.length > 0) {
    options.push(() => {
      holder[field] = wrong[choice % wrong.length];
      return { body: null, error: new RegExp(`${at.source}Expected `), what: `${path}: wrong type ${JSON.stringify(holder[field])}` };
    });
  }
  if (spec.required) {
    options.push(() => {
      delete holder[field];
      return { body: null, error: new RegExp(`${at.source}Required$`), what: `${path}: missing` };
    });
  }
  if (spec.enum) {
    const first = spec.enum[0]!;
    const bad = ['FOO', first === first.toLowerCase() ? first.toUpperCase() : first.toLowerCase(), ` ${first}`, '', 'x'.repeat(500)];
    options.push(() => {
      holder[field] = bad[choice % bad.length];
      return { body: null, error: new RegExp(`${at.source}Invalid enum value\\. Expected `), what: `${path}: enum value ${holder[field]}` };
    });
  }
  if (spec.types.includes('integer')) {
    options.push(() => {
      holder[field] = [0.5, -3.25, 99.9][choice % 3];
      return { body: null, error: new RegExp(`${at.source}Expected integer, received float$`), what: `${path}: float` };
    });
    if (spec.range) {
      const [min, max] = spec.range;
      options.push(() => {
        holder[field] = [min - 1, max + 1, -1_000_000, 1e9][Math.floor(choice / 3) % 4];
        return {
          body: null,
          error: new RegExp(`${at.source}Number must be (greater|less) than or equal to ${(holder[field] as number) < min ? min : max}$`),
          what: `${path}: out of range ${holder[field]}`,
        };
      });
    }
  }
  if (spec.items && !spec.items.fields) {
    options.push(() => {
      holder[field] = ['ok', 7];
      return {
        body: null,
        error: new RegExp(`^Invalid JSON: ${escapeRegExp(path)}\\.1: Expected string, received number$`),
        what: `${path}.1: number in string list`,
      };
    });
  }
  if (spec.items?.fields) {
    options.push(() => {
      holder[field] = [['nested'], 'x'][choice % 2];
      return { body: null, error: new RegExp(`${at.source.slice(0, -2)}(\\.0)?: Expected `), what: `${path}: garbage items` };
    });
  }
  return options[choice % options.length]!();
}

/** One semantic failure (unknown id, dangling ref, bad attribute value, …) with its exact text. */
function breakSemantics(fx: Fixture, write: Write, body: any, choice: number, pick: number): InvalidCase | null {
  const kind = write.kind;
  const escaping = ESCAPING_IDS[pick % ESCAPING_IDS.length]!;
  const list: Array<{ what: string; apply: () => string | null }> = [];
  const elementsOf = (k: 'component' | 'diagram'): any[] =>
    kind === 'model' ? (k === 'component' ? body.components : body.diagrams) : kind === k ? body : [];
  const kindName = { tag: 'Tag', attribute: 'Attribute', component: 'Component', diagram: 'Diagram', model: '' }[kind];
  const elements: any[] = kind === 'model' ? [...body.components, ...body.diagrams] : body;
  if (elements.length > 0 && kind !== 'model') {
    list.push({
      what: `unknown id ${JSON.stringify(escaping)}`,
      apply: () => {
        const element = elements[pick % elements.length];
        delete element.ref;
        element.id = escaping;
        if (kind === 'attribute' && write.method === 'PUT')
          return 'An id must not be supplied when creating attributes with PUT; use POST to update.';
        return `${kindName} with id '${escaping}' does not exist.`;
      },
    });
    list.push({
      what: 'one ref on two elements',
      apply: () => {
        const element = elements[pick % elements.length];
        element.ref = freshRef('twice');
        elements.push({ ...JSON.parse(JSON.stringify(element)) });
        return `Ref '${element.ref}' is used more than once.`;
      },
    });
  }
  if (kind === 'attribute' && elements.length > 0) {
    const element = () => elements[pick % elements.length];
    const at = () => `${CONCERNS}element ${pick % elements.length} '${asQuoted(element().name)}'`;
    list.push({
      what: 'list on a non-LIST attribute',
      apply: () => {
        Object.assign(element(), { type: 'NUMBER', list: ['a'] });
        return 'Only a LIST attribute may have a list; this one is NUMBER.' + at();
      },
    });
    list.push({
      what: 'LIST without list',
      apply: () => {
        element().type = 'LIST';
        delete element().list;
        return 'A LIST attribute needs a list of values.' + at();
      },
    });
    list.push({
      what: 'duplicate list values',
      apply: () => {
        Object.assign(element(), { type: 'LIST', list: ['v', 'w', 'v'] });
        return 'Duplicate list values are not allowed, got several of: v' + at();
      },
    });
    list.push({
      what: 'unknown forTypes slug',
      apply: () => {
        element().forTypes = ['person', 'no-such-type'];
        delete element().required;
        return "Type with slug 'no-such-type' does not exist." + at();
      },
    });
  }
  const components = elementsOf('component');
  if (components.length > 0) {
    const i = pick % components.length;
    const c = () => components[i];
    const path = kind === 'model' ? `components.${i}` : `${i}`;
    const at = (attribute?: string) =>
      `${CONCERNS}${attribute === undefined ? '' : `attribute '${asQuoted(attribute)}', `}element ${path} '${asQuoted(c().name)}'`;
    list.push({
      what: 'component without name',
      apply: () => {
        delete c().name;
        return `Invalid JSON: ${path}.name: Required`;
      },
    });
    list.push({
      what: 'unknown typeSlug',
      apply: () => {
        delete c().typeId;
        c().typeSlug = escaping;
        return `Type with slug '${escaping}' does not exist.${at()}`;
      },
    });
    list.push({
      what: 'unknown typeId',
      apply: () => {
        delete c().typeSlug;
        c().typeId = escaping;
        return `Type with id '${escaping}' does not exist.${at()}`;
      },
    });
    list.push({
      what: 'typeId and typeSlug disagree',
      apply: () => {
        c().typeId = fx.types.get('person');
        c().typeSlug = 'database';
        return `typeId '${fx.types.get('person')}' and typeSlug 'database' name different types.${at()}`;
      },
    });
    list.push({
      what: 'dangling linksTo',
      apply: () => {
        const name = pick % 2 === 0 ? UNKNOWN_ID : `no-such-component-${pick}`;
        c().linksTo = [...(c().linksTo ?? []), name];
        return (
          (name === UNKNOWN_ID ? `Component with id '${UNKNOWN_ID}' does not exist.` : `Ref '${name}' does not resolve to a component.`) +
          at()
        );
      },
    });
    list.push({
      what: 'unknown attribute',
      apply: () => {
        c().attributes = [{ id: escaping, value: 'x' }];
        return `Attribute with id '${escaping}' does not exist.${at()}`;
      },
    });
    const wrongValues: Array<[AttributeType, unknown, string]> = [
      ['STRING', 5, 'must be a string.'],
      ['NUMBER', '5', 'must be a number.'],
      ['BOOLEAN', 'true', 'must be a boolean.'],
      ['LINK', 'javascript:alert(1)', 'must be a valid URL.'],
      ['LINK', 'not a url', 'must be a valid URL.'],
      ['LIST', 'LOW', `must be one of: ${fx.listItems.join(', ')}.`],
      ['USERLIST', 'mallory@example.com', 'must be the e-mail address of an organization member.'],
    ];
    list.push({
      what: 'attribute value of the wrong kind',
      apply: () => {
        const [type, value, message] = wrongValues[choice % wrongValues.length]!;
        c().typeSlug = 'container';
        delete c().typeId;
        c().attributes = [{ id: fx.attributes[type], value }];
        return `Value for ${type} attribute '${fx.attributes[type]}' ${message}${at(`Fixture ${type}`)}`;
      },
    });
    list.push({
      what: 'attribute given twice',
      apply: () => {
        c().attributes = [
          { id: fx.attributes.BOOLEAN, value: true },
          { id: fx.attributes.BOOLEAN, value: false },
        ];
        return `Attribute '${fx.attributes.BOOLEAN}' is given more than once.${at('Fixture BOOLEAN')}`;
      },
    });
    list.push({
      what: 'required attribute missing',
      apply: () => {
        delete c().typeId;
        c().typeSlug = 'queue';
        c().attributes = [];
        return `Required attribute '${fx.attributes.requiredForQueue}' has no value.${at('Queue owner')}`;
      },
    });
  }
  const diagrams = elementsOf('diagram');
  if (diagrams.length > 0) {
    const d = () => diagrams[pick % diagrams.length];
    const instances = () => d().componentInstances as any[];
    const at = () => `${CONCERNS}element ${kind === 'model' ? 'diagrams.' : ''}${pick % diagrams.length} '${asQuoted(d().name)}'`;
    list.push({
      what: 'unknown diagram tag',
      apply: () => {
        d().tags = [{ id: escaping }];
        return `Tag with id '${escaping}' does not exist.${at()}`;
      },
    });
    list.push({
      what: 'instance of an unknown component',
      apply: () => {
        const name = pick % 2 === 0 ? UNKNOWN_ID : `no-such-ref-${pick}`;
        instances().push({ ref: 'extra', component: name });
        return (
          (name === UNKNOWN_ID ? `Component with id '${UNKNOWN_ID}' does not exist.` : `Ref '${name}' does not resolve to a component.`) +
          at()
        );
      },
    });
    list.push({
      what: 'parent that is no container',
      apply: () => {
        instances().push({ ref: 'plain', isContainer: false }, { ref: 'child', parent: pick % 2 === 0 ? 'plain' : escaping });
        return `Parent '${pick % 2 === 0 ? 'plain' : escaping}' is not a container instance of this diagram.${at()}`;
      },
    });
    list.push({
      what: 'container with a parent',
      apply: () => {
        instances().push({ ref: 'box', isContainer: true }, { ref: 'inner-box', isContainer: true, parent: 'box' });
        return `Container instance 'inner-box' cannot have a parent.${at()}`;
      },
    });
    list.push({
      what: 'relation to an unknown instance',
      apply: () => {
        instances().push({ ref: 'end' });
        d().relations = [...(d().relations ?? []), { fromComponentInstance: 'end', toComponentInstance: escaping }];
        return `Component instance '${escaping}' does not exist in this diagram.${at()}`;
      },
    });
    list.push({
      what: 'relation linking an unknown diagram',
      apply: () => {
        instances().push({ ref: 'end' });
        d().relations = [{ fromComponentInstance: 'end', toComponentInstance: 'end', linksTo: [UNKNOWN_ID] }];
        return `Diagram with id '${UNKNOWN_ID}' does not exist.${at()}`;
      },
    });
    list.push({
      what: 'instance ref twice',
      apply: () => {
        instances().push({ ref: 'same' }, { ref: 'same' });
        return `Ref 'same' is used more than once.${at()}`;
      },
    });
    list.push({
      what: 'parent and parentId differ',
      apply: () => {
        instances().push({ ref: 'b1', isContainer: true }, { ref: 'b2', isContainer: true }, { ref: 'kid', parent: 'b1', parentId: 'b2' });
        return `parent 'b1' and parentId 'b2' differ.${at()}`;
      },
    });
    list.push({
      what: 'instance id unknown in this diagram',
      apply: () => {
        instances().push({ id: escaping });
        return `Component instance with id '${escaping}' does not exist in this diagram.${at()}`;
      },
    });
  }
  if (list.length === 0) return null;
  const chosen = list[choice % list.length]!;
  const error = chosen.apply();
  if (error === null) return null;
  const at = error.indexOf(CONCERNS);
  if (at === -1) return { body, error, what: chosen.what };
  // A header holds UTF-8 (percent-encoded): a name's lone surrogate comes back as U+FFFD.
  const context = error.slice(at + CONCERNS.length).replace(LONE_SURROGATE, '\ufffd');
  return { body, error: error.slice(0, at), context, what: chosen.what };
}

const TOP_LEVEL_WRONG: unknown[] = [{}, 'x', 42, true, null, [[]], [1], ['x'], [null]];

/** An invalid body for `write`: schema (one field), semantics (one rule) or the whole body of the wrong shape. */
export function invalidCase(fx: Fixture, write: Write): fc.Arbitrary<InvalidCase> {
  return fc.tuple(validCase(fx, write), fc.nat(), fc.nat(), fc.nat(), fc.nat()).map(([valid, mode, a, b, c]) => {
    const body = JSON.parse(JSON.stringify(valid.body));
    if (mode % 10 === 0) {
      const whole = TOP_LEVEL_WRONG[a % TOP_LEVEL_WRONG.length];
      if (write.kind === 'model') {
        if (Array.isArray(whole) || whole === null || typeof whole !== 'object') {
          return { body: whole, error: /^Invalid JSON: Expected object, received /, what: `model body ${JSON.stringify(whole)}` };
        }
        return {
          body: { components: 'x' },
          error: /^Invalid JSON: components: Expected array, received string$/,
          what: 'model components not an array',
        };
      }
      if (!Array.isArray(whole)) {
        // POST /attributes with one object is the current form's single create (issue 11): an object is checked as one attribute.
        if (write.method === 'POST' && write.path === '/attributes') {
          return whole !== null && typeof whole === 'object'
            ? { body: whole, error: /^Invalid JSON: name: Required, type: Required$/, what: 'current-form attribute without fields' }
            : { body: whole, error: /^Invalid JSON: Expected object, received /, what: `body ${JSON.stringify(whole)}` };
        }
        return { body: whole, error: /^Invalid JSON: Expected array, received /, what: `body ${JSON.stringify(whole)}` };
      }
      return { body: whole, error: /^Invalid JSON: 0: Expected object, received /, what: `element ${JSON.stringify(whole[0])}` };
    }
    if (mode % 2 === 0) {
      const semantic = breakSemantics(fx, write, body, a, b);
      if (semantic) return semantic;
    }
    const sites = sitesOf(body, write.kind);
    if (sites.length === 0) {
      return write.kind === 'model'
        ? { body: { components: [42] }, error: /^Invalid JSON: components\.0: Expected object, received number$/, what: 'component 42' }
        : { body: [42], error: /^Invalid JSON: 0: Expected object, received number$/, what: 'element 42' };
    }
    const broken = breakSchema(sites[c % sites.length]!, a);
    return { ...broken, body };
  });
}

// ---------------------------------------------------------------------------------------------
// Running cases against a server

export interface Figures {
  badInputsTried: number;
  validAccepted: number;
  /** Commits made by accepted bodies (one each that creates something, none for an empty model). */
  commitsMade: number;
  fiveHundreds: number;
  /** Requests that broke an expectation (status, error text, read-back, no commit). */
  violations: string[];
}

export function newFigures(): Figures {
  return { badInputsTried: 0, validAccepted: 0, commitsMade: 0, fiveHundreds: 0, violations: [] };
}

/** The tip of main, read from the ref file (git's own format), or null when it is packed. */
export async function headOf(gitdir: string): Promise<string> {
  try {
    return (await readFile(join(gitdir, 'refs', 'heads', 'main'), 'utf8')).trim();
  } catch {
    return 'packed';
  }
}

function violation(figures: Figures, line: string): void {
  if (figures.violations.length < 50) figures.violations.push(line);
}

function count(figures: Figures, reply: Reply): void {
  if (reply.status >= 500) figures.fiveHundreds++;
}

/** Sends an invalid case; it must be answered 400 with exactly the expected error, and change nothing. */
export async function tryInvalid(s: TestServer, write: Write, c: InvalidCase, yaml: boolean, figures: Figures): Promise<void> {
  const before = await headOf(s.gitdir);
  const reply = await s.request(write.method, API + write.path, { body: c.body, yaml });
  figures.badInputsTried++;
  count(figures, reply);
  const label = `${write.method} ${write.path} (${yaml ? 'YAML' : 'JSON'}) ${c.what}`;
  const error = reply.body?.error;
  const exact = reply.body !== null && typeof reply.body === 'object' && Object.keys(reply.body).length === 1 && typeof error === 'string';
  const expected = typeof c.error === 'string' ? error === c.error : c.error.test(error ?? '');
  const context = errorContext(reply);
  if (reply.status !== 400 || !exact || !expected || context !== c.context) {
    violation(
      figures,
      `${label}: ${reply.status} ${reply.text.slice(0, 300)} concerning ${context} (expected 400 ${c.error} concerning ${c.context}) body ${JSON.stringify(c.body)?.slice(0, 300)}`,
    );
  }
  const after = await headOf(s.gitdir);
  if (after !== before) violation(figures, `${label}: refused, yet main moved ${before} → ${after}`);
}

/** Sends a valid case: 200, the response as the input implies, and each resource read back equal. */
export async function tryValid(s: TestServer, write: Write, c: ValidCase, yaml: boolean, figures: Figures): Promise<void> {
  const before = await headOf(s.gitdir);
  const reply = await s.request(write.method, API + write.path, { body: c.body, yaml });
  count(figures, reply);
  const label = `${write.method} ${write.path} (${yaml ? 'YAML' : 'JSON'})`;
  if (reply.status !== 200) {
    violation(
      figures,
      `${label}: valid body refused: ${reply.status} ${reply.text.slice(0, 300)} body ${JSON.stringify(c.body)?.slice(0, 500)}`,
    );
    return;
  }
  figures.validAccepted++;
  const after = await headOf(s.gitdir);
  const creates =
    write.kind === 'model'
      ? (c.body as { components: unknown[]; diagrams: unknown[] }).components.length + (c.body as { diagrams: unknown[] }).diagrams.length >
        0
      : (c.body as unknown[]).length > 0;
  if (after !== before) figures.commitsMade++;
  if ((after !== before) !== creates)
    violation(figures, `${label}: ${creates ? 'created resources without a commit' : 'a commit that changes nothing'}`);
  if (reply.headers.get('etag') !== `"${after}"`) violation(figures, `${label}: ETag ${reply.headers.get('etag')}, main is ${after}`);
  const problems = checkValidResponse(reply.body, c.expected, write.kind);
  if (problems.length > 0) {
    violation(figures, `${label}: response differs: ${problems.slice(0, 5).join('; ')} body ${JSON.stringify(c.body)?.slice(0, 500)}`);
  }
  const served: Array<[string, any]> =
    write.kind === 'model'
      ? [...reply.body.components.map((r: any) => ['component', r]), ...reply.body.diagrams.map((r: any) => ['diagram', r])]
      : reply.body.map((r: any) => [write.kind, r]);
  for (const [kind, resource] of served) {
    const again = await s.get(`${API}/${kind}/${encodeURIComponent(resource.id)}`, { yaml });
    count(figures, again);
    const diff = differences(again.body, resource);
    if (again.status !== 200 || diff.length > 0) {
      violation(
        figures,
        `${label}: GET /${kind}/${resource.id} differs from the write's response: ${again.status} ${diff.slice(0, 5).join('; ')}`,
      );
    }
  }
}

export const yamlRoundTrip = (value: unknown) => YAML.parse(YAML.stringify(value));

/** Whether YAML carries the body unchanged (else a YAML client would be sending something else). */
export function yamlSafe(value: unknown): boolean {
  try {
    return JSON.stringify(yamlRoundTrip(value)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** Runs `runs` generated invalid bodies against every write in `writes`. */
export async function runInvalid(
  s: TestServer,
  fx: Fixture,
  figures: Figures,
  options: { runs: number; seed?: number; writes?: Write[] },
): Promise<void> {
  for (const write of options.writes ?? WRITES) {
    const cases = fc.sample(fc.tuple(invalidCase(fx, write), fc.boolean()), { numRuns: options.runs, seed: options.seed });
    for (const [c, yaml] of cases) await tryInvalid(s, write, c, yaml && yamlSafe(c.body), figures);
  }
}

/** Runs `runs` generated valid bodies against every write in `writes`. */
export async function runValid(
  s: TestServer,
  fx: Fixture,
  figures: Figures,
  options: { runs: number; seed?: number; writes?: Write[] },
): Promise<void> {
  for (const write of options.writes ?? WRITES) {
    const cases = fc.sample(fc.tuple(validCase(fx, write), fc.boolean()), { numRuns: options.runs, seed: options.seed });
    for (const [c, yaml] of cases) await tryValid(s, write, c, yaml && yamlSafe(c.body), figures);
  }
}

// ---------------------------------------------------------------------------------------------
// Another client, meanwhile

export interface Latency {
  count: number;
  maxMs: number;
  p50Ms: number;
  failures: string[];
}

/** Simple GETs (health, types, one tag page) in a loop until stopped, timed. */
export function watchLatency(url: string, key: string, pauseMs = 25): { stop(): Promise<Latency> } {
  let running = true;
  const samples: number[] = [];
  const failures: string[] = [];
  const paths = ['/healthz', `${API}/type`, `${API}/tag?limit=1`];
  const loop = (async () => {
    for (let n = 0; running; n++) {
      const path = paths[n % paths.length]!;
      const started = performance.now();
      try {
        const response = await fetch(url + path, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) });
        await response.arrayBuffer();
        if (response.status !== 200 && failures.length < 20) failures.push(`GET ${path}: ${response.status}`);
      } catch (err) {
        if (failures.length < 20) failures.push(`GET ${path}: ${(err as Error).message}`);
      }
      samples.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const sorted = [...samples].sort((a, b) => a - b);
      return { count: samples.length, maxMs: sorted.at(-1) ?? 0, p50Ms: sorted[Math.floor(sorted.length / 2)] ?? 0, failures };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The classic attacks, as a list (repeated, and run concurrently, by torture/hostile.ts)

export interface Attack {
  name: string;
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: () => string | Buffer;
  type?: string;
  headers?: Record<string, string>;
  status: number;
  /** The exact error, or a pattern for it. */
  error: string | RegExp;
  /** What it concerns, in its C4store-Error-Context header; undefined: no header. */
  context?: string;
}

/**
 * Attacks on `fx`'s organization; each must be answered exactly so and change nothing. The
 * server must take 10 MB bodies and a million elements per write (HOSTILE_SERVER_OPTIONS):
 * the 100,000-element bodies are meant for the schema check, which the bound on elements per
 * write would come before.
 */
export function classicAttacks(fx: Fixture): Attack[] {
  const J = 'application/json';
  const Y = 'application/yaml';
  const n = 100_000;
  const levels = 'abcdefghij'.split('');
  const laughs = [
    `${levels[0]}: &${levels[0]} [lol, lol, lol, lol, lol, lol, lol, lol, lol]`,
    ...levels.slice(1).map((l, i) => `${l}: &${l} [${Array(9).fill(`*${levels[i]}`).join(', ')}]`),
  ].join('\n');
  const attacks: Attack[] = [
    {
      name: 'JSON nested 100,000 deep',
      method: 'POST',
      path: '/tag',
      body: () => '['.repeat(n) + ']'.repeat(n),
      type: J,
      status: 400,
      error: 'Invalid JSON: nested more than 100 levels deep.',
    },
    {
      name: 'YAML nested 100,000 deep',
      method: 'POST',
      path: '/model',
      body: () => '['.repeat(n) + ']'.repeat(n),
      type: Y,
      status: 400,
      error: 'Invalid YAML: nested too deeply.',
    },
    {
      name: 'YAML compact sequences 100,000 deep',
      method: 'POST',
      path: '/diagram',
      body: () => '- '.repeat(n) + 'x',
      type: Y,
      status: 400,
      error: 'Invalid YAML: nested too deeply.',
    },
    {
      name: 'YAML billion laughs',
      method: 'POST',
      path: '/model',
      body: () => laughs,
      type: Y,
      status: 400,
      error: /^Invalid YAML: Excessive alias count/,
    },
    {
      name: '100,000 bad elements',
      method: 'POST',
      path: '/tag',
      body: () => JSON.stringify(Array(n).fill({ name: 1 })),
      type: J,
      status: 400,
      error: /^Invalid JSON: 0\.name: Expected string, received number, .*, \.\.\.$/,
    },
    {
      name: '11 MB body',
      method: 'POST',
      path: '/component',
      body: () => ' '.repeat(11 * 1024 * 1024),
      type: J,
      status: 413,
      error: 'Request body too large.',
    },
    {
      name: 'invalid UTF-8',
      method: 'POST',
      path: '/tag',
      body: () => Buffer.from([0x5b, 0x22, 0xff, 0xfe, 0x22, 0x5d]),
      type: J,
      status: 400,
      error: 'Invalid JSON: the request body is not valid UTF-8.',
    },
    {
      name: 'malformed JSON',
      method: 'POST',
      path: '/attribute',
      body: () => '[{"name": "x", "type": "STRING"',
      type: J,
      status: 400,
      error: /^Invalid JSON: /,
    },
    { name: 'malformed YAML', method: 'PUT', path: '/component', body: () => '- name: [x', type: Y, status: 400, error: /^Invalid YAML: / },
    {
      name: 'wrong content type',
      method: 'POST',
      path: '/tag',
      body: () => '[]',
      type: 'text/plain',
      status: 415,
      error: 'Unsupported Content-Type: text/plain.',
    },
    {
      name: 'JSON __proto__',
      method: 'POST',
      path: '/tag',
      body: () => '[{"__proto__":{"x":1},"name":"a","color":"red"}]',
      type: J,
      status: 400,
      error: 'Invalid JSON: Object contains forbidden prototype property',
    },
    {
      name: 'path id escaping',
      method: 'GET',
      path: '/component/..%2F..%2Fkeys.yaml',
      status: 404,
      error: "Component with id '../../keys.yaml' does not exist.",
    },
    {
      name: '?at= escaping',
      method: 'GET',
      path: '/model?at=..%2F..%2Fkeys.yaml',
      status: 404,
      error: "Commit '../../keys.yaml' does not exist.",
    },
    {
      name: '?cursor= escaping',
      method: 'GET',
      path: '/tag?limit=1&cursor=%2Fetc%2Fpasswd',
      status: 400,
      error: "Invalid cursor '/etc/passwd'.",
    },
    {
      name: 'unknown tag id escaping',
      method: 'POST',
      path: '/tag',
      body: () => JSON.stringify([{ id: '../../keys.yaml', name: 'x', color: 'red' }]),
      type: J,
      status: 400,
      error: "Tag with id '../../keys.yaml' does not exist.",
    },
    {
      name: 'dangling instance component',
      method: 'POST',
      path: '/diagram',
      body: () => JSON.stringify([{ name: 'd', level: 'C1', componentInstances: [{ component: 'nowhere' }] }]),
      type: J,
      status: 400,
      error: "Ref 'nowhere' does not resolve to a component.",
      context: "element 0 'd'",
    },
    {
      name: 'bad attribute value',
      method: 'POST',
      path: '/component',
      body: () => JSON.stringify([{ name: 'c', attributes: [{ id: fx.attributes.NUMBER, value: 'NaN' }] }]),
      type: J,
      status: 400,
      error: `Value for NUMBER attribute '${fx.attributes.NUMBER}' must be a number.`,
      context: "attribute 'Fixture NUMBER', element 0 'c'",
    },
  ];
  return attacks;
}

/** The bounds the server under attack is started with (see classicAttacks). */
export const HOSTILE_SERVER_OPTIONS = { bodyLimit: 10 * 1024 * 1024, limits: { writeElements: 1_000_000 } } as const;

/** Sends one attack; a wrong answer or a moved `main` is a violation. */
export async function tryAttack(s: TestServer, attack: Attack, figures: Figures): Promise<void> {
  const before = await headOf(s.gitdir);
  const body = attack.body?.();
  const reply = await s.request(attack.method, API + attack.path, {
    raw: body,
    headers: { ...(attack.type ? { 'content-type': attack.type } : {}), ...attack.headers },
  });
  figures.badInputsTried++;
  count(figures, reply);
  const error = reply.body?.error;
  const matches = typeof attack.error === 'string' ? error === attack.error : attack.error.test(error ?? '');
  const context = errorContext(reply);
  if (reply.status !== attack.status || !matches || context !== attack.context) {
    violation(figures, `${attack.name}: ${reply.status} ${reply.text.slice(0, 200)} concerning ${context}`);
  }
  if (attack.method !== 'GET' && (await headOf(s.gitdir)) !== before) violation(figures, `${attack.name}: main moved`);
}
