/**
 * What a JSON body may not say silently (docs/api.md §5.6): an object that gives one key twice
 * (JSON.parse keeps the last), and a number that JSON.parse would change (an integer beyond
 * what a double holds exactly, a magnitude beyond doubles). The check (src/http/body-parse.ts)
 * is held against the real JSON.parse on many generated texts, then seen over real HTTP.
 */
import test from 'ava';
import fc from 'fast-check';
import { quotedName } from '../src/errors.js';
import { parseJsonText, parseYamlText } from '../src/http/body-parse.js';
import { API, no, ok } from './support/current.js';
import { withServer } from './support/server.js';

// A JSON value as written, objects as lists of members, so that a key may come twice.
type Written = null | boolean | number | string | { items: Written[] } | { members: Array<[Key, Written]> };
/** A key character by character, each written as itself or as a \u escape. */
type Key = Array<[string, boolean]>;

const keyText = (key: Key) => key.map(([c]) => c).join('');
const CHARS = ['a', 'b', 'n', 'é', '"', '\\', ':', '{', '}', '[', ']', ',', ' ', '\n', '💡'];

const written = fc.letrec<{ value: Written; key: Key }>((tie) => ({
  key: fc.oneof(
    fc.array(fc.tuple(fc.constantFrom(...CHARS), fc.boolean()), { maxLength: 1 }),
    fc.array(fc.tuple(fc.constantFrom(...CHARS), fc.boolean()), { maxLength: 3 }),
  ),
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ maxLength: 6 }),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => ({ items })),
    fc.array(fc.tuple(tie('key'), tie('value')), { maxLength: 4 }).map((members) => ({ members })),
  ),
}));

function write(value: Written, space: string): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if ('items' in value) return `[${space}${value.items.map((item) => write(item, space)).join(`,${space}`)}${space}]`;
  const key = (k: Key) =>
    `"${k.map(([c, escaped]) => (escaped ? Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('') : JSON.stringify(c).slice(1, -1))).join('')}"`;
  return `{${space}${value.members.map(([k, v]) => `${key(k)}${space}:${space}${write(v, space)}`).join(`,${space}`)}${space}}`;
}

/** The first key given twice in one object, in the order of the text, and where that object is. */
function firstDuplicate(value: Written, path: Array<string | number> = []): { key: string; path: Array<string | number> } | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if ('items' in value) {
    for (const [i, item] of value.items.entries()) {
      const found = firstDuplicate(item, [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  const seen = new Set<string>();
  for (const [k, v] of value.members) {
    const key = keyText(k);
    if (seen.has(key)) return { key, path };
    seen.add(key);
    const found = firstDuplicate(v, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

test('a text without a repeated key parses exactly as JSON.parse does; with one, the first is named with its object', (t) => {
  let duplicates = 0;
  fc.assert(
    fc.property(
      fc.oneof(
        written.value,
        fc.array(fc.tuple(written.key, written.value), { minLength: 2, maxLength: 6 }).map((members) => ({ members })),
      ),
      fc.constantFrom('', ' ', '\n  ', '\t'),
      (value, space) => {
        const text = write(value, space);
        const parsed = parseJsonText(text);
        const duplicate = firstDuplicate(value);
        if (duplicate === undefined) {
          t.deepEqual(parsed, { value: JSON.parse(text) }, text);
          return;
        }
        duplicates++;
        const where = duplicate.path.length === 0 ? 'the top-level object' : `the object at ${duplicate.path.join('.')}`;
        t.deepEqual(parsed, { error: `Invalid JSON: key ${quotedName(duplicate.key)} is given more than once in ${where}.` }, text);
      },
    ),
    { numRuns: 3000 },
  );
  t.true(duplicates > 300, `the generator makes texts with repeated keys too (${duplicates})`);
});

test('whatever JSON.stringify writes is taken back unchanged, numbers included', (t) => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom(undefined, 1, 2), (value, indent) => {
      const text = JSON.stringify(value, null, indent);
      if (text.includes('"__proto__"')) return; // refused on purpose (body-parse.ts)
      t.deepEqual(parseJsonText(text), { value: JSON.parse(text) }, text);
    }),
    { numRuns: 2000 },
  );
  for (const n of [Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53, 2 ** 64, 1.2345678901234567e19, 1e21]) {
    const text = JSON.stringify([n]);
    t.deepEqual(parseJsonText(text), { value: [n] }, text);
  }
});

/** The value of a decimal literal (`-12`, `1.5e+21`) as a BigInt, when it is a whole number. */
function bigOf(literal: string): bigint {
  const [mantissa, exponent = '0'] = literal.split(/e/i);
  const [whole, fraction = ''] = mantissa!.split('.');
  const scale = BigInt(Number(exponent) - fraction.length);
  const digits = BigInt(`${whole}${fraction}`);
  return scale >= 0n ? digits * 10n ** scale : digits / 10n ** -scale;
}

test('an integer is refused exactly when the number read would be written back as another', (t) => {
  const near = (centre: bigint) => fc.bigInt({ min: centre - 2000n, max: centre + 2000n });
  const integers = fc.oneof(
    near(2n ** 53n),
    near(-(2n ** 53n)),
    near(2n ** 64n),
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
    fc.tuple(fc.bigInt({ min: 1n, max: 2n ** 53n }), fc.integer({ min: 0, max: 60 })).map(([n, zeros]) => n * 10n ** BigInt(zeros)),
  );
  let refused = 0;
  fc.assert(
    fc.property(integers, (n) => {
      const literal = n.toString();
      const back = JSON.stringify(Number(literal));
      const parsed = parseJsonText(`{"value": ${literal}}`);
      if (bigOf(back) === n) {
        t.deepEqual(parsed, { value: { value: Number(literal) } }, literal);
      } else {
        refused++;
        const shown = literal.length > 40 ? `${literal.slice(0, 40)}…` : literal;
        t.deepEqual(
          parsed,
          {
            error: `Invalid JSON: value: the number ${shown} has more digits than a number value holds: it would become ${back}; send it as a string.`,
          },
          literal,
        );
      }
    }),
    { numRuns: 3000 },
  );
  t.true(refused > 300, `some are refused (${refused})`);
  // So small it would be 0: refused, with where it is. (Beyond the doubles, Infinity: the schema
  // check refuses it where a number is expected, `received infinity`; hostile-input.test.ts.)
  t.deepEqual(parseJsonText('[0, {"v": [-2.5e-400]}]'), {
    error: 'Invalid JSON: 1.v.0: the number -2.5e-400 is too close to 0 to be held: it would become 0.',
  });
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 999 }), fc.integer({ min: -400, max: 0 }), fc.boolean(), (mantissa, exponent, long) => {
      // The same value with an exponent, or written out with its zeros.
      const literal = long && exponent < 0 ? `0.${'0'.repeat(-exponent - 1)}${mantissa}` : `${mantissa}e${exponent}`;
      const parsed = parseJsonText(`[${literal}]`);
      if (Number(literal) !== 0) t.deepEqual(parsed, { value: [Number(literal)] }, literal);
      else
        t.regex(
          (parsed as { error: string }).error,
          /^Invalid JSON: 0: the number .* is too close to 0 to be held: it would become 0\.$/,
          literal,
        );
    }),
    { numRuns: 1000 },
  );
  // A fraction with more digits than a double holds is rounded, as decimals are.
  t.deepEqual(parseJsonText('[3.14159265358979323846264338327950288]'), { value: [Math.PI] });
});

