import test, { type ExecutionContext } from 'ava';
import { type TSchema, Type } from 'typebox';
import { parse as parseYaml } from 'yaml';
import { checkBody, formatSchemaErrors, MAX_REPORTED_ISSUES, SchemaError } from '../src/model/check-body.js';
import { CURRENT_UPDATE_SCHEMAS, CurrentComponent, CurrentDiagram } from '../src/model/current-form/schemas.js';
import {
  AttributeBody,
  ComponentBody,
  DiagramBody,
  ModelBody,
  TagBody,
  type AttributeBody as AttributeBodyT,
  type ComponentBody as ComponentBodyT,
  type DiagramBody as DiagramBodyT,
  type ModelBody as ModelBodyT,
  type TagBody as TagBodyT,
} from '../src/model/schemas.js';

const STATE_VALUES = `'DRAFT' | 'ACTIVE' | 'ARCHIVED'`;
const COLOR_VALUES = `'gray' | 'red' | 'orange' | 'yellow' | 'green' | 'blue' | 'purple'`;
const TYPE_VALUES = `'STRING' | 'NUMBER' | 'BOOLEAN' | 'LINK' | 'USERLIST' | 'LIST'`;
const LEVEL_VALUES = `'C1' | 'C2' | 'C3' | 'C4'`;
const VALUE_TYPES = 'string | number | boolean | null';

/** Asserts that `body` fails with exactly `Invalid JSON: <issues joined by ', '>`. */
function fails(t: ExecutionContext, schema: TSchema, body: unknown, ...issues: string[]): void {
  const error = t.throws(() => checkBody(schema, body), { instanceOf: SchemaError });
  t.is(error?.message, `Invalid JSON: ${issues.join(', ')}`);
  t.is(error?.status, 400);
}

function passes(t: ExecutionContext, schema: TSchema, body: unknown): void {
  t.is(checkBody(schema, body), body);
}

const tag = { name: 'Tag', color: 'red' };
const attribute = { name: 'Attr', type: 'STRING' };
const diagram = { name: 'Diagram', level: 'C1' };

// ---------------------------------------------------------------------------------------
// Valid bodies
// ---------------------------------------------------------------------------------------

test('valid tag bodies', (t) => {
  passes(t, TagBody, []);
  passes(t, TagBody, [tag]);
  passes(t, TagBody, [
    { id: 't1', ref: 'r', name: 'n', desc: null, color: 'gray', apiContext: '2024-01-01 00:00:00' },
    { name: 'n', desc: 'd', color: 'purple' },
  ]);
  const typed: TagBodyT = checkBody(TagBody, [tag]);
  t.is(typed[0]?.color, 'red');
});

test('valid attribute bodies', (t) => {
  passes(t, AttributeBody, []);
  passes(t, AttributeBody, [
    attribute,
    { id: 'a', ref: 'r', name: 'n', type: 'LIST', desc: null, required: true, forTypes: [], list: ['x', 'y'], apiContext: 'c' },
    { name: 'n', type: 'USERLIST', forTypes: ['service'], required: false, list: [] },
  ]);
  const typed: AttributeBodyT = checkBody(AttributeBody, [attribute]);
  t.is(typed[0]?.type, 'STRING');
});

test('valid component bodies', (t) => {
  passes(t, ComponentBody, []);
  passes(t, ComponentBody, [
    {}, // name is required on create, but that is a semantic rule checked elsewhere
    {
      id: 'c',
      ref: 'r',
      name: 'n',
      desc: null,
      state: 'ARCHIVED',
      typeId: null,
      typeSlug: null,
      apiContext: 'x',
      linksTo: [],
      attributes: [],
    },
    {
      name: 'n',
      typeId: 't',
      typeSlug: 'service',
      linksTo: ['a', 'b'],
      attributes: [
        { id: 'a1', value: 'text' },
        { id: 'a2', value: -12.5 },
        { id: 'a3', value: false },
        { id: 'a4', value: null },
        { id: 'a5', value: '' },
      ],
    },
  ]);
  const typed: ComponentBodyT = checkBody(ComponentBody, [{ attributes: [{ id: 'a', value: null }] }]);
  t.is(typed[0]?.attributes?.[0]?.value, null);
});

