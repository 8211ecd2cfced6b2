/**
 * Diagrams over HTTP (external-api.md §2.4–2.7, §4.4; CONTRACT.md §3–§4): levels, instances,
 * containers, sizes, text areas, relations, tags, url, nested replacement and the automatic
 * layout that survives updates. Every test runs its own server.
 */
import test from 'ava';
import { type TestServer, withServer } from './support/server.js';
import { findOverlaps } from '../src/layout/layout.js';
import { accepted, API_CONTEXT, checkLayout, layoutOf, refused, UNKNOWN_ID } from './support/models.js';

const D = '/api/external/diagram';
const C = '/api/external/component';

/** Two stored components, refs `api` and `db`. */
async function twoComponents(s: TestServer): Promise<{ api: string; db: string }> {
  const reply = await s.put(C, [
    { ref: 'api', name: 'Payment API' },
    { ref: 'db', name: 'Ledger DB', typeSlug: 'database' },
  ]);
  if (reply.status !== 200) throw new Error(reply.text);
  return { api: reply.body[0].id, db: reply.body[1].id };
}

const byRef = (diagram: any, ref: string) => diagram.componentInstances.find((i: any) => i.ref === ref);

test('levels C1–C4 are accepted; another level, a missing level or name are refused with the schema texts', (t) =>
  withServer(async (s) => {
    const made = await accepted(
      t,
      s,
      'POST',
      D,
      ['C1', 'C2', 'C3', 'C4'].map((level) => ({ name: `L ${level}`, level })),
    );
    t.deepEqual(
      made.map((d: any) => d.level),
      ['C1', 'C2', 'C3', 'C4'],
    );
    const [first] = made;
    t.regex(first.apiContext, API_CONTEXT);
    t.deepEqual(first, {
      id: first.id,
      name: 'L C1',
      desc: null,
      state: 'DRAFT',
      level: 'C1',
      url: `${s.url}/orgs/${s.slug}/diagrams/${first.id}`,
      tags: [],
      componentInstances: [],
      textareas: [],
      relations: [],
      apiContext: first.apiContext,
    });
    t.deepEqual((await s.get(D)).body, made);
    t.deepEqual((await s.get(`${D}/${first.id}`)).body, first);
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'x', level: 'C5' }],
      400,
      `Invalid JSON: 0.level: Invalid enum value. Expected 'C1' | 'C2' | 'C3' | 'C4', received 'C5'`,
    );
    await refused(t, s, 'POST', D, [{ name: 'ok', level: 'C1' }, { name: 'x' }], 400, 'Invalid JSON: 1.level: Required');
    await refused(
      t,
      s,
      'POST',
      D,
      [{ level: 'C1', state: 'GONE' }],
      400,
      `Invalid JSON: 0.name: Required, 0.state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'GONE'`,
    );
    await refused(t, s, 'POST', D, { name: 'x', level: 'C1' }, 400, 'Invalid JSON: Expected array, received object');
  }));

