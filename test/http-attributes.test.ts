import test, { type ExecutionContext } from 'ava';
import { errorContext, TestServer, type Reply } from './support/server.js';

/**
 * Attributes over HTTP, at `/attribute` and `/attributes`: PUT creates (an id is refused),
 * POST creates and updates (full overwrite), LIST rules, `forTypes`, defaults, the no-change
 * rule, exact error texts, and that a refused write changes nothing.
 * Serial: most tests count commits.
 */

let s: TestServer;

test.before(async () => {
  s = await TestServer.start();
});

test.after.always(async () => {
  await s?.close();
});

const PATHS = ['/api/external/attribute', '/api/external/attributes'] as const;
const ATTR = PATHS[0];
const ID = /^[0-9a-hjkmnp-tv-z]{26}$/;
const API_CONTEXT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const PUT_WITH_ID = 'An id must not be supplied when creating attributes with PUT; use POST to update.';
const TYPES_ENUM = "'STRING' | 'NUMBER' | 'BOOLEAN' | 'LINK' | 'USERLIST' | 'LIST'";

interface Attribute {
  id: string;
  ref?: string;
  name: string;
  type: string;
  desc: string | null;
  required: boolean;
  forTypes: string[];
  apiContext?: string;
  list?: string[];
}

function ok(t: ExecutionContext, reply: Reply): Attribute[] {
  t.is(reply.status, 200, reply.text);
  return reply.body as Attribute[];
}

async function write(method: string, path: string, body: unknown): Promise<Reply> {
  return s.request(method, path, { body });
}

/** Asserts that the write made exactly one commit whose message starts with `title`. */
async function expectOneCommit(t: ExecutionContext, method: string, path: string, body: unknown, title: string) {
  const count = await s.commitCount();
  const reply = await write(method, path, body);
  const attributes = ok(t, reply);
  t.is(await s.commitCount(), count + 1);
  t.is(reply.headers.get('etag'), `"${await s.head()}"`);
  const message = await s.git('log', '-1', '--format=%B', 'main');
  t.is(message.split('\n')[0], title);
  t.regex(message, /\n\nApi-Context: [^\n]+\s*$/);
  t.is((await s.git('log', '-1', '--format=%an <%ae>', 'main')).trim(), 'test pipeline <test-pipeline@acme>');
  return attributes;
}

/**
 * Asserts a refused write: exact status and text, `context` in C4store-Error-Context (none when
 * not given), and `state()` unchanged.
 */
async function expectRefused(
  t: ExecutionContext,
  method: string,
  path: string,
  body: unknown,
  status: number,
  error: string,
  { context }: { context?: string } = {},
) {
  const before = await s.state();
  const reply = await write(method, path, body);
  t.is(reply.status, status, `${method} ${path} ${JSON.stringify(body)}`);
  t.deepEqual(reply.body, { error });
  t.is(errorContext(reply), context, `${method} ${path}: what it concerns`);
  t.is(await s.state(), before);
}

test.serial('PUT creates, on both paths; defaults filled in', async (t) => {
  for (const path of PATHS) {
    const created = await expectOneCommit(
      t,
      'PUT',
      path,
      [
        { name: `Owner ${path}`, type: 'STRING' },
        { name: `Cost ${path}`, type: 'NUMBER', desc: 'Monthly', required: true, forTypes: ['container', 'database'] },
        { name: `Tier ${path}`, type: 'LIST', list: ['gold', 'silver'] },
      ],
      `PUT ${path}: create 3`,
    );
    t.deepEqual(
      created.map((a) => a.name),
      [`Owner ${path}`, `Cost ${path}`, `Tier ${path}`],
    );
    for (const attribute of created) {
      t.regex(attribute.id, ID);
      t.regex(attribute.apiContext!, API_CONTEXT);
    }
    const [owner, cost, tier] = created;
    t.deepEqual(owner, {
      id: owner.id,
      name: `Owner ${path}`,
      type: 'STRING',
      desc: null,
      required: false,
      forTypes: [],
      apiContext: owner.apiContext,
    });
    t.deepEqual(Object.keys(owner), ['id', 'name', 'type', 'desc', 'required', 'forTypes', 'apiContext']);
    t.deepEqual(cost, {
      id: cost.id,
      name: `Cost ${path}`,
      type: 'NUMBER',
      desc: 'Monthly',
      required: true,
      forTypes: ['container', 'database'],
      apiContext: cost.apiContext,
    });
    t.deepEqual(tier.list, ['gold', 'silver']);
    t.deepEqual(Object.keys(tier), ['id', 'name', 'type', 'desc', 'required', 'forTypes', 'apiContext', 'list']);
    // Both paths list the same, and single reads agree.
    for (const read of PATHS) {
      const list = ok(t, await s.get(read));
      for (const attribute of created) {
        t.deepEqual(
          list.find((a) => a.id === attribute.id),
          attribute,
        );
        t.deepEqual((await s.get(`${read}/${attribute.id}`)).body, attribute);
      }
    }
  }
  t.deepEqual(ok(t, await s.get(PATHS[0])), ok(t, await s.get(PATHS[1])));
});

