import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { serialize } from '../src/model/files.js';
import { idFrom, newId } from '../src/model/ids.js';
import { classifyPath, DIRECTORIES, layoutOf, resourcePath, shardOf, type StoredKind } from '../src/model/paths.js';
import { pathsOfResource } from '../src/history/log.js';
import { readingOrder } from '../src/model/load.js';
import { Repo } from '../src/store/repo.js';
import { cli } from './support/process.js';
import { TestServer } from './support/server.js';

/**
 * The sharded layout (src/model/paths.ts): components/<shard>/<id>.yaml and
 * diagrams/<shard>/<id>.yaml. Repositories in the flat layout of before are read as they are,
 * moved in one commit with their history followable, and a file in the wrong place is refused.
 */

const API = '/api/external';
const author = { name: 'someone', email: 'someone@example.com' };
const KINDS = Object.keys(DIRECTORIES) as StoredKind[];

test('every kind of id maps to one portable path and back; components and diagrams spread evenly over 256 shards', (t) => {
  const ids = [newId(), idFrom(0, 0n), idFrom(2 ** 48 - 1, (1n << 80n) - 1n), '01jnjrh0m02c25ysw1gj6adcs3'];
  for (const kind of KINDS) {
    for (const id of ids) {
      const path = resourcePath(kind, id);
      const sharded = kind === 'component' || kind === 'diagram';
      t.is(path, sharded ? `${DIRECTORIES[kind]}/${shardOf(id)}/${id}.yaml` : `${DIRECTORIES[kind]}/${id}.yaml`);
      t.regex(path, /^[a-z]+\/([0-9a-f]{2}\/)?[0-9a-z]{26}\.yaml$/, 'lowercase ASCII only: the same on every file system');
      t.like(classifyPath(path), { kind, id, inSubdirectory: sharded });
    }
  }
  // The rule is the SHA-256 of the id, so it never changes and needs nothing but the id.
  t.is(shardOf('01jnjrh0m02c25ysw1gj6adcs3'), createHash('sha256').update('01jnjrh0m02c25ysw1gj6adcs3').digest('hex').slice(0, 2));
  // Client-chosen ids (^[a-z0-9][a-z0-9._-]{0,99}$) go through the same rule.
  for (const id of ['payment-api', 'a', 'x.y_z-1', '9'.repeat(100)]) t.regex(shardOf(id), /^[0-9a-f]{2}$/);
  // Generated ids share their time prefix; their shards must not cluster. 100,000 ids made in
  // one run: at 500,000 the largest shard would hold ~5 × this, under the 3,000 asked for.
  const counts = new Map<string, number>();
  let time = Date.now();
  for (let i = 0; i < 100_000; i++) {
    const shard = shardOf(newId((time += i % 7 === 0 ? 1 : 0)));
    counts.set(shard, (counts.get(shard) ?? 0) + 1);
  }
  t.is(counts.size, 256);
  t.true(Math.max(...counts.values()) < 500, `largest shard: ${Math.max(...counts.values())}`);
});

test('readingOrder hands a cold load its blobs in the order loadModel parses them: organization.yaml, then by kind and id', (t) => {
  const kinds = Object.keys(DIRECTORIES) as StoredKind[];
  // Generated ids, and chosen ones that are prefixes of each other ('-' sorts before '.yaml').
  const resources = kinds.flatMap((kind) => [
    ...Array.from({ length: 40 }, () => ({ kind, id: newId() })),
    { kind, id: `svc-${kind}` },
    { kind, id: `svc-${kind}-2` },
  ]);
  const files = new Map<string, string>();
  // Tree order: by path, where shards scatter ids; organization.yaml sorts among them.
  const entries: Array<[string, string]> = resources.map(({ kind, id }) => [resourcePath(kind, id), `${kind}:${id}`]);
  entries.push(['organization.yaml', 'organization'], ['.c4store/schemas/component.json', 'schema']);
  for (const [path, oid] of entries.sort(([a], [b]) => (a < b ? -1 : 1))) files.set(path, oid);
  const order = readingOrder(files);
  t.is(order[0], 'organization');
  const parsed = order.filter((oid) => oid !== 'organization' && oid !== 'schema');
  const byKindAndId = [...resources].sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.id < b.id ? -1 : 1));
  t.deepEqual(
    parsed,
    byKindAndId.map(({ kind, id }) => `${kind}:${id}`),
  );
  t.is(order.length, files.size, 'every blob, those of files c4store does not own too');
});

test('the layout of a tree: sharded as soon as one file is in a shard; flat before; other folders are not ours', (t) => {
  const id = newId();
  t.is(layoutOf(['organization.yaml', `components/${id}.yaml`, `tags/${id}.yaml`]), 'flat');
  t.is(layoutOf(['organization.yaml', resourcePath('component', id), `diagrams/${id}.yaml`]), 'sharded');
  t.is(layoutOf(['organization.yaml', `tags/${id}.yaml`]), 'sharded');
  t.is(classifyPath('components/sub/deeper.yaml'), null);
  t.is(classifyPath(`components/ab/cd/${id}.yaml`), null);
  t.like(classifyPath(`tags/ab/${id}.yaml`), { kind: 'tag', id, inSubdirectory: true });
});

