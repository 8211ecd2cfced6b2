/**
 * Model files pushed with YAML the model cannot hold (docs/api.md §7.5): a tag that is not one of
 * YAML's core ones (`!!python/object:…`, `!foo`, `!!binary`) is refused, as are a key given twice,
 * a merge key (`<<`) and a number a double would change, each naming the file, the line (counted
 * as in the file, its schema line included) and what is wrong; `c4store check` says the same of
 * the folder. What was committed before is still read. No pushed YAML makes the server log an
 * unexpected error. Real git over real HTTP.
 */
import test, { type ExecutionContext } from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkDirectory } from '../src/check/check.js';
import { resourcePath } from '../src/model/paths.js';
import { cloneFor, GIT_ENV as ENV, gitIn as git } from './support/git-clone.js';
import { isErrorLine, run, TestServer } from './support/server.js';

const API = '/api/external';

async function setUp(t: ExecutionContext) {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const [shop] = (await s.post(`${API}/component`, [{ name: 'Shop', desc: 'Sells things' }])).body;
  const dir = await cloneFor(t, s, 'c4store-push-yaml-');
  const file = resourcePath('component', shop.id);
  const text = await readFile(join(dir, file), 'utf8');
  return { s, dir, file, text, shop };
}

/** Commits `content` as `file` and pushes it: git's stderr when refused, '' when taken. */
async function pushFile(dir: string, file: string, content: string): Promise<string> {
  await writeFile(join(dir, file), content);
  await git(dir, ['commit', '-qam', `edit ${file}`]);
  return git(dir, ['push', '-q', 'origin', 'HEAD:refs/heads/main']).then(
    () => '',
    (err: { stderr?: string }) => String(err.stderr),
  );
}

const TAG_RULE =
  "is not read here: a model file holds strings, numbers, booleans, null, mappings and sequences, written plain or with YAML's core tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq).";

