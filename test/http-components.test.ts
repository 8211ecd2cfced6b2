/**
 * Components over HTTP (external-api.md §2.3, §4.3; CONTRACT.md §3–§4): create and update by
 * PUT and POST, refs, full overwrite, types, attribute values, links, and attribute changes
 * that would invalidate a stored component. Every test runs its own server.
 */
import test, { type ExecutionContext } from 'ava';
import { resourcePath } from '../src/model/paths.js';
import { type TestServer, withServer } from './support/server.js';
import { accepted, API_CONTEXT, refused, UNKNOWN_ID } from './support/models.js';

const C = '/api/external/component';
const A = '/api/external/attribute';
const STATES = ['DRAFT', 'ACTIVE', 'ARCHIVED'];

async function typeIds(s: TestServer): Promise<Record<string, string>> {
  const types = (await s.get('/api/external/type')).body as Array<{ id: string; slug: string }>;
  return Object.fromEntries(types.map((t) => [t.slug, t.id]));
}

test('PUT creates components and returns their full data; GET serves the same', (t) =>
  withServer(async (s) => {
    const types = await typeIds(s);
    const created = await accepted(t, s, 'PUT', C, [
      { name: 'Payment API', desc: 'Takes payments', typeSlug: 'container', state: 'ACTIVE', apiContext: 'pipeline #7' },
      { name: 'Ledger' },
    ]);
    t.is(created.length, 2);
    const [payment, ledger] = created;
    t.regex(payment.id, /^[0-9a-z]{26}$/);
    t.deepEqual(payment, {
      id: payment.id,
      name: 'Payment API',
      desc: 'Takes payments',
      typeId: types.container,
      typeSlug: 'container',
      state: 'ACTIVE',
      apiContext: 'pipeline #7',
      linksTo: [],
      attributes: [],
    });
    t.regex(ledger.apiContext, API_CONTEXT);
    t.deepEqual(ledger, {
      id: ledger.id,
      name: 'Ledger',
      desc: null,
      typeId: null,
      typeSlug: null,
      state: 'DRAFT',
      apiContext: ledger.apiContext,
      linksTo: [],
      attributes: [],
    });
    t.deepEqual((await s.get(C)).body, created);
    t.deepEqual((await s.get(`${C}/${ledger.id}`)).body, ledger);
    const message = await s.git('log', '-1', '--format=%B');
    t.true(message.startsWith('PUT /api/external/component: create 2\n'), message);
    t.true(message.includes(`create ${resourcePath('component', payment.id)} (Payment API)`));
  }));

test('PUT with the id of an existing component updates it; an unknown id is refused on PUT and POST', (t) =>
  withServer(async (s) => {
    const [made] = await accepted(t, s, 'PUT', C, [{ name: 'Payment API' }]);
    const [updated] = await accepted(t, s, 'PUT', C, [{ id: made.id, name: 'Payments', desc: 'renamed' }]);
    t.is(updated.id, made.id);
    t.is(updated.name, 'Payments');
    t.is(updated.desc, 'renamed');
    t.is((await s.get(C)).body.length, 1);
    await accepted(t, s, 'PUT', C, [{ id: made.id, name: 'Payments', desc: 'renamed' }], 0);
    for (const method of ['PUT', 'POST'] as const) {
      await refused(
        t,
        s,
        method,
        C,
        [{ name: 'ok' }, { id: UNKNOWN_ID, name: 'X' }],
        400,
        `Component with id '${UNKNOWN_ID}' does not exist.`,
      );
      await refused(t, s, method, C, [{ id: 'nope', name: 'X' }], 400, `Component with id 'nope' does not exist.`);
    }
    await refused(t, s, 'POST', C, [{ id: 5, name: 'X' }], 400, 'Invalid JSON: 0.id: Expected string, received number');
  }));

