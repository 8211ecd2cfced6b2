/**
 * The newest published form of the API (issue 24, points 13 and 21): filters as query parameters
 * of the list GETs, `GET /components/{id}/dependencies`, a diagram's drawing on the plural path,
 * `forTypes` by type id, refs wherever a resource is named by a GET, and a relation keeping its id
 * when only its label changes. Over real HTTP, each write one commit (support/current.ts).
 */
import test, { type ExecutionContext } from 'ava';
import { type TestServer, withServer } from './support/server.js';
import { API, no, ok } from './support/current.js';
import { BoundedAnswers } from '../src/http/bounded-answers.js';
import type { Snapshot } from '../src/service/org.js';
import { checkRequestsAgainstOpenApi } from './support/requests.js';

checkRequestsAgainstOpenApi();

async function typeId(s: TestServer, slug: string): Promise<string> {
  return (await s.get(`${API}/types`)).body.find((x: any) => x.slug === slug).id;
}

/** Tags, an attribute, four components and two diagrams to filter. */
async function seed(t: ExecutionContext, s: TestServer) {
  const container = await typeId(s, 'container');
  await ok(t, s, 'POST', `${API}/tags`, { id: 'core', ref: 'core-tag', name: 'Core', color: 'blue' }, { status: 201 });
  await ok(t, s, 'POST', `${API}/attributes`, { id: 'tier', ref: 'tier-attr', name: 'Tier', type: 'NUMBER' }, { status: 201 });
  await ok(t, s, 'PATCH', `${API}/components/upsert-batch`, [
    {
      id: 'pay',
      ref: 'payments',
      name: 'Payment API',
      typeId: container,
      tags: ['core'],
      attributes: [{ id: 'tier', value: 1 }],
      state: 'ACTIVE',
    },
    { id: 'worker', name: 'Payment worker', typeSlug: 'container', attributes: [{ id: 'tier', value: 2 }] },
    { id: 'catalog', name: 'Catalog', tags: ['core'] },
    { id: 'ledger', name: 'Ledger DB', typeSlug: 'database' },
  ]);
  await ok(
    t,
    s,
    'POST',
    `${API}/diagrams`,
    {
      id: 'pay-c2',
      ref: 'payments-view',
      name: 'Payments',
      level: 'C2',
      tags: ['core'],
      componentInstances: [
        { ref: 'p', componentId: 'pay' },
        { ref: 'l', componentId: 'ledger' },
      ],
      relations: [{ fromRef: 'p', toRef: 'l', label: 'SQL' }],
    },
    { status: 201 },
  );
  await ok(t, s, 'POST', `${API}/diagrams`, { id: 'landscape', name: 'Landscape', state: 'ACTIVE' }, { status: 201 });
  return { container };
}

const ids = (reply: { body: Array<{ id: string }> }) => reply.body.map((x) => x.id);

test('GET /components filters by name, type, tag, attribute value and state; ids, refs and slugs name resources', (t) =>
  withServer(async (s) => {
    const { container } = await seed(t, s);
    const found = async (query: string) => {
      const reply = await s.get(`${API}/components?${query}`);
      t.is(reply.status, 200, `${query}: ${reply.text}`);
      return ids(reply);
    };
    t.deepEqual(await found(''), ['catalog', 'ledger', 'pay', 'worker'], 'list order: id order');
    t.deepEqual(await found('name=PAYMENT'), ['pay', 'worker']);
    t.deepEqual(await found('name=nothing'), [], 'no match is an empty list, never the whole list');
    t.deepEqual(await found(`typeId=${container}`), ['pay', 'worker']);
    t.deepEqual(await found('typeId=database'), ['ledger'], 'a type by its slug');
    t.deepEqual(await found('tagId=core'), ['catalog', 'pay']);
    t.deepEqual(await found('tagId=core-tag'), ['catalog', 'pay'], 'a tag by its ref');
    t.deepEqual(await found('attributeId=tier'), ['pay', 'worker']);
    t.deepEqual(await found('attributeId=tier-attr&attributeValue=2'), ['worker']);
    t.deepEqual(await found('state=ACTIVE'), ['pay']);
    t.deepEqual(await found('name=payment&tagId=core&state=ACTIVE'), ['pay'], 'filters combine with AND');
    // The answers are the list's items, in its shape (the current form's).
    const [pay] = (await s.get(`${API}/components?name=payment%20api`)).body;
    t.deepEqual(pay, (await s.get(`${API}/components/pay`)).body);
    // YAML, ?at= and the ETag as on every list.
    const before = await s.head();
    await ok(t, s, 'PATCH', `${API}/components/catalog`, { state: 'ACTIVE' });
    t.deepEqual(await found('state=ACTIVE'), ['catalog', 'pay']);
    t.deepEqual(await found(`state=ACTIVE&at=${before}`), ['pay']);
    const yaml = await s.get(`${API}/components?state=ACTIVE`, { yaml: true });
    t.regex(yaml.headers.get('content-type') ?? '', /yaml/);
    t.deepEqual(ids(yaml), ['catalog', 'pay']);
    t.is(yaml.headers.get('etag'), `"${await s.head()}"`);
  }));

