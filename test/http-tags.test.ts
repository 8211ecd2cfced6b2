import test, { type ExecutionContext } from 'ava';
import { TestServer, type Reply } from './support/server.js';

/**
 * Tags over HTTP: create, update by id, ref upsert, the no-change rule, schema and semantic
 * errors (exact texts), atomicity, and the commit each accepted write makes.
 * Serial: most tests count commits.
 */

let s: TestServer;

test.before(async () => {
  s = await TestServer.start();
});

test.after.always(async () => {
  await s?.close();
});

const TAGS = '/api/external/tag';
const ID = /^[0-9a-hjkmnp-tv-z]{26}$/;
const API_CONTEXT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

interface Tag {
  id: string;
  ref?: string;
  name: string;
  desc: string | null;
  color: string;
  apiContext?: string;
}

function ok(t: ExecutionContext, reply: Reply): Tag[] {
  t.is(reply.status, 200, reply.text);
  return reply.body as Tag[];
}

/** The commit `main` points at: message, author and the files it touched. */
async function lastCommit() {
  const [author, message, files] = await Promise.all([
    s.git('log', '-1', '--format=%an <%ae>', 'main'),
    s.git('log', '-1', '--format=%B', 'main'),
    s.git('show', '--name-status', '--format=', 'main'),
  ]);
  return { author: author.trim(), message, files: files.trim().split('\n').filter(Boolean) };
}

/** Asserts that `request` made exactly one commit, by the test key, titled `title`. */
async function expectOneCommit(t: ExecutionContext, request: () => Promise<Reply>, title: string): Promise<Reply> {
  const count = await s.commitCount();
  const head = await s.head();
  const reply = await request();
  t.is(reply.status, 200, reply.text);
  t.is(await s.commitCount(), count + 1);
  t.is((await s.git('rev-parse', 'main^')).trim(), head);
  t.is(reply.headers.get('etag'), `"${await s.head()}"`);
  const commit = await lastCommit();
  t.is(commit.author, 'test pipeline <test-pipeline@acme>');
  t.is(commit.message.split('\n')[0], title);
  t.regex(commit.message, /\n\nApi-Context: [^\n]+\n*$/);
  return reply;
}

/** Asserts that `request` is refused with `status`/`error` and leaves everything as it was. */
async function expectRefused(t: ExecutionContext, body: unknown, status: number, error: string, raw?: string) {
  const before = await s.state();
  const reply =
    raw === undefined ? await s.post(TAGS, body) : await s.request('POST', TAGS, { raw, headers: { 'content-type': 'application/json' } });
  t.is(reply.status, status, JSON.stringify(body ?? raw));
  t.deepEqual(reply.body, { error });
  t.is(await s.state(), before);
}

function utcNow(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}

test.serial('create several in one request: full objects in request order', async (t) => {
  const from = utcNow();
  const body = [
    { name: 'Backend', color: 'blue', desc: 'Server side' },
    { name: 'Frontend', color: 'green' },
    { name: 'Legacy', color: 'gray', desc: null },
  ];
  const reply = await expectOneCommit(t, () => s.post(TAGS, body), 'POST /api/external/tag: create 3');
  const to = utcNow();
  const tags = reply.body as Tag[];
  t.deepEqual(
    tags.map((x) => x.name),
    ['Backend', 'Frontend', 'Legacy'],
  );
  for (const tag of tags) {
    t.regex(tag.id, ID);
    t.regex(tag.apiContext!, API_CONTEXT);
    t.true(tag.apiContext! >= from && tag.apiContext! <= to, `${tag.apiContext} in UTC`);
    t.deepEqual(Object.keys(tag), ['id', 'name', 'desc', 'color', 'apiContext']);
  }
  t.is(new Set(tags.map((x) => x.id)).size, 3);
  t.is(new Set(tags.map((x) => x.apiContext)).size, 1, 'one apiContext for the whole request');
  t.deepEqual(
    tags.map(({ id, apiContext, ...rest }) => rest),
    [
      { name: 'Backend', desc: 'Server side', color: 'blue' },
      { name: 'Frontend', desc: null, color: 'green' },
      { name: 'Legacy', desc: null, color: 'gray' },
    ],
  );
  // Stored and listed as answered, in creation order.
  const list = ok(t, await s.get(TAGS));
  t.deepEqual(list.slice(-3), tags);
  for (const tag of tags) t.deepEqual(ok(t, await s.get(`${TAGS}/${tag.id}`)) as unknown, tag);
  // The commit lists each file, and the trailer carries the request's apiContext.
  const commit = await lastCommit();
  t.deepEqual(
    commit.files,
    tags.map((x) => `A\ttags/${x.id}.yaml`),
  );
  for (const tag of tags) t.true(commit.message.includes(`create tags/${tag.id}.yaml (${tag.name})`));
  t.true(commit.message.trimEnd().endsWith(`\n\nApi-Context: ${tags[0].apiContext}`), commit.message);
  t.is(
    await s.git('show', `main:tags/${tags[0].id}.yaml`),
    `# yaml-language-server: $schema=../.c4store/schemas/tag.json\nid: ${tags[0].id}\nname: Backend\ndesc: Server side\ncolor: blue\napiContext: "${tags[0].apiContext}"\n`,
  );
});