test('POST creates and updates in one request, in request order, as one commit', (t) =>
  withServer(async (s) => {
    const [a] = await accepted(t, s, 'POST', C, [{ name: 'A' }]);
    const result = await accepted(t, s, 'POST', C, [{ name: 'B' }, { id: a.id, name: 'A2' }, { name: 'C' }]);
    t.deepEqual(
      result.map((c: any) => c.name),
      ['B', 'A2', 'C'],
    );
    t.is(result[1].id, a.id);
    t.true((await s.git('log', '-1', '--format=%s')).startsWith('POST /api/external/component: create 2, update 1'));
    t.deepEqual(
      (await s.get(C)).body.map((c: any) => c.name),
      ['A2', 'B', 'C'],
      'lists come in creation order',
    );
    // An identical re-post by id changes nothing: the defaulted apiContext is no difference.
    await accepted(t, s, 'POST', C, [{ id: a.id, name: 'A2' }], 0);
    // An explicit apiContext is a field like any other.
    const [tagged] = await accepted(t, s, 'POST', C, [{ id: a.id, name: 'A2', apiContext: 'release 1.2' }]);
    t.is(tagged.apiContext, 'release 1.2');
    await accepted(t, s, 'POST', C, [{ id: a.id, name: 'A2', apiContext: 'release 1.2' }], 0);
    await accepted(t, s, 'POST', C, [{ id: a.id, name: 'A2' }], 0);
    t.is((await s.get(`${C}/${a.id}`)).body.apiContext, 'release 1.2', 'an unchanged component keeps its apiContext');
    await accepted(t, s, 'POST', C, [{ id: a.id, name: 'A2', apiContext: 'release 1.3' }]);
    t.true((await s.git('log', '-1', '--format=%B')).includes('Api-Context: release 1.3'));
    // Unknown fields are ignored.
    const [plain] = await accepted(
      t,
      s,
      'POST',
      C,
      [{ id: a.id, name: 'A2', apiContext: 'release 1.3', color: 'red', extra: { deep: [1] } }],
      0,
    );
    t.false('color' in plain || 'extra' in plain);
  }));

test('a ref creates once and then updates the component holding it', (t) =>
  withServer(async (s) => {
    const [first] = await accepted(t, s, 'POST', C, [{ ref: 'payments', name: 'Payments' }]);
    t.is(first.ref, 'payments');
    const [again] = await accepted(t, s, 'POST', C, [{ ref: 'payments', name: 'Payments', desc: 'now with a desc' }]);
    t.is(again.id, first.id);
    t.is(again.desc, 'now with a desc');
    await accepted(t, s, 'POST', C, [{ ref: 'payments', name: 'Payments', desc: 'now with a desc' }], 0);
    await accepted(t, s, 'PUT', C, [{ ref: 'payments', name: 'Payments', desc: 'now with a desc' }], 0);
    const [other] = await accepted(t, s, 'POST', C, [{ ref: 'ledger', name: 'Ledger' }]);
    t.not(other.id, first.id);
    t.deepEqual(
      (await s.get(C)).body.map((c: any) => c.ref),
      ['payments', 'ledger'],
    );
    await refused(
      t,
      s,
      'POST',
      C,
      [
        { ref: 'x', name: 'X' },
        { ref: 'x', name: 'Y' },
      ],
      400,
      `Ref 'x' is used more than once.`,
    );
    // Moving a ref by id onto another component while the first keeps it would duplicate it.
    await refused(t, s, 'POST', C, [{ id: other.id, ref: 'payments', name: 'Ledger' }], 400, `Ref 'payments' is used more than once.`);
  }));

test('an update overwrites the component completely', (t) =>
  withServer(async (s) => {
    const [attr] = await accepted(t, s, 'PUT', A, [{ name: 'Owner team', type: 'STRING' }]);
    const [target, full] = await accepted(t, s, 'PUT', C, [
      { name: 'Target' },
      { ref: 'full', name: 'Full', desc: 'all fields', typeSlug: 'database', state: 'ARCHIVED', apiContext: 'ctx-1' },
    ]);
    const [filled] = await accepted(t, s, 'POST', C, [
      {
        id: full.id,
        ref: 'full',
        name: 'Full',
        desc: 'all fields',
        typeSlug: 'database',
        state: 'ARCHIVED',
        apiContext: 'ctx-1',
        linksTo: [target.id],
        attributes: [{ id: attr.id, value: 'Core' }],
      },
    ]);
    t.deepEqual(filled.attributes, [{ id: attr.id, value: 'Core' }]);
    t.deepEqual(filled.linksTo, [target.id]);
    const [blank] = await accepted(t, s, 'POST', C, [{ id: full.id, name: 'Full' }]);
    t.regex(blank.apiContext, API_CONTEXT);
    t.deepEqual(
      blank,
      {
        id: full.id,
        name: 'Full',
        desc: null,
        typeId: null,
        typeSlug: null,
        state: 'DRAFT',
        apiContext: blank.apiContext,
        linksTo: [],
        attributes: [],
      },
      'desc null, no type, state DRAFT, no links, no attributes, no ref, a fresh apiContext',
    );
    t.deepEqual((await s.get(`${C}/${full.id}`)).body, blank);
  }));

