/**
 * The current form of the API (issue 11) over real HTTP: every endpoint, each shape alias and
 * each error. Acknowledged writes are one commit each, refusals none (support/current.ts).
 */
import test from 'ava';
import { type TestServer, withServer } from './support/server.js';
import { API, lastCommitFiles, lastCommitMessage, no, ok } from './support/current.js';
import { resourcePath } from '../src/model/files.js';
import { checkRequestsAgainstOpenApi } from './support/requests.js';

checkRequestsAgainstOpenApi();

async function typeId(s: TestServer, slug: string): Promise<string> {
  return (await s.get(`${API}/types`)).body.find((x: any) => x.slug === slug).id;
}

const RULE =
  "an id is 1 to 100 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit, without '..' and not ending in '.'";

test('client-chosen ids: the rule, uniqueness across the organization, generated ids otherwise', (t) =>
  withServer(async (s) => {
    for (const id of ['Payment', '-x', 'a..b', 'a.', 'a/b', 'a b', 'x'.repeat(101), '', 'ä']) {
      await no(t, s, 'POST', `${API}/components`, { id, name: 'x' }, 400, `Invalid id '${id}': ${RULE}.`);
    }
    await no(
      t,
      s,
      'POST',
      `${API}/components`,
      { id: 'upsert-batch', name: 'x' },
      400,
      `Invalid id 'upsert-batch': ${RULE}; 'upsert-batch' is reserved.`,
    );
    for (const id of ['con', 'nul.x', 'com1', 'lpt9.yaml']) {
      await no(
        t,
        s,
        'POST',
        `${API}/tags`,
        { id, name: 'x', color: 'red' },
        400,
        `Invalid id '${id}': '${id.split('.')[0]}' names a device on Windows, so no clone there could hold its file.`,
      );
    }
    await ok(t, s, 'POST', `${API}/tags`, { id: 'console', name: 'Console', color: 'red' }, { status: 201 });
    await no(t, s, 'POST', `${API}/components`, { id: 7, name: 'x' }, 400, 'Invalid JSON: id: Expected string, received number');
    const made = await ok(t, s, 'POST', `${API}/components`, { id: 'a.b_c-9', name: 'Odd but fine' }, { status: 201 });
    t.is(made.id, 'a.b_c-9');
    await no(t, s, 'POST', `${API}/components`, { id: 'a.b_c-9', name: 'again' }, 409, "Component with id 'a.b_c-9' already exists.");
    // Unique across kinds: a tag may not take a component's id.
    await no(
      t,
      s,
      'POST',
      `${API}/tags`,
      { id: 'a.b_c-9', name: 't', color: 'red' },
      409,
      "Tag with id 'a.b_c-9' already exists: the component 'a.b_c-9' has this id, and ids are unique across the organization.",
    );
    // Without an id, one is generated (26 characters, creation order).
    const generated = await ok(t, s, 'POST', `${API}/components`, { name: 'Generated' }, { status: 201 });
    t.regex(generated.id, /^[0-9a-z]{26}$/);
    // A ref already held is a conflict on create.
    await ok(t, s, 'POST', `${API}/components`, { ref: 'gw', name: 'Gateway' }, { status: 201 });
    await no(
      t,
      s,
      'POST',
      `${API}/components`,
      { ref: 'gw', name: 'Other' },
      409,
      /^Component with ref 'gw' already exists \(id '[0-9a-z]{26}'\)\.$/,
    );
    // The stored file is named by the client's id, and the repository reloads from it.
    t.true((await s.git('ls-tree', '-r', '--name-only', 'main')).split('\n').includes(resourcePath('component', 'a.b_c-9')));
    const fsck = await s.git('fsck', '--strict');
    t.is(fsck.trim(), '');
  }));

test('a reloaded repository serves client-chosen ids (read back from git, not memory)', async (t) => {
  const { TestServer } = await import('./support/server.js');
  const s = await TestServer.start();
  try {
    await ok(t, s, 'POST', `${API}/components`, { id: 'kept', name: 'Kept', tags: [], inlineDesc: true }, { status: 201 });
    await s.server.close();
    const { startServer } = await import('../src/server.js');
    const again = await startServer({ dataDir: s.dataDir, port: 0, log: () => {} });
    try {
      const reply = await fetch(`${again.url}${API}/components/kept`, { headers: { authorization: `Bearer ${s.key}` } });
      t.is(reply.status, 200);
      t.like(await reply.json(), { id: 'kept', name: 'Kept', inlineDesc: true });
    } finally {
      await again.close();
    }
  } finally {
    const { rm } = await import('node:fs/promises');
    await rm(s.dataDir, { recursive: true, force: true });
  }
});