test('valid diagram bodies', (t) => {
  passes(t, DiagramBody, []);
  passes(t, DiagramBody, [
    diagram,
    { ...diagram, desc: null, state: 'ACTIVE', tags: [], componentInstances: [], textareas: [], relations: [] },
    {
      id: 'd',
      ref: 'dr',
      name: 'n',
      level: 'C4',
      url: 'https://example.com/diagrams/d',
      tags: [{ id: 't1' }],
      componentInstances: [
        {},
        { id: 'i', ref: 'ir', component: 'c', placeholder: null, isContainer: true, parent: null, parentId: null },
        { component: null, placeholder: 'p', parent: 'ir', parentId: 'ir', position: { x: -3, y: 0 }, width: 1, height: 100 },
      ],
      textareas: [{}, { id: 'ta', ref: 'tr', position: { x: 5, y: -5 }, width: 100, text: null }, { text: 'hello' }],
      relations: [
        { fromComponentInstance: 'i', toComponentInstance: 'ir' },
        { id: 'rel', ref: 'rr', fromComponentInstance: 'a', toComponentInstance: 'b', label: null, desc: null, linksTo: [] },
        { fromComponentInstance: 'a', toComponentInstance: 'b', label: 'uses', desc: 'd', linksTo: ['d2'] },
      ],
      apiContext: 'ctx',
    },
  ]);
  const typed: DiagramBodyT = checkBody(DiagramBody, [{ ...diagram, componentInstances: [{ width: 3 }] }]);
  t.is(typed[0]?.componentInstances?.[0]?.width, 3);
});

test('valid model bodies', (t) => {
  passes(t, ModelBody, {});
  passes(t, ModelBody, { components: [], diagrams: [] });
  passes(t, ModelBody, {
    components: [{ ref: 'web', name: 'Web' }],
    diagrams: [{ ...diagram, componentInstances: [{ ref: 'w', component: 'web' }], relations: [] }],
  });
  const typed: ModelBodyT = checkBody(ModelBody, { components: [{ name: 'x' }] });
  t.is(typed.components?.[0]?.name, 'x');
});

test('url is accepted with any value and ignored', (t) => {
  passes(t, DiagramBody, [{ ...diagram, url: 42 }]);
  passes(t, DiagramBody, [{ ...diagram, url: null }]);
  passes(t, DiagramBody, [{ ...diagram, url: { any: ['thing'] } }]);
});

// ---------------------------------------------------------------------------------------
// Unknown fields
// ---------------------------------------------------------------------------------------

test('unknown fields are ignored and left in place (not stripped)', (t) => {
  const body = [{ ...tag, extra: 1, nested: { deep: [1, 2] } }];
  const checked = checkBody(TagBody, body);
  t.is(checked as unknown, body);
  t.deepEqual(checked[0], { ...tag, extra: 1, nested: { deep: [1, 2] } });
  passes(t, ModelBody, { components: [{ foo: 'bar' }], diagrams: [], other: true });
  passes(t, DiagramBody, [
    {
      ...diagram,
      componentInstances: [{ position: { x: 1, y: 2, z: 'ignored' }, color: 'x' }],
      tags: [{ id: 't', name: 'ignored', color: 1 }],
    },
  ]);
  // Unknown fields are not reported even when the body fails for other reasons.
  fails(t, TagBody, [{ name: 'n', color: 'x', junk: { a: 1 } }], `0.color: Invalid enum value. Expected ${COLOR_VALUES}, received 'x'`);
});

/** A 200,000-level nested object, built without recursion. */
function deeplyNested(): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < 200_000; i++) value = { down: value };
  return value;
}

test('deeply nested unknown fields do not blow the stack', (t) => {
  const deep = deeplyNested();
  passes(t, TagBody, [{ ...tag, junk: deep }]);
  passes(t, DiagramBody, [{ ...diagram, url: deep, componentInstances: [{ junk: deep }] }]);
  fails(t, TagBody, [{ name: 1, color: 'red', junk: deep }], '0.name: Expected string, received number');
  fails(t, DiagramBody, [{ name: 'n', level: 'C9', url: deep }], `0.level: Invalid enum value. Expected ${LEVEL_VALUES}, received 'C9'`);
});