test.serial('every color of the contract is accepted', async (t) => {
  const colors = ['gray', 'red', 'orange', 'yellow', 'green', 'blue', 'purple'];
  const reply = await expectOneCommit(
    t,
    () =>
      s.post(
        TAGS,
        colors.map((color) => ({ name: `c-${color}`, color })),
      ),
    'POST /api/external/tag: create 7',
  );
  t.deepEqual(
    (reply.body as Tag[]).map((x) => x.color),
    colors,
  );
});

test.serial('update by id overwrites completely: an omitted desc becomes null', async (t) => {
  const [tag] = ok(t, await s.post(TAGS, [{ name: 'Payments', color: 'red', desc: 'Money', apiContext: 'v1' }]));
  t.is(tag.desc, 'Money');
  const reply = await expectOneCommit(
    t,
    () => s.post(TAGS, [{ id: tag.id, name: 'Payments', color: 'orange' }]),
    'POST /api/external/tag: update 1',
  );
  const [updated] = reply.body as Tag[];
  t.is(updated.id, tag.id);
  t.is(updated.desc, null);
  t.is(updated.color, 'orange');
  t.regex(updated.apiContext!, API_CONTEXT, 'apiContext becomes the new default');
  t.deepEqual(ok(t, await s.get(`${TAGS}/${tag.id}`)) as unknown, updated);
  const commit = await lastCommit();
  t.deepEqual(commit.files, [`M\ttags/${tag.id}.yaml`]);
  t.true(commit.message.includes(`update tags/${tag.id}.yaml (Payments)`));

  // Create and update in one request.
  const mixed = await expectOneCommit(
    t,
    () =>
      s.post(TAGS, [
        { name: 'Brand new', color: 'yellow' },
        { id: tag.id, name: 'Payments v2', color: 'orange' },
      ]),
    'POST /api/external/tag: create 1, update 1',
  );
  t.deepEqual(
    (mixed.body as Tag[]).map((x) => x.name),
    ['Brand new', 'Payments v2'],
  );
  t.is((mixed.body as Tag[])[1].id, tag.id);
});

test.serial('ref upsert: the same ref updates, no duplicate', async (t) => {
  const [first] = (
    await expectOneCommit(t, () => s.post(TAGS, [{ ref: 'team-a', name: 'Team A', color: 'blue' }]), 'POST /api/external/tag: create 1')
  ).body as Tag[];
  t.is(first.ref, 'team-a');
  t.deepEqual(Object.keys(first), ['id', 'ref', 'name', 'desc', 'color', 'apiContext']);
  const count = ok(t, await s.get(TAGS)).length;

  const [second] = (
    await expectOneCommit(
      t,
      () => s.post(TAGS, [{ ref: 'team-a', name: 'Team Alpha', color: 'purple' }]),
      'POST /api/external/tag: update 1',
    )
  ).body as Tag[];
  t.is(second.id, first.id);
  t.is(second.name, 'Team Alpha');
  t.is(ok(t, await s.get(TAGS)).length, count);
  t.is(ok(t, await s.get(TAGS)).filter((x) => x.ref === 'team-a').length, 1);

  // A ref may be set on a tag by id (it then keeps it), and a ref on a new element creates.
  const [plain] = ok(t, await s.post(TAGS, [{ name: 'No ref yet', color: 'gray' }]));
  const [withRef] = ok(t, await s.post(TAGS, [{ id: plain.id, ref: 'later', name: 'No ref yet', color: 'gray' }]));
  t.is(withRef.id, plain.id);
  t.is(withRef.ref, 'later');
  const [again] = ok(t, await s.post(TAGS, [{ ref: 'later', name: 'Has a ref', color: 'gray' }]));
  t.is(again.id, plain.id);
});