test.serial('every attribute type can be created', async (t) => {
  const types = ['STRING', 'NUMBER', 'BOOLEAN', 'LINK', 'USERLIST', 'LIST'];
  const created = await expectOneCommit(
    t,
    'PUT',
    ATTR,
    types.map((type) => ({ name: `all ${type}`, type, ...(type === 'LIST' ? { list: ['a'] } : {}) })),
    `PUT ${ATTR}: create 6`,
  );
  t.deepEqual(
    created.map((a) => a.type),
    types,
  );
  t.deepEqual(
    created.map((a) => 'list' in a),
    [false, false, false, false, false, true],
  );
});

test.serial('PUT with an id is refused, even the id of an existing attribute', async (t) => {
  const [existing] = ok(t, await write('PUT', ATTR, [{ name: 'Existing', type: 'STRING' }]));
  for (const path of PATHS) {
    await expectRefused(t, 'PUT', path, [{ id: existing.id, name: 'Existing', type: 'NUMBER' }], 400, PUT_WITH_ID);
    await expectRefused(t, 'PUT', path, [{ id: 'unknown', name: 'x', type: 'STRING' }], 400, PUT_WITH_ID);
    await expectRefused(
      t,
      'PUT',
      path,
      [
        { name: 'fine', type: 'STRING' },
        { id: existing.id, name: 'x', type: 'STRING' },
      ],
      400,
      PUT_WITH_ID,
    );
  }
  t.deepEqual((await s.get(`${ATTR}/${existing.id}`)).body, existing);
});

test.serial('POST creates and updates, on both paths', async (t) => {
  for (const path of PATHS) {
    const [created] = await expectOneCommit(
      t,
      'POST',
      path,
      [{ name: 'Runtime', type: 'STRING', desc: 'Language' }],
      `POST ${path}: create 1`,
    );
    t.is(created.desc, 'Language');
    const [updated] = await expectOneCommit(
      t,
      'POST',
      path,
      [{ id: created.id, name: 'Runtime version', type: 'STRING', desc: 'Language and version' }],
      `POST ${path}: update 1`,
    );
    t.is(updated.id, created.id);
    t.is(updated.name, 'Runtime version');
    const both = await expectOneCommit(
      t,
      'POST',
      path,
      [
        { name: 'Brand new', type: 'BOOLEAN' },
        { id: created.id, name: 'Runtime', type: 'STRING' },
      ],
      `POST ${path}: create 1, update 1`,
    );
    t.deepEqual(
      both.map((a) => a.name),
      ['Brand new', 'Runtime'],
    );
    t.is(both[1].id, created.id);
    t.deepEqual((await s.get(`${PATHS[1]}/${created.id}`)).body, both[1]);
  }
});

test.serial('update overwrites completely: omitted fields become blank', async (t) => {
  const [full] = ok(
    t,
    await write('PUT', ATTR, [
      {
        ref: 'sla',
        name: 'SLA',
        type: 'LIST',
        desc: 'Service level',
        required: true,
        forTypes: ['container'],
        apiContext: 'import 1',
        list: ['99.9', '99.99'],
      },
    ]),
  );
  t.deepEqual(full, {
    id: full.id,
    ref: 'sla',
    name: 'SLA',
    type: 'LIST',
    desc: 'Service level',
    required: true,
    forTypes: ['container'],
    apiContext: 'import 1',
    list: ['99.9', '99.99'],
  });
  const [bare] = await expectOneCommit(t, 'POST', ATTR, [{ id: full.id, name: 'SLA', type: 'STRING' }], `POST ${ATTR}: update 1`);
  t.is(bare.id, full.id);
  t.is(bare.ref, undefined);
  t.is(bare.desc, null);
  t.is(bare.required, false);
  t.deepEqual(bare.forTypes, []);
  t.false('list' in bare);
  t.regex(bare.apiContext!, API_CONTEXT);
  t.deepEqual((await s.get(`${ATTR}/${full.id}`)).body, bare);
  t.is(
    await s.git('show', `main:attributes/${full.id}.yaml`),
    `# yaml-language-server: $schema=../.c4store/schemas/attribute.json\nid: ${full.id}\nname: SLA\ntype: STRING\ndesc: null\nrequired: false\nforTypes: []\napiContext: "${bare.apiContext}"\n`,
  );
});

