/**
 * The model endpoint over HTTP (external-api.md §2.8, §4.5; CONTRACT.md §1–§5): components and
 * diagrams in one request and one commit, refs used before their definition, YAML in and out,
 * all-or-nothing, the whole-model GET, a big model re-posted idempotently with its layout
 * kept, and the repository as an engineer sees it after `git clone`.
 */
import test from 'ava';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { resourcePath } from '../src/model/paths.js';
import { run, withServer } from './support/server.js';
import { accepted, bigModel, checkLayout, componentRef, diagramRef, refused } from './support/models.js';

const M = '/api/external/model';
const D = '/api/external/diagram';

/** A small model whose refs are all used before the element that defines them. */
function forwardModel() {
  return {
    diagrams: [
      {
        ref: 'context',
        name: 'Context',
        level: 'C1',
        relations: [{ fromComponentInstance: 'customer', toComponentInstance: 'shop', label: 'buys', linksTo: ['inside'] }],
        componentInstances: [
          { ref: 'customer', component: 'user' },
          { ref: 'shop', component: 'shop' },
        ],
      },
      {
        ref: 'inside',
        name: 'Inside the shop',
        level: 'C2',
        relations: [{ fromComponentInstance: 'web', toComponentInstance: 'db', label: 'SQL' }],
        componentInstances: [
          { ref: 'web', component: 'web', parent: 'boundary' },
          { ref: 'db', component: 'db', parentId: 'boundary' },
          { ref: 'boundary', component: 'shop', isContainer: true },
        ],
        textareas: [{ text: 'Everything inside the boundary is ours.' }],
      },
    ],
    components: [
      { ref: 'user', name: 'Customer', typeSlug: 'person', linksTo: ['shop'] },
      { ref: 'shop', name: 'Shop', typeSlug: 'software-system', linksTo: ['web', 'db'] },
      { ref: 'web', name: 'Web app', typeSlug: 'container', linksTo: ['db'] },
      { ref: 'db', name: 'Orders DB', typeSlug: 'database' },
    ],
  };
}

test('components and diagrams in one request and one commit, refs used before their definition', (t) =>
  withServer(async (s) => {
    const result = await accepted(t, s, 'POST', M, forwardModel());
    t.deepEqual(Object.keys(result), ['components', 'diagrams']);
    const ids = Object.fromEntries(result.components.map((c: any) => [c.ref, c.id]));
    t.deepEqual(
      result.components.map((c: any) => c.ref),
      ['user', 'shop', 'web', 'db'],
      'request order',
    );
    t.deepEqual(
      result.components.map((c: any) => c.linksTo),
      [[ids.shop], [ids.web, ids.db], [ids.db], []],
    );
    const [context, inside] = result.diagrams;
    t.deepEqual(
      context.componentInstances.map((i: any) => i.component),
      [ids.user, ids.shop],
    );
    t.deepEqual(context.relations[0].linksTo, [inside.id], 'relation linksTo names a diagram defined later');
    const instance = (d: any, ref: string) => d.componentInstances.find((i: any) => i.ref === ref).id;
    t.like(context.relations[0], { fromComponentInstance: instance(context, 'customer'), toComponentInstance: instance(context, 'shop') });
    t.like(inside.relations[0], { fromComponentInstance: instance(inside, 'web'), toComponentInstance: instance(inside, 'db') });
    t.is(inside.componentInstances[0].parent, instance(inside, 'boundary'), 'parent names a container defined later');
    checkLayout(t, context);
    checkLayout(t, inside);
    const message = await s.git('log', '-1', '--format=%B');
    t.true(message.startsWith('POST /api/external/model: create 6\n'), message);
    for (const c of result.components) t.true(message.includes(`create ${resourcePath('component', c.id)} (${c.name})`));
    for (const d of result.diagrams) t.true(message.includes(`create ${resourcePath('diagram', d.id)} (${d.name})`));
    // Served as returned, and an identical re-post changes nothing.
    const model = (await s.get(M)).body;
    t.deepEqual(model.components, result.components);
    t.deepEqual(model.diagrams, result.diagrams);
    t.deepEqual(await accepted(t, s, 'POST', M, forwardModel(), 0), result);
    // An empty model request is fine and changes nothing.
    t.deepEqual(await accepted(t, s, 'POST', M, {}, 0), { components: [], diagrams: [] });
  }));