test('a commit lists its resources in one order, id order, whether written, reloaded or read ?at=', async (t) => {
  const { TestServer } = await import('./support/server.js');
  const s = await TestServer.start();
  try {
    for (const id of ['zeta', 'alpha']) await ok(t, s, 'POST', `${API}/components`, { id, name: id }, { status: 201 });
    await ok(t, s, 'POST', `${API}/components`, { name: 'generated' }, { status: 201 });
    await ok(t, s, 'POST', `${API}/components`, { id: 'mid', name: 'mid' }, { status: 201 });
    const written = await s.get(`${API}/components`);
    const ids = written.body.map((x: any) => x.id);
    t.deepEqual(
      ids,
      [...ids].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    t.deepEqual(ids.slice(1), ['alpha', 'mid', 'zeta']); // the generated id starts with a digit
    const seed = (await s.get('/api/external/component')).body.map((x: any) => x.id);
    t.deepEqual(seed, ids);
    await s.server.close();
    const { startServer } = await import('../src/server.js');
    const again = await startServer({ dataDir: s.dataDir, port: 0, log: () => {} });
    try {
      const get = async (path: string) => {
        const reply = await fetch(`${again.url}${path}`, { headers: { authorization: `Bearer ${s.key}` } });
        return { etag: reply.headers.get('etag'), ids: ((await reply.json()) as any[]).map((x) => x.id) };
      };
      const reloaded = await get(`${API}/components`);
      t.is(reloaded.etag, written.headers.get('etag'));
      t.deepEqual(reloaded.ids, ids, 'one commit, one ETag, one order');
      const commit = JSON.parse(reloaded.etag!);
      t.deepEqual((await get(`${API}/components?at=${commit}`)).ids, ids);
    } finally {
      await again.close();
    }
  } finally {
    await s.server.close().catch(() => {}); // closed already, unless an assertion above failed
    const { rm } = await import('node:fs/promises');
    await rm(s.dataDir, { recursive: true, force: true });
  }
});

test('GET list, GET by id or by ref, paging, ?at=, YAML on the plural paths', (t) =>
  withServer(async (s) => {
    const first = await ok(t, s, 'POST', `${API}/components`, { id: 'one', ref: 'first', name: 'One' }, { status: 201 });
    const atOne = await s.head();
    await ok(t, s, 'POST', `${API}/components`, { id: 'two', name: 'Two' }, { status: 201 });
    const list = await s.get(`${API}/components`);
    t.deepEqual(
      list.body.map((c: any) => c.id),
      ['one', 'two'],
    );
    t.deepEqual((await s.get(`${API}/components/first`)).body, first);
    t.deepEqual((await s.get(`${API}/components/one`)).body, first);
    const missing = await s.get(`${API}/components/nothing`);
    t.is(missing.status, 404);
    t.deepEqual(missing.body, { error: "Component with id 'nothing' does not exist." });
    const page = await s.get(`${API}/components?limit=1`);
    t.deepEqual(
      page.body.map((c: any) => c.id),
      ['one'],
    );
    t.is(page.headers.get('link'), '</api/external/components?limit=1&cursor=one>; rel="next"');
    t.deepEqual(
      (await s.get(`${API}/components?at=${atOne}`)).body.map((c: any) => c.id),
      ['one'],
    );
    const yaml = await s.get(`${API}/components/one`, { yaml: true });
    t.regex(yaml.headers.get('content-type') ?? '', /yaml/);
    t.deepEqual(yaml.body, first);
    // The seed's list of the same components keeps its own shape (no inlineDesc, tags).
    const seed = (await s.get(`${API}/component`)).body[0];
    t.false('inlineDesc' in seed);
    t.false('tags' in seed);
    // Both key headers work.
    t.is((await s.get(`${API}/components`, { key: null, headers: { 'x-api-key': s.key } })).status, 200);
    t.is((await s.get(`${API}/components`, { key: null })).status, 401);
  }));

test('PATCH: only the fields sent change, null clears, no change makes no commit, errors as a full write', (t) =>
  withServer(async (s) => {
    const container = await typeId(s, 'container');
    await ok(t, s, 'POST', `${API}/tags`, { id: 'core', name: 'Core', color: 'blue' }, { status: 201 });
    const made = await ok(
      t,
      s,
      'POST',
      `${API}/components`,
      { id: 'pay', ref: 'pay-ref', name: 'Pay', desc: 'Takes money', typeId: container, tags: ['core'], state: 'ACTIVE' },
      { status: 201 },
    );
    const renamed = await ok(t, s, 'PATCH', `${API}/components/pay`, { name: 'Payments' });
    t.deepEqual(renamed, { ...made, name: 'Payments', apiContext: renamed.apiContext });
    t.deepEqual(await lastCommitFiles(s), [`M ${resourcePath('component', 'pay')}`]);
    t.true(
      (await lastCommitMessage(s)).startsWith(
        `PATCH /api/external/components/pay: update 1\n\nupdate ${resourcePath('component', 'pay')} (Payments)\n\nApi-Context: `,
      ),
    );
    // By ref; null clears nullable fields.
    const cleared = await ok(t, s, 'PATCH', `${API}/components/pay-ref`, { desc: null, typeId: null });
    t.like(cleared, { desc: null, typeId: null, typeSlug: null, name: 'Payments', tags: ['core'], state: 'ACTIVE' });
    // The same values again: 200, no commit.
    await ok(t, s, 'PATCH', `${API}/components/pay`, { desc: null, name: 'Payments' }, { commits: 0 });
    await ok(t, s, 'PATCH', `${API}/components/pay`, {}, { commits: 0 });
    // Errors are those of a full write.
    await no(t, s, 'PATCH', `${API}/components/pay`, { name: null }, 400, 'Invalid JSON: name: Expected string, received null');
    await no(
      t,
      s,
      'PATCH',
      `${API}/components/pay`,
      { state: 'GONE', inlineDesc: 'yes' },
      400,
      "Invalid JSON: inlineDesc: Expected boolean, received string, state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'GONE'",
    );
    await no(t, s, 'PATCH', `${API}/components/pay`, { tags: ['nope'] }, 400, "Tag with id 'nope' does not exist.", {
      context: "component 'Payments'",
    });
    await no(t, s, 'PATCH', `${API}/components/pay`, { typeSlug: 'nope' }, 400, "Type with slug 'nope' does not exist.", {
      context: "component 'Payments'",
    });
    await no(t, s, 'PATCH', `${API}/components/pay`, [{ name: 'x' }], 400, 'Invalid JSON: Expected object, received array');
    await no(t, s, 'PATCH', `${API}/components/ghost`, { name: 'x' }, 404, "Component with id 'ghost' does not exist.");
    // If-Match: a stale ETag is refused.
    const stale = `"${(await s.git('rev-parse', 'main~1')).trim()}"`;
    await no(t, s, 'PATCH', `${API}/components/pay`, { name: 'y' }, 412, `The model has changed since ${stale.slice(1, -1)}.`, {
      headers: { 'if-match': stale },
    });
    await ok(t, s, 'PATCH', `${API}/components/pay`, { name: 'y' }, { headers: { 'if-match': `"${await s.head()}"` } });
    // A reader key may not.
    await no(t, s, 'PATCH', `${API}/components/pay`, { name: 'z' }, 403, 'This API key may only read.', { key: s.readerKey });
    // A required attribute is checked on the merged result.
    await ok(
      t,
      s,
      'POST',
      `${API}/attributes`,
      { id: 'owner', name: 'Owner', type: 'STRING', required: true, forTypes: ['database'] },
      { status: 201 },
    );
    await no(t, s, 'PATCH', `${API}/components/pay`, { typeSlug: 'database' }, 400, "Required attribute 'owner' has no value.", {
      context: "attribute 'Owner', component 'y'",
    });
    const typed = await ok(t, s, 'PATCH', `${API}/components/pay`, { typeSlug: 'database', attributes: [{ id: 'owner', value: 'ada' }] });
    t.is(typed.typeSlug, 'database');
    // `ref: null` removes the ref (JSON Merge Patch's null); the ref is free for another then.
    const unreffed = await ok(t, s, 'PATCH', `${API}/components/pay-ref`, { ref: null });
    t.is(unreffed.ref, undefined);
    t.false((await s.git('show', `main:${resourcePath('component', 'pay')}`)).includes('pay-ref'));
    t.is((await s.get(`${API}/components/pay-ref`)).status, 404);
    await ok(t, s, 'PATCH', `${API}/components/pay`, { ref: null }, { commits: 0 });
    // An empty ref (an unset variable in a pipeline) would make every run's element one resource.
    await no(t, s, 'PATCH', `${API}/components/pay`, { ref: '' }, 400, 'Invalid JSON: ref: String must contain at least 1 character(s)');
    await no(
      t,
      s,
      'POST',
      `${API}/components`,
      { name: 'E', ref: '' },
      400,
      'Invalid JSON: ref: String must contain at least 1 character(s)',
    );
    await no(
      t,
      s,
      'POST',
      '/api/external/component',
      [{ name: 'E', ref: '' }],
      400,
      'Invalid JSON: 0.ref: String must contain at least 1 character(s)',
    );
    await ok(t, s, 'POST', `${API}/tags`, { id: 'edge', ref: 'edge-ref', name: 'Edge', color: 'red' }, { status: 201 });
    t.is((await ok(t, s, 'PATCH', `${API}/tags/edge`, { ref: null })).ref, undefined);
    await ok(t, s, 'PATCH', `${API}/components/upsert-batch`, [{ id: 'pay', ref: 'pay-ref' }]);
    t.is((await s.get(`${API}/components/pay-ref`)).body.id, 'pay');
  }));

test('diagrams: aliases, levels C0/D1/P0/null, PATCH keeps layout and drops relations to removed instances', (t) =>
  withServer(async (s) => {
    const person = await typeId(s, 'person');
    await ok(t, s, 'POST', `${API}/components`, { id: 'api', name: 'API' }, { status: 201 });
    await ok(t, s, 'POST', `${API}/tags`, { id: 'ops', name: 'Ops', color: 'gray' }, { status: 201 });
    for (const level of ['C0', 'D1', 'P0', null]) {
      const d = await ok(t, s, 'POST', `${API}/diagrams`, { name: `L ${level}`, level }, { status: 201 });
      t.is(d.level, level);
    }
    const noLevel = await ok(t, s, 'POST', `${API}/diagrams`, { name: 'no level' }, { status: 201 });
    t.is(noLevel.level, null);
    await no(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      { name: 'x', level: 'C9' },
      400,
      "Invalid JSON: level: Invalid enum value. Expected 'C0' | 'C1' | 'C2' | 'C3' | 'C4' | 'D1' | 'P0', received 'C9'",
    );
    // The seed's spellings are accepted here too.
    const d = await ok(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      {
        id: 'ctx',
        name: 'Context',
        level: 'C1',
        tags: [{ id: 'ops' }],
        componentInstances: [
          { ref: 'a', component: 'api', position: { x: 3, y: 4 }, width: 10, height: 6 },
          { ref: 'u', placeholder: 'User' },
          { ref: 'p', placeholder: { text: 'Partner', typeId: person } },
          { ref: 'box', isContainer: true, placeholder: 'Zone' },
          { ref: 'in', placeholder: 'Inside', parentId: 'box' },
        ],
        textareas: [{ text: 'Note' }],
        relations: [
          { fromComponentInstance: 'u', toComponentInstance: 'a' },
          { fromRef: 'a', toRef: 'p', linksTo: [] },
        ],
      },
      { status: 201 },
    );
    t.deepEqual(d.tags, ['ops']);
    t.like(d.componentInstances[0], { componentId: 'api', placeholder: null, position: { x: 3, y: 4 }, width: 10, height: 6 });
    t.like(d.componentInstances[1], { componentId: null, placeholder: { text: 'User', typeId: null } });
    t.like(d.componentInstances[2], { placeholder: { text: 'Partner', typeId: person } });
    t.is(d.componentInstances[4].parentId, d.componentInstances[3].id);
    t.like(d.relations[0], { fromRef: 'u', toRef: 'a' });
    // In the seed's form the instance's type does not show, the placeholder is its text.
    t.like((await s.get(`${API}/diagram/ctx`)).body.componentInstances[2], { component: null, placeholder: 'Partner' });
    // Alias errors.
    await no(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      { name: 'x', componentInstances: [{ componentId: 'api', component: 'other' }] },
      400,
      "componentId 'api' and component 'other' differ.",
      { context: "diagram 'x'" },
    );
    // One component named by id in one spelling and by ref in the other: they agree.
    await s.post(`${API}/components`, { id: 'by-ref', ref: 'by-ref-ref', name: 'By ref' });
    const agreed = await s.post(`${API}/diagrams`, { name: 'y', componentInstances: [{ componentId: 'by-ref', component: 'by-ref-ref' }] });
    t.is(agreed.status, 201, agreed.text);
    t.is(agreed.body.componentInstances[0].componentId, 'by-ref');
    await no(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      { name: 'x', componentInstances: [{ ref: 'a' }], relations: [{ label: 'x' }] },
      400,
      'Invalid JSON: relations.0.fromRef: Required, relations.0.toRef: Required',
    );
    // A missing end is a schema failure like any other (CurrentRelation's allOf): listed with every other one.
    await no(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      {
        name: 'x',
        state: 'LIVE',
        componentInstances: [{ ref: 'a' }],
        relations: [{ fromRef: 'a', toRef: 'a' }, { toRef: 'a', label: 5 }, {}],
      },
      400,
      "Invalid JSON: state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'LIVE', relations.1.fromRef: Required, " +
        'relations.1.label: Expected string, received number, relations.2.fromRef: Required, relations.2.toRef: Required',
    );
    await no(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      { name: 'x', componentInstances: [{ placeholder: { text: 'x', typeId: 'nope' } }] },
      400,
      "Type with id 'nope' does not exist.",
      { context: "diagram 'x'" },
    );
    await no(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      { name: 'x', tags: [3] },
      400,
      'Invalid JSON: tags.0: Expected string | object, received number',
    );
    // PATCH a top-level field: everything nested, layout included, stays.
    const renamed = await ok(t, s, 'PATCH', `${API}/diagrams/ctx`, { name: 'Context view', level: null });
    t.deepEqual(renamed, { ...d, name: 'Context view', level: null, apiContext: renamed.apiContext });
    // Instances sent replace the stored ones (matched by ref, layout kept); relations to the removed ones go.
    const fewer = await ok(t, s, 'PATCH', `${API}/diagrams/ctx`, {
      componentInstances: [
        { ref: 'a', componentId: 'api' },
        { ref: 'p', placeholder: { text: 'Partner', typeId: person } },
      ],
    });
    t.deepEqual(
      fewer.componentInstances.map((i: any) => i.id),
      [d.componentInstances[0].id, d.componentInstances[2].id],
    );
    t.like(fewer.componentInstances[0], { position: { x: 3, y: 4 }, width: 10, height: 6 });
    t.deepEqual(
      fewer.relations.map((r: any) => [r.fromRef, r.toRef]),
      [['a', 'p']],
    );
    await ok(t, s, 'PATCH', `${API}/diagrams/ctx`, { componentInstances: fewer.componentInstances }, { commits: 0 });
  }));

// An instance sent again without id or ref is the stored one whose content it repeats (docs §4.5),
// so it is still sent: its relations stay. They used to go, the instance being known only by id or ref.
test('PATCH of instances sent again without id or ref keeps their relations; only those of instances left out go', (t) =>
  withServer(async (s) => {
    await ok(t, s, 'POST', `${API}/components`, { id: 'api', name: 'API' }, { status: 201 });
    const instances = [{ componentId: 'api' }, { placeholder: 'Bank' }, { placeholder: 'Card network' }];
    const made = await ok(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      { id: 'pay', name: 'Pay', level: 'C1', componentInstances: instances },
      { status: 201 },
    );
    const [api, bank, network] = made.componentInstances.map((i: any) => i.id);
    const linked = await ok(t, s, 'PATCH', `${API}/diagrams/pay`, {
      relations: [
        { fromRef: api, toRef: bank, label: 'pays' },
        { fromRef: bank, toRef: network, label: 'clears' },
      ],
    });
    // The same instances again, as first sent: nothing changes, no commit.
    const same = await ok(t, s, 'PATCH', `${API}/diagrams/pay`, { componentInstances: instances }, { commits: 0 });
    t.deepEqual(same, linked);
    // The card network left out: its relation goes, the other stays, by its id.
    const fewer = await ok(t, s, 'PATCH', `${API}/diagrams/pay`, { componentInstances: instances.slice(0, 2) });
    t.deepEqual(
      fewer.relations.map((r: any) => [r.id, r.fromRef, r.toRef]),
      [[linked.relations[0].id, api, bank]],
    );
  }));

test('the two linksTo: components in the seed form, diagrams in the current form, both stored', (t) =>
  withServer(async (s) => {
    await ok(t, s, 'POST', `${API}/diagrams`, { id: 'detail', name: 'Detail', level: 'C3' }, { status: 201 });
    await ok(t, s, 'POST', `${API}/components`, { id: 'db', name: 'DB' }, { status: 201 });
    // Seed form: linksTo names components.
    await ok(t, s, 'POST', `${API}/component`, [{ id: undefined, ref: 'svc', name: 'Service', linksTo: ['db'] }]);
    const svc = (await s.get(`${API}/component`)).body.find((c: any) => c.ref === 'svc');
    // Current form: linksTo names diagrams; the component links stay as the seed form wrote them.
    const patched = await ok(t, s, 'PATCH', `${API}/components/svc`, { linksTo: ['detail'], inlineDesc: true });
    t.deepEqual(patched.linksTo, ['detail']);
    t.deepEqual((await s.get(`${API}/component/${svc.id}`)).body.linksTo, ['db']);
    const file = await s.git('show', `main:${resourcePath('component', svc.id)}`);
    t.regex(file, /linksTo:\n {2}- db\n/);
    t.regex(file, /linksToDiagrams:\n {2}- detail\n/);
    // A seed-form overwrite keeps what only the current form writes.
    await ok(t, s, 'POST', `${API}/component`, [{ id: svc.id, ref: 'svc', name: 'Service 2', linksTo: [] }]);
    t.like((await s.get(`${API}/components/svc`)).body, { name: 'Service 2', linksTo: ['detail'], inlineDesc: true });
    await no(t, s, 'PATCH', `${API}/components/${svc.id}`, { linksTo: ['db'] }, 400, "Ref 'db' does not resolve to a diagram.", {
      context: "component 'Service 2'",
    });
  }));

test('upsert-batch: with id updates partially or creates with that id, without creates, in request order, one commit or nothing', (t) =>
  withServer(async (s) => {
    await ok(t, s, 'POST', `${API}/components`, { id: 'a', name: 'A', desc: 'first' }, { status: 201 });
    const result = await ok(t, s, 'PATCH', `${API}/components/upsert-batch`, [
      { name: 'New' },
      { id: 'a', state: 'ARCHIVED' },
      { ref: 'r', name: 'R' },
    ]);
    t.deepEqual(
      result.map((c: any) => c.name),
      ['New', 'A', 'R'],
    );
    t.like(result[1], { id: 'a', desc: 'first', state: 'ARCHIVED' });
    t.regex(await lastCommitMessage(s), /^PATCH \/api\/external\/components\/upsert-batch: create 2, update 1\n/);
    // A stored ref without id updates that one.
    const again = await ok(t, s, 'PATCH', `${API}/components/upsert-batch`, [{ ref: 'r', desc: 'by ref' }]);
    t.like(again[0], { id: result[2].id, name: 'R', desc: 'by ref' });
    // An id that does not exist creates the resource with that id (as POST and /template do).
    const created = await ok(t, s, 'PATCH', `${API}/components/upsert-batch`, [{ name: 'ok' }, { id: 'ghost', name: 'Ghost' }]);
    t.like(created[1], { id: 'ghost', name: 'Ghost' });
    t.regex(await lastCommitMessage(s), /: create 2\n/);
    t.true((await lastCommitFiles(s)).includes(`A ${resourcePath('component', 'ghost')}`));
    t.is((await s.get(`${API}/components/ghost`)).body.name, 'Ghost');
    // … by the id rule, and unique across kinds.
    await no(t, s, 'PATCH', `${API}/components/upsert-batch`, [{ id: 'Ghost 2', name: 'x' }], 400, `Invalid id 'Ghost 2': ${RULE}.`);
    await no(
      t,
      s,
      'PATCH',
      `${API}/tags/upsert-batch`,
      [{ id: 'ghost', name: 'x', color: 'red' }],
      409,
      /^Tag with id 'ghost' already exists: the component 'ghost'/,
    );
    await no(
      t,
      s,
      'PATCH',
      `${API}/components/upsert-batch`,
      [
        { id: 'twice', name: 'x' },
        { id: 'twice', name: 'y' },
      ],
      400,
      "Component with id 'twice' is given more than once.",
    );
    // A new id needs what a create needs.
    await no(t, s, 'PATCH', `${API}/components/upsert-batch`, [{ id: 'nameless', desc: 'x' }], 400, 'Invalid JSON: 0.name: Required');
    await no(
      t,
      s,
      'PATCH',
      `${API}/components/upsert-batch`,
      [{ name: 'ok' }, { desc: 'no name' }, { id: 'a', name: 3 }],
      400,
      'Invalid JSON: 1.name: Required, 2.name: Expected string, received number',
    );
    await no(
      t,
      s,
      'PATCH',
      `${API}/components/upsert-batch`,
      [
        { id: 'a', name: 'x' },
        { id: 'a', name: 'y' },
      ],
      400,
      "Component with id 'a' is given more than once.",
    );
    await no(t, s, 'PATCH', `${API}/components/upsert-batch`, { name: 'x' }, 400, 'Invalid JSON: Expected array, received object');
    // Tags, attributes and diagrams have it too.
    const tags = await ok(t, s, 'PATCH', `${API}/tags/upsert-batch`, [{ id: undefined, name: 'T', color: 'red' }]);
    t.is(tags[0].color, 'red');
    const attrs = await ok(t, s, 'PATCH', `${API}/attributes/upsert-batch`, [{ name: 'Team', type: 'LIST', list: ['x'] }]);
    t.deepEqual(attrs[0].list, ['x']);
    const diagrams = await ok(t, s, 'PATCH', `${API}/diagrams/upsert-batch`, [{ name: 'D', componentInstances: [{ componentId: 'a' }] }]);
    t.is(diagrams[0].componentInstances[0].componentId, 'a');
    await ok(t, s, 'PATCH', `${API}/components/upsert-batch`, [], { commits: 0 });
  }));

test('tags and attributes on the plural paths; POST /attributes: an array is the seed form, an object the current form', (t) =>
  withServer(async (s) => {
    const tag = await ok(t, s, 'POST', `${API}/tags`, { name: 'Legacy', color: 'gray' }, { status: 201 });
    t.deepEqual((await s.get(`${API}/tags`)).body, [tag]);
    t.deepEqual((await s.get(`${API}/tags/${tag.id}`)).body, tag);
    const patched = await ok(t, s, 'PATCH', `${API}/tags/${tag.id}`, { color: 'red', desc: 'old' });
    t.deepEqual(patched, { ...tag, color: 'red', desc: 'old', apiContext: patched.apiContext });
    await no(
      t,
      s,
      'PATCH',
      `${API}/tags/${tag.id}`,
      { color: 'pink' },
      400,
      "Invalid JSON: color: Invalid enum value. Expected 'gray' | 'red' | 'orange' | 'yellow' | 'green' | 'blue' | 'purple', received 'pink'",
    );
    await no(t, s, 'POST', `${API}/tags`, { name: 'x' }, 400, 'Invalid JSON: color: Required');
    // /attributes: one object creates (201), an array is the seed's create-or-update (200).
    const one = await ok(t, s, 'POST', `${API}/attributes`, { id: 'team', name: 'Team', type: 'STRING' }, { status: 201 });
    t.deepEqual(one, { id: 'team', name: 'Team', type: 'STRING', desc: null, required: false, forTypes: [], apiContext: one.apiContext });
    const seed = await ok(t, s, 'POST', `${API}/attributes`, [{ id: 'team', name: 'Team name', type: 'STRING' }]);
    t.is(seed[0].name, 'Team name');
    await no(
      t,
      s,
      'POST',
      `${API}/attributes`,
      { name: 'x', type: 'LIST' },
      400,
      // A body of one object: the attribute is named, as a component is (no index).
      'A LIST attribute needs a list of values.',
      { context: "attribute 'x'" },
    );
    await no(t, s, 'POST', `${API}/attributes`, [{ name: 'x', type: 'LIST' }], 400, 'A LIST attribute needs a list of values.', {
      context: "element 0 'x'",
    });
    const list = await ok(t, s, 'PATCH', `${API}/attributes/team`, { type: 'LIST', list: ['a', 'b'] });
    t.deepEqual(list.list, ['a', 'b']);
    await ok(t, s, 'POST', `${API}/attributes`, { id: 'code', name: 'Code', type: 'STRING' }, { status: 201 });
    await ok(t, s, 'POST', `${API}/components`, { id: 'shop', name: 'Shop', attributes: [{ id: 'code', value: 'abc' }] }, { status: 201 });
    await no(
      t,
      s,
      'PATCH',
      `${API}/attributes/code`,
      { type: 'NUMBER' },
      400,
      "Component 'shop' (Shop) would become invalid: Value for NUMBER attribute 'code' must be a number.",
      { context: "attribute 'Code'" },
    );
    // Dropping `list` with null while the type stays LIST is refused as a full write would be.
    await no(t, s, 'PATCH', `${API}/attributes/team`, { list: null }, 400, 'Invalid JSON: list: Expected array, received null');
    // Made another type, it leaves its list behind; given a list with it, it is refused as a full write is.
    await no(
      t,
      s,
      'PATCH',
      `${API}/attributes/team`,
      { type: 'BOOLEAN', list: ['a'] },
      400,
      'Only a LIST attribute may have a list; this one is BOOLEAN.',
      { context: "attribute 'Team name'" },
    );
    const plain = await ok(t, s, 'PATCH', `${API}/attributes/team`, { type: 'BOOLEAN' });
    t.is(plain.type, 'BOOLEAN');
    t.false('list' in plain);
  }));

test('DELETE: referrers listed (409), cascade in one commit, singular paths, types never', (t) =>
  withServer(async (s) => {
    await ok(t, s, 'POST', `${API}/tags`, { id: 'pci', name: 'PCI', color: 'red' }, { status: 201 });
    await ok(t, s, 'POST', `${API}/attributes`, { id: 'tier', name: 'Tier', type: 'NUMBER' }, { status: 201 });
    await ok(t, s, 'POST', `${API}/diagrams`, { id: 'detail', name: 'Detail', level: 'C3' }, { status: 201 });
    await ok(
      t,
      s,
      'POST',
      `${API}/components`,
      { id: 'db', name: 'DB', tags: ['pci'], attributes: [{ id: 'tier', value: 1 }], linksTo: ['detail'] },
      { status: 201 },
    );
    await ok(t, s, 'POST', `${API}/component`, [{ ref: 'svc', name: 'Service', linksTo: ['db'] }]);
    await ok(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      {
        id: 'main',
        name: 'Main',
        level: 'C2',
        tags: ['pci'],
        componentInstances: [
          { ref: 'd', componentId: 'db' },
          { ref: 'x', placeholder: 'X' },
        ],
        relations: [{ fromRef: 'x', toRef: 'd', linksTo: ['detail'] }],
      },
      { status: 201 },
    );
    const svcId = (await s.get(`${API}/components/svc`)).body.id;

    await no(
      t,
      s,
      'DELETE',
      `${API}/tags/pci`,
      undefined,
      409,
      "Tag with id 'pci' is still referred to by component 'db' (DB: tags), diagram 'main' (Main: tags). " +
        'Remove those references first, or delete with ?cascade=true to remove them in the same commit.',
    );
    await no(
      t,
      s,
      'DELETE',
      `${API}/attributes/tier`,
      undefined,
      409,
      /^Attribute with id 'tier' is still referred to by component 'db' \(DB: a value\)\. /,
    );
    await no(
      t,
      s,
      'DELETE',
      `${API}/diagrams/detail`,
      undefined,
      409,
      /^Diagram with id 'detail' is still referred to by component 'db' \(DB: linksTo\), diagram 'main' \(Main: relation linksTo\)\. /,
    );
    await no(
      t,
      s,
      'DELETE',
      `${API}/components/db`,
      undefined,
      409,
      new RegExp(
        `^Component with id 'db' is still referred to by component '${svcId}' \\(Service: linksTo\\), diagram 'main' \\(Main: component instances\\)\\. `,
      ),
    );
    await no(t, s, 'DELETE', `${API}/components/db?cascade=maybe`, undefined, 400, "Invalid cascade 'maybe': use true or false.");
    await no(
      t,
      s,
      'DELETE',
      `${API}/components/db?cascade=true&cascade=false`,
      undefined,
      400,
      "Query parameter 'cascade' is given more than once.",
    );
    await no(t, s, 'DELETE', `${API}/components/ghost`, undefined, 404, "Component with id 'ghost' does not exist.");
    await no(t, s, 'DELETE', `${API}/components/db?cascade=true`, undefined, 403, 'This API key may only read.', { key: s.readerKey });
    for (const path of ['/types', '/type']) {
      const types = (await s.get(`${API}/types`)).body;
      // Not a method of the path: 405 whatever the key (none, a reader's) and the id, as for any other.
      for (const [id, key] of [
        [types[0].id, undefined],
        [types[0].id, null],
        [types[0].id, s.readerKey],
        ['ghost', undefined],
      ] as const) {
        await no(t, s, 'DELETE', `${API}${path}/${id}`, undefined, 405, 'Types cannot be deleted.', { key });
        t.is((await s.request('DELETE', `${API}${path}/${id}`, { key })).headers.get('allow'), 'GET, HEAD');
      }
      t.is((await s.request('PUT', `${API}${path}/${types[0].id}`, { body: {} })).headers.get('allow'), 'HEAD, GET');
    }

    // Cascade: each in one commit that also rewrites the referrers.
    await ok(t, s, 'DELETE', `${API}/tags/pci?cascade=true`, undefined);
    t.deepEqual(
      (await lastCommitFiles(s)).sort(),
      [`D ${resourcePath('tag', 'pci')}`, `M ${resourcePath('component', 'db')}`, `M ${resourcePath('diagram', 'main')}`].sort(),
    );
    t.deepEqual((await s.get(`${API}/components/db`)).body.tags, []);
    await ok(t, s, 'DELETE', `${API}/attributes/tier?cascade=true`, undefined);
    t.deepEqual((await s.get(`${API}/components/db`)).body.attributes, []);
    await ok(t, s, 'DELETE', `${API}/diagrams/detail?cascade=true`, undefined);
    t.deepEqual((await s.get(`${API}/diagrams/main`)).body.relations[0].linksTo, []);
    // The seed's singular path deletes too, answering in the seed's shape.
    const gone = await ok(t, s, 'DELETE', `${API}/component/db?cascade=true`, undefined);
    t.like(gone, { id: 'db', name: 'DB', typeSlug: null });
    t.false('inlineDesc' in gone);
    t.deepEqual((await s.get(`${API}/component/${svcId}`)).body.linksTo, []);
    const main = (await s.get(`${API}/diagrams/main`)).body;
    t.like(main.componentInstances[0], { componentId: null, placeholder: { text: 'DB', typeId: null } });
    t.is(main.relations.length, 1);
    // Nothing refers to it any more: a plain delete.
    await ok(t, s, 'DELETE', `${API}/diagrams/main`, undefined);
    t.deepEqual(await lastCommitFiles(s), [`D ${resourcePath('diagram', 'main')}`]);
    t.deepEqual((await s.get(`${API}/diagrams`)).body, []);
    t.is((await s.git('fsck', '--strict')).trim(), '');
  }));

test('search: filters combine with AND, name matches a part ignoring case, at least one filter', (t) =>
  withServer(async (s) => {
    const container = await typeId(s, 'container');
    await ok(t, s, 'POST', `${API}/tags`, { id: 'core', name: 'Core', color: 'blue' }, { status: 201 });
    await ok(t, s, 'POST', `${API}/attributes`, { id: 'tier', name: 'Tier', type: 'NUMBER' }, { status: 201 });
    await ok(t, s, 'PATCH', `${API}/components/upsert-batch`, [
      { id: undefined, name: 'Payment API', typeId: container, tags: ['core'], attributes: [{ id: 'tier', value: 1 }], state: 'ACTIVE' },
      { name: 'Payment worker', attributes: [{ id: 'tier', value: 2 }] },
      { name: 'Catalog', tags: ['core'] },
    ]);
    const names = async (query: string) => (await s.get(`${API}/search/components?${query}`)).body.map((c: any) => c.name);
    t.deepEqual(await names('name=PAYMENT'), ['Payment API', 'Payment worker']);
    t.deepEqual(await names('name=payment&tagId=core'), ['Payment API']);
    t.deepEqual(await names(`typeId=${container}`), ['Payment API']);
    t.deepEqual(await names('attributeId=tier&attributeValue=2'), ['Payment worker']);
    t.deepEqual(await names('attributeId=tier'), ['Payment API', 'Payment worker']);
    t.deepEqual(await names('state=ACTIVE'), ['Payment API']);
    t.deepEqual(await names('name=nothing'), []);
    for (const path of ['components', 'diagrams', 'dependencies']) {
      const reply = await s.get(`${API}/search/${path}`);
      t.is(reply.status, 400, path);
      t.regex(reply.body.error, /^Give at least one filter: /);
    }
    t.deepEqual((await s.get(`${API}/search/components?attributeValue=2`)).body, { error: 'attributeValue needs attributeId.' });
    const before = await s.head();
    await ok(t, s, 'POST', `${API}/diagrams`, { name: 'Core view', level: 'C1', tags: ['core'] }, { status: 201 });
    t.deepEqual(
      (await s.get(`${API}/search/diagrams?tagId=core&level=C1`)).body.map((d: any) => d.name),
      ['Core view'],
    );
    t.deepEqual((await s.get(`${API}/search/diagrams?name=core&at=${before}`)).body, []);
    t.deepEqual(
      (await s.get(`${API}/search/diagrams?name=core`, { yaml: true })).body.map((d: any) => d.name),
      ['Core view'],
    );
  }));

test('template: refused as a whole, with paths naming the element; an id updates or creates', (t) =>
  withServer(async (s) => {
    await no(
      t,
      s,
      'POST',
      `${API}/template`,
      { components: [{ name: 'ok' }, { desc: 'x' }], diagrams: [{ level: 'C1' }] },
      400,
      'Invalid JSON: components.1.name: Required, diagrams.0.name: Required',
    );
    await no(t, s, 'POST', `${API}/template`, [], 400, 'Invalid JSON: Expected object, received array');
    // A list given as null is the client's value, refused as /model refuses it; only an omitted one is [].
    await no(t, s, 'POST', `${API}/template`, { components: null }, 400, 'Invalid JSON: components: Expected array, received null');
    await no(t, s, 'POST', `${API}/template`, { diagrams: null }, 400, 'Invalid JSON: diagrams: Expected array, received null');
    await no(
      t,
      s,
      'POST',
      `${API}/template`,
      { components: null, diagrams: [] },
      400,
      'Invalid JSON: components: Expected array, received null',
      {
        yaml: true,
      },
    );
    await no(
      t,
      s,
      'POST',
      `${API}/template`,
      { diagrams: [{ name: 'd', componentInstances: [{ componentId: 'nope' }] }] },
      400,
      "Ref 'nope' does not resolve to a component.",
      { context: "element diagrams.0 'd'" },
    );
    const made = await ok(t, s, 'POST', `${API}/template`, { components: [{ id: 'x', name: 'X' }] });
    t.is(made.components[0].id, 'x');
    const updated = await ok(t, s, 'POST', `${API}/template`, { components: [{ id: 'x', desc: 'now described' }] });
    t.like(updated.components[0], { id: 'x', name: 'X', desc: 'now described' });
    await ok(t, s, 'POST', `${API}/template`, {}, { commits: 0 });
  }));

test("the seed's paths accept componentId, fromRef/toRef, inlineDesc and component tags too, and answer in their own shapes", (t) =>
  withServer(async (s) => {
    await ok(t, s, 'POST', `${API}/tags`, { id: 'core', name: 'Core', color: 'blue' }, { status: 201 });
    const [component] = await ok(t, s, 'POST', `${API}/component`, [{ ref: 'api', name: 'API', inlineDesc: true, tags: ['core'] }]);
    t.false('inlineDesc' in component, 'the seed form answers in its own shape');
    t.like((await s.get(`${API}/components/api`)).body, { inlineDesc: true, tags: ['core'] });
    // A seed-form overwrite without them keeps them.
    await ok(t, s, 'POST', `${API}/component`, [{ ref: 'api', name: 'API', desc: 'x' }]);
    t.like((await s.get(`${API}/components/api`)).body, { desc: 'x', inlineDesc: true, tags: ['core'] });
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      [{ ref: 'api', name: 'API', inlineDesc: 'yes' }],
      400,
      'Invalid JSON: 0.inlineDesc: Expected boolean, received string',
    );
    const { diagrams } = await ok(t, s, 'POST', `${API}/model`, {
      diagrams: [
        {
          name: 'D',
          level: 'C1',
          componentInstances: [{ ref: 'a', componentId: 'api' }, { ref: 'b' }],
          relations: [{ fromRef: 'a', toRef: 'b' }],
        },
      ],
    });
    t.is(diagrams[0].componentInstances[0].component, component.id);
    t.is(diagrams[0].relations[0].fromComponentInstance, diagrams[0].componentInstances[0].id);
    await no(
      t,
      s,
      'POST',
      `${API}/diagram`,
      [{ name: 'D', level: 'C1', componentInstances: [{ component: 'api', componentId: 'other' }] }],
      400,
      "componentId 'other' and component 'api' differ.",
      { context: "element 0 'D'" },
    );
    const [viaDiagram] = await ok(t, s, 'POST', `${API}/diagram`, [
      { name: 'E', level: 'C2', componentInstances: [{ ref: 'x' }, { ref: 'y' }], relations: [{ fromRef: 'x', toComponentInstance: 'y' }] },
    ]);
    t.is(viaDiagram.relations.length, 1);
  }));

test('paging over client-chosen ids follows the list, whatever the ids sort like', (t) =>
  withServer(async (s) => {
    for (const id of ['zeta', 'alpha', 'mid']) await ok(t, s, 'POST', `${API}/tags`, { id, name: id, color: 'red' }, { status: 201 });
    await ok(t, s, 'POST', `${API}/tags`, { name: 'generated', color: 'red' }, { status: 201 });
    const all = (await s.get(`${API}/tags`)).body.map((x: any) => x.id);
    const paged: string[] = [];
    let next: string | null = `${API}/tags?limit=1`;
    while (next !== null) {
      const reply = await s.get(next);
      paged.push(...reply.body.map((x: any) => x.id));
      next = /^<([^>]+)>/.exec(reply.headers.get('link') ?? '')?.[1] ?? null;
    }
    t.deepEqual(paged, all);
    t.is(paged.length, 4);
  }));
