import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import YAML from 'yaml';
import { cli } from './support/process.js';
import { run, TestServer } from './support/server.js';

const SAMPLE = join(import.meta.dirname, '..', 'sample-repo');
const LINE = /^# yaml-language-server: \$schema=(\S+)\n/;

async function clone(s: TestServer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-clone-'));
  await run('git', ['clone', '-q', s.gitdir, dir]);
  return dir;
}

async function yamlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.yaml') && !e.parentPath.includes('.git'))
    .map((e) => join(e.parentPath, e.name));
}

/**
 * What an editor running yaml-language-server does with a clone: follow each file's schema line
 * to the schema file (relative to the YAML file) and validate the file against it (ajv, JSON
 * Schema 2020-12). Returns the problems.
 */
async function editorProblems(dir: string): Promise<string[]> {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const problems: string[] = [];
  for (const file of await yamlFiles(dir)) {
    const text = await readFile(file, 'utf8');
    const line = LINE.exec(text);
    if (!line) {
      problems.push(`${file}: no schema line`);
      continue;
    }
    const schema = JSON.parse(await readFile(resolve(dirname(file), line[1]), 'utf8'));
    if (!ajv.getSchema(line[1])) ajv.addSchema(schema, line[1]);
    const validate = ajv.getSchema(line[1])!;
    if (!validate(YAML.parse(text))) problems.push(`${file}: ${ajv.errorsText(validate.errors)}`);
  }
  return problems;
}

test('a new repository holds the schemas, every file names its own, and every file validates against it', async (t) => {
  const s = await TestServer.start({ from: SAMPLE });
  t.teardown(() => s.close());
  await s.post('/api/external/tag', [{ name: 'Edited "by" API', color: 'red' }]);
  const dir = await clone(s);
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  t.deepEqual((await readdir(join(dir, '.c4store', 'schemas'))).sort(), [
    'attribute.json',
    'component.json',
    'diagram.json',
    'organization.json',
    'tag.json',
    'type.json',
  ]);
  t.deepEqual(await editorProblems(dir), []);
  const component = (await yamlFiles(dir)).find((f) => f.includes('/components/')) as string;
  t.regex(await readFile(component, 'utf8'), /^# yaml-language-server: \$schema=(\.\.\/)+\.c4store\/schemas\/component\.json\n/);
  // The schema catches what the service would refuse: a wrong enum value, a missing field.
  await writeFile(component, (await readFile(component, 'utf8')).replace(/^state: \w+$/m, 'state: LIVE').replace(/^name: .*\n/m, ''));
  const problems = await editorProblems(dir);
  t.is(problems.length, 1);
  t.regex(problems[0], /must have required property 'name'/);
  t.regex(problems[0], /state must be equal to one of the allowed values/);
});

test('ordinary writes add no noise: only the files they change, schema line unchanged', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  // A fixed apiContext: the default is the request's second, which would differ between the writes.
  const [tag] = (await s.post('/api/external/tag', [{ name: 'A', color: 'red', apiContext: 'ci' }])).body;
  await s.post('/api/external/tag', [{ id: tag.id, name: 'B', color: 'red', apiContext: 'ci' }]);
  t.is(await s.git('show', '--name-status', '--format=', 'main'), `M\ttags/${tag.id}.yaml\n`);
  t.is(
    await s.git('diff', 'main~1', 'main', '--stat', '--format='),
    ` tags/${tag.id}.yaml | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n`,
  );
});

test('an older repository (no schemas, no schema lines) gets the schemas with its next write, and all lines with c4store upgrade', async (t) => {
  const s = await TestServer.start({ from: SAMPLE });
  t.teardown(() => s.close());
  // Make it look like a repository from before: push a commit without .c4store/ and without schema lines.
  const old = await clone(s);
  t.teardown(() => rm(old, { recursive: true, force: true }));
  for (const file of await yamlFiles(old)) await writeFile(file, (await readFile(file, 'utf8')).replace(LINE, ''));
  await run('git', ['-C', old, 'rm', '-q', '-r', '.c4store']);
  await run('git', ['-C', old, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-am', 'as before']);
  await run('git', ['-C', old, 'push', '-q', 'origin', 'main']);
  t.is((await s.get('/api/external/tag')).status, 200, 'files without a schema line load as before');

  await s.post('/api/external/tag', [{ name: 'Next write', color: 'blue' }]);
  const changed = (await s.git('show', '--name-only', '--format=', 'main')).trim().split('\n');
  t.is(changed.filter((f) => f.startsWith('tags/')).length, 1);
  t.deepEqual(changed.filter((f) => f.startsWith('.c4store/')).sort(), [
    '.c4store/schemas/attribute.json',
    '.c4store/schemas/component.json',
    '.c4store/schemas/diagram.json',
    '.c4store/schemas/organization.json',
    '.c4store/schemas/tag.json',
    '.c4store/schemas/type.json',
  ]);
  t.is(changed.length, 7, 'nothing else: untouched files keep their old form');
  await s.post('/api/external/tag', [{ name: 'One more', color: 'blue' }]);
  t.is((await s.git('show', '--name-only', '--format=', 'main')).trim().split('\n').length, 1, 'schemas added once');

  await cli('upgrade', s.slug, '--data', s.dataDir);
  // The message lists exactly the files the commit changed: not the two tags written since,
  // which already have their schema line.
  const files = (await s.git('show', '--name-only', '--format=', 'main')).trim().split('\n').sort();
  const listed = [...(await s.git('log', '-1', '--format=%B', 'main')).matchAll(/^update (\S+)/gm)].map((m) => m[1]).sort();
  t.deepEqual(listed, files);
  const upgradeCommit = (await s.git('rev-parse', 'main')).trim();
  await cli('upgrade', s.slug, '--data', s.dataDir);
  t.is((await s.git('rev-parse', 'main')).trim(), upgradeCommit, 'a second upgrade has nothing to change');
  const upgraded = await clone(s);
  t.teardown(() => rm(upgraded, { recursive: true, force: true }));
  t.deepEqual(await editorProblems(upgraded), []);
  t.is((await s.get('/api/external/component')).status, 200);
  const check = await run(process.execPath, [join(import.meta.dirname, '..', 'dist', 'cli.js'), 'check', upgraded]);
  t.regex(check.stderr, /no problems/);
});