interface FlatHistory {
  ids: { a: string; b: string; diagram: string };
  /** Flat commits: a, b and the diagram created; then a updated. */
  created: string;
  updated: string;
}

/** Commits a model in the flat layout of before sharding into the server's repository, as an old c4store wrote it. */
async function writeFlatHistory(s: TestServer): Promise<FlatHistory> {
  const repo = new Repo(s.gitdir);
  const ids = { a: newId(), b: newId(), diagram: newId() };
  const component = (id: string, name: string) =>
    serialize('component', { id, name, desc: null, state: 'ACTIVE', typeId: null, linksTo: [], attributes: [], apiContext: 'old' });
  const diagram = serialize('diagram', {
    id: ids.diagram,
    name: 'Old diagram',
    desc: null,
    state: 'DRAFT',
    level: 'C1',
    tags: [],
    componentInstances: [],
    textareas: [],
    relations: [],
    apiContext: 'old',
  });
  const created = await repo.commit({
    parent: await s.head(),
    author,
    message: 'POST /api/external/model: create 3',
    changes: [
      { path: `components/${ids.a}.yaml`, content: component(ids.a, 'A') },
      { path: `components/${ids.b}.yaml`, content: component(ids.b, 'B') },
      { path: `diagrams/${ids.diagram}.yaml`, content: diagram },
    ],
  });
  const updated = await repo.commit({
    parent: created,
    author,
    message: 'PUT /api/external/component: update 1',
    changes: [{ path: `components/${ids.a}.yaml`, content: component(ids.a, 'A, renamed') }],
  });
  return { ids, created, updated };
}

async function names(s: TestServer, query = ''): Promise<string[]> {
  const reply = await s.get(`${API}/component${query}`);
  if (reply.status !== 200) throw new Error(`${reply.status} ${reply.text}`);
  return reply.body.map((c: { name: string }) => c.name);
}

/** `git log --follow` of a resource's sharded path: every commit that touched it, under either path. */
async function followed(s: TestServer, kind: StoredKind, id: string): Promise<string[]> {
  return (await s.git('log', '--follow', '--format=%H', '--', resourcePath(kind, id))).trim().split('\n');
}

async function checkMoved(t: ExecutionContext, s: TestServer, history: FlatHistory, move: string): Promise<void> {
  const { ids } = history;
  t.is((await s.git('rev-parse', `${move}^`)).trim(), history.updated, 'the move is one commit on top of the old history');
  const renames = (await s.git('diff', '--name-status', '-M', history.updated, move)).trim().split('\n').sort();
  t.deepEqual(
    renames,
    [
      `R100\tcomponents/${ids.a}.yaml\t${resourcePath('component', ids.a)}`,
      `R100\tcomponents/${ids.b}.yaml\t${resourcePath('component', ids.b)}`,
      `R100\tdiagrams/${ids.diagram}.yaml\t${resourcePath('diagram', ids.diagram)}`,
    ].sort(),
    'only renames, contents unchanged',
  );
  t.deepEqual(await followed(s, 'component', ids.a), [move, history.updated, history.created]);
  t.deepEqual(await followed(s, 'diagram', ids.diagram), [move, history.created]);
  t.regex((await s.git('log', '-1', '--format=%s', move)).trim(), /^Move components and diagrams to the sharded layout: move 3$/);
  await s.git('fsck', '--strict', '--no-dangling');
}

test.serial(
  'a flat repository is served as it is (also ?at= its old commits), and `c4store upgrade` moves it in one commit, history followable',
  async (t) => {
    const s = await TestServer.start();
    try {
      const history = await writeFlatHistory(s);
      t.deepEqual(await names(s), ['A, renamed', 'B']);
      t.deepEqual(await names(s, `?at=${history.created}`), ['A', 'B']);
      const before = (await s.get(`${API}/model`)).body;

      const output = await cli('upgrade', s.slug, '--data', s.dataDir);
      // The move; then every file with its editor schema line, which these files already have
      // (the fixture writes them as the service does), so no second commit.
      const move = await s.head();
      t.regex((await s.git('log', '-1', '--format=%s')).trim(), /^Move components and diagrams to the sharded layout/);
      const [moved, schemas] = output.trim().split('\n');
      t.is(moved, `moved 3 files of '${s.slug}' to the sharded layout in commit ${move}`);
      t.is(schemas, `'${s.slug}' has its editor schemas in .c4store/schemas/ and a schema line in every file (commit ${await s.head()})`);
      await checkMoved(t, s, history, move);
      t.deepEqual((await s.get(`${API}/model`)).body, before, 'the same model');
      t.deepEqual(await names(s, `?at=${history.created}`), ['A', 'B'], 'old commits are still read in their own layout');

      const upgraded = await s.head();
      t.is(
        (await cli('upgrade', s.slug, '--data', s.dataDir)).trim().split('\n')[0],
        `'${s.slug}' already uses the sharded layout (commit ${upgraded})`,
      );
      t.is(await s.head(), upgraded, 'a second upgrade changes nothing and makes no commit');
    } finally {
      await s.close();
    }
  },
);

