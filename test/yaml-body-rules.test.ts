/**
 * A YAML request body is held to the rules of every YAML that comes in (src/yaml/incoming.ts,
 * docs/api.md §1.3): a tag its YAML version does not define is refused, naming line and column,
 * rather than read as if it were not there; a merge key (`<<`) merges, as YAML 1.1 defines it,
 * in a body of either version, and one given no mapping is refused where it is. Real server,
 * real HTTP, real PyYAML for what a YAML 1.1 client sends.
 */
import test from 'ava';
import { INLINE_YAML_BYTES } from '../src/http/middleware/body.js';
import { API, no, ok } from './support/current.js';
import { pythonWith } from './support/python.js';
import { isErrorLine, run, TestServer, withServer } from './support/server.js';

const YAML_BODY = { headers: { 'content-type': 'application/yaml' } };
const yaml = (text: string) => ({ raw: text, ...YAML_BODY });

const CORE = '(!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)';
const BODY_TAGS = `is not read here: a request body holds strings, numbers, booleans, null, mappings and sequences, written plain or with YAML's core tags ${CORE} and !!merge.`;
const BODY_11_TAGS =
  "is not read here: a YAML 1.1 request body holds strings, numbers, booleans, null, mappings and sequences, written plain or with the tags of YAML 1.1's types (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq, !!binary, !!timestamp, !!set, !!omap, !!pairs, !!merge).";

test('a tag the body’s YAML does not define is refused with its line and column, in a field known or not; core tags are taken', (t) =>
  withServer(async (s) => {
    for (const [text, tag, line, column] of [
      ['- name: Shop\n  desc: !!python/object:os.system {}\n', '!!python/object:os.system', 2, 9],
      ['- name: !custom Shop\n', '!custom', 1, 9],
      ['- name: Shop\n  extra: !custom x\n', '!custom', 2, 10],
      ['- !custom\n  name: Shop\n', '!custom', 1, 3],
      // Known to the yaml package, but no type of YAML 1.2's core schema: a value no field holds.
      ['- name: Shop\n  desc: !!binary U2hvcA==\n', '!!binary', 2, 9],
      ['- name: Shop\n  desc: !!timestamp 2026-01-01\n', '!!timestamp', 2, 9],
      ['%TAG !e! tag:example.com,2000:\n---\n- name: !e!shop Shop\n', 'tag:example.com,2000:shop', 3, 9],
    ] as const) {
      await no(
        t,
        s,
        'POST',
        `${API}/component`,
        undefined,
        400,
        `Invalid YAML: line ${line}, column ${column}: the tag '${tag}' ${BODY_TAGS}`,
        yaml(text),
      );
    }
    // A large body is parsed on a worker thread, by the same function.
    const padding = `# ${'x'.repeat(INLINE_YAML_BYTES)}\n`;
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      undefined,
      400,
      `Invalid YAML: line 2, column 9: the tag '!custom' ${BODY_TAGS}`,
      yaml(`${padding}- name: !custom Shop\n`),
    );
    // YAML's core tags, and the non-specific `!`, say what a plain value says.
    const [shop] = await ok(
      t,
      s,
      'POST',
      `${API}/component`,
      undefined,
      yaml('- name: !!str 123\n  desc: ! plain\n  state: !!str ACTIVE\n'),
    );
    t.is(shop.name, '123');
    t.is(shop.desc, 'plain');
    t.deepEqual(
      s.logs.filter((l) => isErrorLine(l)),
      [],
    );
  }));

/** What PyYAML's safe_dump writes, as a YAML 1.1 client sends it, for a Python literal (bytes, sets, dates and all). */
async function pyyamlDumps(pythonLiteral: string): Promise<string> {
  const python = await pythonWith('yaml', 'python3-yaml');
  const program = `import datetime, sys, yaml\nsys.stdout.write(yaml.safe_dump(${pythonLiteral}, version=(1, 1)))`;
  return (await run(python, ['-c', program])).stdout;
}