test('{} is a generic placeholder; components are instantiated by id or by ref', (t) =>
  withServer(async (s) => {
    const { api, db } = await twoComponents(s);
    const [d] = await accepted(t, s, 'POST', D, [
      {
        name: 'Instances',
        level: 'C2',
        componentInstances: [{}, { placeholder: 'Future CRM' }, { component: api }, { ref: 'store', component: 'db' }],
      },
    ]);
    const [empty, named, byId, byReference] = d.componentInstances;
    t.regex(empty.id, /^[0-9a-z]{26}$/);
    t.like(empty, { component: null, placeholder: '', isContainer: false, parent: null });
    t.false('ref' in empty);
    t.like(named, { component: null, placeholder: 'Future CRM' });
    t.like(byId, { component: api, placeholder: '' });
    t.like(byReference, { ref: 'store', component: db });
    checkLayout(t, d);
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'x', level: 'C2', componentInstances: [{ component: 'nope' }] }],
      400,
      `Ref 'nope' does not resolve to a component.`,
      { context: `element 0 'x'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'x', level: 'C2', componentInstances: [{ component: UNKNOWN_ID }] }],
      400,
      `Component with id '${UNKNOWN_ID}' does not exist.`,
      { context: `element 0 'x'` },
    );
  }));

test('containers: parent and parentId are both accepted, the response carries parent', (t) =>
  withServer(async (s) => {
    const { api, db } = await twoComponents(s);
    const [d] = await accepted(t, s, 'POST', D, [
      {
        name: 'Boxes',
        level: 'C2',
        componentInstances: [
          { ref: 'kid-a', component: 'api', parent: 'box' },
          { ref: 'box', placeholder: 'Payments', isContainer: true },
          { ref: 'kid-b', component: 'db', parentId: 'box' },
          { ref: 'kid-c', parent: 'box', parentId: 'box' },
          { ref: 'alone', parent: null, parentId: null },
        ],
      },
    ]);
    const box = byRef(d, 'box');
    t.true(box.isContainer);
    t.is(box.parent, null);
    for (const ref of ['kid-a', 'kid-b', 'kid-c']) {
      t.is(byRef(d, ref).parent, box.id, ref);
      t.false('parentId' in byRef(d, ref), ref);
    }
    t.is(byRef(d, 'kid-a').component, api);
    t.is(byRef(d, 'kid-b').component, db);
    t.is(byRef(d, 'alone').parent, null);
    checkLayout(t, d);
    // On update the parent is named by id.
    const [again] = await accepted(t, s, 'POST', D, [
      {
        id: d.id,
        name: 'Boxes',
        level: 'C2',
        componentInstances: [
          { id: box.id, placeholder: 'Payments', isContainer: true },
          { id: byRef(d, 'kid-a').id, component: api, parentId: box.id },
        ],
      },
    ]);
    t.is(again.componentInstances[1].parent, box.id);
  }));

test('container and parent rules are refused with the contract texts', (t) =>
  withServer(async (s) => {
    const [other] = await accepted(t, s, 'POST', D, [
      { name: 'Other', level: 'C1', componentInstances: [{ ref: 'far', isContainer: true }] },
    ]);
    const farId = other.componentInstances[0].id;
    const diagram = (componentInstances: unknown[]) => [{ name: 'x', level: 'C2', componentInstances }];
    await refused(
      t,
      s,
      'POST',
      D,
      diagram([
        { ref: 'outer', isContainer: true },
        { ref: 'inner', isContainer: true, parent: 'outer' },
      ]),
      400,
      `Container instance 'inner' cannot have a parent.`,
      { context: `element 0 'x'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      diagram([{ ref: 'plain' }, { ref: 'kid', parent: 'plain' }]),
      400,
      `Parent 'plain' is not a container instance of this diagram.`,
      { context: `element 0 'x'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      diagram([{ ref: 'kid', parentId: 'ghost' }]),
      400,
      `Parent 'ghost' is not a container instance of this diagram.`,
      { context: `element 0 'x'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      diagram([{ ref: 'kid', parent: 'far' }]),
      400,
      `Parent 'far' is not a container instance of this diagram.`,
      { context: `element 0 'x'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      diagram([{ ref: 'kid', parent: farId }]),
      400,
      `Parent '${farId}' is not a container instance of this diagram.`,
      { context: `element 0 'x'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      diagram([{ ref: 'me', parent: 'me' }]),
      400,
      `Parent 'me' is not a container instance of this diagram.`,
      { context: `element 0 'x'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      diagram([
        { ref: 'a', isContainer: true },
        { ref: 'b', isContainer: true },
        { parent: 'a', parentId: 'b' },
      ]),
      400,
      `parent 'a' and parentId 'b' differ.`,
      { context: `element 0 'x'` },
    );
    // null is a value like any other: sent with the other spelling, it must agree too.
    await refused(
      t,
      s,
      'POST',
      D,
      diagram([
        { ref: 'a', isContainer: true },
        { parent: null, parentId: 'a' },
      ]),
      400,
      `parent null and parentId 'a' differ.`,
      { context: `element 0 'x'` },
    );
    await refused(t, s, 'POST', D, diagram([{ component: null, componentId: 'a' }]), 400, `componentId 'a' and component null differ.`, {
      context: `element 0 'x'`,
    });
    // A container without ref is named by its id.
    const [mine] = await accepted(t, s, 'POST', D, [
      { name: 'Mine', level: 'C2', componentInstances: [{ isContainer: true }, { isContainer: true }] },
    ]);
    const [first, second] = mine.componentInstances.map((i: any) => i.id);
    await refused(
      t,
      s,
      'POST',
      D,
      [
        {
          id: mine.id,
          name: 'Mine',
          level: 'C2',
          componentInstances: [
            { id: first, isContainer: true },
            { id: second, isContainer: true, parent: first },
          ],
        },
      ],
      400,
      `Container instance '${second}' cannot have a parent.`,
      { context: `element 0 'Mine'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'x', level: 'C2', componentInstances: [{ isContainer: 'yes' }] }],
      400,
      'Invalid JSON: 0.componentInstances.0.isContainer: Expected boolean, received string',
    );
  }));