test('a filtered list is paged like the whole list, the Link keeping its filters', (t) =>
  withServer(async (s) => {
    await seed(t, s);
    const first = await s.get(`${API}/components?name=a&limit=2`);
    t.deepEqual(ids(first), ['catalog', 'pay'], "'Ledger DB' has no 'a'");
    const link = first.headers.get('link') ?? '';
    t.is(link, '</api/external/components?name=a&limit=2&cursor=pay>; rel="next"');
    const next = await s.get(link.slice(1, link.indexOf('>')));
    t.deepEqual(ids(next), ['worker']);
    t.is(next.headers.get('link'), null);
    t.deepEqual(ids(await s.get(`${API}/components?tagId=core&limit=1&cursor=catalog`)), ['pay']);
    // The cursor's component deleted between two pages: the walk goes on after where it was.
    t.is((await s.request('DELETE', `${API}/components/pay?cascade=true`)).status, 200);
    const after = await s.get(link.slice(1, link.indexOf('>')));
    t.is(after.status, 200, after.text);
    t.deepEqual(ids(after), ['worker']);
    t.deepEqual(
      ids(await s.get(`${API}/components?limit=100&cursor=pay`)),
      ids(await s.get(`${API}/components`)).filter((id) => id > 'pay'),
    );
  }));

test('GET /diagrams, /types, /tags and /attributes filter too', (t) =>
  withServer(async (s) => {
    await seed(t, s);
    const found = async (path: string) => ids(await s.get(`${API}${path}`));
    t.deepEqual(await found('/diagrams?componentId=ledger'), ['pay-c2']);
    t.deepEqual(await found('/diagrams?componentId=payments'), ['pay-c2'], 'a component by its ref');
    t.deepEqual(await found('/diagrams?tagId=core'), ['pay-c2']);
    t.deepEqual(await found('/diagrams?name=LAND'), ['landscape']);
    t.deepEqual(await found('/diagrams?level=C2'), ['pay-c2']);
    t.deepEqual(await found('/diagrams?level=null'), ['landscape']);
    t.deepEqual(await found('/diagrams?state=ACTIVE'), ['landscape']);
    t.deepEqual(await found('/diagrams?state=DRAFT&level=C2&componentId=pay'), ['pay-c2']);
    const types = (await s.get(`${API}/types?name=CONTAIN`)).body;
    t.deepEqual(
      types.map((x: any) => x.slug),
      ['container'],
    );
    t.deepEqual(await found('/tags?name=co'), ['core']);
    t.deepEqual(await found('/attributes?name=tier'), ['tier']);
    t.deepEqual(await found('/attributes?name=nothing'), []);
  }));

test('a parameter a list does not take is refused (400), never ignored; bad values too', (t) =>
  withServer(async (s) => {
    await seed(t, s);
    const refused = async (path: string, error: string) => {
      const reply = await s.get(`${API}${path}`);
      t.is(reply.status, 400, path);
      t.deepEqual(reply.body, { error }, path);
    };
    await refused(
      '/components?nmae=Pay',
      "Unknown query parameter 'nmae': GET /api/external/components takes name, typeId, tagId, attributeId, attributeValue, state, limit, cursor, at, draft.",
    );
    await refused(
      '/diagrams?type=C2',
      "Unknown query parameter 'type': GET /api/external/diagrams takes componentId, tagId, name, level, state, limit, cursor, at, draft.",
    );
    await refused('/types?slug=container', "Unknown query parameter 'slug': GET /api/external/types takes name, limit, cursor, at, draft.");
    await refused('/tags?color=red', "Unknown query parameter 'color': GET /api/external/tags takes name, limit, cursor, at, draft.");
    await refused(
      '/attributes?type=NUMBER',
      "Unknown query parameter 'type': GET /api/external/attributes takes name, limit, cursor, at, draft.",
    );
    await refused('/components?name=a&name=b', "Query parameter 'name' is given more than once.");
    await refused('/components?state=LIVE', "Invalid state 'LIVE': use DRAFT, ACTIVE, ARCHIVED.");
    await refused('/diagrams?level=C9', "Invalid level 'C9': use C0, C1, C2, C3, C4, D1, P0, null.");
    await refused('/components?attributeValue=2', 'attributeValue needs attributeId.');
    await refused(
      '/search/components?nmae=x',
      "Unknown query parameter 'nmae': GET /api/external/search/components takes name, typeId, tagId, attributeId, attributeValue, state, at, draft.",
    );
    await refused(
      '/components/pay/dependencies?direction=up',
      "Unknown query parameter 'direction': GET /api/external/components/pay/dependencies takes at, draft.",
    );
    // Paging and ?at= stay as they were; the seed's lists take no filters and are unchanged.
    t.is((await s.get(`${API}/components?limit=2&at=main`)).status, 200);
    // (Sent past the request check: the document declares no parameter there, rightly.)
    const seedList = await fetch(`${s.url}${API}/component?name=nothing`, { headers: { authorization: `Bearer ${s.key}` } });
    t.is(((await seedList.json()) as unknown[]).length, 4);
  }));