test.serial('an identical write makes no commit and keeps the file and apiContext', async (t) => {
  const [tag] = ok(t, await s.post(TAGS, [{ ref: 'stable', name: 'Stable', color: 'green', desc: 'Unchanging' }]));
  const head = await s.head();
  const count = await s.commitCount();
  const file = await s.git('show', `main:tags/${tag.id}.yaml`);
  // Wait for the clock to pass a second, so the defaulted apiContext would differ.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  for (const body of [
    [{ ref: 'stable', name: 'Stable', color: 'green', desc: 'Unchanging' }],
    [{ id: tag.id, ref: 'stable', name: 'Stable', color: 'green', desc: 'Unchanging' }],
    [{ id: tag.id, ref: 'stable', name: 'Stable', color: 'green', desc: 'Unchanging', apiContext: tag.apiContext }],
    [{ ref: 'stable', name: 'Stable', color: 'green', desc: 'Unchanging', unknownField: 1 }],
  ]) {
    const reply = await s.post(TAGS, body);
    t.is(reply.status, 200, reply.text);
    t.deepEqual(reply.body, [tag], 'the stored tag, with its stored apiContext');
    t.is(reply.headers.get('etag'), `"${head}"`);
  }
  t.is(await s.head(), head);
  t.is(await s.commitCount(), count);
  t.is(await s.git('show', `main:tags/${tag.id}.yaml`), file);
  t.deepEqual(ok(t, await s.get(`${TAGS}/${tag.id}`)), tag as unknown as Tag[]);

  // Identical elements next to a changed one: one commit that touches only the changed file.
  const [other] = ok(t, await s.post(TAGS, [{ name: 'Other', color: 'red' }]));
  const mixed = await expectOneCommit(
    t,
    () =>
      s.post(TAGS, [
        { ref: 'stable', name: 'Stable', color: 'green', desc: 'Unchanging' },
        { id: other.id, name: 'Other', color: 'blue' },
      ]),
    'POST /api/external/tag: update 1',
  );
  t.deepEqual((mixed.body as Tag[])[0], tag);
  t.deepEqual((await lastCommit()).files, [`M\ttags/${other.id}.yaml`]);
});

test.serial('an explicit different apiContext is a change', async (t) => {
  const [tag] = ok(t, await s.post(TAGS, [{ name: 'Versioned', color: 'yellow', apiContext: 'build 41' }]));
  t.is(tag.apiContext, 'build 41');
  const [same] = ok(t, await s.post(TAGS, [{ id: tag.id, name: 'Versioned', color: 'yellow', apiContext: 'build 41' }]));
  t.deepEqual(same, tag);
  const reply = await expectOneCommit(
    t,
    () => s.post(TAGS, [{ id: tag.id, name: 'Versioned', color: 'yellow', apiContext: 'build 42' }]),
    'POST /api/external/tag: update 1',
  );
  t.is((reply.body as Tag[])[0].apiContext, 'build 42');
  t.true((await lastCommit()).message.trimEnd().endsWith('\n\nApi-Context: build 42'));
  t.regex(await s.git('show', `main:tags/${tag.id}.yaml`), /\napiContext: build 42\n$/);
});

test.serial('schema failures: 400 with the exact text, nothing changes', async (t) => {
  const colors = "'gray' | 'red' | 'orange' | 'yellow' | 'green' | 'blue' | 'purple'";
  const cases: Array<[unknown, string]> = [
    [[{ id: 1, name: 'a', color: 'red' }], 'Invalid JSON: 0.id: Expected string, received number'],
    [[{ ref: 7, name: 'a', color: 'red' }], 'Invalid JSON: 0.ref: Expected string, received number'],
    [[{ color: 'red' }], 'Invalid JSON: 0.name: Required'],
    [[{ name: null, color: 'red' }], 'Invalid JSON: 0.name: Expected string, received null'],
    [[{ name: 'a' }], 'Invalid JSON: 0.color: Required'],
    [[{ name: 'a', color: 'pink' }], `Invalid JSON: 0.color: Invalid enum value. Expected ${colors}, received 'pink'`],
    [[{ name: 'a', color: 'RED' }], `Invalid JSON: 0.color: Invalid enum value. Expected ${colors}, received 'RED'`],
    [[{ name: 'a', color: 3 }], `Invalid JSON: 0.color: Expected ${colors}, received number`],
    [[{ name: 'a', color: 'red', desc: 5 }], 'Invalid JSON: 0.desc: Expected string, received number'],
    [[{ name: 'a', color: 'red', apiContext: false }], 'Invalid JSON: 0.apiContext: Expected string, received boolean'],
    [
      [
        { name: 'a', color: 'red' },
        { name: ['b'], color: 'red' },
      ],
      'Invalid JSON: 1.name: Expected string, received array',
    ],
    [[{}], 'Invalid JSON: 0.name: Required, 0.color: Required'],
    [
      [{ id: 1, name: 2, color: 'x' }, { name: 'ok', color: 'red' }, { desc: {} }],
      `Invalid JSON: 0.id: Expected string, received number, 0.name: Expected string, received number, 0.color: Invalid enum value. Expected ${colors}, received 'x', 2.name: Required, 2.desc: Expected string, received object, 2.color: Required`,
    ],
    [
      [5, 'tag', null],
      'Invalid JSON: 0: Expected object, received number, 1: Expected object, received string, 2: Expected object, received null',
    ],
    [{ name: 'a', color: 'red' }, 'Invalid JSON: Expected array, received object'],
    ['tag', 'Invalid JSON: Expected array, received string'],
    [42, 'Invalid JSON: Expected array, received number'],
  ];
  for (const [body, error] of cases) await expectRefused(t, body, 400, error);
  await expectRefused(t, undefined, 400, 'Invalid JSON: Expected array, received null', 'null');
});