// ---------------------------------------------------------------------------------------
// The body itself
// ---------------------------------------------------------------------------------------

test('a body of the wrong type has one message and no path', (t) => {
  for (const schema of [TagBody, AttributeBody, ComponentBody, DiagramBody]) {
    fails(t, schema, {}, 'Expected array, received object');
    fails(t, schema, null, 'Expected array, received null');
    fails(t, schema, 'text', 'Expected array, received string');
    fails(t, schema, 3, 'Expected array, received number');
    fails(t, schema, true, 'Expected array, received boolean');
  }
  fails(t, ModelBody, [], 'Expected object, received array');
  fails(t, ModelBody, null, 'Expected object, received null');
  fails(t, ModelBody, 'components', 'Expected object, received string');
});

test('an element of the wrong type has one message at its index', (t) => {
  fails(
    t,
    TagBody,
    [tag, 'x', null, [], 1],
    '1: Expected object, received string',
    '2: Expected object, received null',
    '3: Expected object, received array',
    '4: Expected object, received number',
  );
  fails(t, AttributeBody, [false], '0: Expected object, received boolean');
  fails(t, ComponentBody, [[]], '0: Expected object, received array');
  fails(t, DiagramBody, [null], '0: Expected object, received null');
});

// ---------------------------------------------------------------------------------------
// Tags
// ---------------------------------------------------------------------------------------

test('tag: wrong types, required, enum', (t) => {
  fails(t, TagBody, [{ ...tag, id: 1 }], '0.id: Expected string, received number');
  fails(t, TagBody, [{ ...tag, ref: true }], '0.ref: Expected string, received boolean');
  fails(t, TagBody, [{ ...tag, name: null }], '0.name: Expected string, received null');
  fails(t, TagBody, [{ ...tag, desc: 5 }], '0.desc: Expected string, received number');
  fails(t, TagBody, [{ ...tag, desc: {} }], '0.desc: Expected string, received object');
  fails(t, TagBody, [{ ...tag, apiContext: [] }], '0.apiContext: Expected string, received array');
  fails(t, TagBody, [{}], '0.name: Required', '0.color: Required');
  fails(t, TagBody, [{ ...tag, color: 'pink' }], `0.color: Invalid enum value. Expected ${COLOR_VALUES}, received 'pink'`);
  fails(t, TagBody, [{ ...tag, color: 'RED' }], `0.color: Invalid enum value. Expected ${COLOR_VALUES}, received 'RED'`);
  fails(t, TagBody, [{ ...tag, color: 3 }], `0.color: Expected ${COLOR_VALUES}, received number`);
  fails(t, TagBody, [{ ...tag, color: null }], `0.color: Expected ${COLOR_VALUES}, received null`);
});

// ---------------------------------------------------------------------------------------
// Attributes
// ---------------------------------------------------------------------------------------

test('attribute: wrong types, required, enum, string arrays', (t) => {
  fails(t, AttributeBody, [{ type: 'STRING' }], '0.name: Required');
  fails(t, AttributeBody, [{ name: 'n' }], '0.type: Required');
  fails(t, AttributeBody, [{ ...attribute, type: 'TEXT' }], `0.type: Invalid enum value. Expected ${TYPE_VALUES}, received 'TEXT'`);
  fails(t, AttributeBody, [{ ...attribute, type: ['STRING'] }], `0.type: Expected ${TYPE_VALUES}, received array`);
  fails(t, AttributeBody, [{ ...attribute, required: 'yes' }], '0.required: Expected boolean, received string');
  fails(t, AttributeBody, [{ ...attribute, required: null }], '0.required: Expected boolean, received null');
  fails(t, AttributeBody, [{ ...attribute, forTypes: 'service' }], '0.forTypes: Expected array, received string');
  fails(
    t,
    AttributeBody,
    [{ ...attribute, forTypes: ['a', 1, 'b', null] }],
    '0.forTypes.1: Expected string, received number',
    '0.forTypes.3: Expected string, received null',
  );
  fails(t, AttributeBody, [{ ...attribute, list: { a: 1 } }], '0.list: Expected array, received object');
  fails(t, AttributeBody, [{ ...attribute, list: [true] }], '0.list.0: Expected string, received boolean');
  fails(t, AttributeBody, [{ ...attribute, desc: false }], '0.desc: Expected string, received boolean');
});

