import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import { resourcePath } from '../src/model/paths.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { serveProcess } from './support/process.js';
import { errorContext, isErrorLine, TestServer } from './support/server.js';

/**
 * Someone commits into the bare repository with git itself, behind the service's back and
 * past its pre-receive hook (pushed with hooks switched off, or with plumbing): an invalid
 * YAML file, a dangling reference, a file whose id is not its name, and more. The service
 * notices on the next request: reads keep serving the last valid commit with a `Warning`
 * header naming the broken commit, the file and the problem; writes answer 503 with that
 * text and make no commit; /healthz and the valid history (`?at=`) are served; nothing
 * crashes; the model is served again once `main` is valid.
 */

const exec = promisify(execFile);
const API = '/api/external';
const UNKNOWN_ID = '01aaaaaaaaaaaaaaaaaaaaaaaa';
const NEW_ID = '01zzzzzzzzzzzzzzzzzzzzzzzz';
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Someone',
  GIT_AUTHOR_EMAIL: 'someone@example.com',
  GIT_COMMITTER_NAME: 'Someone',
  GIT_COMMITTER_EMAIL: 'someone@example.com',
};

const componentPath = (id: string) => resourcePath('component', id);
const diagramPath = (id: string) => resourcePath('diagram', id);

let s: TestServer;
let ids: { tag: string; attribute: string; component: string; diagram: string; container: string };
let good: string;

async function git(gitdir: string, args: string[], input?: string): Promise<string> {
  const child = exec('git', ['--git-dir', gitdir, ...args], { env: GIT_ENV });
  if (input !== undefined) child.child.stdin!.end(input);
  return (await child).stdout.trim();
}

const clones = new Map<string, string>();

/** A working clone of `gitdir`, made once and brought up to date with its main. */
async function cloneOf(gitdir: string): Promise<string> {
  let dir = clones.get(gitdir);
  if (!dir) {
    dir = await mkdtemp(join(tmpdir(), 'c4store-clone-'));
    await exec('git', ['clone', '-q', '--branch', 'main', gitdir, dir], { env: GIT_ENV });
    clones.set(gitdir, dir);
  }
  await exec('git', ['-C', dir, 'fetch', '-q', 'origin'], { env: GIT_ENV });
  await exec('git', ['-C', dir, 'reset', '-q', '--hard', 'origin/main'], { env: GIT_ENV });
  return dir;
}

/** Applies `files` (null deletes) in a clone, commits and pushes, as a person would. Returns the new tip. */
async function push(gitdir: string, files: Record<string, string | null>, message = 'Edit behind the service'): Promise<string> {
  const dir = await cloneOf(gitdir);
  for (const [path, content] of Object.entries(files)) {
    if (content === null) await rm(join(dir, path));
    else {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    }
  }
  await exec('git', ['-C', dir, 'add', '-A'], { env: GIT_ENV });
  await exec('git', ['-C', dir, 'commit', '-q', '-m', message], { env: GIT_ENV });
  await exec('git', ['-C', dir, 'push', '-q', `--receive-pack=${PAST_THE_HOOK}`, 'origin', 'main'], { env: GIT_ENV });
  return git(gitdir, ['rev-parse', 'refs/heads/main']);
}

/** receive-pack with the repository's hooks switched off: the way past the pre-receive check. */
const PAST_THE_HOOK = 'git -c core.hooksPath=/dev/null receive-pack';

/** `git revert HEAD` in a clone, pushed. */
async function revert(gitdir: string): Promise<string> {
  const dir = await cloneOf(gitdir);
  await exec('git', ['-C', dir, 'revert', '--no-edit', 'HEAD'], { env: GIT_ENV });
  await exec('git', ['-C', dir, 'push', '-q', 'origin', 'main'], { env: GIT_ENV });
  return git(gitdir, ['rev-parse', 'refs/heads/main']);
}