test.serial('an unknown id: Tag with id ... does not exist.', async (t) => {
  const [tag] = ok(t, await s.post(TAGS, [{ name: 'Known', color: 'red' }]));
  for (const id of ['nope', '01m80azw30dwevft1dergadszz', '../../organization', '']) {
    await expectRefused(t, [{ id, name: 'x', color: 'red' }], 400, `Tag with id '${id}' does not exist.`);
    // Atomic: the valid elements around it are not written either.
    await expectRefused(
      t,
      [
        { name: 'would be new', color: 'red' },
        { id: tag.id, name: 'changed', color: 'blue' },
        { id, name: 'x', color: 'red' },
      ],
      400,
      `Tag with id '${id}' does not exist.`,
    );
  }
  // An id of another kind is no tag id.
  const [type] = ok(t, await s.get('/api/external/type')) as unknown as Tag[];
  await expectRefused(t, [{ id: type.id, name: 'x', color: 'red' }], 400, `Tag with id '${type.id}' does not exist.`);
});

test.serial('the same ref twice, the same id twice, a ref taken by another tag: refused', async (t) => {
  const [a, b] = ok(
    t,
    await s.post(TAGS, [
      { ref: 'ref-a', name: 'A', color: 'red' },
      { ref: 'ref-b', name: 'B', color: 'red' },
    ]),
  );
  await expectRefused(
    t,
    [
      { ref: 'dup', name: 'one', color: 'red' },
      { ref: 'dup', name: 'two', color: 'red' },
    ],
    400,
    "Ref 'dup' is used more than once.",
  );
  await expectRefused(
    t,
    [
      { ref: 'ref-a', name: 'one', color: 'red' },
      { ref: 'ref-a', name: 'two', color: 'red' },
    ],
    400,
    "Ref 'ref-a' is used more than once.",
  );
  await expectRefused(
    t,
    [
      { id: a.id, name: 'one', color: 'red' },
      { ref: 'ref-a', name: 'two', color: 'red' },
    ],
    400,
    "Ref 'ref-a' is used more than once.",
  );
  await expectRefused(
    t,
    [
      { id: a.id, name: 'one', color: 'red' },
      { id: a.id, name: 'two', color: 'red' },
    ],
    400,
    `Tag with id '${a.id}' is given more than once.`,
  );
  // Moving b's ref onto a while b keeps it would leave two tags with one ref.
  await expectRefused(t, [{ id: a.id, ref: 'ref-b', name: 'A', color: 'red' }], 400, "Ref 'ref-b' is used more than once.");
  // Swapping refs in one request is fine: afterwards each ref is on one tag.
  const swapped = await expectOneCommit(
    t,
    () =>
      s.post(TAGS, [
        { id: a.id, ref: 'ref-b', name: 'A', color: 'red' },
        { id: b.id, ref: 'ref-a', name: 'B', color: 'red' },
      ]),
    'POST /api/external/tag: update 2',
  );
  t.deepEqual(
    (swapped.body as Tag[]).map((x) => [x.id, x.ref]),
    [
      [a.id, 'ref-b'],
      [b.id, 'ref-a'],
    ],
  );
});

test.serial('a YAML body writes like JSON, in one commit', async (t) => {
  const reply = await expectOneCommit(
    t,
    () =>
      s.request('POST', TAGS, {
        raw: '- name: From YAML\n  color: purple\n  desc: "yes"\n- name: Second\n  color: red\n',
        headers: { 'content-type': 'application/yaml' },
      }),
    'POST /api/external/tag: create 2',
  );
  t.deepEqual(
    (reply.body as Tag[]).map((x) => [x.name, x.desc, x.color]),
    [
      ['From YAML', 'yes', 'purple'],
      ['Second', null, 'red'],
    ],
  );
});

test.serial('an empty array is accepted and changes nothing', async (t) => {
  const before = await s.state();
  const reply = await s.post(TAGS, []);
  t.is(reply.status, 200);
  t.deepEqual(reply.body, []);
  t.is(reply.headers.get('etag'), `"${await s.head()}"`);
  t.is(await s.state(), before);
});