// ---------------------------------------------------------------------------------------
// Components
// ---------------------------------------------------------------------------------------

test('component: wrong types and enum', (t) => {
  fails(t, ComponentBody, [{ id: 7 }], '0.id: Expected string, received number');
  fails(t, ComponentBody, [{ name: 7 }], '0.name: Expected string, received number');
  fails(t, ComponentBody, [{ state: 'FOO' }], `0.state: Invalid enum value. Expected ${STATE_VALUES}, received 'FOO'`);
  fails(t, ComponentBody, [{ state: 1 }], `0.state: Expected ${STATE_VALUES}, received number`);
  fails(t, ComponentBody, [{ typeId: 3 }], '0.typeId: Expected string, received number');
  fails(t, ComponentBody, [{ typeSlug: [] }], '0.typeSlug: Expected string, received array');
  fails(t, ComponentBody, [{ linksTo: 'c1' }], '0.linksTo: Expected array, received string');
  fails(t, ComponentBody, [{ linksTo: [1] }], '0.linksTo.0: Expected string, received number');
  fails(t, ComponentBody, [{ attributes: {} }], '0.attributes: Expected array, received object');
});

test('component attributes: id and value required, value union', (t) => {
  fails(t, ComponentBody, [{ attributes: [{ value: 'x' }] }], '0.attributes.0.id: Required');
  fails(t, ComponentBody, [{ attributes: [{ id: 'a' }] }], '0.attributes.0.value: Required');
  fails(t, ComponentBody, [{ attributes: [{}] }], '0.attributes.0.id: Required', '0.attributes.0.value: Required');
  fails(t, ComponentBody, [{ attributes: [{ id: 1, value: 1 }] }], '0.attributes.0.id: Expected string, received number');
  fails(t, ComponentBody, [{ attributes: [{ id: 'a', value: {} }] }], `0.attributes.0.value: Expected ${VALUE_TYPES}, received object`);
  fails(t, ComponentBody, [{ attributes: [{ id: 'a', value: ['x'] }] }], `0.attributes.0.value: Expected ${VALUE_TYPES}, received array`);
  fails(
    t,
    ComponentBody,
    [{ attributes: [null, 'x'] }],
    '0.attributes.0: Expected object, received null',
    '0.attributes.1: Expected object, received string',
  );
});

// ---------------------------------------------------------------------------------------
// Diagrams
// ---------------------------------------------------------------------------------------

test('diagram: required, enums, wrong types', (t) => {
  fails(t, DiagramBody, [{}], '0.name: Required', '0.level: Required');
  fails(t, DiagramBody, [{ ...diagram, level: 'C5' }], `0.level: Invalid enum value. Expected ${LEVEL_VALUES}, received 'C5'`);
  fails(t, DiagramBody, [{ ...diagram, level: 1 }], `0.level: Expected ${LEVEL_VALUES}, received number`);
  fails(t, DiagramBody, [{ ...diagram, state: 'DONE' }], `0.state: Invalid enum value. Expected ${STATE_VALUES}, received 'DONE'`);
  fails(t, DiagramBody, [{ ...diagram, state: null }], `0.state: Expected ${STATE_VALUES}, received null`);
  fails(t, DiagramBody, [{ ...diagram, desc: 1 }], '0.desc: Expected string, received number');
  fails(t, DiagramBody, [{ ...diagram, apiContext: 1 }], '0.apiContext: Expected string, received number');
  fails(t, DiagramBody, [{ ...diagram, tags: 't1' }], '0.tags: Expected array, received string');
  fails(
    t,
    DiagramBody,
    [{ ...diagram, tags: [{}, 't2', { id: 3 }] }],
    '0.tags.0.id: Required',
    '0.tags.1: Expected object, received string',
    '0.tags.2.id: Expected string, received number',
  );
  fails(t, DiagramBody, [{ ...diagram, componentInstances: {} }], '0.componentInstances: Expected array, received object');
  fails(t, DiagramBody, [{ ...diagram, textareas: null }], '0.textareas: Expected array, received null');
  fails(t, DiagramBody, [{ ...diagram, relations: 'r' }], '0.relations: Expected array, received string');
});