test('name is required to create; an update may omit it and keeps the stored name', (t) =>
  withServer(async (s) => {
    await refused(t, s, 'PUT', C, [{ desc: 'no name' }], 400, 'Invalid JSON: 0.name: Required');
    await refused(t, s, 'POST', C, [{ name: 'fine' }, { ref: 'r', desc: 'no name' }], 400, 'Invalid JSON: 1.name: Required');
    await refused(
      t,
      s,
      'POST',
      C,
      [{ name: 5, state: 'FOO' }],
      400,
      `Invalid JSON: 0.name: Expected string, received number, 0.state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'FOO'`,
    );
    const [made] = await accepted(t, s, 'POST', C, [{ ref: 'r', name: 'Named', desc: 'one' }]);
    const [byId] = await accepted(t, s, 'POST', C, [{ id: made.id, ref: 'r', desc: 'two' }]);
    t.is(byId.name, 'Named');
    t.is(byId.desc, 'two');
    const [byRef] = await accepted(t, s, 'PUT', C, [{ ref: 'r', desc: 'three' }]);
    t.is(byRef.id, made.id);
    t.is(byRef.name, 'Named');
    t.is(byRef.desc, 'three');
  }));

test('the state enum is checked with the contract text', (t) =>
  withServer(async (s) => {
    await refused(
      t,
      s,
      'PUT',
      C,
      [{ name: 'A', state: 'active' }],
      400,
      `Invalid JSON: 0.state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'active'`,
    );
    const made = await accepted(
      t,
      s,
      'PUT',
      C,
      STATES.map((state) => ({ name: state, state })),
    );
    t.deepEqual(
      made.map((c: any) => c.state),
      STATES,
    );
  }));

test('typeId and typeSlug are both accepted and both returned; a mismatch or an unknown type is refused', (t) =>
  withServer(async (s) => {
    const types = await typeIds(s);
    const made = await accepted(t, s, 'PUT', C, [
      { name: 'by id', typeId: types.queue },
      { name: 'by slug', typeSlug: 'queue' },
      { name: 'by both', typeId: types.queue, typeSlug: 'queue' },
    ]);
    for (const c of made) {
      t.is(c.typeId, types.queue, c.name);
      t.is(c.typeSlug, 'queue', c.name);
    }
    await refused(
      t,
      s,
      'PUT',
      C,
      [{ name: 'x', typeId: types.queue, typeSlug: 'person' }],
      400,
      `typeId '${types.queue}' and typeSlug 'person' name different types.`,
      { context: `element 0 'x'` },
    );
    await refused(t, s, 'PUT', C, [{ name: 'x', typeId: UNKNOWN_ID }], 400, `Type with id '${UNKNOWN_ID}' does not exist.`, {
      context: `element 0 'x'`,
    });
    await refused(t, s, 'POST', C, [{ name: 'x', typeSlug: 'mainframe' }], 400, `Type with slug 'mainframe' does not exist.`, {
      context: `element 0 'x'`,
    });
    await refused(t, s, 'POST', C, [{ id: made[0].id, name: 'by id', typeSlug: 'Queue' }], 400, `Type with slug 'Queue' does not exist.`, {
      context: `element 0 'by id'`,
    });
    // Changing the type by slug on update.
    const [moved] = await accepted(t, s, 'POST', C, [{ id: made[0].id, name: 'by id', typeSlug: 'person' }]);
    t.is(moved.typeId, types.person);
  }));