test.serial(
  'the first accepted write to a flat repository moves it first, in a commit of its own, then writes in the sharded layout',
  async (t) => {
    const s = await TestServer.start();
    try {
      const history = await writeFlatHistory(s);
      await names(s);
      const refused = await s.post(`${API}/component`, [{ name: 'D', typeSlug: 'no-such-type' }]);
      t.is(refused.status, 400, refused.text);
      t.is(await s.head(), history.updated, 'a refused write moves nothing');
      const reply = await s.post(`${API}/component`, [{ name: 'C' }]);
      t.is(reply.status, 200, reply.text);
      const write = await s.head();
      const move = (await s.git('rev-parse', `${write}^`)).trim();
      await checkMoved(t, s, history, move);
      t.deepEqual((await s.git('diff', '--name-only', move, write)).trim(), resourcePath('component', reply.body[0].id));
      t.deepEqual(await names(s), ['A, renamed', 'B', 'C']);
    } finally {
      await s.close();
    }
  },
);

test.serial('a file in the wrong place is refused naming the right path: flat in a sharded tree, or in the wrong shard', async (t) => {
  const s = await TestServer.start();
  try {
    t.is((await s.post(`${API}/component`, [{ name: 'Sharded' }])).status, 200);
    const good = await s.head();
    const repo = new Repo(s.gitdir);
    const id = newId();
    const file = serialize('component', { id, name: 'Misplaced', desc: null, state: 'ACTIVE', typeId: null, linksTo: [], attributes: [] });
    const wrongShard = shardOf(id) === '00' ? '01' : '00';
    for (const path of [`components/${id}.yaml`, `components/${wrongShard}/${id}.yaml`, `tags/${shardOf(id)}/${id}.yaml`]) {
      const bad = await repo.commit({ parent: await s.head(), author, message: 'misplaced', changes: [{ path, content: file }] });
      const right = path.startsWith('tags/') ? `tags/${id}.yaml` : resourcePath('component', id);
      // Writes are refused naming the file and the right path; reads serve the last valid commit with that warning.
      const reply = await s.post(`${API}/tag`, []);
      t.is(reply.status, 503, path);
      const problem = `The model in git is invalid at commit ${bad}: ${path}: the file is in the wrong place: it belongs at ${right}`;
      t.is(reply.body.error, problem);
      t.true((await s.get(`${API}/component`)).headers.get('warning')?.includes(problem), path);
      const reverted = await repo.commit({ parent: bad, author, message: 'revert', changes: [{ path, content: null }] });
      t.is((await s.git('rev-parse', `${reverted}^{tree}`)).trim(), (await s.git('rev-parse', `${good}^{tree}`)).trim());
      t.is((await s.get(`${API}/component`)).status, 200);
    }
  } finally {
    await s.close();
  }
});

test.serial(
  'the history of one resource across the layout move, a rename and a delete is what git answers for all its paths at once',
  async (t) => {
    const s = await TestServer.start();
    try {
      const history = await writeFlatHistory(s);
      const { a, b } = history.ids;
      t.is((await s.post(`${API}/component`, [{ name: 'C' }])).status, 200, 'moves the repository, then writes');
      t.is((await s.post(`${API}/component`, [{ id: a, name: 'A, renamed again' }])).status, 200);
      t.is((await s.request('DELETE', `${API}/components/${a}`)).status, 200);
      // Without a commit graph one git log over every path; with one (written after packing), one per path.
      for (const [graph, id, expectedActions] of [
        [false, a, ['delete', 'update', 'move', 'update', 'create']],
        [false, b, ['move', 'create']],
        [true, a, ['delete', 'update', 'move', 'update', 'create']],
        [true, b, ['move', 'create']],
      ] as const) {
        if (graph) await s.git('commit-graph', 'write', '--reachable', '--changed-paths');
        // One git log over every path the resource can have had: slow on long histories, but the reference.
        const all = pathsOfResource(id);
        const reference = (await s.git('log', '-M', '--format=%H', 'refs/heads/main', '--', ...all)).trim().split('\n');
        const reply = await s.get(`${API}/history?resource=${id}`);
        t.is(reply.status, 200);
        t.deepEqual(
          reply.body.map((entry: { id: string }) => entry.id),
          reference,
        );
        t.deepEqual(
          reply.body.map((entry: { resources: { id: string; action: string }[] }) => entry.resources.find((r) => r.id === id)?.action),
          expectedActions,
        );
        // Paging by `before` gives the same commits, one at a time.
        const paged: string[] = [];
        let before = '';
        for (;;) {
          const page = await s.get(`${API}/history?resource=${id}&limit=1${before}`);
          if (page.body.length === 0) break;
          paged.push(page.body[0].id);
          before = `&before=${page.body[0].id}`;
        }
        t.deepEqual(paged, reference);
      }
    } finally {
      await s.close();
    }
  },
);
