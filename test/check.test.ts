import test from 'ava';
import { chmod, cp, mkdtemp, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDirectory, PROGRESS_EVERY } from '../src/check/check.js';
import { newId } from '../src/model/ids.js';
import { resourcePath } from '../src/model/paths.js';
import { CLI } from './support/process.js';
import { run } from './support/server.js';

const SAMPLE = join(import.meta.dirname, '..', 'sample-repo');
const COMPONENT = resourcePath('component', '01jnjrh0m02c25ysw1gj6adcs3');
const DIAGRAM = resourcePath('diagram', '01jnqxaem0avedamrt8c3z4bwa');

async function check(dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'check', dir]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A copy of sample-repo/ with `edit` applied to the text of one file. */
async function brokenCopy(path: string, edit: (text: string) => string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-check-'));
  await cp(SAMPLE, dir, { recursive: true });
  const before = await readFile(join(dir, path), 'utf8');
  const after = edit(before);
  if (after === before) throw new Error(`the edit changed nothing in ${path}`);
  await writeFile(join(dir, path), after);
  return dir;
}

/** The 1-based line of the first line of `path` in sample-repo/ that matches. */
async function lineIn(path: string, pattern: RegExp): Promise<number> {
  return (await readFile(join(SAMPLE, path), 'utf8')).split('\n').findIndex((l) => pattern.test(l)) + 1;
}

test('sample-repo passes c4store check with exit code 0', async (t) => {
  const result = await check(SAMPLE);
  t.is(result.code, 0, result.stdout + result.stderr);
  t.is(result.stdout, '');
  t.regex(result.stderr, /no problems/);
});

test('an attribute value naming no attribute: the component file and the line of that id', async (t) => {
  const dir = await brokenCopy(COMPONENT, (text) =>
    text.replace('  - id: 01jnga84c0bg1e7axcfbyysdmn', '  - id: 01jnga84c0bg1e7axcfbyysdmx'),
  );
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const result = await check(dir);
  t.is(result.code, 1);
  const line = await lineIn(COMPONENT, /01jnga84c0bg1e7axcfbyysdmn/);
  t.is(result.stdout, `${COMPONENT}:${line}: Attribute with id '01jnga84c0bg1e7axcfbyysdmx' does not exist.\n`);
});

test('a schema failure in a nested field: one problem per field, each on the line of its field', async (t) => {
  const dir = await brokenCopy(DIAGRAM, (text) =>
    text.replace(/^ {4}width: 18$/m, '    width: 180').replace(/^state: ACTIVE$/m, 'state: LIVE'),
  );
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const result = await check(dir);
  t.is(result.code, 1);
  t.deepEqual(result.stdout.trim().split('\n'), [
    `${DIAGRAM}:${await lineIn(DIAGRAM, /^state:/)}: state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'LIVE'`,
    `${DIAGRAM}:${await lineIn(DIAGRAM, /^ {4}width: 18$/)}: componentInstances.0.width: Number must be less than or equal to 100`,
  ]);
});

test('YAML that does not parse, a missing required field, a file name that is not its id', async (t) => {
  const dir = await brokenCopy(COMPONENT, (text) => text.replace(/^name: .*\n/m, ''));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'tags/01jng649m0b5b0rgsswzakkrj6.yaml'), 'id: 01jng649m0b5b0rgsswzakkrj6\nname: [unclosed\n');
  const tag = await readFile(join(SAMPLE, 'tags/01jng67yt033apjntw9qc9q5yq.yaml'), 'utf8');
  await writeFile(join(dir, 'tags/01jng67yt033apjntw9qc9q5yr.yaml'), tag);
  const result = await check(dir);
  t.is(result.code, 1);
  const lines = result.stdout.trim().split('\n');
  t.true(lines.includes(`${COMPONENT}:1: name: Required`), result.stdout);
  t.true(
    lines.some((l) => /^tags\/01jng649m0b5b0rgsswzakkrj6\.yaml:[23]: /.test(l)),
    result.stdout,
  );
  t.true(
    lines.includes('tags/01jng67yt033apjntw9qc9q5yr.yaml:1: the id inside (01jng67yt033apjntw9qc9q5yq) differs from the file name'),
    result.stdout,
  );
});