/** Adds one file at `path` (`<dir>/.../<name>`) with git's plumbing (hash-object, mktree, commit-tree, update-ref). */
async function plumb(gitdir: string, path: string, content: string): Promise<string> {
  const parent = await git(gitdir, ['rev-parse', 'refs/heads/main']);
  const blob = await git(gitdir, ['hash-object', '-w', '--stdin'], content);
  // Rebuilds each tree on the way to the file, innermost first.
  const dirs = path.split('/');
  let entry = `100644 blob ${blob}\t${dirs.pop()}`;
  let tree = '';
  for (let depth = dirs.length; depth >= 0; depth--) {
    const name = entry.slice(entry.indexOf('\t') + 1);
    const listing = await git(gitdir, ['ls-tree', `${parent}:${dirs.slice(0, depth).join('/')}`]).catch(() => '');
    const others = listing.split('\n').filter((line) => line !== '' && !line.endsWith(`\t${name}`));
    tree = await git(gitdir, ['mktree'], [...others, entry].join('\n') + '\n');
    entry = `040000 tree ${tree}\t${dirs[depth - 1]}`;
  }
  const commit = await git(gitdir, ['commit-tree', tree, '-p', parent, '-m', `Add ${path}`]);
  await git(gitdir, ['update-ref', 'refs/heads/main', commit, parent]);
  return commit;
}

/** The YAML c4store itself writes for a component. */
function componentFile(id: string, fields: { name?: string; typeId?: string | null; ref?: string; attributes?: string } = {}): string {
  return (
    `id: ${id}\n${fields.ref ? `ref: ${fields.ref}\n` : ''}name: ${fields.name ?? 'Pushed by hand'}\ndesc: null\nstate: ACTIVE\n` +
    `typeId: ${fields.typeId === undefined ? ids.container : (fields.typeId ?? 'null')}\nlinksTo: []\nattributes: ${fields.attributes ?? '[]'}\n`
  );
}

test.before(async () => {
  s = await TestServer.start();
  const tag = (await s.post(`${API}/tag`, [{ name: 'Tagged', color: 'blue' }])).body[0];
  const attribute = (await s.put(`${API}/attribute`, [{ name: 'Owner', type: 'STRING' }])).body[0];
  const component = (
    await s.post(`${API}/component`, [{ name: 'Payments', typeSlug: 'container', attributes: [{ id: attribute.id, value: 'team a' }] }])
  ).body[0];
  const diagram = (await s.post(`${API}/diagram`, [{ name: 'Overview', level: 'C2', componentInstances: [{ component: component.id }] }]))
    .body[0];
  ids = { tag: tag.id, attribute: attribute.id, component: component.id, diagram: diagram.id, container: component.typeId };
  good = await s.head();
});

test.after.always(async () => {
  await s?.close();
  for (const dir of clones.values()) await rm(dir, { recursive: true, force: true });
});

const READS = () => [
  '/tag',
  '/attribute',
  '/attributes',
  '/component',
  '/diagram',
  '/model',
  '/type',
  '/types',
  `/tag/${ids.tag}`,
  `/attribute/${ids.attribute}`,
  `/component/${ids.component}`,
  `/diagram/${ids.diagram}`,
  `/type/${ids.container}`,
];
const WRITES: Array<[string, string, unknown]> = [
  ['POST', '/tag', [{ name: 'new', color: 'red' }]],
  ['PUT', '/attribute', [{ name: 'new', type: 'STRING' }]],
  ['POST', '/attributes', [{ name: 'new', type: 'STRING' }]],
  ['PUT', '/component', [{ name: 'new' }]],
  ['POST', '/component', [{ name: 'new' }]],
  ['POST', '/diagram', [{ name: 'new', level: 'C1' }]],
  ['POST', '/model', { components: [{ name: 'new' }] }],
  ['POST', '/tag', []], // even a write that would change nothing
];

/**
 * With main at `commit`: every write answers 503 with exactly
 * `The model in git is invalid at commit <commit>: <file>: <problem>` (and what it concerns,
 * `context`, in C4store-Error-Context) and no write commits; every read serves the last valid
 * commit with that text (the context in parentheses after it) in a `Warning` header; the valid
 * history and /healthz are still served, and all of it is cheap.
 */