test('width, height, position and text area width are checked at their nested paths', (t) =>
  withServer(async (s) => {
    const instances = (...componentInstances: unknown[]) => [{ name: 'x', level: 'C2', componentInstances }];
    await refused(
      t,
      s,
      'POST',
      D,
      instances({ width: 101, height: 10 }),
      400,
      'Invalid JSON: 0.componentInstances.0.width: Number must be less than or equal to 100',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      instances({}, { width: 10, height: 0 }),
      400,
      'Invalid JSON: 0.componentInstances.1.height: Number must be greater than or equal to 1',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      instances({ width: 10.5 }),
      400,
      'Invalid JSON: 0.componentInstances.0.width: Expected integer, received float',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      instances({ width: '10' }),
      400,
      'Invalid JSON: 0.componentInstances.0.width: Expected integer, received string',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      instances({ position: { x: 1.5, y: 2 } }),
      400,
      'Invalid JSON: 0.componentInstances.0.position.x: Expected integer, received float',
    );
    await refused(t, s, 'POST', D, instances({ position: { x: 1 } }), 400, 'Invalid JSON: 0.componentInstances.0.position.y: Required');
    await refused(
      t,
      s,
      'POST',
      D,
      [
        { name: 'ok', level: 'C1' },
        { name: 'x', level: 'C2', componentInstances: [{ width: 0, height: 200 }, { position: { x: 'a', y: 0.1 } }] },
      ],
      400,
      'Invalid JSON: 1.componentInstances.0.width: Number must be greater than or equal to 1, ' +
        '1.componentInstances.0.height: Number must be less than or equal to 100, ' +
        '1.componentInstances.1.position.x: Expected integer, received string, ' +
        '1.componentInstances.1.position.y: Expected integer, received float',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'x', level: 'C2', textareas: [{ text: 'hi', width: 101 }] }],
      400,
      'Invalid JSON: 0.textareas.0.width: Number must be less than or equal to 100',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'x', level: 'C2', textareas: [{ text: 'hi', position: { x: 0, y: -0.5 } }] }],
      400,
      'Invalid JSON: 0.textareas.0.position.y: Expected integer, received float',
    );
    // Bounds, negative positions and given sizes are taken exactly.
    const [d] = await accepted(t, s, 'POST', D, [
      {
        name: 'Exact',
        level: 'C3',
        componentInstances: [
          { ref: 'a', position: { x: -40, y: -7 }, width: 1, height: 100 },
          { ref: 'b', position: { x: 300, y: -1000 }, width: 100, height: 1 },
        ],
        textareas: [{ text: 'note', position: { x: -5, y: -5 }, width: 1 }],
      },
    ]);
    t.like(byRef(d, 'a'), { position: { x: -40, y: -7 }, width: 1, height: 100 });
    t.like(byRef(d, 'b'), { position: { x: 300, y: -1000 }, width: 100, height: 1 });
    t.like(d.textareas[0], { position: { x: -5, y: -5 }, width: 1, text: 'note' });
    t.false('height' in d.textareas[0], 'text areas have no height');
  }));

test('text areas get an id, a position and a width; text is optional', (t) =>
  withServer(async (s) => {
    const [d] = await accepted(t, s, 'POST', D, [
      {
        name: 'Notes',
        level: 'C1',
        componentInstances: [{ ref: 'a' }],
        textareas: [
          { text: 'Line one\nLine two is a little longer' },
          { width: 30 },
          { ref: 'legend', text: 'Legend', position: { x: -50, y: 0 } },
        ],
      },
    ]);
    const [long, empty, legend] = d.textareas;
    for (const ta of d.textareas) t.regex(ta.id, /^[0-9a-z]{26}$/);
    t.is(long.text, 'Line one\nLine two is a little longer');
    t.is(empty.text, '');
    t.is(empty.width, 30);
    t.like(legend, { ref: 'legend', position: { x: -50, y: 0 } });
    checkLayout(t, d);
  }));