test.serial('ref upsert: a second write with the same ref updates it', async (t) => {
  const [first] = await expectOneCommit(t, 'POST', ATTR, [{ ref: 'owner', name: 'Owner', type: 'USERLIST' }], `POST ${ATTR}: create 1`);
  const count = ok(t, await s.get(ATTR)).length;
  const [second] = await expectOneCommit(
    t,
    'POST',
    PATHS[1],
    [{ ref: 'owner', name: 'Owning team', type: 'STRING' }],
    `POST ${PATHS[1]}: update 1`,
  );
  t.is(second.id, first.id);
  t.is(second.type, 'STRING');
  t.is(ok(t, await s.get(ATTR)).length, count);
  await expectRefused(
    t,
    'POST',
    ATTR,
    [
      { ref: 'twice', name: 'a', type: 'STRING' },
      { ref: 'twice', name: 'b', type: 'STRING' },
    ],
    400,
    "Ref 'twice' is used more than once.",
  );
  await expectRefused(
    t,
    'POST',
    ATTR,
    [
      { id: first.id, name: 'a', type: 'STRING' },
      { id: first.id, name: 'b', type: 'STRING' },
    ],
    400,
    `Attribute with id '${first.id}' is given more than once.`,
  );
});

test.serial('LIST attributes: list required, no duplicates, and only on LIST', async (t) => {
  for (const [method, path] of [
    ['PUT', PATHS[0]],
    ['POST', PATHS[1]],
  ] as const) {
    await expectRefused(t, method, path, [{ name: 'Tier', type: 'LIST' }], 400, 'A LIST attribute needs a list of values.', {
      context: "element 0 'Tier'",
    });
    await expectRefused(
      t,
      method,
      path,
      [{ name: 'Tier', type: 'LIST', list: ['gold', 'silver', 'gold'] }],
      400,
      'Duplicate list values are not allowed, got several of: gold',
      { context: "element 0 'Tier'" },
    );
    await expectRefused(
      t,
      method,
      path,
      [{ name: 'Tier', type: 'LIST', list: ['a', 'b', 'b', 'a'] }],
      400,
      'Duplicate list values are not allowed, got several of: b',
      { context: "element 0 'Tier'" },
    );
    for (const type of ['STRING', 'NUMBER', 'BOOLEAN', 'LINK', 'USERLIST']) {
      await expectRefused(
        t,
        method,
        path,
        [{ name: 'Not a list', type, list: ['a'] }],
        400,
        `Only a LIST attribute may have a list; this one is ${type}.`,
        { context: `element 0 'Not a list'` },
      );
    }
    await expectRefused(
      t,
      method,
      path,
      [{ name: 'Tier', type: 'LIST', list: 'gold' }],
      400,
      'Invalid JSON: 0.list: Expected array, received string',
    );
    await expectRefused(
      t,
      method,
      path,
      [{ name: 'Tier', type: 'LIST', list: ['gold', 1] }],
      400,
      'Invalid JSON: 0.list.1: Expected string, received number',
    );
  }
  // Updating an attribute into one of these states is refused too.
  const [tier] = ok(t, await write('PUT', ATTR, [{ name: 'Tier', type: 'LIST', list: ['gold', 'silver'] }]));
  await expectRefused(t, 'POST', ATTR, [{ id: tier.id, name: 'Tier', type: 'LIST' }], 400, 'A LIST attribute needs a list of values.', {
    context: "element 0 'Tier'",
  });
  await expectRefused(
    t,
    'POST',
    ATTR,
    [{ id: tier.id, name: 'Tier', type: 'LIST', list: ['x', 'x'] }],
    400,
    'Duplicate list values are not allowed, got several of: x',
    { context: "element 0 'Tier'" },
  );
  await expectRefused(
    t,
    'POST',
    ATTR,
    [{ id: tier.id, name: 'Tier', type: 'STRING', list: ['gold'] }],
    400,
    'Only a LIST attribute may have a list; this one is STRING.',
    { context: "element 0 'Tier'" },
  );
  // Turning it into a STRING without a list drops the list.
  const [plain] = ok(t, await write('POST', ATTR, [{ id: tier.id, name: 'Tier', type: 'STRING' }]));
  t.false('list' in plain);
  t.false('list' in (await s.get(`${ATTR}/${tier.id}`)).body);
});