/** One attribute of every type. */
async function everyAttribute(s: TestServer, t: ExecutionContext) {
  const made = await accepted(t, s, 'PUT', A, [
    { name: 'Team', type: 'STRING' },
    { name: 'Cost', type: 'NUMBER' },
    { name: 'Public', type: 'BOOLEAN' },
    { name: 'Docs', type: 'LINK' },
    { name: 'Tier', type: 'LIST', list: ['gold', 'silver'] },
    { name: 'Owner', type: 'USERLIST' },
  ]);
  const [string, number, boolean, link, list, userlist] = made.map((a: any) => a.id as string);
  return { string, number, boolean, link, list, userlist };
}

test('attribute values of every type are accepted as the contract allows', (t) =>
  withServer(async (s) => {
    const a = await everyAttribute(s, t);
    const cases: Array<[string, unknown]> = [
      [a.string, 'Team Blue'],
      [a.string, ''],
      [a.number, -12.75],
      [a.number, 0],
      [a.number, 1e6],
      [a.boolean, true],
      [a.boolean, false],
      [a.link, 'https://docs.example.com/payments?x=1#top'],
      [a.link, 'http://localhost:8080'],
      [a.link, ''],
      [a.list, 'gold'],
      [a.list, 'silver'],
      [a.userlist, 'ada@example.com'],
      [a.userlist, 'linus@example.com'],
      [a.userlist, null],
    ];
    const body = cases.map(([id, value], n) => ({ name: `c${n}`, attributes: [{ id, value }] }));
    const made = await accepted(t, s, 'PUT', C, body);
    t.deepEqual(
      made.map((c: any) => c.attributes),
      cases.map(([id, value]) => [{ id, value }]),
    );
    // All of them on one component, returned in request order.
    const all = [
      { id: a.userlist, value: 'ada@example.com' },
      { id: a.string, value: 'x' },
      { id: a.number, value: 3 },
      { id: a.boolean, value: true },
      { id: a.link, value: 'https://example.com' },
      { id: a.list, value: 'gold' },
    ];
    const [one] = await accepted(t, s, 'POST', C, [{ ref: 'all', name: 'All', attributes: all }]);
    t.deepEqual(one.attributes, all);
    await accepted(t, s, 'POST', C, [{ ref: 'all', name: 'All', attributes: all }], 0);
  }));