test('YAML in and YAML out', (t) =>
  withServer(async (s) => {
    const head = await s.head();
    const reply = await s.post(M, forwardModel(), { yaml: true });
    t.is(reply.status, 200, reply.text);
    t.regex(reply.headers.get('content-type') ?? '', /^application\/yaml/);
    t.is((await s.git('rev-parse', 'main^')).trim(), head);
    const json = (await s.get(M)).body;
    t.deepEqual(reply.body.components, json.components);
    t.deepEqual(reply.body.diagrams, json.diagrams);
    const asYaml = await s.get(M, { headers: { accept: 'application/yaml' } });
    t.regex(asYaml.headers.get('content-type') ?? '', /^application\/yaml/);
    t.deepEqual(YAML.parse(asYaml.text), json);
    // The other YAML media types, and a re-post as YAML, change nothing.
    for (const type of ['application/x-yaml', 'text/yaml']) {
      await accepted(t, s, 'POST', M, undefined, 0, {
        raw: YAML.stringify(forwardModel()),
        headers: { 'content-type': type, accept: type },
      });
    }
    // Errors come back as YAML too.
    await refused(t, s, 'POST', M, { components: [{ ref: 'x' }] }, 400, 'Invalid JSON: components.0.name: Required', { yaml: true });
    const bad = await s.request('POST', M, {
      raw: 'components: [\n',
      headers: { 'content-type': 'application/yaml', accept: 'application/yaml' },
    });
    t.is(bad.status, 400);
    t.regex(bad.headers.get('content-type') ?? '', /^application\/yaml/);
    t.true(String(bad.body.error).startsWith('Invalid YAML: '), bad.text);
  }));

test('any error cancels the whole model request', (t) =>
  withServer(async (s) => {
    await accepted(t, s, 'POST', M, forwardModel());
    const broken = (change: (m: ReturnType<typeof forwardModel>) => void) => {
      const m = forwardModel();
      (m.components[0] as any).desc = 'changed, but must not be stored';
      m.components.push({ ref: 'extra', name: 'Extra' } as any);
      m.diagrams.push({ name: 'Extra diagram', level: 'C3' } as any);
      change(m);
      return m;
    };
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        (m.diagrams[1]!.componentInstances[0] as any).component = 'nobody';
      }),
      400,
      `Ref 'nobody' does not resolve to a component.`,
      { context: `element diagrams.1 'Inside the shop'` },
    );
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        m.diagrams[0]!.relations[0]!.toComponentInstance = 'ghost';
      }),
      400,
      `Component instance 'ghost' does not exist in this diagram.`,
      { context: `element diagrams.0 'Context'` },
    );
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        (m.diagrams[0]!.relations[0] as any).linksTo = ['nowhere'];
      }),
      400,
      `Ref 'nowhere' does not resolve to a diagram.`,
      { context: `element diagrams.0 'Context'` },
    );
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        m.components[2]!.linksTo = ['db', 'missing'];
      }),
      400,
      `Ref 'missing' does not resolve to a component.`,
      { context: `element components.2 'Web app'` },
    );
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        delete (m.components[1] as any).name;
        m.components[1]!.ref = 'new-ref';
      }),
      400,
      'Invalid JSON: components.1.name: Required',
    );
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        m.components[3]!.typeSlug = 'mainframe';
      }),
      400,
      `Type with slug 'mainframe' does not exist.`,
      { context: `element components.3 'Orders DB'` },
    );
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        (m.diagrams[1]!.componentInstances[2] as any).parent = 'web';
      }),
      400,
      `Container instance 'boundary' cannot have a parent.`,
      { context: `element diagrams.1 'Inside the shop'` },
    );
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        (m.diagrams[1]!.componentInstances[1] as any).width = 101;
      }),
      400,
      'Invalid JSON: diagrams.1.componentInstances.1.width: Number must be less than or equal to 100',
    );
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        (m.diagrams[0] as any).level = 'C0';
        (m.components[0] as any).state = 'NEW';
      }),
      400,
      `Invalid JSON: components.0.state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'NEW', ` +
        `diagrams.0.level: Invalid enum value. Expected 'C1' | 'C2' | 'C3' | 'C4', received 'C0'`,
    );
    await refused(
      t,
      s,
      'POST',
      M,
      broken((m) => {
        m.components.push({ ref: 'user', name: 'Twice' } as any);
      }),
      400,
      `Ref 'user' is used more than once.`,
    );
    await refused(t, s, 'POST', M, [forwardModel()], 400, 'Invalid JSON: Expected object, received array');
    await refused(t, s, 'POST', M, { components: {} }, 400, 'Invalid JSON: components: Expected array, received object');
  }));