test.serial('a LIST attribute with an empty list: accepted, holds no value, cannot be made required over components', async (t) => {
  const [empty] = await expectOneCommit(
    t,
    'PUT',
    ATTR,
    [{ name: 'Stage', type: 'LIST', list: [], forTypes: ['queue'] }],
    'PUT /api/external/attribute: create 1',
  );
  t.deepEqual(empty.list, []);
  const before = await s.state();
  const refused = await s.post('/api/external/component', [
    { name: 'Outbox', typeSlug: 'queue', attributes: [{ id: empty.id, value: 'x' }] },
  ]);
  t.is(refused.status, 400);
  t.deepEqual(refused.body, { error: `LIST attribute '${empty.id}' has no list values yet: it cannot hold a value.` });
  t.is(errorContext(refused), "attribute 'Stage', element 0 'Outbox'");
  t.is(await s.state(), before);
  const [outbox] = (await s.post('/api/external/component', [{ name: 'Outbox', typeSlug: 'queue' }])).body;
  await expectRefused(
    t,
    'POST',
    ATTR,
    [{ id: empty.id, name: 'Stage', type: 'LIST', list: [], forTypes: ['queue'], required: true }],
    400,
    `Component '${outbox.id}' (Outbox) would become invalid: Required attribute '${empty.id}' has no value.`,
    { context: `attribute 'Stage', element 0 'Stage'` },
  );
  // Filled in, it takes values as any LIST attribute does.
  ok(t, await write('POST', ATTR, [{ id: empty.id, name: 'Stage', type: 'LIST', list: ['beta'], forTypes: ['queue'] }]));
  const set = await s.post('/api/external/component', [
    { id: outbox.id, name: 'Outbox', typeSlug: 'queue', attributes: [{ id: empty.id, value: 'beta' }] },
  ]);
  t.is(set.status, 200, set.text);
  // Later tests count the components an attribute would break.
  t.is((await s.request('DELETE', `/api/external/components/${outbox.id}`)).status, 200);
});

test.serial('forTypes: unknown slugs are refused, [] when unrestricted', async (t) => {
  for (const [method, path] of [
    ['PUT', PATHS[0]],
    ['POST', PATHS[1]],
  ] as const) {
    await expectRefused(
      t,
      method,
      path,
      [{ name: 'x', type: 'STRING', forTypes: ['container', 'microservice'] }],
      400,
      "Type with slug 'microservice' does not exist.",
      { context: "element 0 'x'" },
    );
    await expectRefused(
      t,
      method,
      path,
      [{ name: 'x', type: 'STRING', forTypes: ['Container'] }],
      400,
      "Type with slug 'Container' does not exist.",
      { context: "element 0 'x'" },
    );
    // A reference list holds each thing once, as tags and linksTo do.
    await expectRefused(
      t,
      method,
      path,
      [{ name: 'x', type: 'STRING', forTypes: ['container', 'container'] }],
      400,
      "Type 'container' is given more than once in forTypes.",
      { context: "element 0 'x'" },
    );
    // A type id is not a slug.
    const [type] = (await s.get('/api/external/type')).body as Array<{ id: string }>;
    await expectRefused(
      t,
      method,
      path,
      [{ name: 'x', type: 'STRING', forTypes: [type.id] }],
      400,
      `Type with slug '${type.id}' does not exist.`,
      { context: `element 0 'x'` },
    );
    await expectRefused(
      t,
      method,
      path,
      [{ name: 'x', type: 'STRING', forTypes: 'container' }],
      400,
      'Invalid JSON: 0.forTypes: Expected array, received string',
    );
  }
  const created = ok(
    t,
    await write('PUT', ATTR, [
      { name: 'Unrestricted', type: 'STRING' },
      { name: 'Explicitly unrestricted', type: 'STRING', forTypes: [] },
      {
        name: 'Every default type',
        type: 'STRING',
        forTypes: ['person', 'software-system', 'container', 'component', 'database', 'queue'],
      },
    ]),
  );
  t.deepEqual(created[0].forTypes, []);
  t.deepEqual(created[1].forTypes, []);
  t.deepEqual(created[2].forTypes, ['person', 'software-system', 'container', 'component', 'database', 'queue']);
  for (const attribute of ok(t, await s.get(ATTR))) t.true(Array.isArray(attribute.forTypes), attribute.name);
});