async function assertRefused(
  t: ExecutionContext,
  commit: string,
  file: string,
  problem: string | RegExp,
  full = true,
  context?: string,
): Promise<void> {
  const prefix = `The model in git is invalid at commit ${commit}: ${file}: `;
  const check = (error: unknown, what: string) => {
    t.is(typeof error, 'string', what);
    t.true((error as string).startsWith(prefix), `${what}: ${error}`);
    const rest = (error as string).slice(prefix.length);
    if (typeof problem === 'string') t.is(rest, problem, what);
    else t.regex(rest, problem, what);
  };
  const count = await s.commitCount();
  const warned = (reply: { status: number; headers: Headers; text: string }, what: string) => {
    t.is(reply.status, 200, `${what}: ${reply.text.slice(0, 200)}`);
    t.is(reply.headers.get('etag'), `"${good}"`, `${what} serves the last valid commit`);
    const warning = /^199 c4store "(.*)"$/.exec(reply.headers.get('warning') ?? '');
    t.truthy(warning, `${what}: Warning ${reply.headers.get('warning')}`);
    const text = warning![1];
    t.true(text.startsWith(prefix.replace(/[^\x20-\x7e]+/g, ' ').replace(/["\\]/g, "'")), `${what}: ${text}`);
    t.true(text.endsWith(`Serving commit ${good}, the last valid one.`), `${what}: ${text}`);
    if (context !== undefined) t.true(text.endsWith(` (${context}) Serving commit ${good}, the last valid one.`), `${what}: ${text}`);
  };
  for (const path of full ? READS() : ['/model', '/component', `/component/${ids.component}`]) {
    warned(await s.get(API + path), `GET ${path}`);
    warned(await s.get(API + path, { yaml: true }), `GET ${path} (YAML)`);
    t.is((await s.request('HEAD', API + path)).status, 200, `HEAD ${path}`);
    // The history before it is still the valid model it was.
    t.is((await s.get(`${API + path}?at=${good}`)).status, 200, `GET ${path}?at=<last good commit>`);
  }
  for (const [method, path, body] of full ? WRITES : WRITES.slice(0, 1)) {
    const reply = await s.request(method, API + path, { body });
    t.is(reply.status, 503, `${method} ${path}: ${reply.text.slice(0, 200)}`);
    check(reply.body.error, `${method} ${path}`);
    t.is(errorContext(reply), context, `${method} ${path}: what it concerns`);
  }
  t.is(await s.head(), commit, 'no write moved main');
  t.is(await s.commitCount(), count);
  const started = performance.now();
  t.is((await s.get('/healthz', { key: null })).status, 200);
  for (let i = 0; i < (full ? 20 : 0); i++) await s.get(`${API}/model`);
  t.true(performance.now() - started < 2000, `20 warned reads in ${Math.round(performance.now() - started)} ms`);
  t.deepEqual(
    s.logs.filter((line) => isErrorLine(line)),
    [],
    'nothing unexpected, nothing logged as a crash',
  );
}

/** main valid again at `commit`: reads serve it, a write commits on top of it. */
async function assertServing(t: ExecutionContext, commit: string, full = true): Promise<any> {
  t.is(await s.head(), commit);
  for (const path of full ? READS() : ['/model']) t.is((await s.get(API + path)).status, 200, `GET ${path}`);
  const model = await s.get(`${API}/model`);
  t.is(model.headers.get('etag'), `"${commit}"`);
  const write = await s.post(`${API}/tag`, [{ name: `after ${commit.slice(0, 7)}`, color: 'green' }]);
  t.is(write.status, 200, write.text);
  t.is((await s.git('rev-parse', 'main^')).trim(), commit, 'the write is a commit on top of the fix');
  good = await s.head();
  return model.body;
}

test.serial(
  'an invalid YAML file pushed into components/: refused naming the file and the parser problem, served again after a fix',
  async (t) => {
    const path = componentPath(NEW_ID);
    const bad = await push(s.gitdir, { [path]: 'id: 01zzzzzzzzzzzzzzzzzzzzzzzz\nname: [unclosed\nstate: ACTIVE\n' });
    await assertRefused(
      t,
      bad,
      path,
      /^Flow sequence in block collection must be sufficiently indented and end with a \] at line 3, column 1:\n/,
    );
    const fixed = await push(s.gitdir, { [path]: componentFile(NEW_ID, { name: 'Fixed by hand' }) }, 'Fix the YAML');
    const model = await assertServing(t, fixed);
    t.deepEqual(
      model.components.map((c: { name: string }) => c.name),
      ['Payments', 'Fixed by hand'],
    );
  },
);

test.serial(
  'a component whose typeId names no type (a dangling reference, committed with plumbing): refused, then served once fixed',
  async (t) => {
    const path = componentPath(NEW_ID.replace('zz', 'yy'));
    const bad = await plumb(s.gitdir, path, componentFile(NEW_ID.replace('zz', 'yy'), { typeId: UNKNOWN_ID }));
    await assertRefused(t, bad, path, `Type with id '${UNKNOWN_ID}' does not exist.`);
    const fixed = await push(s.gitdir, { [path]: componentFile(NEW_ID.replace('zz', 'yy'), { name: 'Typed now' }) }, 'Fix the type');
    const model = await assertServing(t, fixed);
    t.is(model.components.find((c: { name: string }) => c.name === 'Typed now')?.typeSlug, 'container');
  },
);

test.serial(
  'a main whose commit lost an object (a power cut in the default mode): the last valid commit served with a warning, writes 503',
  async (t) => {
    const path = componentPath(NEW_ID.replace('zz', 'ww'));
    const content = componentFile(NEW_ID.replace('zz', 'ww'), { name: 'Lost in a power cut' });
    const blob = await git(s.gitdir, ['hash-object', '--stdin'], content);
    const bad = await plumb(s.gitdir, path, content);
    await rm(join(s.gitdir, 'objects', blob.slice(0, 2), blob.slice(2)));
    const problem = `The model in git is invalid at commit ${bad}: Git object ${blob} does not exist.`;
    const read = await s.get(`${API}/model`);
    t.is(read.status, 200, read.text.slice(0, 200));
    t.is(read.headers.get('etag'), `"${good}"`);
    t.regex(
      read.headers.get('warning') ?? '',
      new RegExp(`^199 c4store "${problem.replace(/[.]/g, '\\.')} Serving commit ${good}, the last valid one\\."$`),
    );
    const write = await s.post(`${API}/tag`, [{ name: 'new', color: 'red' }]);
    t.is(write.status, 503);
    t.deepEqual(write.body, { error: problem });
    t.is(await s.head(), bad, 'no write moved main');
    t.deepEqual(
      s.logs.filter((line) => isErrorLine(line)),
      [],
    );
    // Put right by pointing main back at the last valid commit.
    await git(s.gitdir, ['update-ref', 'refs/heads/main', good, bad]);
    await assertServing(t, good);
  },
);

test.serial('a refs/heads/main holding no object id: 503 saying so, reads and writes alike; put right, served again', async (t) => {
  const refFile = join(s.gitdir, 'refs', 'heads', 'main');
  const tip = await s.head();
  // packed-refs may hold main instead of a loose file: the loose one written here wins over it.
  await writeFile(refFile, 'not a commit\n');
  const problem = { error: 'The model in git is invalid: refs/heads/main does not hold a commit id.' };
  for (const reply of [await s.get(`${API}/model`), await s.post(`${API}/tag`, [{ name: 'new', color: 'red' }])]) {
    t.is(reply.status, 503);
    t.deepEqual(reply.body, problem);
  }
  t.deepEqual(
    s.logs.filter((line) => isErrorLine(line)),
    [],
    'answered, not crashed',
  );
  await writeFile(refFile, `${tip}\n`);
  await assertServing(t, tip);
});

test.serial('a file whose id differs from its file name: refused, then served once fixed', async (t) => {
  const other = NEW_ID.replace('zz', 'xx');
  const path = componentPath(other);
  const bad = await push(s.gitdir, { [path]: componentFile(ids.component, { name: 'Copy of Payments' }) });
  await assertRefused(t, bad, path, `the id inside (${ids.component}) differs from the file name`);
  const fixed = await push(s.gitdir, { [path]: componentFile(other, { name: 'No longer a copy' }) }, 'Fix the id');
  await assertServing(t, fixed);
  t.is((await s.get(`${API}/component/${other}`)).body.name, 'No longer a copy');
});

test.serial('more ways to break main: each named exactly, each recovered from', async (t) => {
  const id = NEW_ID.replace('zz', 'ww');
  // [what, files, the file named, the problem, what it concerns (C4store-Error-Context)]
  const cases: Array<[string, Record<string, string | null>, string, string | RegExp, string?]> = [
    [
      'a file name that is no id',
      { 'components/Payments!.yaml': componentFile(id) },
      'components/Payments!.yaml',
      'the file name is not a valid id',
    ],
    // `payments` is a valid (client-chosen) id; flat beside the shards, it is in the wrong place.
    [
      'a file in the wrong place',
      { 'components/payments.yaml': componentFile(id) },
      'components/payments.yaml',
      'the file is in the wrong place: it belongs at components/df/payments.yaml',
    ],
    ['organization.yaml deleted', { 'organization.yaml': null }, 'organization.yaml', 'missing'],
    ['a file that is not a mapping', { [componentPath(id)]: '- just\n- a list\n' }, componentPath(id), 'expected a mapping'],
    ['an empty file', { [`tags/${id}.yaml`]: '' }, `tags/${id}.yaml`, 'expected a mapping'],
    ['a required field missing', { [`tags/${id}.yaml`]: `id: ${id}\nname: x\ndesc: null\n` }, `tags/${id}.yaml`, 'color: Required'],
    [
      'a value of the wrong type',
      { [`tags/${id}.yaml`]: `id: ${id}\nname: [x]\ndesc: null\ncolor: red\n` },
      `tags/${id}.yaml`,
      'name: Expected string, received array',
    ],
    [
      'an attribute value naming no attribute',
      { [componentPath(id)]: componentFile(id, { attributes: `\n  - id: ${UNKNOWN_ID}\n    value: x` }) },
      componentPath(id),
      `Attribute with id '${UNKNOWN_ID}' does not exist.`,
    ],
    [
      'an attribute value of the wrong kind',
      { [componentPath(id)]: componentFile(id, { attributes: `\n  - id: ${'ATTRIBUTE'}\n    value: 12` }) },
      componentPath(id),
      `Value for STRING attribute 'ATTRIBUTE' must be a string.`,
      "attribute 'Owner'",
    ],
    [
      'a diagram instance of a missing component',
      {
        [diagramPath(id)]:
          `id: ${id}\nname: d\ndesc: null\nstate: DRAFT\nlevel: C1\ntags: []\ncomponentInstances:\n  - id: ${UNKNOWN_ID}\n    component: ${NEW_ID.replace('zz', 'vv')}\n    placeholder: ""\n    isContainer: false\n    parent: null\n    position: { x: 0, y: 0 }\n    width: 10\n    height: 5\ntextareas: []\nrelations: []\n`,
      },
      diagramPath(id),
      `Component with id '${NEW_ID.replace('zz', 'vv')}' does not exist.`,
    ],
    [
      'one ref on two components',
      {
        [componentPath(id)]: componentFile(id, { ref: 'twice' }),
        [componentPath(NEW_ID.replace('zz', 'rr'))]: componentFile(NEW_ID.replace('zz', 'rr'), { ref: 'twice' }),
      },
      componentPath(id),
      "Ref 'twice' is used more than once.",
    ],
    [
      'a size out of range',
      {
        [diagramPath(id)]:
          `id: ${id}\nname: d\ndesc: null\nstate: DRAFT\nlevel: C1\ntags: []\ncomponentInstances:\n  - id: ${UNKNOWN_ID}\n    component: null\n    placeholder: ""\n    isContainer: false\n    parent: null\n    position: { x: 0, y: 0 }\n    width: 1000\n    height: 5\ntextareas: []\nrelations: []\n`,
      },
      diagramPath(id),
      'componentInstances.0.width: Number must be less than or equal to 100',
    ],
  ];
  for (const [what, files, file, problem, context] of cases) {
    const before = await s.head();
    const resolved = Object.fromEntries(Object.entries(files).map(([p, c]) => [p, c?.replaceAll('ATTRIBUTE', ids.attribute) ?? null]));
    const bad = await push(s.gitdir, resolved, `Break: ${what}`);
    await assertRefused(
      t,
      bad,
      file,
      typeof problem === 'string' ? problem.replaceAll('ATTRIBUTE', ids.attribute) : problem,
      false,
      context,
    );
    // The fix: git revert, as one would.
    const reverted = await revert(s.gitdir);
    t.is((await s.git('rev-parse', `${reverted}^{tree}`)).trim(), (await s.git('rev-parse', `${before}^{tree}`)).trim(), what);
    await assertServing(t, reverted, false);
  }
  const served = await s.get(`${API}/model`);
  t.is(served.status, 200);
  t.is((await s.get('/healthz', { key: null })).status, 200);
});

test.serial('files c4store does not own (a README, other folders) are left alone and do not break anything', async (t) => {
  const pushed = await push(s.gitdir, {
    'README.md': '# Our architecture\n',
    'docs/notes.txt': 'notes',
    'components/sub/deeper.yaml': 'not: [ours',
  });
  await assertServing(t, pushed);
  t.true((await s.git('ls-tree', '-r', '--name-only', 'main')).includes('README.md'), "the README survives the service's own commits");
});

test.serial('a YAML alias bomb in a file: writes answer 503 naming the file and the problem', async (t) => {
  const id = NEW_ID.replace('zz', 'ss');
  const levels = 'abcdefghij'.split('');
  const bomb = [
    `${levels[0]}: &${levels[0]} [x, x, x, x, x, x, x, x, x]`,
    ...levels.slice(1).map((l, i) => `${l}: &${l} [${Array(9).fill(`*${levels[i]}`).join(', ')}]`),
  ].join('\n');
  const bad = await push(s.gitdir, { [componentPath(id)]: bomb });
  try {
    const reply = await s.post(`${API}/tag`, []);
    t.is(reply.status, 503, reply.text);
    t.regex(reply.body.error, new RegExp(`^The model in git is invalid at commit ${bad}: ${componentPath(id)}: Excessive alias count`));
  } finally {
    good = await push(s.gitdir, { [componentPath(id)]: null }, 'Remove the bomb');
  }
});

test.serial('an enum value out of its set names the field and the values allowed', async (t) => {
  const id = NEW_ID.replace('zz', 'tt');
  const bad = await push(s.gitdir, { [componentPath(id)]: componentFile(id).replace('state: ACTIVE', 'state: BOGUS') });
  try {
    const reply = await s.post(`${API}/tag`, []);
    t.is(reply.status, 503);
    t.is(
      reply.body.error,
      `The model in git is invalid at commit ${bad}: ${componentPath(id)}: state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'BOGUS'`,
    );
  } finally {
    good = await push(s.gitdir, { [componentPath(id)]: null }, 'Remove the bogus state');
  }
});

// Files nested beyond any model file are refused before a recursive parser sees them.

test('a file nested 100,000 levels deep is refused as such, without overflowing the stack (src/model/files.ts parseFile)', async (t) => {
  // Its own server process: a stack overflow inside the yaml package has been seen to abort a
  // process (body parsing); files are now refused by the nesting bound before the yaml package runs.
  const dataDir = await mkdtemp(join(tmpdir(), 'c4store-deep-'));
  const server = { stop: async () => {} };
  try {
    await new Orgs(dataDir).create('acme', { author: { name: 'test', email: 'test@test' } });
    const { key } = await new KeyStore(dataDir).create('acme');
    const gitdir = join(dataDir, 'orgs', 'acme.git');
    const path = componentPath(NEW_ID);
    const bad = await push(gitdir, { [path]: '- '.repeat(100_000) + 'x' });
    const child = await serveProcess(dataDir);
    server.stop = () => child.stop();
    for (let i = 0; i < 3; i++) {
      const read = await fetch(`${child.url}${API}/component`, { headers: { authorization: `Bearer ${key}` } });
      t.is(read.status, 200, 'reads are served from the commit before, found by walking back on start');
      t.regex(read.headers.get('warning') ?? '', /^199 c4store "The model in git is invalid at commit /);
      const response = await fetch(`${child.url}${API}/tag`, {
        method: 'POST',
        body: '[]',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      });
      t.is(response.status, 503);
      const { error } = (await response.json()) as { error: string };
      t.true(error.startsWith(`The model in git is invalid at commit ${bad}: ${path}: `), error.slice(0, 200));
      t.false(error.includes('Maximum call stack size exceeded'), error.slice(0, 200));
    }
    t.is(child.child.exitCode, null);
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});