test('GET /api/external/model returns {types, tags, attributes, components, diagrams}', (t) =>
  withServer(async (s) => {
    await accepted(t, s, 'POST', '/api/external/tag', [{ name: 'Core', color: 'blue' }]);
    await accepted(t, s, 'PUT', '/api/external/attribute', [{ name: 'Tier', type: 'LIST', list: ['a', 'b'] }]);
    await accepted(t, s, 'POST', M, forwardModel());
    const model = await s.get(M);
    t.is(model.status, 200);
    t.is(model.headers.get('etag'), `"${await s.head()}"`);
    t.deepEqual(Object.keys(model.body), ['types', 'tags', 'attributes', 'components', 'diagrams']);
    t.deepEqual(
      model.body.types.map((x: any) => x.slug),
      ['person', 'software-system', 'container', 'component', 'database', 'queue'],
    );
    for (const [field, path] of [
      ['types', 'type'],
      ['tags', 'tag'],
      ['attributes', 'attribute'],
      ['components', 'component'],
      ['diagrams', 'diagram'],
    ]) {
      t.deepEqual(model.body[field!], (await s.get(`/api/external/${path}`)).body, field);
    }
    t.is(model.body.components.length, 4);
    t.is(model.body.diagrams.length, 2);
  }));

test('a big model: posted as YAML, re-posted without change, laid out, and a hand-made position survives re-import', (t) =>
  withServer(async (s) => {
    const input = bigModel();
    t.is(input.components.length, 200);
    t.is(input.diagrams.length, 20);
    const commits = await s.commitCount();
    const first = await accepted(t, s, 'POST', M, input, 1, { yaml: true });
    t.is(first.components.length, 200);
    t.is(first.diagrams.length, 20);
    const componentIds = new Map<string, string>(first.components.map((c: any) => [c.ref, c.id]));
    const diagramIds = new Map<string, string>(first.diagrams.map((d: any) => [d.ref, d.id]));
    t.is(componentIds.size, 200);
    t.is(diagramIds.size, 20);
    t.deepEqual(first.components[5].linksTo, [componentIds.get(componentRef(4)), componentIds.get(componentRef(38))]);
    for (const [n, d] of first.diagrams.entries()) {
      const sent = input.diagrams[n]!;
      t.is(d.componentInstances.length, sent.componentInstances.length);
      t.is(d.relations.length, sent.relations.length);
      t.deepEqual(d.relations[0].linksTo, [diagramIds.get(diagramRef((n + 1) % 20))]);
      const box = d.componentInstances[0];
      t.true(box.isContainer);
      t.true(d.componentInstances.filter((i: any) => i.parent === box.id).length >= 3, `${d.ref} has a container with children`);
      checkLayout(t, d, d.ref);
    }

    // Re-posting the same YAML: one copy of everything, no new commit, the same answer.
    const second = await accepted(t, s, 'POST', M, input, 0, { yaml: true });
    t.deepEqual(second, first);
    const model = (await s.get(M)).body;
    t.is(model.components.length, 200);
    t.is(model.diagrams.length, 20);
    t.deepEqual(model.components, first.components);
    t.deepEqual(model.diagrams, first.diagrams);
    t.is(await s.commitCount(), commits + 1);
    const files = async (folder: string) => (await s.git('ls-tree', '-r', '--name-only', 'main', `${folder}/`)).trim().split('\n');
    t.is((await files('components')).length, 200, 'one file per component');
    t.is((await files('diagrams')).length, 20, 'one file per diagram');

    // Move one top-level instance of one diagram by hand.
    const diagram = (await s.get(`${D}/${diagramIds.get(diagramRef(7))}`)).body;
    const moved = diagram.componentInstances.find((i: any) => i.parent === null && !i.isContainer);
    const minX = Math.min(...diagram.componentInstances.map((i: any) => i.position.x));
    moved.position = { x: minX - 60, y: -30 };
    const [afterMove] = await accepted(t, s, 'POST', D, [diagram]);
    t.deepEqual(afterMove.componentInstances.find((i: any) => i.id === moved.id).position, moved.position);
    checkLayout(t, afterMove, 'after the move');

    // Re-import the model without positions: the hand-made position stays, nothing changes.
    const third = await accepted(t, s, 'POST', M, input, 0, { yaml: true });
    const kept = third.diagrams[7].componentInstances.find((i: any) => i.id === moved.id);
    t.deepEqual(kept.position, moved.position);
    t.deepEqual(third.diagrams[7], afterMove);
    for (const n of [0, 6, 8, 19]) t.deepEqual(third.diagrams[n], first.diagrams[n]);

    // ?layout=auto lays it out afresh: back where the first import put it.
    const fresh = await accepted(t, s, 'POST', `${M}?layout=auto`, input, 1, { yaml: true });
    t.deepEqual({ ...fresh.diagrams[7], apiContext: first.diagrams[7].apiContext }, first.diagrams[7]);
    t.not(fresh.diagrams[7].apiContext, undefined);
    t.is(await s.commitCount(), commits + 3);
  }));