test.serial('schema failures: exact texts', async (t) => {
  const cases: Array<[unknown, string]> = [
    [[{ name: 'x', type: 'X' }], `Invalid JSON: 0.type: Invalid enum value. Expected ${TYPES_ENUM}, received 'X'`],
    [[{ name: 'x', type: 'string' }], `Invalid JSON: 0.type: Invalid enum value. Expected ${TYPES_ENUM}, received 'string'`],
    [[{ name: 'x' }], 'Invalid JSON: 0.type: Required'],
    [[{ type: 'STRING' }], 'Invalid JSON: 0.name: Required'],
    [[{ name: 'x', type: 'STRING', required: 'yes' }], 'Invalid JSON: 0.required: Expected boolean, received string'],
    [[{ name: 'x', type: 'STRING', desc: 1 }], 'Invalid JSON: 0.desc: Expected string, received number'],
    [[{ name: 'x', type: 'STRING', apiContext: 1 }], 'Invalid JSON: 0.apiContext: Expected string, received number'],
    [[{ name: 'x', type: 'STRING', forTypes: ['container', 3] }], 'Invalid JSON: 0.forTypes.1: Expected string, received number'],
    [
      [
        { name: 'ok', type: 'STRING' },
        { name: 2, type: 'Y', required: null },
      ],
      `Invalid JSON: 1.name: Expected string, received number, 1.type: Invalid enum value. Expected ${TYPES_ENUM}, received 'Y', 1.required: Expected boolean, received null`,
    ],
    [{ name: 'x', type: 'STRING' }, 'Invalid JSON: Expected array, received object'],
    [[null], 'Invalid JSON: 0: Expected object, received null'],
  ];
  for (const [body, error] of cases) {
    await expectRefused(t, 'PUT', ATTR, body, 400, error);
    // On /attributes one object (not an array) is the current form's single create (issue 11): refused on /attribute only.
    await expectRefused(t, 'POST', Array.isArray(body) ? PATHS[1] : ATTR, body, 400, error);
  }
  // A non-string id on POST is a schema failure before any lookup.
  await expectRefused(t, 'POST', ATTR, [{ id: 1, name: 'x', type: 'STRING' }], 400, 'Invalid JSON: 0.id: Expected string, received number');
  await expectRefused(
    t,
    'POST',
    ATTR,
    [{ id: '01m80azw30dwevft1dergadszz', name: 'x', type: 'STRING' }],
    400,
    "Attribute with id '01m80azw30dwevft1dergadszz' does not exist.",
  );
});

test.serial('the no-change rule: an identical write makes no commit and keeps apiContext', async (t) => {
  const body = {
    ref: 'region',
    name: 'Region',
    type: 'LIST',
    desc: 'Where it runs',
    required: false,
    forTypes: ['container'],
    list: ['eu', 'us'],
  };
  const [attribute] = ok(t, await write('PUT', ATTR, [body]));
  const head = await s.head();
  const file = await s.git('show', `main:attributes/${attribute.id}.yaml`);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // a later default apiContext
  for (const [method, path, element] of [
    ['POST', PATHS[0], body],
    ['POST', PATHS[1], { ...body, id: attribute.id }],
    ['PUT', PATHS[1], body],
    ['POST', PATHS[0], { ...body, apiContext: attribute.apiContext }],
  ] as const) {
    const reply = await write(method, path, [element]);
    t.deepEqual(ok(t, reply), [attribute], `${method} ${path}`);
    t.is(reply.headers.get('etag'), `"${head}"`);
  }
  t.is(await s.head(), head);
  t.is(await s.git('show', `main:attributes/${attribute.id}.yaml`), file);

  // An explicit different apiContext, or a different list order, is a change.
  const [tagged] = await expectOneCommit(t, 'POST', ATTR, [{ ...body, apiContext: 'release 7' }], `POST ${ATTR}: update 1`);
  t.is(tagged.apiContext, 'release 7');
  t.regex(await s.git('log', '-1', '--format=%B', 'main'), /\n\nApi-Context: release 7\s*$/);
  const [reordered] = await expectOneCommit(t, 'POST', ATTR, [{ ...body, list: ['us', 'eu'] }], `POST ${ATTR}: update 1`);
  t.deepEqual(reordered.list, ['us', 'eu']);
});