test('YAML bodies: a number the parser would change is refused with its line and column; duplicate keys already were', (t) => {
  t.deepEqual(parseYamlText('components:\n  - name: A\n    n: 9007199254740993\n'), {
    error:
      'Invalid YAML: line 3, column 8: the number 9007199254740993 has more digits than a number value holds: it would become 9007199254740992; send it as a string.',
  });
  t.deepEqual(parseYamlText('v: 1e-999\n'), {
    error: 'Invalid YAML: line 1, column 4: the number 1e-999 is too close to 0 to be held: it would become 0.',
  });
  t.deepEqual(parseYamlText('v: 12345678901234567000\nw: "9007199254740993"\nx: .inf\ny: 0x1F\n'), {
    value: { v: 12345678901234567000, w: '9007199254740993', x: Number.POSITIVE_INFINITY, y: 31 },
  });
  t.regex((parseYamlText('a: 1\na: 2\n') as { error: string }).error, /^Invalid YAML: Map keys must be unique/);
});

test('over HTTP: a repeated key or a number that would change is a 400 naming it, and nothing is written', (t) =>
  withServer(async (s) => {
    const raw = (text: string) => ({ raw: text });
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      undefined,
      400,
      "Invalid JSON: key 'name' is given more than once in the object at 0.",
      raw('[{"name":"Shop","name":"Web Shop"}]'),
    );
    await no(
      t,
      s,
      'POST',
      `${API}/model`,
      undefined,
      400,
      "Invalid JSON: key 'components' is given more than once in the top-level object.",
      raw('{"components":[{"name":"A"}],"diagrams":[],"components":[]}'),
    );
    await no(
      t,
      s,
      'POST',
      `${API}/components`,
      undefined,
      400,
      "Invalid JSON: key 'name' is given more than once in the top-level object.",
      raw('{"name":"A","n\\u0061me":"B"}'),
    );
    const [count] = await ok(t, s, 'PUT', `${API}/attribute`, [{ name: 'Accounts', type: 'NUMBER' }]);
    const body = (value: string) => raw(`[{"name":"Ledger","attributes":[{"id":"${count.id}","value":${value}}]}]`);
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      undefined,
      400,
      'Invalid JSON: 0.attributes.0.value: the number 9007199254740993 has more digits than a number value holds: it would become 9007199254740992; send it as a string.',
      body('9007199254740993'),
    );
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      undefined,
      400,
      /^Invalid JSON: 0\.attributes\.0\.value: the number 1e-999 is too close to 0/,
      body('1e-999'),
    );
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      undefined,
      400,
      'Invalid YAML: line 4, column 14: the number 9007199254740993 has more digits than a number value holds: it would become 9007199254740992; send it as a string.',
      {
        raw: `- name: Ledger\n  attributes:\n    - id: ${count.id}\n      value: 9007199254740993\n`,
        headers: { 'content-type': 'application/yaml' },
      },
    );
    // A number the service writes back as it was sent is taken, however large.
    const [ledger] = (await s.request('POST', `${API}/component`, body('12345678901234567000'))).body;
    t.is(ledger.attributes[0].value, 12345678901234567000);
    t.regex((await s.get(`${API}/component/${ledger.id}`)).text, /"value":12345678901234567000\b/);
  }));