test('attribute values of the wrong kind are refused with the exact texts', (t) =>
  withServer(async (s) => {
    const a = await everyAttribute(s, t);
    const wrong: Array<[string, unknown, string]> = [
      [a.string, 5, `Value for STRING attribute '${a.string}' must be a string.`],
      [a.string, null, `Value for STRING attribute '${a.string}' must be a string.`],
      [a.string, true, `Value for STRING attribute '${a.string}' must be a string.`],
      [a.number, '5', `Value for NUMBER attribute '${a.number}' must be a number.`],
      [a.number, null, `Value for NUMBER attribute '${a.number}' must be a number.`],
      [a.boolean, 'true', `Value for BOOLEAN attribute '${a.boolean}' must be a boolean.`],
      [a.boolean, 1, `Value for BOOLEAN attribute '${a.boolean}' must be a boolean.`],
      [a.link, 'not a url', `Value for LINK attribute '${a.link}' must be a valid URL.`],
      [a.link, 'docs.example.com', `Value for LINK attribute '${a.link}' must be a valid URL.`],
      [a.link, 7, `Value for LINK attribute '${a.link}' must be a valid URL.`],
      [a.list, 'bronze', `Value for LIST attribute '${a.list}' must be one of: gold, silver.`],
      [a.list, 'Gold', `Value for LIST attribute '${a.list}' must be one of: gold, silver.`],
      [a.list, '', `Value for LIST attribute '${a.list}' must be one of: gold, silver.`],
      [a.userlist, 'eve@example.com', `Value for USERLIST attribute '${a.userlist}' must be the e-mail address of an organization member.`],
      [a.userlist, 'ada', `Value for USERLIST attribute '${a.userlist}' must be the e-mail address of an organization member.`],
      [a.userlist, '', `Value for USERLIST attribute '${a.userlist}' must be the e-mail address of an organization member.`],
    ];
    const names = new Map([
      [a.string, 'Team'],
      [a.number, 'Cost'],
      [a.boolean, 'Public'],
      [a.link, 'Docs'],
      [a.list, 'Tier'],
      [a.userlist, 'Owner'],
    ]);
    for (const [id, value, error] of wrong) {
      await refused(t, s, 'PUT', C, [{ name: 'fine' }, { name: 'bad', attributes: [{ id, value }] }], 400, error, {
        context: `attribute '${names.get(id)}', element 1 'bad'`,
      });
    }
    // A long name, or one of several lines, is quoted on one line and cut: it says which element is meant.
    await refused(
      t,
      s,
      'PUT',
      C,
      [{ name: `first line\nsecond ${'x'.repeat(300)}`, attributes: [{ id: a.number, value: 'many' }] }],
      400,
      `Value for NUMBER attribute '${a.number}' must be a number.`,
      { context: `attribute 'Cost', element 0 '${`first line second ${'x'.repeat(300)}`.slice(0, 100)}…'` },
    );
    // An address is a member's whatever its case, as mail systems read it; stored as the organization spells it.
    const [cased] = await accepted(t, s, 'PUT', C, [{ name: 'cased', attributes: [{ id: a.userlist, value: 'ADA@Example.com' }] }]);
    t.deepEqual(cased.attributes, [{ id: a.userlist, value: 'ada@example.com' }]);
    await refused(
      t,
      s,
      'PUT',
      C,
      [{ name: 'x', attributes: [{ id: UNKNOWN_ID, value: 'v' }] }],
      400,
      `Attribute with id '${UNKNOWN_ID}' does not exist.`,
      { context: `element 0 'x'` },
    );
    await refused(t, s, 'PUT', C, [{ name: 'x', attributes: [{ id: a.string }] }], 400, 'Invalid JSON: 0.attributes.0.value: Required');
    await refused(
      t,
      s,
      'PUT',
      C,
      [{ name: 'x', attributes: [{ id: a.string, value: { a: 1 } }] }],
      400,
      'Invalid JSON: 0.attributes.0.value: Expected string | number | boolean | null, received object',
    );
    await refused(
      t,
      s,
      'PUT',
      C,
      [
        {
          name: 'x',
          attributes: [
            { id: a.string, value: 'a' },
            { id: a.string, value: 'b' },
          ],
        },
      ],
      400,
      `Attribute '${a.string}' is given more than once.`,
      { context: `attribute 'Team', element 0 'x'` },
    );
    // The same holds for an update of a stored component.
    const [made] = await accepted(t, s, 'PUT', C, [{ name: 'stored', attributes: [{ id: a.number, value: 1 }] }]);
    await refused(
      t,
      s,
      'POST',
      C,
      [{ id: made.id, name: 'stored', attributes: [{ id: a.number, value: 'one' }] }],
      400,
      `Value for NUMBER attribute '${a.number}' must be a number.`,
      { context: `attribute 'Cost', element 0 'stored'` },
    );
  }));

test('an attribute limited by forTypes applies only to components of those types', (t) =>
  withServer(async (s) => {
    const [attr] = await accepted(t, s, 'PUT', A, [{ name: 'Engine', type: 'STRING', forTypes: ['database'] }]);
    const value = [{ id: attr.id, value: 'postgres' }];
    const [db] = await accepted(t, s, 'PUT', C, [{ name: 'DB', typeSlug: 'database', attributes: value }]);
    t.deepEqual(db.attributes, value);
    await refused(
      t,
      s,
      'PUT',
      C,
      [{ name: 'Q', typeSlug: 'queue', attributes: value }],
      400,
      `Attribute '${attr.id}' does not apply to components of type 'queue'.`,
      { context: `attribute 'Engine', element 0 'Q'` },
    );
    await refused(
      t,
      s,
      'PUT',
      C,
      [{ name: 'untyped', attributes: value }],
      400,
      `Attribute '${attr.id}' does not apply to components of type '(none)'.`,
      { context: `attribute 'Engine', element 0 'untyped'` },
    );
    // Changing the stored component's type while it holds the value is refused too.
    await refused(
      t,
      s,
      'POST',
      C,
      [{ id: db.id, name: 'DB', typeSlug: 'queue', attributes: value }],
      400,
      `Attribute '${attr.id}' does not apply to components of type 'queue'.`,
      { context: `attribute 'Engine', element 0 'DB'` },
    );
  }));

