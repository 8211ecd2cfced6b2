import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import { Orgs } from '../src/service/orgs.js';
import { SPARE_FILES_DIR } from '../src/store/spare-files.js';
import {
  API,
  ESCAPING_IDS,
  classicAttacks,
  createFixture,
  headOf,
  HOSTILE_SERVER_OPTIONS,
  newFigures,
  runInvalid,
  runValid,
  tryAttack,
  watchLatency,
  type Figures,
  type Fixture,
} from './support/hostile.js';
import { errorContext, isErrorLine, TestServer, type Reply } from './support/server.js';

/**
 * Hostile input against a real server: generated invalid bodies on every write endpoint
 * (each refused 400 with its exact text, never a 5xx, never a commit), generated valid ones
 * (accepted and read back equal), then the classic attacks one by one. Meanwhile another
 * client's simple GETs are timed; at the end the data directory holds nothing new outside
 * the organization's repository and `git fsck --full` is clean.
 *
 * HOSTILE_RUNS / HOSTILE_SEED change the number of generated bodies per endpoint and the seed;
 * `npm run torture` runs the long version (torture/hostile.ts).
 */

const RUNS = Number(process.env.HOSTILE_RUNS ?? 40);
const SEED = Number(process.env.HOSTILE_SEED ?? Date.now() % 1_000_000);

let s: TestServer;
let fx: Fixture;
let outside: Map<string, string>;
let watcher: ReturnType<typeof watchLatency>;
const figures: Figures = newFigures();

/** Path → SHA-256 of every file under the data directory outside the organization's repository. */
async function filesOutsideRepo(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(s.dataDir, { recursive: true, withFileTypes: true })) {
    const path = relative(s.dataDir, join(entry.parentPath, entry.name));
    if (path === 'orgs/acme.git' || path.startsWith('orgs/acme.git/') || !entry.isFile()) continue;
    files.set(
      path,
      createHash('sha256')
        .update(await readFile(join(s.dataDir, path)))
        .digest('hex'),
    );
  }
  return files;
}

test.before(async () => {
  // The 100,000-element bodies below are meant to reach the schema check; the bound on
  // elements per write (test/limits.test.ts) would refuse them before it.
  s = await TestServer.start(HOSTILE_SERVER_OPTIONS);
  fx = await createFixture(s);
  outside = await filesOutsideRepo();
  watcher = watchLatency(s.url, s.readerKey);
});

test.after.always(async () => {
  await watcher?.stop();
  await s?.close();
});

/** A raw request: exactly these bytes as the body, with this Content-Type (and nothing added but the key). */
async function raw(
  method: string,
  path: string,
  body: string | Buffer | undefined,
  type: string | undefined,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const reply = await s.request(method, path, { raw: body, headers: { ...(type ? { 'content-type': type } : {}), ...headers } });
  if (reply.status >= 500) figures.fiveHundreds++;
  figures.badInputsTried++;
  return reply;
}

/** Refused with exactly `status` and an `error` matching `error`, and main did not move. */
async function refused(
  t: ExecutionContext,
  what: string,
  send: () => Promise<Reply>,
  status: number,
  error: string | RegExp,
): Promise<Reply> {
  const before = await headOf(s.gitdir);
  const reply = await send();
  t.is(reply.status, status, `${what}: ${reply.text.slice(0, 300)}`);
  t.true(
    reply.body !== null && typeof reply.body === 'object' && Object.keys(reply.body).length === 1 && typeof reply.body.error === 'string',
    `${what}: an error object, got ${reply.text.slice(0, 200)}`,
  );
  if (typeof error === 'string') t.is(reply.body?.error, error, what);
  else t.regex(reply.body?.error ?? '', error, what);
  t.is(await headOf(s.gitdir), before, `${what}: no commit`);
  return reply;
}

// ---------------------------------------------------------------------------------------------
// Generated bodies

test.serial('generated invalid bodies on every write endpoint: 400 with the exact error, never a commit', async (t) => {
  const before = await s.state();
  const local = newFigures();
  await runInvalid(s, fx, local, { runs: RUNS, seed: SEED });
  t.log(`seed ${SEED}: ${local.badInputsTried} invalid bodies, ${local.fiveHundreds} answered 5xx`);
  figures.badInputsTried += local.badInputsTried;
  figures.fiveHundreds += local.fiveHundreds;
  t.deepEqual(local.violations, [], `seed ${SEED}`);
  t.is(local.fiveHundreds, 0);
  t.is(local.badInputsTried, RUNS * 9);
  t.is(await s.state(), before, 'head, history and every list as they were');
});