test('component instances: fields, position, integers, ranges', (t) => {
  const ci = (...instances: unknown[]) => [{ ...diagram, componentInstances: instances }];
  fails(t, DiagramBody, ci({ id: 1 }), '0.componentInstances.0.id: Expected string, received number');
  fails(t, DiagramBody, ci({ component: 1 }), '0.componentInstances.0.component: Expected string, received number');
  fails(t, DiagramBody, ci({ placeholder: false }), '0.componentInstances.0.placeholder: Expected string, received boolean');
  fails(t, DiagramBody, ci({ isContainer: 'yes' }), '0.componentInstances.0.isContainer: Expected boolean, received string');
  fails(t, DiagramBody, ci({ parent: {} }), '0.componentInstances.0.parent: Expected string, received object');
  fails(t, DiagramBody, ci({ parentId: 2 }), '0.componentInstances.0.parentId: Expected string, received number');
  // a nested object of the wrong type: one message, nothing below it
  fails(t, DiagramBody, ci({ position: 'top' }), '0.componentInstances.0.position: Expected object, received string');
  fails(t, DiagramBody, ci({ position: [1, 2] }), '0.componentInstances.0.position: Expected object, received array');
  fails(t, DiagramBody, ci({ position: null }), '0.componentInstances.0.position: Expected object, received null');
  fails(t, DiagramBody, ci({ position: {} }), '0.componentInstances.0.position.x: Required', '0.componentInstances.0.position.y: Required');
  fails(
    t,
    DiagramBody,
    ci({ position: { x: 1.5, y: '2' } }),
    '0.componentInstances.0.position.x: Expected integer, received float',
    '0.componentInstances.0.position.y: Expected integer, received string',
  );
  fails(t, DiagramBody, ci({}, {}, { width: 0.5 }), '0.componentInstances.2.width: Expected integer, received float');
  fails(t, DiagramBody, ci({ width: 0 }), '0.componentInstances.0.width: Number must be greater than or equal to 1');
  fails(t, DiagramBody, ci({ width: -4 }), '0.componentInstances.0.width: Number must be greater than or equal to 1');
  fails(t, DiagramBody, ci({ width: 101 }), '0.componentInstances.0.width: Number must be less than or equal to 100');
  fails(t, DiagramBody, ci({ height: 0 }), '0.componentInstances.0.height: Number must be greater than or equal to 1');
  fails(t, DiagramBody, ci({ height: 1000 }), '0.componentInstances.0.height: Number must be less than or equal to 100');
  fails(t, DiagramBody, ci({ height: 100.5 }), '0.componentInstances.0.height: Expected integer, received float');
  fails(t, DiagramBody, ci({ height: '5' }), '0.componentInstances.0.height: Expected integer, received string');
  fails(t, DiagramBody, ci({ width: null }), '0.componentInstances.0.width: Expected integer, received null');
});

test('text areas: position, width, text', (t) => {
  const ta = (...textareas: unknown[]) => [{ ...diagram, textareas }];
  fails(t, DiagramBody, ta({ position: { x: 0 } }), '0.textareas.0.position.y: Required');
  fails(t, DiagramBody, ta({ position: { x: 0, y: 0.25 } }), '0.textareas.0.position.y: Expected integer, received float');
  fails(t, DiagramBody, ta({ position: 5 }), '0.textareas.0.position: Expected object, received number');
  fails(t, DiagramBody, ta({ width: 0 }), '0.textareas.0.width: Number must be greater than or equal to 1');
  fails(t, DiagramBody, ta({ width: 101 }), '0.textareas.0.width: Number must be less than or equal to 100');
  fails(t, DiagramBody, ta({ width: 2.5 }), '0.textareas.0.width: Expected integer, received float');
  fails(t, DiagramBody, ta({ text: 1 }), '0.textareas.0.text: Expected string, received number');
  fails(
    t,
    DiagramBody,
    ta({ id: false, ref: 1 }),
    '0.textareas.0.id: Expected string, received boolean',
    '0.textareas.0.ref: Expected string, received number',
  );
  passes(t, DiagramBody, ta({ position: { x: -100000, y: 99999 } }));
});