test('relations connect instances by id or ref; an unknown end is refused', (t) =>
  withServer(async (s) => {
    const { api, db } = await twoComponents(s);
    const [target] = await accepted(t, s, 'POST', D, [{ ref: 'detail', name: 'Detail', level: 'C3' }]);
    const [d] = await accepted(t, s, 'POST', D, [
      {
        name: 'Flows',
        level: 'C2',
        relations: [
          { fromComponentInstance: 'web', toComponentInstance: 'store', label: 'reads', desc: 'SQL over TLS', linksTo: ['detail'] },
        ],
        componentInstances: [
          { ref: 'web', component: api },
          { ref: 'store', component: db },
        ],
      },
    ]);
    const [web, store] = d.componentInstances;
    const [relation] = d.relations;
    t.regex(relation.id, /^[0-9a-z]{26}$/);
    t.deepEqual(
      relation,
      {
        id: relation.id,
        fromComponentInstance: web.id,
        toComponentInstance: store.id,
        label: 'reads',
        desc: 'SQL over TLS',
        linksTo: [target.id],
      },
      'linksTo names diagrams by id or ref, and carries ids',
    );
    // On update the ends may be named by instance id.
    const [updated] = await accepted(t, s, 'POST', D, [
      {
        id: d.id,
        name: 'Flows',
        level: 'C2',
        componentInstances: [
          { id: web.id, ref: 'web', component: api },
          { id: store.id, ref: 'store', component: db },
        ],
        relations: [{ id: relation.id, fromComponentInstance: store.id, toComponentInstance: 'web' }],
      },
    ]);
    t.deepEqual(updated.relations, [
      { id: relation.id, fromComponentInstance: store.id, toComponentInstance: web.id, label: null, desc: null, linksTo: [] },
    ]);
    const flows = (relations: unknown[], extra = {}) => [
      { id: d.id, name: 'Flows', level: 'C2', componentInstances: [{ ref: 'web' }, { ref: 'store' }], relations, ...extra },
    ];
    await refused(
      t,
      s,
      'POST',
      D,
      flows([{ fromComponentInstance: 'web', toComponentInstance: 'gone' }]),
      400,
      `Component instance 'gone' does not exist in this diagram.`,
      { context: `element 0 'Flows'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      flows([{ fromComponentInstance: UNKNOWN_ID, toComponentInstance: 'web' }]),
      400,
      `Component instance '${UNKNOWN_ID}' does not exist in this diagram.`,
      { context: `element 0 'Flows'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      flows([{ fromComponentInstance: 'web' }]),
      400,
      'Invalid JSON: 0.relations.0.toComponentInstance: Required',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      flows([{ fromComponentInstance: 'web', toComponentInstance: 'store', linksTo: [UNKNOWN_ID] }]),
      400,
      `Diagram with id '${UNKNOWN_ID}' does not exist.`,
      { context: `element 0 'Flows'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      flows([{ fromComponentInstance: 'web', toComponentInstance: 'store', linksTo: ['nowhere'] }]),
      400,
      `Ref 'nowhere' does not resolve to a diagram.`,
      { context: `element 0 'Flows'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      flows([{ fromComponentInstance: 'web', toComponentInstance: 'store', linksTo: [target.id, 'detail'] }]),
      400,
      `Diagram with id '${target.id}' is given more than once in linksTo.`,
      { context: `element 0 'Flows'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      flows([{ id: UNKNOWN_ID, fromComponentInstance: 'web', toComponentInstance: 'store' }]),
      400,
      `Relation with id '${UNKNOWN_ID}' does not exist in this diagram.`,
      { context: `element 0 'Flows'` },
    );
    // An instance of another diagram is not an end here.
    const [other] = await accepted(t, s, 'POST', D, [{ name: 'Other', level: 'C2', componentInstances: [{ ref: 'x' }] }]);
    const foreign = other.componentInstances[0].id;
    await refused(
      t,
      s,
      'POST',
      D,
      flows([{ fromComponentInstance: foreign, toComponentInstance: 'web' }]),
      400,
      `Component instance '${foreign}' does not exist in this diagram.`,
      { context: `element 0 'Flows'` },
    );
    // A relation may link to the diagram it is in and to a diagram created by the same request.
    const [self, created] = await accepted(t, s, 'POST', D, [
      {
        id: d.id,
        name: 'Flows',
        level: 'C2',
        componentInstances: [{ ref: 'web' }, { ref: 'store' }],
        relations: [{ fromComponentInstance: 'web', toComponentInstance: 'store', linksTo: [d.id, 'brand-new'] }],
      },
      { ref: 'brand-new', name: 'New', level: 'C4' },
    ]);
    t.deepEqual(self.relations[0].linksTo, [d.id, created.id]);
  }));

test('tags are {id} on input and full tag objects on output; an unknown tag is refused', (t) =>
  withServer(async (s) => {
    const tags = (
      await s.post('/api/external/tag', [
        { name: 'Core', color: 'red' },
        { name: 'Legacy', desc: 'old', color: 'gray' },
      ])
    ).body;
    const [core, legacy] = tags;
    const [d] = await accepted(t, s, 'POST', D, [
      { name: 'Tagged', level: 'C1', tags: [{ id: legacy.id }, { id: core.id, name: 'ignored', color: 'blue' }] },
    ]);
    t.deepEqual(d.tags, [legacy, core]);
    t.deepEqual(d.tags[0], { id: legacy.id, name: 'Legacy', desc: 'old', color: 'gray', apiContext: legacy.apiContext });
    // A tag renamed later shows its new name in the diagram.
    const [renamed] = (await s.post('/api/external/tag', [{ id: core.id, name: 'Core domain', color: 'red' }])).body;
    t.deepEqual((await s.get(`${D}/${d.id}`)).body.tags, [legacy, renamed]);
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'x', level: 'C1', tags: [{ id: UNKNOWN_ID }] }],
      400,
      `Tag with id '${UNKNOWN_ID}' does not exist.`,
      { context: `element 0 'x'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ id: d.id, name: 'Tagged', level: 'C1', tags: [{ id: core.id }, { id: legacy.id }, { id: core.id }] }],
      400,
      `Tag with id '${core.id}' is given more than once.`,
      { context: `element 0 'Tagged'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ name: 'x', level: 'C1', tags: [core.id] }],
      400,
      'Invalid JSON: 0.tags.0: Expected object, received string',
    );
    await refused(t, s, 'POST', D, [{ name: 'x', level: 'C1', tags: [{ name: 'Core' }] }], 400, 'Invalid JSON: 0.tags.0.id: Required');
  }));

test('url is <server url>/orgs/<slug>/diagrams/<id> and ignored on input; what GET serves can be posted back unchanged', (t) =>
  withServer(async (s) => {
    await twoComponents(s);
    const tag = (await s.post('/api/external/tag', [{ name: 'Core', color: 'green' }])).body[0];
    const [d] = await accepted(t, s, 'POST', D, [
      {
        ref: 'ctx',
        name: 'Context',
        level: 'C1',
        url: 'https://elsewhere.example/diagrams/1',
        tags: [{ id: tag.id }],
        componentInstances: [{ ref: 'box', isContainer: true }, { ref: 'a', component: 'api', parent: 'box' }, { component: 'db' }, {}],
        textareas: [{ text: 'hello' }],
        relations: [{ fromComponentInstance: 'a', toComponentInstance: 'box', label: 'x' }],
      },
    ]);
    t.is(d.url, `${s.url}/orgs/${s.slug}/diagrams/${d.id}`);
    const served = (await s.get(`${D}/${d.id}`)).body;
    t.deepEqual(served, d);
    const [same] = await accepted(t, s, 'POST', D, [served], 0);
    t.deepEqual(same, d);
    await accepted(t, s, 'POST', D, [{ ...served, url: 'https://nowhere.example/x' }], 0);
    await accepted(t, s, 'POST', D, [{ ...served, url: 42 }], 0);
  }));

test('an update replaces the nested elements; elements sent back by id or ref keep their ids', (t) =>
  withServer(async (s) => {
    const { api, db } = await twoComponents(s);
    const [d] = await accepted(t, s, 'POST', D, [
      {
        ref: 'main',
        name: 'Main',
        level: 'C2',
        componentInstances: [{ ref: 'a', component: api }, { ref: 'b', component: db }, { placeholder: 'c' }, { placeholder: 'd' }],
        textareas: [{ ref: 'note', text: 'one' }, { text: 'two' }],
        relations: [
          { fromComponentInstance: 'a', toComponentInstance: 'b' },
          { fromComponentInstance: 'b', toComponentInstance: 'a' },
        ],
      },
    ]);
    const [a, b, c] = d.componentInstances;
    const [updated] = await accepted(t, s, 'POST', D, [
      {
        ref: 'main',
        name: 'Main',
        level: 'C2',
        componentInstances: [
          { id: c.id, placeholder: 'c renamed' },
          { ref: 'a', component: api },
          { ref: 'new', component: db },
        ],
        textareas: [{ ref: 'note', text: 'one, edited' }],
        relations: [{ fromComponentInstance: c.id, toComponentInstance: 'new' }],
      },
    ]);
    t.is(updated.id, d.id);
    const ids = updated.componentInstances.map((i: any) => i.id);
    t.is(ids[0], c.id, 'kept by id');
    t.is(ids[1], a.id, 'kept by ref');
    t.false([a.id, b.id, c.id, d.componentInstances[3].id].includes(ids[2]), 'a new instance gets a new id');
    t.is(updated.componentInstances[0].placeholder, 'c renamed');
    t.is(updated.componentInstances.length, 3, 'b and d are gone');
    t.deepEqual(
      updated.textareas.map((x: any) => [x.id, x.text]),
      [[d.textareas[0].id, 'one, edited']],
    );
    t.is(updated.relations.length, 1);
    t.like(updated.relations[0], { fromComponentInstance: c.id, toComponentInstance: ids[2] });
    checkLayout(t, updated);
    t.deepEqual((await s.get(`${D}/${d.id}`)).body, updated);
    // b is gone: naming it now is an error, as is an instance id of another diagram.
    await refused(
      t,
      s,
      'POST',
      D,
      [{ ref: 'main', name: 'Main', level: 'C2', componentInstances: [{ id: b.id }] }],
      400,
      `Component instance with id '${b.id}' does not exist in this diagram.`,
      { context: `element 0 'Main'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [
        {
          ref: 'main',
          name: 'Main',
          level: 'C2',
          componentInstances: [{ ref: 'x' }],
          relations: [{ fromComponentInstance: 'x', toComponentInstance: b.id }],
        },
      ],
      400,
      `Component instance '${b.id}' does not exist in this diagram.`,
      { context: `element 0 'Main'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ ref: 'main', name: 'Main', level: 'C2', componentInstances: [{ id: c.id }, { id: c.id }] }],
      400,
      `Component instance with id '${c.id}' is given more than once.`,
      { context: `element 0 'Main'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [{ ref: 'main', name: 'Main', level: 'C2', componentInstances: [{ ref: 'a' }, { ref: 'a' }] }],
      400,
      `Ref 'a' is used more than once.`,
      { context: `element 0 'Main'` },
    );
    await refused(t, s, 'POST', D, [{ id: UNKNOWN_ID, name: 'Main', level: 'C2' }], 400, `Diagram with id '${UNKNOWN_ID}' does not exist.`);
    // Sending no nested elements empties the diagram; the diagram keeps its id.
    const [emptied] = await accepted(t, s, 'POST', D, [{ ref: 'main', name: 'Main', level: 'C2' }]);
    t.like(emptied, { id: d.id, componentInstances: [], textareas: [], relations: [] });
  }));

test('automatic layout: every element placed, children inside their container, nothing overlapping', (t) =>
  withServer(async (s) => {
    await twoComponents(s);
    const [d] = await accepted(t, s, 'POST', D, [
      {
        name: 'Auto',
        level: 'C2',
        componentInstances: [
          { ref: 'user', placeholder: 'Customer' },
          { ref: 'sys', isContainer: true, placeholder: 'Payment system' },
          { ref: 'api', component: 'api', parent: 'sys' },
          { ref: 'db', component: 'db', parentId: 'sys' },
          { ref: 'worker', placeholder: 'A worker with a rather long name that needs a wider box', parent: 'sys' },
          { ref: 'bank', placeholder: 'Bank' },
          { ref: 'empty', isContainer: true },
          {},
          {},
        ],
        textareas: [{ text: 'Legend:\nsolid = sync' }, { text: 'Second note' }],
        relations: [
          { fromComponentInstance: 'user', toComponentInstance: 'api' },
          { fromComponentInstance: 'api', toComponentInstance: 'db' },
          { fromComponentInstance: 'worker', toComponentInstance: 'bank' },
        ],
      },
    ]);
    checkLayout(t, d);
    const sys = byRef(d, 'sys');
    t.true(sys.width > byRef(d, 'api').width, 'the container is sized around its children');
  }));

test('layout survives updates: a hand-moved instance stays, new ones are placed around; ?layout=auto lays out afresh', (t) =>
  withServer(async (s) => {
    await twoComponents(s);
    const input = {
      ref: 'flow',
      name: 'Flow',
      level: 'C2',
      componentInstances: [
        { ref: 'box', isContainer: true, placeholder: 'System' },
        { ref: 'api', component: 'api', parent: 'box' },
        { ref: 'db', component: 'db', parent: 'box' },
        { ref: 'client', placeholder: 'Client' },
        { placeholder: 'Unnamed' },
      ],
      textareas: [{ text: 'note' }],
      relations: [
        { fromComponentInstance: 'client', toComponentInstance: 'api' },
        { fromComponentInstance: 'api', toComponentInstance: 'db' },
      ],
    };
    const [first] = await accepted(t, s, 'POST', D, [input]);
    checkLayout(t, first);
    // Re-posting the same input without positions changes nothing, even with ?layout=auto (the
    // layout is deterministic).
    await accepted(t, s, 'POST', D, [input], 0);
    await accepted(t, s, 'POST', `${D}?layout=auto`, [input], 0);

    // Move the client by hand: GET, change its position, POST back with its id.
    const served = (await s.get(`${D}/${first.id}`)).body;
    const client = byRef(served, 'client');
    client.position = { x: -60, y: -45 };
    const [moved] = await accepted(t, s, 'POST', D, [served]);
    t.deepEqual(byRef(moved, 'client').position, { x: -60, y: -45 });
    // The input without positions again: the hand-made position stays, nothing changes.
    const [kept] = await accepted(t, s, 'POST', D, [input], 0);
    t.deepEqual(kept, moved);

    // Position and size are kept each on their own: a new width keeps the stored position.
    const widened = structuredClone(input);
    widened.componentInstances[3] = { ...widened.componentInstances[3], width: 30 } as any;
    const [wide] = await accepted(t, s, 'POST', D, [widened]);
    t.like(byRef(wide, 'client'), { position: { x: -60, y: -45 }, width: 30, height: byRef(moved, 'client').height });

    // A new instance is placed without disturbing the others.
    const grown = structuredClone(widened);
    grown.componentInstances.push(
      { ref: 'cache', placeholder: 'Cache', parent: 'box' } as any,
      { ref: 'extra', placeholder: 'Extra' } as any,
    );
    const [bigger] = await accepted(t, s, 'POST', D, [grown]);
    for (const old of wide.componentInstances) {
      const now = bigger.componentInstances.find((i: any) => i.id === old.id);
      t.deepEqual(now.position, old.position, `${old.ref ?? old.id} stays where it was`);
    }
    checkLayout(t, bigger);

    // ?layout=auto: everything the request gives no position is laid out afresh, as the first time.
    const [fresh] = await accepted(t, s, 'POST', `${D}?layout=auto`, [input]);
    t.deepEqual(
      fresh.componentInstances.map((i: any) => [i.id, i.position, i.width, i.height]),
      first.componentInstances.map((i: any) => [i.id, i.position, i.width, i.height]),
    );
    t.deepEqual(fresh.textareas, first.textareas);
    // … but a position the request gives is kept even then.
    const pinned = structuredClone(input);
    pinned.componentInstances[4] = { placeholder: 'Unnamed', position: { x: 500, y: 500 } } as any;
    const [withPin] = await accepted(t, s, 'POST', `${D}?layout=auto`, [pinned]);
    t.deepEqual(withPin.componentInstances[4].position, { x: 500, y: 500 });
    checkLayout(t, withPin);
    await refused(t, s, 'POST', `${D}?layout=manual`, [input], 400, `Invalid layout 'manual': the only value is 'auto'.`);
  }));

test('a diagram is matched by ref; an identical re-post adds no commit; a refused diagram cancels the whole request', (t) =>
  withServer(async (s) => {
    const [d] = await accepted(t, s, 'POST', D, [{ ref: 'v', name: 'V', level: 'C1', componentInstances: [{}, {}], relations: [] }]);
    await accepted(t, s, 'POST', D, [{ ref: 'v', name: 'V', level: 'C1', componentInstances: [{}, {}] }], 0);
    const [renamed] = await accepted(t, s, 'POST', D, [{ ref: 'v', name: 'V2', level: 'C1', componentInstances: [{}, {}] }]);
    t.is(renamed.id, d.id);
    t.deepEqual(renamed.componentInstances, d.componentInstances, 'unnamed instances repeating stored ones keep their ids and layout');
    await refused(
      t,
      s,
      'POST',
      D,
      [
        { ref: 'v', name: 'V3', level: 'C1' },
        { name: 'W', level: 'C2' },
        { name: 'Bad', level: 'C2', componentInstances: [{ parent: 'nothing' }] },
      ],
      400,
      `Parent 'nothing' is not a container instance of this diagram.`,
      { context: `element 2 'Bad'` },
    );
    await refused(
      t,
      s,
      'POST',
      D,
      [
        { ref: 'w', name: 'W', level: 'C2' },
        { ref: 'w', name: 'W2', level: 'C2' },
      ],
      400,
      `Ref 'w' is used more than once.`,
    );
  }));

// A stored container that grows to take new children must not cover a placed neighbour.
test('a container growing to take new children does not cover a placed neighbour', (t) =>
  withServer(async (s) => {
    const input = {
      ref: 'd',
      name: 'D',
      level: 'C2',
      componentInstances: [
        { ref: 'box', isContainer: true, placeholder: 'System' },
        { ref: 'a', parent: 'box', placeholder: 'A' },
        { ref: 'b', parent: 'box', placeholder: 'B' },
        { ref: 'neighbour', placeholder: 'Neighbour' },
      ] as Array<Record<string, unknown>>,
    };
    const [first] = await accepted(t, s, 'POST', D, [input]);
    checkLayout(t, first, 'first post');
    for (let k = 0; k < 6; k++) input.componentInstances.push({ ref: `k${k}`, parent: 'box', placeholder: `K${k}` });
    const [grown] = await accepted(t, s, 'POST', D, [input]);
    t.deepEqual(byRef(grown, 'neighbour').position, byRef(first, 'neighbour').position);
    checkLayout(t, grown, 'after adding children');
  }));

// The lower container keeps its 33×30 when it takes a new child, and none of its own is left
// placed: while the upper one's children were laid out it was taken for an empty one (24×16),
// and the child moved up (which overflows, the upper container being hemmed in) landed in it.
test('a child overflowing its container is not put on a neighbouring container that grows from its kept size', (t) =>
  withServer(async (s) => {
    const at = (x: number, y: number, width: number, height: number) => ({ position: { x, y }, width, height });
    const post = (instances: Array<Record<string, unknown>>) =>
      accepted(t, s, 'POST', D, [{ ref: 'd', name: 'D', level: 'C2', componentInstances: instances }]);
    await post([
      { ref: 'upper', isContainer: true, placeholder: 'Upper', ...at(0, 0, 35, 30) },
      { ref: 'lower', isContainer: true, placeholder: 'Lower', ...at(9, 38, 33, 30) },
      { ref: 'a1', parent: 'upper', placeholder: 'A1', ...at(2, 4, 25, 8) },
      { ref: 'a2', parent: 'upper', placeholder: 'A2', ...at(2, 20, 31, 8) },
      { ref: 'b', parent: 'lower', placeholder: 'B', ...at(11, 42, 29, 8) },
      { ref: 'right', placeholder: 'Right', ...at(39, 0, 16, 8) },
    ]);
    // No layout sent back: `b` moves up into `upper`, `lower` takes a new child.
    const [moved] = await post([
      { ref: 'upper', isContainer: true, placeholder: 'Upper' },
      { ref: 'lower', isContainer: true, placeholder: 'Lower' },
      { ref: 'a1', parent: 'upper', placeholder: 'A1' },
      { ref: 'a2', parent: 'upper', placeholder: 'A2' },
      { ref: 'b', parent: 'upper', placeholder: 'B' },
      { ref: 'n', parent: 'lower', placeholder: 'New' },
      { ref: 'right', placeholder: 'Right' },
    ]);
    t.like(byRef(moved, 'lower'), { position: { x: 9, y: 38 }, width: 33, height: 30 });
    const { input, result } = layoutOf(moved);
    t.deepEqual(findOverlaps(result, input), [], JSON.stringify(layoutOf(moved).result.instances.get(byRef(moved, 'b').id)));
  }));

test('a container sized by hand that takes a new child keeps at least its size (it grows, never shrinks)', (t) =>
  withServer(async (s) => {
    const post = (children: string[], size: Record<string, number> = {}) =>
      accepted(t, s, 'POST', D, [
        {
          ref: 's',
          name: 'S',
          level: 'C2',
          componentInstances: [
            { ref: 'box', isContainer: true, placeholder: 'System', position: { x: 0, y: 0 }, ...size },
            ...children.map((ref) => ({ ref, parent: 'box', placeholder: ref.toUpperCase() })),
          ],
        },
      ]);
    const [first] = await post(['k1'], { width: 60, height: 40 });
    t.like(byRef(first, 'box'), { width: 60, height: 40 });
    // Sent again without its size, with one child more: the stored 60×40 stands, or more.
    const [grown] = await post(['k1', 'k2']);
    t.true(byRef(grown, 'box').width >= 60 && byRef(grown, 'box').height >= 40, JSON.stringify(byRef(grown, 'box')));
    checkLayout(t, grown, 'after adding a child');
    t.deepEqual(byRef(grown, 'k1').position, byRef(first, 'k1').position);
  }));

test('a box laid out beside one at the edge of the coordinates stays within them: the diagram reads and writes back unchanged', (t) =>
  withServer(async (s) => {
    const [edge] = await accepted(t, s, 'POST', D, [
      {
        ref: 'edge',
        name: 'Edge',
        level: 'C1',
        componentInstances: [
          { ref: 'a', placeholder: 'A', position: { x: 1_000_000, y: 1_000_000 } },
          { ref: 'b', placeholder: 'B' },
        ],
        textareas: [{ ref: 'n', text: 'Note' }],
      },
    ]);
    for (const item of [...edge.componentInstances, ...edge.textareas]) {
      t.true(Math.abs(item.position.x) <= 1_000_000 && Math.abs(item.position.y) <= 1_000_000, JSON.stringify(item));
    }
    checkLayout(t, edge, 'placed left of or above what is at the edge, on top of nothing');
    // Written back as read: accepted, no change, no commit.
    const [again] = await accepted(t, s, 'POST', D, [edge], 0);
    t.deepEqual(again, edge);
  }));

// issue 10.6
test('an instance moved into a container without a position is laid out inside it; a given position is kept', (t) =>
  withServer(async (s) => {
    const instances = (moves: Record<string, Record<string, unknown>> = {}) => [
      { ref: 'box', isContainer: true, placeholder: 'System' },
      { ref: 'a', parent: 'box', placeholder: 'A' },
      { ref: 'loose', placeholder: 'Loose', ...moves.loose },
      { ref: 'other', placeholder: 'Other' },
      { ref: 'pinned', placeholder: 'Pinned', ...moves.pinned },
    ];
    const post = (moves?: Record<string, Record<string, unknown>>) =>
      accepted(t, s, 'POST', D, [
        {
          ref: 'm',
          name: 'M',
          level: 'C2',
          componentInstances: instances(moves),
          relations: [{ fromComponentInstance: 'a', toComponentInstance: 'loose' }],
        },
      ]);
    const [first] = await post();
    checkLayout(t, first, 'first post');

    // Re-posted with the instance now in the container and no position: laid out inside it (the
    // container grows), nothing else moves.
    const [moved] = await post({ loose: { parent: 'box' } });
    t.is(byRef(moved, 'loose').id, byRef(first, 'loose').id, 'the same instance, not a new one');
    t.is(byRef(moved, 'loose').parent, byRef(moved, 'box').id);
    checkLayout(t, moved, 'after the move'); // inside its new container, covering nothing
    for (const ref of ['box', 'a', 'other', 'pinned']) t.deepEqual(byRef(moved, ref).position, byRef(first, ref).position, `${ref} stays`);

    // An explicit position is kept exactly, even when the parent changes.
    const [kept] = await post({ loose: { parent: 'box' }, pinned: { parent: 'box', position: { x: 700, y: 700 } } });
    t.deepEqual(byRef(kept, 'pinned').position, { x: 700, y: 700 });
    t.deepEqual(byRef(kept, 'loose').position, byRef(moved, 'loose').position, 'an unmoved instance keeps its place');

    // Moved back out without a position: placed anew at the top level, clear of everything.
    const [outside] = await post({ pinned: { parent: 'box', position: { x: 700, y: 700 } } });
    t.is(byRef(outside, 'loose').parent, null);
    const looseId = byRef(outside, 'loose').id;
    const { input, result } = layoutOf(outside);
    t.deepEqual(
      findOverlaps(result, input).filter((pair) => pair.includes(looseId)),
      [],
    );
  }));

// issue 16.8: positions far out overflowed the layout's arithmetic (500)
test('positions are bounded to ±1,000,000 with a schema error; the bounds themselves are laid out around', (t) =>
  withServer(async (s) => {
    const diagram = (position: unknown, where: 'componentInstances' | 'textareas' = 'componentInstances') => [
      { name: 'Far', level: 'C2', [where]: [where === 'textareas' ? { text: 'x', position } : { position }, {}] },
    ];
    await refused(
      t,
      s,
      'POST',
      D,
      diagram({ x: 1.79e308, y: 0 }),
      400,
      'Invalid JSON: 0.componentInstances.0.position.x: Number must be less than or equal to 1000000',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      diagram({ x: 0, y: -1.79e308 }),
      400,
      'Invalid JSON: 0.componentInstances.0.position.y: Number must be greater than or equal to -1000000',
    );
    await refused(
      t,
      s,
      'POST',
      D,
      diagram({ x: 1_000_001, y: 0 }, 'textareas'),
      400,
      'Invalid JSON: 0.textareas.0.position.x: Number must be less than or equal to 1000000',
    );
    const [d] = await accepted(t, s, 'POST', D, [
      {
        name: 'Edge',
        level: 'C2',
        componentInstances: [{ ref: 'far', position: { x: 1_000_000, y: -1_000_000 } }, { ref: 'new' }],
      },
    ]);
    t.deepEqual(byRef(d, 'far').position, { x: 1_000_000, y: -1_000_000 });
    checkLayout(t, d);
  }));