test('GET /components/{id}/dependencies: by id or ref, as /search/dependencies answers', (t) =>
  withServer(async (s) => {
    await seed(t, s);
    const expected = [
      { component: { id: 'ledger', name: 'Ledger DB' }, direction: 'downstream', diagrams: [{ id: 'pay-c2', name: 'Payments' }] },
    ];
    t.deepEqual((await s.get(`${API}/components/pay/dependencies`)).body, expected);
    t.deepEqual((await s.get(`${API}/components/payments/dependencies`)).body, expected);
    t.deepEqual((await s.get(`${API}/search/dependencies?componentId=payments`)).body, expected);
    t.deepEqual((await s.get(`${API}/components/ledger/dependencies`)).body, [
      { component: { id: 'pay', name: 'Payment API' }, direction: 'upstream', diagrams: [{ id: 'pay-c2', name: 'Payments' }] },
    ]);
    t.deepEqual((await s.get(`${API}/components/catalog/dependencies`)).body, []);
    const missing = await s.get(`${API}/components/ghost/dependencies`);
    t.is(missing.status, 404);
    t.deepEqual(missing.body, { error: "Component with id 'ghost' does not exist." });
  }));

test('Accept: image/svg+xml on GET /diagrams/{id} (id or ref) draws the diagram as the seed path does', (t) =>
  withServer(async (s) => {
    await seed(t, s);
    const svg = { headers: { accept: 'image/svg+xml' } };
    const plural = await s.get(`${API}/diagrams/pay-c2`, svg);
    t.is(plural.status, 200);
    t.is(plural.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
    t.is(plural.headers.get('etag'), `"${await s.head()}"`);
    t.regex(plural.text, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    t.regex(plural.text, /Payment API/);
    t.is((await s.get(`${API}/diagrams/payments-view`, svg)).text, plural.text);
    t.is((await s.get(`${API}/diagram/pay-c2`, svg)).text, plural.text);
    t.is((await s.get(`${API}/diagram/payments-view`, svg)).text, plural.text, 'the seed path by ref too');
    const missing = await s.get(`${API}/diagrams/ghost`, svg);
    t.is(missing.status, 404);
    t.regex(missing.headers.get('content-type') ?? '', /json/);
    // JSON stays the default.
    t.is((await s.get(`${API}/diagrams/pay-c2`)).body.id, 'pay-c2');
  }));

test("the seed's singular GETs and the search filters take refs too", (t) =>
  withServer(async (s) => {
    await seed(t, s);
    t.is((await s.get(`${API}/component/payments`)).body.id, 'pay');
    t.is((await s.get(`${API}/diagram/payments-view`)).body.id, 'pay-c2');
    t.is((await s.get(`${API}/tag/core-tag`)).body.id, 'core');
    t.is((await s.get(`${API}/attribute/tier-attr`)).body.id, 'tier');
    t.is((await s.get(`${API}/component/ghost`)).status, 404);
    const names = async (path: string) => (await s.get(`${API}${path}`)).body.map((x: any) => x.id);
    t.deepEqual(await names('/search/components?tagId=core-tag'), ['catalog', 'pay']);
    t.deepEqual(await names('/search/components?attributeId=tier-attr&attributeValue=1'), ['pay']);
    t.deepEqual(await names('/search/components?typeId=database'), ['ledger']);
    t.deepEqual(await names('/search/diagrams?componentId=payments'), ['pay-c2']);
  }));

test('forTypes on the plural paths takes type ids as well as slugs, and stores slugs', (t) =>
  withServer(async (s) => {
    const container = await typeId(s, 'container');
    const byId = await ok(
      t,
      s,
      'POST',
      `${API}/attributes`,
      { id: 'cost', name: 'Cost', type: 'NUMBER', forTypes: [container] },
      { status: 201 },
    );
    t.deepEqual(byId.forTypes, ['container']);
    const both = await ok(t, s, 'PATCH', `${API}/attributes/cost`, { forTypes: ['database', container, 'container'] });
    t.deepEqual(both.forTypes, ['database', 'container']);
    const batch = await ok(t, s, 'PATCH', `${API}/attributes/upsert-batch`, [{ name: 'Owner', type: 'STRING', forTypes: [container] }]);
    t.deepEqual(batch[0].forTypes, ['container']);
    // The seed's paths keep their contract: slugs only (test/http-attributes.test.ts).
    t.regex(await s.git('show', `main:attributes/cost.yaml`), /forTypes:\n {2}- database\n {2}- container\n/);
    await no(t, s, 'PATCH', `${API}/attributes/cost`, { forTypes: ['nope'] }, 400, "Type with slug 'nope' does not exist.", {
      context: "attribute 'Cost'",
    });
  }));

test('a relation whose label is edited keeps its id, in every form that sends relations without ids', (t) =>
  withServer(async (s) => {
    await seed(t, s);
    const stored = (await s.get(`${API}/diagrams/pay-c2`)).body;
    const relationId = stored.relations[0].id;
    // The seed's form, relations named by instance ids, no relation id.
    const instances = stored.componentInstances.map((i: any) => ({ id: i.id, ref: i.ref, component: i.componentId }));
    const [seedAnswer] = await ok(t, s, 'POST', `${API}/diagram`, [
      {
        id: 'pay-c2',
        name: 'Payments',
        level: 'C2',
        componentInstances: instances,
        relations: [{ fromComponentInstance: instances[0].id, toComponentInstance: instances[1].id, label: 'reads and writes' }],
      },
    ]);
    t.is(seedAnswer.relations[0].id, relationId);
    // The template, by refs.
    const answer = await ok(t, s, 'POST', `${API}/template`, {
      diagrams: [
        {
          id: 'pay-c2',
          relations: [
            { fromRef: 'p', toRef: 'l', label: 'SQL over TLS' },
            { fromRef: 'p', toRef: 'l', label: 'a second one' },
          ],
        },
      ],
    });
    t.is(answer.diagrams[0].relations[0].id, relationId);
    t.not(answer.diagrams[0].relations[1].id, relationId, 'a second relation between the same two is a new one');
    // Two stored, both edited: each keeps its id; an exact repetition takes its own first.
    const both = answer.diagrams[0].relations.map((r: any) => r.id);
    const swapped = await ok(t, s, 'POST', `${API}/template`, {
      diagrams: [
        {
          id: 'pay-c2',
          relations: [
            { fromRef: 'p', toRef: 'l', label: 'edited' },
            { fromRef: 'p', toRef: 'l', label: 'SQL over TLS' },
          ],
        },
      ],
    });
    t.deepEqual(
      swapped.diagrams[0].relations.map((r: any) => r.id),
      [both[1], both[0]],
    );
  }));

test('filtered answers are kept per commit within a budget of bytes, least recently used first out', (t) => {
  const answers = new BoundedAnswers(100);
  const snapshot = (commit: string) => ({ commit, responses: new Map() }) as unknown as Snapshot;
  const a = snapshot('a');
  const b = snapshot('b');
  answers.of(a).set('k', Buffer.alloc(40));
  answers.of(b).set('k', Buffer.alloc(40));
  t.is(answers.of(a).get('k')?.length, 40);
  t.is(answers.of(b).get('k')?.length, 40, 'one key, two snapshots, two answers');
  answers.of(a).get('k');
  answers.of(a).set('other', Buffer.alloc(40));
  t.is(answers.bytes, 80);
  t.is(answers.of(b).get('k'), undefined, 'the least recently used went');
  t.truthy(answers.of(a).get('k'));
  answers.of(a).set('huge', Buffer.alloc(101));
  t.is(answers.of(a).get('huge'), undefined, 'an answer over the budget is not kept');
  t.true(answers.bytes <= 100);
});

test('a repeated filtered list is the same bytes until the next commit', (t) =>
  withServer(async (s) => {
    await seed(t, s);
    const first = await s.get(`${API}/components?state=ACTIVE&name=pay`);
    const again = await s.get(`${API}/components?name=pay&state=ACTIVE`);
    t.is(again.text, first.text);
    await ok(t, s, 'POST', `${API}/components`, { name: 'Payment gateway', state: 'ACTIVE' }, { status: 201 });
    t.deepEqual(
      (await s.get(`${API}/components?state=ACTIVE&name=pay`)).body.map((c: any) => c.name),
      ['Payment gateway', 'Payment API'],
    );
    const cached = await s.get(`${API}/components?state=ACTIVE&name=pay`, { headers: { 'if-none-match': `"${await s.head()}"` } });
    t.is(cached.status, 304);
  }));