test('a required attribute must have a non-empty value on the components it applies to', (t) =>
  withServer(async (s) => {
    const [attr] = await accepted(t, s, 'PUT', A, [{ name: 'Owner', type: 'STRING', required: true, forTypes: ['queue'] }]);
    const error = `Required attribute '${attr.id}' has no value.`;
    const concerns = { context: "attribute 'Owner', element 0 'Q'" };
    await refused(t, s, 'PUT', C, [{ name: 'Q', typeSlug: 'queue' }], 400, error, concerns);
    await refused(t, s, 'PUT', C, [{ name: 'Q', typeSlug: 'queue', attributes: [{ id: attr.id, value: '' }] }], 400, error, concerns);
    const [q, other] = await accepted(t, s, 'PUT', C, [
      { name: 'Q', typeSlug: 'queue', attributes: [{ id: attr.id, value: 'team-a' }] },
      { name: 'not a queue', typeSlug: 'database' },
    ]);
    t.deepEqual(q.attributes, [{ id: attr.id, value: 'team-a' }]);
    t.deepEqual(other.attributes, []);
    // A full overwrite that drops the value is refused.
    await refused(t, s, 'POST', C, [{ id: q.id, name: 'Q', typeSlug: 'queue' }], 400, error, concerns);
    // A required USERLIST attribute: null is no value.
    const [user] = await accepted(t, s, 'PUT', A, [{ name: 'Reviewer', type: 'USERLIST', required: true, forTypes: ['person'] }]);
    await refused(
      t,
      s,
      'PUT',
      C,
      [{ name: 'P', typeSlug: 'person', attributes: [{ id: user.id, value: null }] }],
      400,
      `Required attribute '${user.id}' has no value.`,
      { context: `attribute 'Reviewer', element 0 'P'` },
    );
  }));

test('linksTo takes ids and refs of the same request; an unknown one is refused', (t) =>
  withServer(async (s) => {
    const [stored] = await accepted(t, s, 'PUT', C, [{ name: 'Stored', ref: 'stored' }]);
    const made = await accepted(t, s, 'POST', C, [
      { ref: 'a', name: 'A', linksTo: ['b', stored.id] },
      { ref: 'b', name: 'B', linksTo: ['a', 'stored'] },
      { name: 'Self', ref: 'self', linksTo: ['self'] },
    ]);
    const [a, b, self] = made;
    t.deepEqual(a.linksTo, [b.id, stored.id], 'a ref defined later in the request resolves');
    t.deepEqual(b.linksTo, [a.id, stored.id], 'a stored ref resolves');
    t.deepEqual(self.linksTo, [self.id]);
    await refused(
      t,
      s,
      'POST',
      C,
      [{ name: 'X', linksTo: [stored.id, UNKNOWN_ID] }],
      400,
      `Component with id '${UNKNOWN_ID}' does not exist.`,
      { context: `element 0 'X'` },
    );
    await refused(
      t,
      s,
      'POST',
      C,
      [{ id: a.id, ref: 'a', name: 'A', linksTo: [UNKNOWN_ID] }],
      400,
      `Component with id '${UNKNOWN_ID}' does not exist.`,
      { context: `element 0 'A'` },
    );
    // Something that is not an id names a ref, and the message says so.
    await refused(t, s, 'POST', C, [{ name: 'X', linksTo: ['nobody'] }], 400, `Ref 'nobody' does not resolve to a component.`, {
      context: `element 0 'X'`,
    });
    await refused(
      t,
      s,
      'POST',
      C,
      [{ name: 'X', linksTo: [a.id, 'b', 'a'] }],
      400,
      `Component with id '${a.id}' is given more than once in linksTo.`,
      { context: `element 0 'X'` },
    );
    await refused(t, s, 'POST', C, [{ name: 'X', linksTo: 'a' }], 400, 'Invalid JSON: 0.linksTo: Expected array, received string');
  }));