test('git clone gives one YAML file per resource, equal to what the API serves; fsck is clean', (t) =>
  withServer(async (s) => {
    const tag = (await s.post('/api/external/tag', [{ name: 'Core', color: 'purple' }])).body[0];
    const [owner, tier] = (
      await s.put('/api/external/attribute', [
        { name: 'Owner', type: 'USERLIST' },
        { name: 'Tier', type: 'LIST', list: ['gold', 'silver'] },
      ])
    ).body;
    const input = bigModel({ components: 12, diagrams: 3, seed: 7 });
    input.components[0]!.attributes = [
      { id: owner.id, value: 'ada@example.com' },
      { id: tier.id, value: 'gold' },
    ];
    input.diagrams[0]!.tags = [{ id: tag.id }];
    await accepted(t, s, 'POST', M, input);
    // A second commit that changes one component, so that history shows up per file.
    const changed = await accepted(t, s, 'POST', '/api/external/component', [{ ...input.components[1], desc: 'edited later' }]);
    const api = (await s.get(M)).body;

    const dir = await mkdtemp(join(tmpdir(), 'c4store-clone-'));
    try {
      await run('git', ['clone', '--quiet', s.gitdir, join(dir, 'model')]);
      const root = join(dir, 'model');
      const git = async (...args: string[]) => (await run('git', ['-C', root, ...args])).stdout;
      t.is((await git('rev-parse', 'HEAD')).trim(), await s.head());
      t.is((await git('symbolic-ref', '--short', 'HEAD')).trim(), 'main');
      const list = async (folder: string) =>
        (await readdir(join(root, folder), { recursive: true })).filter((f) => f.endsWith('.yaml')).sort();
      const read = async (path: string) => YAML.parse(await readFile(join(root, path), 'utf8'));

      t.deepEqual((await readdir(root)).filter((f) => f !== '.git').sort(), [
        '.c4store',
        'attributes',
        'components',
        'diagrams',
        'organization.yaml',
        'tags',
        'types',
      ]);
      t.deepEqual(await read('organization.yaml'), { name: 'Acme', slug: 'acme', members: ['ada@example.com', 'linus@example.com'] });

      t.deepEqual(
        await list('components'),
        api.components.map((c: any) => resourcePath('component', c.id).slice('components/'.length)).sort(),
      );
      for (const c of api.components) {
        const file = await read(resourcePath('component', c.id));
        const { typeSlug, ...stored } = c;
        t.is(typeof typeSlug, 'string');
        t.deepEqual(file, stored, resourcePath('component', c.id));
        t.deepEqual(
          Object.keys(file),
          ['id', 'ref', 'name', 'desc', 'state', 'typeId', 'apiContext', 'linksTo', 'attributes'],
          'keys in the order of the field table',
        );
      }
      t.deepEqual(api.components[0].attributes, [
        { id: owner.id, value: 'ada@example.com' },
        { id: tier.id, value: 'gold' },
      ]);

      t.deepEqual(await list('diagrams'), api.diagrams.map((d: any) => resourcePath('diagram', d.id).slice('diagrams/'.length)).sort());
      for (const d of api.diagrams) {
        const file = await read(resourcePath('diagram', d.id));
        const { url, tags, ...rest } = d;
        t.is(url, `${s.url}/orgs/${s.slug}/diagrams/${d.id}`);
        t.deepEqual(file, { ...rest, tags: tags.map((x: any) => x.id) }, resourcePath('diagram', d.id));
        t.deepEqual(Object.keys(file), [
          'id',
          'ref',
          'name',
          'desc',
          'state',
          'level',
          'tags',
          'componentInstances',
          'textareas',
          'relations',
          'apiContext',
        ]);
      }
      t.deepEqual(api.diagrams[0].tags, [tag]);
      t.deepEqual(await read(`tags/${tag.id}.yaml`), tag);
      t.deepEqual(await read(`attributes/${tier.id}.yaml`), tier);
      for (const type of api.types) t.deepEqual(await read(`types/${type.id}.yaml`), type);

      // History per file: the edited component has two commits, the others one.
      const history = async (path: string) => (await git('log', '--format=%s', '--', path)).trim().split('\n');
      t.deepEqual(await history(resourcePath('component', changed[0].id)), [
        'POST /api/external/component: update 1',
        'POST /api/external/model: create 15',
      ]);
      t.deepEqual(await history(resourcePath('component', api.components[2].id)), ['POST /api/external/model: create 15']);

      const fsck = await run('git', ['-C', root, 'fsck', '--full', '--strict']);
      t.is(fsck.stdout + fsck.stderr, '', 'the clone is clean');
      const bare = await run('git', ['--git-dir', s.gitdir, 'fsck', '--full', '--strict', '--no-dangling']);
      t.is(bare.stdout + bare.stderr, '', 'the served repository is clean');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }));