test('relations: required ends and optional fields', (t) => {
  const rel = (...relations: unknown[]) => [{ ...diagram, relations }];
  fails(t, DiagramBody, rel({}), '0.relations.0.fromComponentInstance: Required', '0.relations.0.toComponentInstance: Required');
  fails(t, DiagramBody, rel({ fromComponentInstance: 'a' }), '0.relations.0.toComponentInstance: Required');
  fails(
    t,
    DiagramBody,
    rel({ fromComponentInstance: 1, toComponentInstance: 'b' }),
    '0.relations.0.fromComponentInstance: Expected string, received number',
  );
  fails(
    t,
    DiagramBody,
    rel({ fromComponentInstance: 'a', toComponentInstance: 'b', label: 1, desc: true, linksTo: [null] }),
    '0.relations.0.label: Expected string, received number',
    '0.relations.0.desc: Expected string, received boolean',
    '0.relations.0.linksTo.0: Expected string, received null',
  );
  fails(
    t,
    DiagramBody,
    rel({ fromComponentInstance: 'a', toComponentInstance: 'b', linksTo: 'd' }),
    '0.relations.0.linksTo: Expected array, received string',
  );
});

// ---------------------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------------------

test('model: paths start with the array name', (t) => {
  fails(t, ModelBody, { components: {} }, 'components: Expected array, received object');
  fails(t, ModelBody, { diagrams: 'd' }, 'diagrams: Expected array, received string');
  fails(
    t,
    ModelBody,
    {
      components: [
        {
          attributes: [
            { id: 'a', value: 1 },
            { id: 'b', value: { x: 1 } },
          ],
        },
      ],
    },
    `components.0.attributes.1.value: Expected ${VALUE_TYPES}, received object`,
  );
  fails(
    t,
    ModelBody,
    { diagrams: [{ ...diagram, relations: [{ toComponentInstance: 'x' }] }] },
    'diagrams.0.relations.0.fromComponentInstance: Required',
  );
  fails(
    t,
    ModelBody,
    { diagrams: [diagram, { ...diagram, componentInstances: [{}, {}, { width: 200 }] }] },
    'diagrams.1.componentInstances.2.width: Number must be less than or equal to 100',
  );
  fails(
    t,
    ModelBody,
    { components: [{ state: 'NEW' }], diagrams: [{ level: 'C3' }] },
    `components.0.state: Invalid enum value. Expected ${STATE_VALUES}, received 'NEW'`,
    'diagrams.0.name: Required',
  );
});

// ---------------------------------------------------------------------------------------
// Several failures, order
// ---------------------------------------------------------------------------------------

test('several failures are joined in document order', (t) => {
  fails(
    t,
    TagBody,
    [{ id: 1, color: 'pink' }, tag, { name: 'x', color: 3, desc: 5 }],
    '0.id: Expected string, received number',
    '0.name: Required',
    `0.color: Invalid enum value. Expected ${COLOR_VALUES}, received 'pink'`,
    '2.desc: Expected string, received number',
    `2.color: Expected ${COLOR_VALUES}, received number`,
  );
  fails(
    t,
    DiagramBody,
    [
      {
        // fields are reported in the schema's (= the API tables') order, whatever the key order here
        relations: [{ fromComponentInstance: 'a' }],
        componentInstances: [{ width: 0 }, { position: { x: 'a', y: 1.1 } }],
        level: 'C0',
        name: 5,
      },
      { name: 'ok', level: 'C2', tags: [{ id: 1 }] },
    ],
    '0.name: Expected string, received number',
    `0.level: Invalid enum value. Expected ${LEVEL_VALUES}, received 'C0'`,
    '0.componentInstances.0.width: Number must be greater than or equal to 1',
    '0.componentInstances.1.position.x: Expected integer, received string',
    '0.componentInstances.1.position.y: Expected integer, received float',
    '0.relations.0.toComponentInstance: Required',
    '1.tags.0.id: Expected string, received number',
  );
});

// ---------------------------------------------------------------------------------------
// Cap
// ---------------------------------------------------------------------------------------