test('a write with one bad element changes nothing at all', (t) =>
  withServer(async (s) => {
    const [stored] = await accepted(t, s, 'PUT', C, [{ ref: 'keep', name: 'Keep', desc: 'as is' }]);
    await refused(
      t,
      s,
      'POST',
      C,
      [{ name: 'New one' }, { id: stored.id, ref: 'keep', name: 'Changed' }, { name: 'Bad', typeSlug: 'nope' }],
      400,
      `Type with slug 'nope' does not exist.`,
      { context: `element 2 'Bad'` },
    );
    t.deepEqual((await s.get(`${C}/${stored.id}`)).body, stored);
  }));

test('changing an attribute type a component relies on is refused naming the component', (t) =>
  withServer(async (s) => {
    const [text, tier] = await accepted(t, s, 'PUT', A, [
      { name: 'Code', type: 'STRING' },
      { name: 'Tier', type: 'LIST', list: ['gold', 'silver', 'bronze'] },
    ]);
    const [holder] = await accepted(t, s, 'PUT', C, [
      {
        name: 'Holder',
        attributes: [
          { id: text.id, value: 'abc' },
          { id: tier.id, value: 'silver' },
        ],
      },
    ]);
    const name = `Component '${holder.id}' (Holder)`;
    await refused(
      t,
      s,
      'POST',
      A,
      [{ id: text.id, name: 'Code', type: 'NUMBER' }],
      400,
      `${name} would become invalid: Value for NUMBER attribute '${text.id}' must be a number.`,
      { context: `attribute 'Code', element 0 'Code'` },
    );
    await refused(
      t,
      s,
      'POST',
      A,
      [{ id: tier.id, name: 'Tier', type: 'LIST', list: ['gold', 'bronze'] }],
      400,
      `${name} would become invalid: Value for LIST attribute '${tier.id}' must be one of: gold, bronze.`,
      { context: `attribute 'Tier', element 0 'Tier'` },
    );
    await refused(
      t,
      s,
      'POST',
      A,
      [{ id: text.id, name: 'Code', type: 'STRING', required: true, forTypes: ['queue'] }],
      400,
      `${name} would become invalid: Attribute '${text.id}' does not apply to components of type '(none)'.`,
      { context: `attribute 'Code', element 0 'Code'` },
    );
    // Removing an item nobody holds, or changing the type of an unused attribute, is fine.
    const [shorter] = await accepted(t, s, 'POST', A, [{ id: tier.id, name: 'Tier', type: 'LIST', list: ['gold', 'silver'] }]);
    t.deepEqual(shorter.list, ['gold', 'silver']);
    const [unused] = await accepted(t, s, 'PUT', A, [{ name: 'Unused', type: 'STRING' }]);
    const [retyped] = await accepted(t, s, 'POST', A, [{ id: unused.id, name: 'Unused', type: 'BOOLEAN' }]);
    t.is(retyped.type, 'BOOLEAN');
    // Making an attribute required while a component lacks it is refused the same way.
    await refused(
      t,
      s,
      'POST',
      A,
      [{ id: unused.id, name: 'Unused', type: 'BOOLEAN', required: true }],
      400,
      `${name} would become invalid: Required attribute '${unused.id}' has no value.`,
      { context: `attribute 'Unused', element 0 'Unused'` },
    );
    // Once the component drops the value, the type change goes through.
    await accepted(t, s, 'POST', C, [{ id: holder.id, name: 'Holder', attributes: [{ id: tier.id, value: 'silver' }] }]);
    const [number] = await accepted(t, s, 'POST', A, [{ id: text.id, name: 'Code', type: 'NUMBER' }]);
    t.is(number.type, 'NUMBER');
  }));

test('one type is found by its id or by its slug (external-api §2: types are named by either), both forms; an unknown one 404', (t) =>
  withServer(async (s) => {
    const types = await typeIds(s);
    for (const path of ['/api/external/type', '/api/external/types']) {
      const byId = await s.get(`${path}/${types.database}`);
      const bySlug = await s.get(`${path}/database`);
      t.is(byId.status, 200);
      t.is(bySlug.status, 200, bySlug.text);
      t.deepEqual(bySlug.body, byId.body);
      t.like(bySlug.body, { id: types.database, slug: 'database' });
      const unknown = await s.get(`${path}/no-such-type`);
      t.deepEqual([unknown.status, unknown.body], [404, { error: "Type with id 'no-such-type' does not exist." }]);
    }
  }));