test('a tag a model file cannot hold is refused naming file, line and tag; core tags are fine; check says the same', async (t) => {
  const { s, dir, file, text } = await setUp(t);
  const lines = text.split('\n');
  t.regex(lines[0]!, /^# yaml-language-server: /, 'the file starts with its schema line');
  const nameLine = lines.findIndex((line) => line.startsWith('name: ')) + 1;
  const head = await s.head();
  for (const [tagged, tag, column] of [
    ['name: !!python/object:os.system Shop', '!!python/object:os.system', 7],
    ['name: !foo Shop', '!foo', 7],
    ['name: !!binary U2hvcA==', '!!binary', 7],
    ['name: !!timestamp 2026-01-01', '!!timestamp', 7],
    // The tag on the key's line, its content on the next: the tag's line, not the content's.
    ['name: !!binary\n  U2hvcA==', '!!binary', 7],
    ['name: !!timestamp\n\n  2026-01-01', '!!timestamp', 7],
    ['!foo name: Shop', '!foo', 1],
  ] as const) {
    const content = text.replace(/^name: .*$/m, tagged);
    const refused = await pushFile(dir, file, content);
    const message = `${file}: The tag '${tag}' at line ${nameLine}, column ${column} ${TAG_RULE}`;
    t.true(refused.includes(message), `${tagged}\n${refused}`);
    t.is(await s.head(), head, `${tagged}: main did not move`);
    // The folder, checked as a push of it would be: the same problem, on the same line.
    const report = await checkDirectory(dir);
    t.deepEqual(
      report.problems.map((p) => `${p.file}:${p.line}`),
      [`${file}:${nameLine}`],
      tagged,
    );
    t.true(report.problems[0]!.message.startsWith(`The tag '${tag}' at line ${nameLine}`), report.problems[0]!.message);
    await git(dir, ['reset', '-q', '--hard', 'origin/main']);
  }
  // YAML's own core tags say nothing a plain value does not: taken.
  t.is(await pushFile(dir, file, text.replace(/^name: .*$/m, 'name: !!str Shop')), '');
  t.is((await s.get(`${API}/component`)).body[0].name, 'Shop');
  t.deepEqual(
    s.logs.filter((line) => isErrorLine(line)),
    [],
  );
});

test('a key given twice is refused naming file, line and key', async (t) => {
  const { s, dir, file, text } = await setUp(t);
  const head = await s.head();
  const lines = text.split('\n');
  const descLine = lines.findIndex((line) => line.startsWith('desc: ')) + 1;
  const content = text.replace(/^desc: .*$/m, (line) => `${line}\nstate: ACTIVE`);
  // state: is already further down; the second one is the one named (the first in the file is kept as the line above).
  const refused = await pushFile(dir, file, content);
  const stateLines = content
    .split('\n')
    .map((line, i) => (line.startsWith('state: ') ? i + 1 : 0))
    .filter(Boolean);
  t.is(stateLines.length, 2);
  t.is(stateLines[0], descLine + 1);
  t.true(refused.includes(`${file}: Map keys must be unique: 'state' is given twice at line ${stateLines[1]}, column 1:`), refused);
  t.is(await s.head(), head);
  const report = await checkDirectory(dir);
  t.deepEqual(
    report.problems.map((p) => `${p.file}:${p.line}: ${p.message}`),
    [`${file}:${stateLines[1]}: Map keys must be unique: 'state' is given twice at line ${stateLines[1]}, column 1:`],
  );
});

test('a tag committed before (past the check) is still read, and the model written; hostile YAML never crashes the check', async (t) => {
  const { s, dir, file, text, shop } = await setUp(t);
  await writeFile(join(dir, file), text.replace(/^name: .*$/m, 'name: !foo Shop'));
  await git(dir, ['commit', '-qam', 'a tag, from before the check']);
  await run('git', ['--git-dir', s.gitdir, 'fetch', '-q', dir, '+HEAD:refs/heads/main'], { env: ENV });
  t.is((await s.get(`${API}/component/${shop.id}`)).body.name, 'Shop');
  const written = await s.post(`${API}/component`, [{ id: shop.id, name: 'Shop', desc: 'Sells more things' }]);
  t.is(written.status, 200, written.text);
  await git(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
  // A push that leaves that file alone goes through: only what a push brings is held to the rule.
  const other = await s.post(`${API}/tag`, [{ name: 'Kept', color: 'blue' }]);
  t.is(other.status, 200);
  await git(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
  const tagFile = resourcePath('tag', other.body[0].id);
  const tagText = await readFile(join(dir, tagFile), 'utf8');
  t.is(await pushFile(dir, tagFile, tagText.replace(/^color: .*$/m, 'color: green')), '');

  const head = await s.head();
  const hostile = [
    `${text}extra: &a [1, 2]\nmore: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n`,
    `${text}deep: ${'['.repeat(5000)}${']'.repeat(5000)}\n`,
    `%TAG !e! tag:example.com,2000:\n---\n${text.replace(/^name: .*$/m, 'name: !e!x Shop')}`,
    text.replace(/^name: .*$/m, 'name: !<tag:example.com,2000:x> Shop'),
    text.replace(/^name: .*$/m, 'name: !!set {a, b}'),
    text.replace(/^name: .*$/m, 'name: *nowhere'),
    text.replace(/^name: .*$/m, '? !foo [a, b]\n: Shop'),
    '\t- not yaml at all: [\n',
    '--- a\n--- b\n',
  ];
  for (const content of hostile) {
    const refused = await pushFile(dir, file, content);
    t.true(refused.includes(`${file}: `), `${content.slice(-120)}\n${refused}`);
    t.is(await s.head(), head);
    await git(dir, ['reset', '-q', '--hard', 'origin/main']);
  }
  t.deepEqual(
    s.logs.filter((line) => isErrorLine(line)),
    [],
    'nothing unexpected, nothing logged as a crash',
  );
  t.is((await s.get('/healthz')).status, 200);
});

/** The 1-based line of `content` that `pattern` first matches, and the column where `literal` starts on it. */
function where(content: string, pattern: RegExp, literal: string): { line: number; column: number } {
  const lines = content.split('\n');
  const index = lines.findIndex((line) => pattern.test(line));
  if (index === -1) throw new Error(`no line matches ${pattern}`);
  return { line: index + 1, column: lines[index]!.indexOf(literal) + 1 };
}

test('a number a double would change is refused naming file, line and column; one written back as sent is taken; check says the same', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const [accounts] = (await s.put(`${API}/attribute`, [{ name: 'Accounts', type: 'NUMBER' }])).body;
  const [ledger] = (await s.post(`${API}/component`, [{ name: 'Ledger', attributes: [{ id: accounts.id, value: 1 }] }])).body;
  const [view] = (
    await s.post(`${API}/diagram`, [
      { name: 'Ledger view', level: 'C2', componentInstances: [{ component: ledger.id, position: { x: 1, y: 2 } }] },
    ])
  ).body;
  const dir = await cloneFor(t, s, 'c4store-push-numbers-');
  const componentFile = resourcePath('component', ledger.id);
  const diagramFile = resourcePath('diagram', view.id);
  const head = await s.head();
  const DIGITS = 'has more digits than a number value holds: it would become 9007199254740992; write it as a string.';
  for (const [file, line, edited, literal, problem] of [
    [componentFile, /^ {4}value: 1$/m, '    value: 9007199254740993', '9007199254740993', DIGITS],
    [diagramFile, /^ {6}x: 1$/m, '      x: 9007199254740993', '9007199254740993', DIGITS],
    [
      diagramFile,
      /^ {6}y: 2$/m,
      '      y: -9007199254740993',
      '-9007199254740993',
      DIGITS.replace('9007199254740992', '-9007199254740992'),
    ],
    [componentFile, /^ {4}value: 1$/m, '    value: 1e-400', '1e-400', 'is too close to 0 to be held: it would become 0.'],
  ] as const) {
    const text = await readFile(join(dir, file), 'utf8');
    const content = text.replace(line, edited);
    t.not(content, text);
    const at = where(content, new RegExp(`^${edited}$`), literal);
    const refused = await pushFile(dir, file, content);
    t.true(refused.includes(`${file}: The number ${literal} at line ${at.line}, column ${at.column} ${problem}`), `${edited}\n${refused}`);
    t.is(await s.head(), head, `${edited}: main did not move`);
    const report = await checkDirectory(dir);
    t.deepEqual(
      report.problems.map((p) => `${p.file}:${p.line}: ${p.message}`),
      [`${file}:${at.line}: The number ${literal} at line ${at.line}, column ${at.column} ${problem}`],
      edited,
    );
    await git(dir, ['reset', '-q', '--hard', 'origin/main']);
  }
  // A large integer the service writes back as it came is taken, as it is in a request body;
  // a fraction with more digits than a double holds is rounded, as decimals are.
  const text = await readFile(join(dir, componentFile), 'utf8');
  t.is(await pushFile(dir, componentFile, text.replace(/^ {4}value: 1$/m, '    value: 12345678901234567000')), '');
  t.is((await s.get(`${API}/component/${ledger.id}`)).body.attributes[0].value, 12345678901234567000);
  t.is(await pushFile(dir, componentFile, text.replace(/^ {4}value: 1$/m, '    value: 3.14159265358979323846')), '');
  t.is((await s.get(`${API}/component/${ledger.id}`)).body.attributes[0].value, Math.PI);
  t.deepEqual(
    s.logs.filter((line) => isErrorLine(line)),
    [],
  );
});

const MERGE_RULE =
  "is not supported in a model file: a model file is read as YAML 1.2, where '<<' is a field of that name and what it would merge is dropped; write the fields out.";

test('a merge key is refused naming file, line and column, whatever it merges; check says the same; a quoted "<<" is only a field', async (t) => {
  const { s, dir, file, text } = await setUp(t);
  const head = await s.head();
  for (const [edit, column] of [
    // The idiom: defaults under an extra field, merged where they are meant.
    [(body: string) => `x-defaults: &defaults\n  state: ACTIVE\n${body.replace(/^state: .*\n/m, '<<: *defaults\n')}`, 1],
    [(body: string) => body.replace(/^state: .*$/m, 'state: ACTIVE\n<<: {desc: merged}'), 1],
    [(body: string) => body.replace(/^desc: .*$/m, 'desc: Sells things\nx-extra: {<<: [{a: 1}, {b: 2}]}'), 11],
    // What it is given does not matter: the file says one thing to a YAML 1.1 reader, another to c4store.
    [(body: string) => body.replace(/^desc: .*$/m, 'desc: Sells things\n<<: 5'), 1],
  ] as const) {
    const content = edit(text);
    const at = where(content, /<</, '<<');
    t.is(at.column, column);
    const refused = await pushFile(dir, file, content);
    const message = `The merge key '<<' at line ${at.line}, column ${at.column} ${MERGE_RULE}`;
    t.true(refused.includes(`${file}: ${message}`), `${content}\n${refused}`);
    t.is(await s.head(), head, 'main did not move');
    const report = await checkDirectory(dir);
    t.deepEqual(
      report.problems.map((p) => `${p.file}:${p.line}: ${p.message}`),
      [`${file}:${at.line}: ${message}`],
    );
    await git(dir, ['reset', '-q', '--hard', 'origin/main']);
  }
  // Quoted, '<<' is a field of that name to every YAML reader: an unknown field, as any other.
  t.is(await pushFile(dir, file, text.replace(/^desc: .*$/m, "desc: Sells things\n'<<': {state: ACTIVE}")), '');
  t.not(await s.head(), head);
});

test('a model file whose aliases repeat what they name past what one write may carry is refused; an alias repeating a little is fine; check says the same', async (t) => {
  const { s, dir, file, text } = await setUp(t);
  const head = await s.head();
  // 200 kB named once and repeated 99 times: 20 MB once read, from a file of 200 kB.
  const long = 'x'.repeat(200_000);
  const refs = Array.from({ length: 99 }, () => '*long').join(', ');
  const content = text.replace(/^desc: .*$/m, `desc: &long ${long}\nx-copies: [${refs}]`);
  const refused = await pushFile(dir, file, content);
  const message = 'Its aliases repeat what they name past 10.0 MB, more than one write may carry: write it out, or repeat less.';
  t.true(refused.includes(`${file}: ${message}`), refused.slice(0, 2000));
  t.is(await s.head(), head, 'main did not move');
  const report = await checkDirectory(dir);
  t.deepEqual(
    report.problems.map((p) => `${p.file}: ${p.message}`),
    [`${file}: ${message}`],
  );
  await git(dir, ['reset', '-q', '--hard', 'origin/main']);
  // A short text named twice is YAML as people write it.
  t.is(await pushFile(dir, file, text.replace(/^desc: .*$/m, 'desc: &d Sells things\nx-again: *d')), '');
  t.not(await s.head(), head);
  t.false(s.logs.some(isErrorLine), s.logs.join('\n'));
});

test('a model file under a %YAML 1.1 directive is refused naming file and line; %YAML 1.2 is fine; check says the same', async (t) => {
  const { s, dir, file, text } = await setUp(t);
  const head = await s.head();
  // Under YAML 1.1 `1:20` is the number 80: the file would say one thing to c4store, another to a 1.2 reader.
  const content = `%YAML 1.1\n---\n${text.replace(/^desc: .*$/m, 'desc: 1:20')}`;
  const refused = await pushFile(dir, file, content);
  const message =
    "The directive '%YAML 1.1' at line 1, column 1 is not supported in a model file: a model file is YAML 1.2, read alike by every reader of the repository, and YAML 1.1 reads some of its values as others (`y` as true, `1:20` as 80); remove the directive.";
  t.true(refused.includes(`${file}: ${message}`), refused);
  t.is(await s.head(), head, 'main did not move');
  const report = await checkDirectory(dir);
  t.deepEqual(
    report.problems.map((p) => `${p.file}:${p.line}: ${p.message}`),
    [`${file}:1: ${message}`],
  );
  await git(dir, ['reset', '-q', '--hard', 'origin/main']);
  t.is(await pushFile(dir, file, `%YAML 1.2\n---\n${text.replace(/^desc: .*$/m, 'desc: 1:20')}`), '');
  t.is((await s.get(`${API}/component`)).body.find((c: { desc: string }) => c.desc === '1:20')?.desc, '1:20');
});

test('a merge key or a number a double would change, committed before the check, is read as it was read then', async (t) => {
  const { s, dir, file, text, shop } = await setUp(t);
  const [accounts] = (await s.put(`${API}/attribute`, [{ name: 'Accounts', type: 'NUMBER' }])).body;
  t.is((await s.post(`${API}/component`, [{ id: shop.id, name: 'Shop', attributes: [{ id: accounts.id, value: 1 }] }])).status, 200);
  await git(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
  const withValue = await readFile(join(dir, file), 'utf8');
  t.not(withValue, text);
  // Past the hook, as a repository pushed to before these checks holds it.
  await writeFile(
    join(dir, file),
    withValue.replace(/^desc: .*$/m, 'desc: Sells things\n<<: {state: ACTIVE}').replace(/^ {4}value: 1$/m, '    value: 9007199254740993'),
  );
  await git(dir, ['commit', '-qam', 'a merge key and a long number, from before the check']);
  await run('git', ['--git-dir', s.gitdir, 'fetch', '-q', dir, '+HEAD:refs/heads/main'], { env: ENV });
  const served = (await s.get(`${API}/component/${shop.id}`)).body;
  t.is(served.state, 'DRAFT', "'<<' was a field, ignored");
  t.is(served.attributes[0].value, 9007199254740992);
  // A push that leaves the file alone goes through.
  const [tag] = (await s.post(`${API}/tag`, [{ name: 'Kept', color: 'blue' }])).body;
  await git(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
  const tagFile = resourcePath('tag', tag.id);
  const tagText = await readFile(join(dir, tagFile), 'utf8');
  t.is(await pushFile(dir, tagFile, tagText.replace(/^color: .*$/m, 'color: green')), '');
  t.deepEqual(
    s.logs.filter((line) => isErrorLine(line)),
    [],
  );
});