test(`at most ${MAX_REPORTED_ISSUES} failures are listed, then ", ..."`, (t) => {
  const bad = (n: number) => Array.from({ length: n }, () => ({ color: 'red' }));
  const expected = (n: number) => Array.from({ length: n }, (_, i) => `${i}.name: Required`).join(', ');

  t.is(formatSchemaErrors(TagBody, bad(MAX_REPORTED_ISSUES)), `Invalid JSON: ${expected(MAX_REPORTED_ISSUES)}`);
  t.is(formatSchemaErrors(TagBody, bad(MAX_REPORTED_ISSUES + 1)), `Invalid JSON: ${expected(MAX_REPORTED_ISSUES)}, ...`);

  const huge = bad(100_000);
  const error = t.throws(() => checkBody(TagBody, huge), { instanceOf: SchemaError });
  t.is(error?.message, `Invalid JSON: ${expected(MAX_REPORTED_ISSUES)}, ...`);

  // the cap counts failures, not elements: two per element here
  const two = Array.from({ length: 60 }, () => ({}));
  const message = formatSchemaErrors(TagBody, two);
  t.is(message.split(', ').length, MAX_REPORTED_ISSUES + 1);
  t.true(message.endsWith('49.name: Required, 49.color: Required, ...'));
});

test('long received enum strings are cut in the message', (t) => {
  const long = 'x'.repeat(1000);
  fails(t, TagBody, [{ name: 'n', color: long }], `0.color: Invalid enum value. Expected ${COLOR_VALUES}, received '${'x'.repeat(100)}…'`);
});

// ---------------------------------------------------------------------------------------
// Non-finite numbers (YAML .nan / .inf)
// ---------------------------------------------------------------------------------------

test('non-finite numbers from YAML are invalid numbers', (t) => {
  const body = parseYaml(`
components:
  - name: c
    attributes:
      - id: a1
        value: .nan
      - id: a2
        value: .inf
      - id: a3
        value: -.inf
      - id: a4
        value: 1.5
diagrams:
  - name: .nan
    level: C1
    componentInstances:
      - width: .nan
        height: .inf
        position: { x: -.inf, y: 0 }
    textareas:
      - width: .inf
`) as unknown;
  fails(
    t,
    ModelBody,
    body,
    `components.0.attributes.0.value: Expected ${VALUE_TYPES}, received nan`,
    `components.0.attributes.1.value: Expected ${VALUE_TYPES}, received infinity`,
    `components.0.attributes.2.value: Expected ${VALUE_TYPES}, received infinity`,
    'diagrams.0.name: Expected string, received nan',
    'diagrams.0.componentInstances.0.position.x: Expected integer, received infinity',
    'diagrams.0.componentInstances.0.width: Expected integer, received nan',
    'diagrams.0.componentInstances.0.height: Expected integer, received infinity',
    'diagrams.0.textareas.0.width: Expected integer, received infinity',
  );
  fails(t, TagBody, [{ ...tag, color: Number.NaN }], `0.color: Expected ${COLOR_VALUES}, received nan`);
});

// ---------------------------------------------------------------------------------------
// Large bodies
// ---------------------------------------------------------------------------------------

test('a 10,000-element valid body is accepted', (t) => {
  const components = Array.from({ length: 10_000 }, (_, i) => ({
    ref: `c${i}`,
    name: `Component ${i}`,
    desc: i % 2 === 0 ? null : 'text',
    state: 'ACTIVE',
    typeSlug: 'service',
    linksTo: [`c${(i + 1) % 10_000}`],
    attributes: [
      { id: 'a1', value: `v${i}` },
      { id: 'a2', value: i },
      { id: 'a3', value: null },
    ],
  }));
  passes(t, ComponentBody, components);
  const diagrams = Array.from({ length: 10_000 }, (_, i) => ({
    name: `D${i}`,
    level: 'C2',
    componentInstances: [{ ref: 'i1', component: `c${i}`, position: { x: i, y: -i }, width: 10, height: 5 }, {}],
    relations: [{ fromComponentInstance: 'i1', toComponentInstance: 'i2' }],
  }));
  passes(t, ModelBody, { components, diagrams });
});

test('SchemaError carries status 400', (t) => {
  const error = new SchemaError('Invalid JSON: x');
  t.true(error instanceof Error);
  t.is(error.status, 400);
  t.is(error.name, 'SchemaError');
  t.is(error.message, 'Invalid JSON: x');
});