test('files c4store does not own are ignored; a missing organization.yaml is reported', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-check-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(SAMPLE, dir, { recursive: true });
  await writeFile(join(dir, 'README.md'), '# not a model file\n');
  t.is((await check(dir)).code, 0);
  await rm(join(dir, 'organization.yaml'));
  const result = await check(dir);
  t.is(result.code, 1);
  t.is(result.stdout, 'organization.yaml:1: missing\n');
});

test('a large repository prints progress lines while it is checked', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-check-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(SAMPLE, dir, { recursive: true });
  await Promise.all(
    Array.from({ length: PROGRESS_EVERY }, (_, i) => {
      const id = newId();
      return writeFile(join(dir, 'tags', `${id}.yaml`), `id: ${id}\nname: Tag ${i}\ndesc: null\ncolor: gray\n`);
    }),
  );
  const progress: string[] = [];
  const report = await checkDirectory(dir, (line) => progress.push(line));
  t.deepEqual(report.problems, []);
  t.true(progress.length >= 1);
  t.regex(progress[0], /^checked \d+ of \d+ files$/);
});

test('a file in the wrong shard folder: check reports it as a push refuses it, naming where it belongs', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-check-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(SAMPLE, dir, { recursive: true });
  const [, shard, name] = COMPONENT.split('/');
  const wrongShard = shard === '00' ? '01' : '00';
  const { mkdir, rename } = await import('node:fs/promises');
  await mkdir(join(dir, 'components', wrongShard), { recursive: true });
  await rename(join(dir, COMPONENT), join(dir, 'components', wrongShard, name!));
  const result = await check(dir);
  t.is(result.code, 1);
  t.is(result.stdout, `components/${wrongShard}/${name}:1: the file is in the wrong place: it belongs at ${COMPONENT}\n`);
});