test('YAML 1.1 bodies take the tags of YAML 1.1’s types, as PyYAML writes them, and refuse others', (t) =>
  withServer(async (s) => {
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      undefined,
      400,
      `Invalid YAML: line 3, column 9: the tag '!foo' ${BODY_11_TAGS}`,
      yaml('%YAML 1.1\n---\n- name: !foo Shop\n'),
    );
    // PyYAML tags bytes `!!binary` and a set `!!set`, and writes a date plain (a YAML 1.1
    // timestamp): YAML, so read, then held to the body's schema like any other value.
    const binary = await pyyamlDumps("[{'name': 'Shop', 'desc': b'Shop'}]");
    t.regex(binary, /desc: !!binary/);
    await no(t, s, 'POST', `${API}/component`, undefined, 400, 'Invalid JSON: 0.desc: Expected string, received binary', yaml(binary));
    const date = await pyyamlDumps("[{'name': 'Shop', 'desc': datetime.date(2026, 1, 2)}]");
    t.regex(date, /desc: 2026-01-02\n/);
    await no(t, s, 'POST', `${API}/component`, undefined, 400, 'Invalid JSON: 0.desc: Expected string, received timestamp', yaml(date));
    const set = await pyyamlDumps("[{'name': 'Shop', 'linksTo': {'a'}}]");
    t.regex(set, /linksTo: !!set/);
    await no(t, s, 'POST', `${API}/component`, undefined, 400, 'Invalid JSON: 0.linksTo: Expected array, received set', yaml(set));
    // Where no field is, such a value is an unknown field like any other: ignored, and named.
    const extra = await pyyamlDumps("[{'name': 'Shop', 'extra': {'a', 'b'}, 'blob': b'x'}]");
    const taken = await s.request('POST', `${API}/component`, yaml(extra));
    t.is(taken.status, 200, taken.text);
    t.is(taken.body[0].name, 'Shop');
    t.is(taken.headers.get('c4store-ignored-fields'), '0.blob, 0.extra');
  }));

test('a merge key merges in a body of either YAML version, explicit fields first; one given no mapping is refused where it is', (t) =>
  withServer(async (s) => {
    const [system] = (await s.get(`${API}/type`)).body.filter((type: { slug: string }) => type.slug === 'software-system');
    const defaults = `- &defaults\n  name: Defaults\n  state: ACTIVE\n  typeSlug: software-system\n  desc: shared\n`;
    for (const directive of ['', '%YAML 1.1\n---\n']) {
      const made = await ok(
        t,
        s,
        'POST',
        `${API}/component`,
        undefined,
        yaml(
          `${directive}${defaults}- <<: *defaults\n  name: Shop ${directive ? '1.1' : '1.2'}\n- <<: [{desc: first}, *defaults]\n  name: Listed\n`,
        ),
      );
      t.deepEqual(
        made.map((c: { name: string; state: string; typeId: string; desc: string }) => [c.name, c.state, c.typeId, c.desc]),
        [
          ['Defaults', 'ACTIVE', system.id, 'shared'],
          [`Shop ${directive ? '1.1' : '1.2'}`, 'ACTIVE', system.id, 'shared'],
          // Of two merged mappings the first wins, as YAML 1.1 defines.
          ['Listed', 'ACTIVE', system.id, 'first'],
        ],
      );
    }
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      undefined,
      400,
      "Invalid YAML: line 2, column 7: what '<<' merges here is not a mapping: a merge key takes a mapping, an alias of one, or a list of them.",
      yaml('- name: Shop\n  <<: 5\n'),
    );
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      undefined,
      400,
      "Invalid YAML: line 2, column 16: what '<<' merges here is not a mapping: a merge key takes a mapping, an alias of one, or a list of them.",
      yaml('- name: Shop\n  <<: [{a: 1}, [b]]\n'),
    );
    // Quoted, '<<' is a field of that name: unknown, so ignored and named.
    const quoted = await s.request('POST', `${API}/component`, yaml("- name: Quoted\n  '<<': {desc: not merged}\n"));
    t.is(quoted.status, 200, quoted.text);
    t.is(quoted.body[0].desc, null);
    t.is(quoted.headers.get('c4store-ignored-fields'), '0.%3C%3C');
  }));

test('what aliases repeat counts toward the body limit as often as they repeat it: 413 past it, parsed inline or on a worker', async (t) => {
  const bodyLimit = 64 * 1024;
  const s = await TestServer.start({ bodyLimit });
  try {
    // A few KB of YAML naming one long string over and over hold what a JSON body many times the
    // limit would: every copy would be stored in its own file, hashed and answered.
    const repeated = (chars: number, times: number) =>
      `- {name: big, color: red, desc: &d "${'x'.repeat(chars)}"}\n${'- {name: again, color: red, desc: *d}\n'.repeat(times - 1)}`;
    const inline = repeated(8 * 1024, 10);
    const onWorker = repeated(INLINE_YAML_BYTES + 1024, 5);
    t.true(inline.length < INLINE_YAML_BYTES && onWorker.length > INLINE_YAML_BYTES && onWorker.length < bodyLimit);
    for (const text of [inline, onWorker]) await no(t, s, 'POST', `${API}/tag`, undefined, 413, 'Request body too large.', yaml(text));
    // A merge key repeats what it merges just the same.
    const merged = `- &t {name: big, color: red, desc: "${'x'.repeat(8 * 1024)}"}\n${'- {<<: *t, name: merged}\n'.repeat(9)}`;
    await no(t, s, 'POST', `${API}/tag`, undefined, 413, 'Request body too large.', yaml(merged));
    // Within the limit, aliases are YAML like any other.
    const made = await ok(t, s, 'POST', `${API}/tag`, undefined, yaml(repeated(4 * 1024, 10)));
    t.is(made.length, 10);
    t.true(s.logs.every((line) => !isErrorLine(line)));
  } finally {
    await s.close();
  }
});