test.serial('generated valid bodies on every write endpoint: 200, and read back equal modulo the documented defaults', async (t) => {
  const count = await s.commitCount();
  const local = newFigures();
  const runs = Math.max(4, Math.round(RUNS / 5));
  await runValid(s, fx, local, { runs, seed: SEED });
  t.log(`seed ${SEED}: ${local.validAccepted} valid bodies accepted`);
  figures.fiveHundreds += local.fiveHundreds;
  t.deepEqual(local.violations, [], `seed ${SEED}`);
  t.is(local.validAccepted, runs * 9);
  // One commit per body that created something (an empty model body creates nothing).
  t.true(local.commitsMade >= runs * 8, `${local.commitsMade} commits`);
  t.is(await s.commitCount(), count + local.commitsMade);
});

// ---------------------------------------------------------------------------------------------
// Malformed bodies

const JSON_TYPE = 'application/json';
const YAML_TYPE = 'application/yaml';

test.serial('the classic attacks npm run torture sends round after round, once each: answered exactly so, nothing committed', async (t) => {
  const before = await s.state();
  const local = newFigures();
  for (const attack of classicAttacks(fx)) await tryAttack(s, attack, local);
  figures.fiveHundreds += local.fiveHundreds;
  t.deepEqual(local.violations, []);
  t.is(local.fiveHundreds, 0);
  t.is(await s.state(), before);
});

test.serial('malformed JSON and YAML: 400 Invalid JSON/YAML with the parser message', async (t) => {
  for (const body of ['[{"name":"a","color":"red"}', '{', '[1,]', 'NaN', "['single']", '[{"a":1}] trailing', '[{"a":1}][]', '\u0000']) {
    await refused(t, `JSON ${JSON.stringify(body)}`, () => raw('POST', `${API}/tag`, body, JSON_TYPE), 400, /^Invalid JSON: \S/);
  }
  for (const body of ['', ' \n\t ']) {
    await refused(
      t,
      `empty JSON ${JSON.stringify(body)}`,
      () => raw('POST', `${API}/tag`, body, JSON_TYPE),
      400,
      'Invalid JSON: the request body is empty.',
    );
    await refused(
      t,
      `empty YAML ${JSON.stringify(body)}`,
      () => raw('POST', `${API}/model`, body, YAML_TYPE),
      400,
      'Invalid YAML: the request body is empty.',
    );
  }
  const yamls = [
    'a: [b',
    '- a\n b: c: d',
    'key: "unterminated',
    '- &a x\n- *b',
    '- {name: a, color: red, name: b}',
    '- name: a\n  color: red\n---\n- name: b\n  color: red',
    '[a, b]]',
    '{a: 1',
  ];
  for (const body of yamls) {
    await refused(t, `YAML ${JSON.stringify(body)}`, () => raw('POST', `${API}/tag`, body, YAML_TYPE), 400, /^Invalid YAML: \S/);
  }
  // A tag YAML 1.2's core schema does not define is refused where it is written, before any
  // schema check: the parser would read it as if it were not there (yaml/incoming.ts).
  await refused(
    t,
    'YAML python tag',
    () => raw('POST', `${API}/tag`, '!!python/object:os.system ls', YAML_TYPE),
    400,
    /^Invalid YAML: line 1, column 1: the tag '!!python\/object:os\.system' is not read here: /,
  );
  await refused(
    t,
    'YAML binary',
    () => raw('POST', `${API}/tag`, '- name: !!binary aGVsbG8=\n  color: red', YAML_TYPE),
    400,
    /^Invalid YAML: line 1, column 9: the tag '!!binary' is not read here: /,
  );
  // In a YAML 1.1 body `!!binary` is one of the version's own types: read, then a schema failure.
  await refused(
    t,
    'YAML 1.1 binary',
    () => raw('POST', `${API}/tag`, '%YAML 1.1\n---\n- name: !!binary aGVsbG8=\n  color: red', YAML_TYPE),
    400,
    'Invalid JSON: 0.name: Expected string, received binary',
  );
  await refused(
    t,
    'YAML .nan position',
    () => raw('POST', `${API}/diagram`, '- name: d\n  level: C1\n  componentInstances:\n    - position: {x: .nan, y: 1}\n', YAML_TYPE),
    400,
    'Invalid JSON: 0.componentInstances.0.position.x: Expected integer, received nan',
  );
  await refused(
    t,
    'JSON 1e400 width',
    () => raw('POST', `${API}/diagram`, '[{"name":"d","level":"C1","componentInstances":[{"width":1e400}]}]', JSON_TYPE),
    400,
    'Invalid JSON: 0.componentInstances.0.width: Expected integer, received infinity',
  );
  await refused(
    t,
    'JSON 1e400 attribute value',
    () => raw('POST', `${API}/component`, `[{"name":"c","attributes":[{"id":"${fx.attributes.NUMBER}","value":-1e400}]}]`, JSON_TYPE),
    400,
    'Invalid JSON: 0.attributes.0.value: Expected string | number | boolean | null, received infinity',
  );
});