test('the other schemas (drafts, share links, tools): unions of literals, string lengths, patterns', (t) => {
  const Resolution = Type.Array(
    Type.Object({
      take: Type.Union([Type.Literal('main'), Type.Literal('draft')]),
      label: Type.Optional(Type.String({ maxLength: 3 })),
      name: Type.Optional(Type.String({ minLength: 1, pattern: '^[a-z]+$' })),
      note: Type.Optional(Type.Union([Type.String({ maxLength: 2 }), Type.Null()])),
    }),
  );
  passes(t, Resolution, [{ take: 'main', label: '𝄞𝄞𝄞', name: 'ok', note: null }]);
  fails(t, Resolution, [{ take: 'both' }], "0.take: Invalid enum value. Expected 'main' | 'draft', received 'both'");
  fails(t, Resolution, [{ take: 5 }], "0.take: Expected 'main' | 'draft', received number");
  // Lengths in code points, as TypeBox counts them: three clefs are three characters, six UTF-16 units.
  fails(t, Resolution, [{ take: 'draft', label: '𝄞𝄞𝄞𝄞' }], '0.label: String must contain at most 3 character(s)');
  fails(t, Resolution, [{ take: 'draft', name: '' }], '0.name: String must contain at least 1 character(s)');
  fails(t, Resolution, [{ take: 'draft', name: 'BAD' }], '0.name: String must match the pattern ^[a-z]+$');
  fails(t, Resolution, [{ take: 'draft', note: 'abc' }], '0.note: String must contain at most 2 character(s)');
  fails(t, Resolution, [{ take: 'draft', label: 'x'.repeat(10_000_000) }], '0.label: String must contain at most 3 character(s)');
});

test("the current form's relation ends: one spelling of each required, said as the first spelling's Required, with every other failure", (t) => {
  const rel = (...relations: unknown[]) => ({ name: 'D', relations });
  passes(t, CurrentDiagram, rel({ fromRef: 'a', toRef: 'b' }, { fromComponentInstance: 'a', toComponentInstance: 'b' }));
  passes(t, CurrentDiagram, rel({ fromComponentInstance: 'a', toRef: 'b' }));
  fails(t, CurrentDiagram, rel({}), 'relations.0.fromRef: Required', 'relations.0.toRef: Required');
  fails(t, CurrentDiagram, rel({ toComponentInstance: 'b' }), 'relations.0.fromRef: Required');
  // In field order, among the other failures of the body, as a required field is.
  fails(
    t,
    CurrentDiagram,
    { ...rel({ fromRef: 'a', toRef: 'b' }, { fromRef: 'a', label: 5 }), state: 'LIVE' },
    "state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'LIVE'",
    'relations.1.toRef: Required',
    'relations.1.label: Expected string, received number',
  );
  fails(t, CurrentDiagram, rel({ fromRef: 3, toRef: 'b' }), 'relations.0.fromRef: Expected string, received number');
});

test('a client id: its type is checked, its rule is left to the write step, which words the refusal (wordedByWrite)', (t) => {
  passes(t, CurrentComponent, { id: 'payment-api', name: 'P' });
  // Against the rule, but a string: passed on for write/current.ts checkNewId to refuse in its words.
  for (const id of ['Payment', 'a..b', 'upsert-batch', 'nul.x']) passes(t, CurrentComponent, { id, name: 'P' });
  fails(t, CurrentComponent, { id: 7, name: 'P' }, 'id: Expected string, received number');
  // Another failure in the body is still this check's to say; the id's rule is not among them.
  fails(t, CurrentComponent, { id: 'Payment', name: 3 }, 'name: Expected string, received number');
  // The same in an element of upsert-batch and /template.
  passes(t, CURRENT_UPDATE_SCHEMAS.component, { id: 'Bad Id' });
  fails(t, CURRENT_UPDATE_SCHEMAS.component, { id: null }, 'id: Expected string, received null');
  fails(
    t,
    CURRENT_UPDATE_SCHEMAS.diagram,
    { id: 'Bad Id', relations: [{}] },
    'relations.0.fromRef: Required',
    'relations.0.toRef: Required',
  );
});