test.serial('changing an attribute that components use is refused when a value would break', async (t) => {
  const [size, tier] = ok(
    t,
    await write('PUT', ATTR, [
      { name: 'Size', type: 'NUMBER' },
      { name: 'Level', type: 'LIST', list: ['gold', 'silver'] },
    ]),
  );
  const component = (
    await s.post('/api/external/component', [
      {
        // A queue: the required attributes created earlier apply to containers and databases only.
        name: 'Billing',
        typeSlug: 'queue',
        attributes: [
          { id: size.id, value: 3 },
          { id: tier.id, value: 'silver' },
        ],
      },
    ])
  ).body[0];
  t.regex(component?.id ?? '', ID);
  const invalid = (rule: string) => `Component '${component.id}' (Billing) would become invalid: ${rule}`;
  await expectRefused(
    t,
    'POST',
    ATTR,
    [{ id: size.id, name: 'Size', type: 'STRING' }],
    400,
    invalid(`Value for STRING attribute '${size.id}' must be a string.`),
    { context: `attribute 'Size', element 0 'Size'` },
  );
  await expectRefused(
    t,
    'POST',
    ATTR,
    [{ id: tier.id, name: 'Level', type: 'LIST', list: ['gold'] }],
    400,
    invalid(`Value for LIST attribute '${tier.id}' must be one of: gold.`),
    { context: `attribute 'Level', element 0 'Level'` },
  );
  await expectRefused(
    t,
    'POST',
    ATTR,
    [{ id: size.id, name: 'Size', type: 'NUMBER', forTypes: ['database'] }],
    400,
    invalid(`Attribute '${size.id}' does not apply to components of type 'queue'.`),
    { context: `attribute 'Size', element 0 'Size'` },
  );
  // A new required attribute that the component has no value for (its id is only known to the server).
  const before = await s.state();
  const required = await write('PUT', ATTR, [{ name: 'Owner', type: 'STRING', required: true }]);
  t.is(required.status, 400);
  t.regex(
    required.body.error,
    new RegExp(`^Component '${component.id}' \\(Billing\\) would become invalid: Required attribute '[0-9a-z]{26}' has no value\\.$`),
  );
  t.is(errorContext(required), "attribute 'Owner', element 0 'Owner'");
  t.is(await s.state(), before);
  // Adding a list item, or renaming, is fine.
  const [grown] = await expectOneCommit(
    t,
    'POST',
    ATTR,
    [{ id: tier.id, name: 'Service level', type: 'LIST', list: ['gold', 'silver', 'bronze'] }],
    `POST ${ATTR}: update 1`,
  );
  t.deepEqual(grown.list, ['gold', 'silver', 'bronze']);
  // A required attribute limited to other types does not touch the queue.
  await expectOneCommit(
    t,
    'PUT',
    ATTR,
    [{ name: 'Schema', type: 'STRING', required: true, forTypes: ['database'] }],
    `PUT ${ATTR}: create 1`,
  );
});

test.serial('a refused request with valid elements writes none of them', async (t) => {
  const [kept] = ok(t, await write('PUT', ATTR, [{ name: 'Kept', type: 'STRING' }]));
  await expectRefused(
    t,
    'POST',
    ATTR,
    [
      { name: 'New one', type: 'STRING' },
      { id: kept.id, name: 'Kept renamed', type: 'STRING' },
      { name: 'Bad', type: 'STRING', forTypes: ['nope'] },
    ],
    400,
    "Type with slug 'nope' does not exist.",
    { context: "element 2 'Bad'" },
  );
  await expectRefused(
    t,
    'PUT',
    PATHS[1],
    [
      { name: 'New one', type: 'STRING' },
      { name: 'Bad', type: 'LIST', list: ['a', 'a'] },
    ],
    400,
    'Duplicate list values are not allowed, got several of: a',
    { context: "element 1 'Bad'" },
  );
  t.deepEqual((await s.get(`${ATTR}/${kept.id}`)).body, kept);
  t.false(ok(t, await s.get(ATTR)).some((a) => a.name === 'New one'));
});

test.serial('a reader key may not write attributes', async (t) => {
  for (const path of PATHS) {
    for (const method of ['PUT', 'POST']) {
      const before = await s.state();
      const reply = await s.request(method, path, { key: s.readerKey, body: [{ name: 'x', type: 'STRING' }] });
      t.is(reply.status, 403);
      t.deepEqual(reply.body, { error: 'This API key may only read.' });
      t.is(await s.state(), before);
    }
    t.is((await s.get(path, { key: s.readerKey })).status, 200);
  }
});