test.serial('an own __proto__ key: refused in JSON, an ignored unknown field in YAML; no prototype is touched', async (t) => {
  await refused(
    t,
    'JSON __proto__',
    () => raw('POST', `${API}/tag`, '[{"__proto__":{"polluted":1},"name":"a","color":"red"}]', JSON_TYPE),
    400,
    'Invalid JSON: Object contains forbidden prototype property',
  );
  await refused(
    t,
    'JSON escaped __proto__',
    () => raw('POST', `${API}/tag`, '[{"\\u005f_proto__":{"polluted":1},"name":"a","color":"red"}]', JSON_TYPE),
    400,
    'Invalid JSON: Object contains forbidden prototype property',
  );
  const reply = await raw(
    'POST',
    `${API}/tag`,
    '- __proto__: {polluted: 1}\n  constructor: {prototype: {polluted: 1}}\n  name: proto\n  color: red\n',
    YAML_TYPE,
  );
  t.is(reply.status, 200, reply.text);
  t.is(reply.body[0].name, 'proto');
  t.false('__proto__' in reply.body[0] && Object.hasOwn(reply.body[0], '__proto__'));
  t.is(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched (the server runs in this process)');
});

test.serial('YAML alias bombs are refused before expansion, and the server keeps answering', async (t) => {
  const levels = 'abcdefghij'.split('');
  const laughs = [
    `${levels[0]}: &${levels[0]} ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`,
    ...levels.slice(1).map((l, i) => `${l}: &${l} [${Array(9).fill(`*${levels[i]}`).join(', ')}]`),
  ].join('\n');
  const wide = `big: &big "${'x'.repeat(100_000)}"\nrefs: [${Array(5000).fill('*big').join(', ')}]\n`;
  for (const [name, body] of [
    ['billion laughs', laughs],
    ['one large anchor 5000 times', wide],
  ]) {
    const started = performance.now();
    await refused(t, name, () => raw('POST', `${API}/model`, body, YAML_TYPE), 400, /^Invalid YAML: Excessive alias count/);
    t.true(performance.now() - started < 5000, `${name} refused in ${Math.round(performance.now() - started)} ms`);
  }
  // A few aliases are YAML like any other.
  const reply = await raw(
    'POST',
    `${API}/tag`,
    '- &t {name: anchored, color: red}\n- {name: second, color: *c}\n- {name: x, color: &c blue}',
    YAML_TYPE,
  );
  t.is(reply.status, 400, 'an alias before its anchor is refused');
  const fine = await raw('POST', `${API}/tag`, '- {name: first, color: &c blue}\n- {name: second, color: *c}\n', YAML_TYPE);
  t.is(fine.status, 200, fine.text);
  t.deepEqual(
    fine.body.map((tag: { color: string }) => tag.color),
    ['blue', 'blue'],
  );
});

test.serial('100,000-element arrays: refused with at most 100 listed failures, or ignored where the field is unknown', async (t) => {
  const many = Array.from({ length: 100_000 }, () => ({ name: 1 }));
  const reply = await refused(
    t,
    '100,000 bad tags',
    () => raw('POST', `${API}/tag`, JSON.stringify(many), JSON_TYPE),
    400,
    /^Invalid JSON: 0\.name: Expected string, received number, 0\.color: Required, /,
  );
  const issues = reply.body.error.match(/\d+\.(name|color): /g) ?? [];
  t.is(issues.length, 100, 'the first 100 failures are listed');
  t.true(reply.body.error.endsWith(', ...'));
  t.true(reply.text.length < 10_000, `${reply.text.length} bytes`);
  // One bad element at the very end refuses all 100,000 valid-looking ones.
  const components = Array.from({ length: 100_000 }, (_, i) => ({
    name: `c${i}`,
    typeSlug: 'container',
    state: i === 99_999 ? 'GONE' : 'ACTIVE',
  }));
  await refused(
    t,
    '100,000 components, the last bad',
    () => raw('POST', `${API}/component`, JSON.stringify(components), JSON_TYPE),
    400,
    "Invalid JSON: 99999.state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'GONE'",
  );
  const unknownLinks = await refused(
    t,
    '100,000 unknown linksTo',
    () =>
      raw(
        'POST',
        `${API}/component`,
        JSON.stringify([{ name: 'c', linksTo: Array.from({ length: 100_000 }, (_, i) => `ref-${i}`) }]),
        JSON_TYPE,
      ),
    400,
    "Ref 'ref-0' does not resolve to a component.",
  );
  t.is(errorContext(unknownLinks), "element 0 'c'");
  // An unknown field is never looked at, however large.
  const ignored = await raw(
    'POST',
    `${API}/tag`,
    JSON.stringify([{ name: 'big junk', color: 'gray', junk: Array(100_000).fill({ a: [1] }) }]),
    JSON_TYPE,
  );
  t.is(ignored.status, 200, ignored.text);
  t.deepEqual(Object.keys(ignored.body[0]).sort(), ['apiContext', 'color', 'desc', 'id', 'name']);
});

test.serial(
  'nesting 100,000 levels deep (JSON and YAML, twice each) is refused fast; 40 levels in an unknown field are fine',
  async (t) => {
    const n = 100_000;
    const bodies: Array<[string, string, string, string]> = [
      ['JSON arrays', '['.repeat(n) + ']'.repeat(n), JSON_TYPE, `Invalid JSON: nested more than 100 levels deep.`],
      ['JSON objects', '{"a":'.repeat(n) + '1' + '}'.repeat(n), JSON_TYPE, `Invalid JSON: nested more than 100 levels deep.`],
      [
        'JSON in a string-escaped mess',
        `[{"name":"\\"[[[[","color":"red","x":${'['.repeat(n)}${']'.repeat(n)}}]`,
        JSON_TYPE,
        `Invalid JSON: nested more than 100 levels deep.`,
      ],
      ['YAML flow sequences', '['.repeat(n) + ']'.repeat(n), YAML_TYPE, 'Invalid YAML: nested too deeply.'],
      ['YAML flow mappings', '{a: '.repeat(n) + '1' + '}'.repeat(n), YAML_TYPE, 'Invalid YAML: nested too deeply.'],
      ['YAML compact sequences', '- '.repeat(n) + 'x', YAML_TYPE, 'Invalid YAML: nested too deeply.'],
      ['YAML explicit keys', '? '.repeat(n) + 'x', YAML_TYPE, 'Invalid YAML: nested too deeply.'],
      [
        'YAML indented mappings',
        Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1',
        YAML_TYPE,
        'Invalid YAML: nested too deeply.',
      ],
    ];
    // Twice: a stack overflow inside the YAML parser used to abort the whole process on the second one.
    for (const round of [1, 2]) {
      for (const [name, body, type, error] of bodies) {
        const started = performance.now();
        await refused(t, `${name} (${round})`, () => raw('POST', `${API}/tag`, body, type), 400, error);
        const ms = performance.now() - started;
        t.true(ms < 3000, `${name}: ${Math.round(ms)} ms`);
      }
    }
    let deep: unknown = 'bottom';
    for (let i = 0; i < 20; i++) deep = { level: i, next: [deep] };
    for (const yaml of [false, true]) {
      const reply = await s.post(`${API}/tag`, [{ name: `deep ${yaml}`, color: 'green', deep }], { yaml });
      t.is(reply.status, 200, reply.text.slice(0, 300));
    }
    t.is((await s.get('/healthz', { key: null })).status, 200);
  },
);

test.serial('huge strings: a 5 MB name is stored and read back whole (JSON and YAML); 11 MB is 413', async (t) => {
  const name = 'n'.repeat(5 * 1024 * 1024 - 100);
  for (const yaml of [false, true]) {
    const reply = await s.post(`${API}/tag`, [{ name, color: 'purple', ref: `huge-${yaml}` }], { yaml });
    t.is(reply.status, 200, reply.text.slice(0, 200));
    const back = await s.get(`${API}/tag/${reply.body[0].id}`);
    t.is(back.body.name.length, name.length);
    t.true(back.body.name === name);
  }
  await refused(
    t,
    '11 MB body',
    () => raw('POST', `${API}/tag`, JSON.stringify([{ name: 'x'.repeat(11 * 1024 * 1024), color: 'red' }]), JSON_TYPE),
    413,
    'Request body too large.',
  );
  await refused(
    t,
    '11 MB YAML body',
    () => raw('POST', `${API}/model`, `components:\n  - name: ${'x'.repeat(11 * 1024 * 1024)}\n`, YAML_TYPE),
    413,
    'Request body too large.',
  );
});

test.serial('wrong content types: 415 with the type named', async (t) => {
  const cases: Array<[string | undefined, string]> = [
    ['text/plain', 'text/plain'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['multipart/form-data; boundary=x', 'multipart/form-data'],
    ['text/html', 'text/html'],
    ['application/xml', 'application/xml'],
    ['application/jsonx', 'application/jsonx'],
    ['application/octet-stream', 'application/octet-stream'],
  ];
  for (const [type, named] of cases) {
    await refused(t, `Content-Type ${type}`, () => raw('POST', `${API}/tag`, '[]', type), 415, `Unsupported Content-Type: ${named}.`);
  }
  await refused(
    t,
    'no Content-Type',
    async () => {
      // fetch adds none for a byte array body.
      const response = await fetch(s.url + `${API}/tag`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.key}` },
        body: new TextEncoder().encode('[]'),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
    },
    415,
    'Unsupported Content-Type: (none).',
  );
  await refused(
    t,
    'Content-Encoding compress',
    () => raw('POST', `${API}/tag`, '[]', JSON_TYPE, { 'content-encoding': 'compress' }),
    415,
    'Unsupported Content-Encoding.',
  );
  await refused(
    t,
    'gzip that is not',
    () => raw('POST', `${API}/tag`, 'plain', JSON_TYPE, { 'content-encoding': 'gzip' }),
    400,
    'The request body could not be decompressed.',
  );
});

test.serial('bytes that are not UTF-8 are refused, never silently replaced', async (t) => {
  const json = (inner: number[]) => Buffer.concat([Buffer.from('[{"name":"'), Buffer.from(inner), Buffer.from('","color":"red"}]')]);
  const cases: Array<[string, Buffer]> = [
    ['0xff 0xfe', json([0xff, 0xfe])],
    ['overlong /', json([0xc0, 0xaf])],
    ['a UTF-16 surrogate in UTF-8', json([0xed, 0xa0, 0x80])],
    ['truncated sequence', json([0xe2, 0x82])],
    ['Latin-1 é', json([0xe9])],
    ['UTF-16LE body', Buffer.from('\ufeff[{"name":"a","color":"red"}]', 'utf16le')],
  ];
  for (const [name, body] of cases) {
    await refused(t, name, () => raw('POST', `${API}/tag`, body, JSON_TYPE), 400, 'Invalid JSON: the request body is not valid UTF-8.');
    const yaml = Buffer.from(
      body
        .toString('latin1')
        .replace(/^\[\{"name":"/, '- name: "')
        .replace(/","color":"red"\}\]$/, '"\n  color: red\n'),
      'latin1',
    );
    await refused(
      t,
      `${name} (YAML)`,
      () => raw('POST', `${API}/tag`, yaml, YAML_TYPE),
      400,
      'Invalid YAML: the request body is not valid UTF-8.',
    );
  }
  const bom = await raw(
    'POST',
    `${API}/tag`,
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[{"name":"bom ✓","color":"red"}]')]),
    JSON_TYPE,
  );
  t.is(bom.status, 200, 'a UTF-8 byte order mark is allowed');
  t.is(bom.body[0].name, 'bom ✓');
});

// ---------------------------------------------------------------------------------------------
// Ids, refs, paths and org slugs made to escape the data directory

test.serial('ids in bodies that try to escape: "does not exist", for every kind', async (t) => {
  const kinds: Array<[string, string, Record<string, unknown>]> = [
    ['/tag', 'Tag', { name: 'x', color: 'red' }],
    ['/attribute', 'Attribute', { name: 'x', type: 'STRING' }],
    ['/component', 'Component', { name: 'x' }],
    ['/diagram', 'Diagram', { name: 'x', level: 'C1' }],
  ];
  for (const [path, kind, element] of kinds) {
    for (const id of ESCAPING_IDS) {
      await refused(
        t,
        `${path} id ${JSON.stringify(id)}`,
        () => s.post(API + path, [{ ...element, id }]),
        400,
        `${kind} with id '${id}' does not exist.`,
      );
    }
  }
  // A ref is a name, never a path: any text is stored as given, under a service id.
  const reply = await s.post(
    `${API}/component`,
    ESCAPING_IDS.map((ref, i) => ({ ref: `${ref}#${i}`, name: `escape ${i}` })),
  );
  t.is(reply.status, 200, reply.text);
  t.deepEqual(
    reply.body.map((c: { ref: string }) => c.ref),
    ESCAPING_IDS.map((ref, i) => `${ref}#${i}`),
  );
  const tree = (await s.git('ls-tree', '-r', '--name-only', 'main')).trim().split('\n');
  t.deepEqual(
    tree.filter(
      (p) =>
        !/^(organization\.yaml|(types|tags|attributes)\/[0-9a-hjkmnp-tv-z]{26}\.yaml|(components|diagrams)\/[0-9a-f]{2}\/[0-9a-hjkmnp-tv-z]{26}\.yaml|\.c4store\/schemas\/[a-z]+\.json)$/.test(
          p,
        ),
    ),
    [],
  );
});

test.serial('path parameters, ?at= and ?cursor= that try to escape: 404 / 400 with the value echoed, nothing read', async (t) => {
  const names = [
    '..%2F..%2Fkeys.yaml',
    '%2e%2e%2f%2e%2e%2fkeys.yaml',
    '..%252F..%252Fkeys.yaml',
    '%2Fetc%2Fpasswd',
    '..%5C..%5Ckeys.yaml',
    '%00',
    'a%00b',
    '%2e%2e',
    '...',
    `${'a'.repeat(2000)}`,
    '%ff%fe',
    'keys.yaml',
    '..%2F..%2Forgs%2Facme.git%2FHEAD',
  ];
  const kinds: Array<[string, string]> = [
    ['tag', 'Tag'],
    ['attribute', 'Attribute'],
    ['attributes', 'Attribute'],
    ['component', 'Component'],
    ['diagram', 'Diagram'],
    ['type', 'Type'],
    ['types', 'Type'],
  ];
  const keysFile = await readFile(join(s.dataDir, 'keys.yaml'), 'utf8');
  const secrets = [...keysFile.matchAll(/hash: ([0-9a-f]{64})/g)].map((m) => m[1]!);
  for (const [kind, Kind] of kinds) {
    for (const name of names) {
      const reply = await raw('GET', `${API}/${kind}/${name}`, undefined, undefined);
      let decoded: string;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        decoded = name;
      }
      t.is(reply.status, 404, `${kind}/${name}: ${reply.text.slice(0, 200)}`);
      t.true(
        [`${Kind} with id '${decoded}' does not exist.`, 'Not found.'].includes(reply.body?.error),
        `${kind}/${name}: ${reply.text.slice(0, 200)}`,
      );
      for (const secret of secrets) t.false(reply.text.includes(secret));
    }
  }
  // (`main` itself is a revision, as are version names: docs/api.md §7.1.)
  for (const at of [
    '../../keys.yaml',
    '..%2F..%2Fkeys.yaml',
    '/etc/passwd',
    '%00',
    'HEAD',
    'main~1',
    'refs/heads/main',
    'HEAD~1',
    'ORIG_HEAD',
    `${'0'.repeat(40)}`,
  ]) {
    const reply = await raw('GET', `${API}/tag?at=${encodeURIComponent(at)}`, undefined, undefined);
    t.is(reply.status, 404, `at=${at}`);
    t.deepEqual(reply.body, { error: `Commit '${at}' does not exist.` });
  }
  // Objects of the repository that are not commits are not commits.
  for (const spec of ['main^{tree}', `main:${(await s.git('ls-tree', '--name-only', 'main', 'organization.yaml')).trim()}`]) {
    const oid = (await s.git('rev-parse', spec)).trim();
    t.deepEqual((await raw('GET', `${API}/model?at=${oid}`, undefined, undefined)).body, { error: `Commit '${oid}' does not exist.` });
  }
  for (const cursor of ['../x', '/etc/passwd', '%00', 'a'.repeat(101), 'Ledger']) {
    const reply = await raw('GET', `${API}/component?limit=2&cursor=${encodeURIComponent(cursor)}`, undefined, undefined);
    t.is(reply.status, 400);
    t.deepEqual(reply.body, { error: `Invalid cursor '${cursor}'.` });
  }
});

/** Sends raw bytes on a new connection and returns what comes back until the server closes it. */
function rawHttp(url: string, request: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    // Not end(): Node aborts a request whose client half-closes before the answer.
    const socket = connect(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
  });
}

test.serial('raw request lines that try to escape or break the parser: 404, 400 or 431 with an error object', async (t) => {
  const auth = `Authorization: Bearer ${s.key}\r\n`;
  const cases: Array<[string, number, string]> = [
    [`GET /api/external/../../keys.yaml HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`, 404, 'Not found.'],
    [`GET /../../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 404, 'Not found.'],
    [`GET //etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 404, 'Not found.'],
    [`GET /%2e%2e/%2e%2e/keys.yaml HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 404, 'Not found.'],
    [`GET http://evil.example/../keys.yaml HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 404, 'Not found.'],
    [`GET /keys.yaml HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 404, 'Not found.'],
    [`GET /api/external/tag/. HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`, 404, "Tag with id '.' does not exist."],
    [`GET /api/external/tag/.. HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`, 404, "Tag with id '..' does not exist."],
    [`GET /api/external/component/../../../keys.yaml HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`, 404, 'Not found.'],
    [`GET /api/external/tag\u0000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 400, 'Bad request.'],
    [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'Request headers too large.'],
    [`GET /api/external/tag?at=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'Request headers too large.'],
    [
      `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`,
      431,
      'Request headers too large.',
    ],
    ['NONSENSE\r\n\r\n', 400, 'Bad request.'],
    // What Node refuses by itself, with a bodiless answer, unless the server answers it.
    [`GET /api/external/tag HTTP/1.1\r\n${auth}Connection: close\r\n\r\n`, 400, 'Bad request: an HTTP/1.1 request must name its Host.'],
    [
      `GET /api/external/tag HTTP/1.1\r\nHost: x\r\nHost: y\r\n${auth}Connection: close\r\n\r\n`,
      400,
      'Bad request: a request names its Host once.',
    ],
    [`GET /api/external/tag HTTP/1.0\r\nHost: x\r\nhost: x\r\n${auth}\r\n`, 400, 'Bad request: a request names its Host once.'],
    [
      `POST /api/external/tag HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nExpect: 200-ok\r\nContent-Length: 39\r\nConnection: close\r\n\r\n[{"name":"expected","color":"red"}]    `,
      417,
      "Expectation '200-ok' cannot be met: the only one this server knows is 100-continue.",
    ],
    [
      `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`,
      400,
      'Bad request: CONNECT is for proxies, and this server is none.',
    ],
    [
      `POST /api/external/tag HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n[]`,
      400,
      'Bad request.',
    ],
  ];
  for (const [request, status, error] of cases) {
    const before = await headOf(s.gitdir);
    const response = await rawHttp(s.url, request);
    const [head, body] = [response.slice(0, response.indexOf('\r\n\r\n')), response.slice(response.indexOf('\r\n\r\n') + 4)];
    t.regex(head, new RegExp(`^HTTP/1\\.1 ${status} `), `${request.slice(0, 60)}: ${head}`);
    t.regex(head, /content-type: application\/json/i);
    t.deepEqual(JSON.parse(body), { error }, request.slice(0, 60));
    t.is(await headOf(s.gitdir), before);
  }
  // An empty Expect lists no expectation (RFC 9110 §5.6.1), and HTTP/1.0 needs no Host: both served.
  for (const request of [
    `GET /api/external/tag HTTP/1.1\r\nHost: x\r\n${auth}Expect: \r\nConnection: close\r\n\r\n`,
    `GET /api/external/tag HTTP/1.0\r\n${auth}\r\n`,
  ]) {
    t.regex(await rawHttp(s.url, request), /^HTTP\/1\.1 200 /, request.slice(0, 60));
  }
});

test.serial('organization slugs that try to escape are refused before anything is created', async (t) => {
  const orgs = new Orgs(s.dataDir);
  const author = { name: 'test', email: 'test@test' };
  for (const slug of [
    '../evil',
    '../../evil',
    '/tmp/evil',
    'a/../b',
    'a\u0000b',
    '..',
    '.',
    '%2e%2e',
    'Acme',
    'a b',
    '',
    '-a',
    'x'.repeat(64),
    'acme.git',
    'acme/..',
  ]) {
    await t.throwsAsync(() => orgs.create(slug, { author }), { message: /Invalid organization slug/ }, JSON.stringify(slug));
    t.false(orgs.exists(slug));
  }
  t.deepEqual(await orgs.list(), ['acme']);
});

// ---------------------------------------------------------------------------------------------
// After all of it

test.serial(
  'afterwards: nothing new outside the repository, a clean fsck, a fast /healthz, and the other client was served throughout',
  async (t) => {
    const latency = await watcher.stop();
    t.log(
      `other client: ${latency.count} GETs, p50 ${latency.p50Ms.toFixed(1)} ms, max ${latency.maxMs.toFixed(0)} ms; ` +
        `${figures.badInputsTried} bad inputs in all, ${figures.fiveHundreds} answered 5xx`,
    );
    t.deepEqual(latency.failures, []);
    t.true(latency.count > 50, `${latency.count} GETs`);
    t.true(latency.maxMs < 2000, `slowest GET ${latency.maxMs.toFixed(0)} ms`);
    t.is(figures.fiveHundreds, 0);

    t.deepEqual(await filesOutsideRepo(), outside, 'the data directory outside orgs/acme.git is byte for byte as before');
    const repoEntries = (await readdir(s.gitdir)).sort();
    // hooks/: the pre-receive hook; objects/info/: what background packing writes; the files
    // packing and ref updates free, kept for new ones (src/store/spare-files.ts).
    const besidesGit = repoEntries.filter(
      (e) => !['HEAD', 'config', 'description', 'hooks', 'info', 'objects', 'refs', 'packed-refs', SPARE_FILES_DIR].includes(e),
    );
    for (const spare of await readdir(join(s.gitdir, SPARE_FILES_DIR)).catch(() => []))
      t.regex(spare, /^\d+_[0-9a-f]{8}_\d+(\.emptying)?$/);
    // And the keys of the server's write lock and of its packing's lock (src/store/lock.ts), when
    // it packed meanwhile: this process's, and released (a single name).
    const ownKey = new RegExp(`^c4store(-maintenance)?\\.lock\\.holder-${process.pid}-[0-9a-f]{8}$`);
    t.deepEqual(
      besidesGit.filter((e) => !ownKey.test(e)),
      [],
    );
    for (const key of besidesGit) t.is((await stat(join(s.gitdir, key))).nlink, 1, `${key} is not held`);
    for (const entry of await readdir(join(s.gitdir, 'objects'), { recursive: true })) {
      if ((await stat(join(s.gitdir, 'objects', entry))).isFile()) {
        t.regex(entry, /^([0-9a-f]{2}\/[0-9a-f]{38}|pack\/pack-[0-9a-f]{40}\.(pack|idx|rev)|info\/(packs|commit-graph))$/);
      }
    }
    const { stdout, stderr } = await promisify(execFile)('git', ['--git-dir', s.gitdir, 'fsck', '--full', '--strict']);
    t.is(`${stdout}${stderr}`.replace(/^(dangling|Checking).*\n?/gm, ''), '');
    const started = performance.now();
    const health = await s.get('/healthz', { key: null });
    t.is(health.status, 200);
    t.true(performance.now() - started < 500);
    t.deepEqual(
      s.logs.filter((line) => isErrorLine(line)),
      [],
      'no unexpected error was logged',
    );
  },
);