test('one bad value is one problem: what other files say of the unreadable resource is not reported again', async (t) => {
  const dir = await brokenCopy(COMPONENT, (text) => text.replace(/^state: \w+$/m, 'state: LIVE'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const result = await check(dir);
  t.is(result.code, 1);
  const lines = result.stdout.trim().split('\n');
  t.is(lines.length, 1, result.stdout);
  t.regex(lines[0]!, new RegExp(`^${COMPONENT}:\\d+: state: Invalid enum value`));
});

test('entries a push refuses for their shape are problems too: an executable or linked model file, a file where c4store keeps a folder; a file is no folder to check', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-check-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(SAMPLE, dir, { recursive: true });
  await chmod(join(dir, 'organization.yaml'), 0o755);
  await writeFile(join(dir, 'components', 'fe'), 'x\n');
  const tag = newId();
  await symlink('/etc/hostname', join(dir, 'tags', `${tag}.yaml`));
  const result = await check(dir);
  t.is(result.code, 1);
  t.is(
    result.stdout,
    [
      'components/fe:1: c4store keeps a folder here; a file in its place would make every write into it fail.',
      'organization.yaml:1: must be a plain file (mode 100644) as c4store writes it, not mode 100755.',
      `tags/${tag}.yaml:1: must be a plain file (mode 100644) as c4store writes it, not mode 120000.`,
      '',
    ].join('\n'),
  );
  const notAFolder = await check(join(dir, 'organization.yaml'));
  t.is(notAFolder.code, 1);
  t.regex(notAFolder.stderr, /organization\.yaml: not a folder/);
  t.notRegex(notAFolder.stderr, /ENOTDIR|at /);
});

test('a number a double would change and a merge key: the file, line and column, as a push of the folder is refused', async (t) => {
  const dir = await brokenCopy(COMPONENT, (text) =>
    text.replace(/^state: ACTIVE$/m, 'x-defaults: &defaults {state: ACTIVE}\n<<: *defaults'),
  );
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const WEB_SHOP = resourcePath('component', '01jnjv1jr084nyxk6s176vasbs');
  const webShop = await readFile(join(dir, WEB_SHOP), 'utf8');
  await writeFile(join(dir, WEB_SHOP), webShop.replace(/^ {4}value: 310$/m, '    value: 123456789012345678901'));
  const result = await check(dir);
  t.is(result.code, 1);
  const mergeLine = (await lineIn(COMPONENT, /^state: ACTIVE$/)) + 1;
  const numberLine = await lineIn(WEB_SHOP, /^ {4}value: 310$/);
  t.is(
    result.stdout,
    [
      // Sorted by file: components/01/… before components/e0/….
      `${WEB_SHOP}:${numberLine}: The number 123456789012345678901 at line ${numberLine}, column 12 has more digits than a number value holds: it would become 123456789012345680000; write it as a string.`,
      `${COMPONENT}:${mergeLine}: The merge key '<<' at line ${mergeLine}, column 1 is not supported in a model file: a model file is read as YAML 1.2, where '<<' is a field of that name and what it would merge is dropped; write the fields out.`,
      '',
    ].join('\n'),
  );
});

test('a ref that is the id of another resource of its kind, or of another instance of its diagram: at the ref, as a push is refused', async (t) => {
  const WEB_SHOP = '01jnjv1jr084nyxk6s176vasbs';
  const dir = await brokenCopy(COMPONENT, (text) => text.replace(/^ref: customer$/m, `ref: ${WEB_SHOP}`));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const diagram = await readFile(join(dir, DIAGRAM), 'utf8');
  // The second instance's ref becomes the first instance's id.
  const [firstInstance] = [...diagram.matchAll(/^ {2}- id: (\w+)$/gm)].map((m) => m[1]!);
  await writeFile(join(dir, DIAGRAM), diagram.replace(/^ {4}ref: catalog-manager$/m, `    ref: ${firstInstance}`));
  const result = await check(dir);
  t.is(result.code, 1);
  t.is(
    result.stdout,
    [
      `${COMPONENT}:${await lineIn(COMPONENT, /^ref: customer$/)}: Ref '${WEB_SHOP}' is taken: it is the id of the component 'Web Shop', and an id or a ref names one component.`,
      `${DIAGRAM}:${await lineIn(DIAGRAM, /^ {4}ref: catalog-manager$/)}: Ref '${firstInstance}' is taken: it is the id of another component instance of this diagram, and an id or a ref names one instance.`,
      '',
    ].join('\n'),
  );
  t.regex(result.stderr, /2 problems/);
});

test('a model file larger than a push may bring is a problem named by its size, as a push refuses it; one too large to read was "Invalid string length" (check and org create --from)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-check-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(SAMPLE, dir, { recursive: true });
  // Sparse: 700 MB on disk costs nothing, and is past the longest string a read may make.
  await truncate(join(dir, COMPONENT), 700 * 2 ** 20);
  await truncate(join(dir, DIAGRAM), 11 * 2 ** 20);
  const result = await check(dir);
  t.is(result.code, 1, result.stderr);
  t.is(
    result.stdout,
    [
      `${COMPONENT}:1: 700.0 MB, larger than one write may carry (10.0 MB).`,
      `${DIAGRAM}:1: 11.0 MB, larger than one write may carry (10.0 MB).`,
      '',
    ].join('\n'),
  );
  const data = await mkdtemp(join(tmpdir(), 'c4store-check-data-'));
  t.teardown(() => rm(data, { recursive: true, force: true }));
  const refused = await run(process.execPath, [CLI, 'org', 'create', 'big', '--from', dir, '--data', data]).then(
    () => ({ code: 0, stderr: '' }),
    (err: { code: number; stderr: string }) => err,
  );
  t.is(refused.code, 1);
  t.regex(refused.stderr, /MB, larger than one write may carry \(10\.0 MB\)/);
  t.notRegex(refused.stderr, /Invalid string length/);
});
