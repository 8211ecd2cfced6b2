import test from 'ava';
import { withServer } from './support/server.js';

// Unknown fields are ignored (CONTRACT.md §3), and the response says which:
// `C4store-Ignored-Fields: 0.componentId, 2.descr`, paths as in schema errors.

const API = '/api/external';
const HEADER = 'c4store-ignored-fields';

test('a write names the fields it ignored, at every depth and on every write endpoint; none: no header', async (t) => {
  await withServer(async (s) => {
    const components = await s.post(`${API}/component`, [
      { name: 'a', componentId: 'x' },
      { name: 'b', desc: 'fine' },
      { name: 'c', descr: 'typo', attributes: [{ id: 'nope', value: 1, unit: 'ms' }] },
    ]);
    t.is(components.headers.get(HEADER), '0.componentId, 2.descr, 2.attributes.0.unit');
    // A refused write names them too: here the misspelt field is why `name` is missing.
    const refused = await s.post(`${API}/component`, [{ name: 'x', attributes: [{ id: 'nope', value: 1 }] }]);
    t.is(refused.status, 400);
    t.is(refused.headers.get(HEADER), null);
    const misspelt = await s.post(`${API}/tag`, [{ nmae: 'PCI', color: 'red' }]);
    t.is(misspelt.status, 400);
    t.deepEqual(misspelt.body, { error: 'Invalid JSON: 0.name: Required' });
    t.is(misspelt.headers.get(HEADER), '0.nmae');

    const fine = await s.post(`${API}/tag`, [{ name: 'PCI', color: 'red' }]);
    t.is(fine.status, 200);
    t.is(fine.headers.get(HEADER), null);
    const tagId = fine.body[0].id;

    const attributes = await s.put(`${API}/attributes`, [{ name: 'Tier', type: 'LIST', list: ['a'], options: ['a'] }]);
    t.is(attributes.headers.get(HEADER), '0.options');

    // Declared fields are known however they are used: the read-only diagram url is not reported,
    // diagram tags are { id } on input, so a whole tag object sent back reports its other fields.
    const diagram = await s.post(`${API}/diagram`, [
      {
        name: 'd',
        level: 'C1',
        url: 'https://elsewhere.example/d',
        colour: 'blue',
        tags: [{ id: tagId, name: 'PCI' }],
        componentInstances: [
          { ref: 'a', position: { x: 0, y: 0, z: 3 } },
          { ref: 'b', shape: 'cylinder' },
        ],
        textareas: [{ text: 'note', font: 'mono' }],
        relations: [{ fromComponentInstance: 'a', toComponentInstance: 'b', style: 'dashed' }],
      },
    ]);
    t.is(diagram.status, 200, diagram.text);
    t.is(
      diagram.headers.get(HEADER),
      '0.colour, 0.tags.0.name, 0.componentInstances.0.position.z, 0.componentInstances.1.shape, 0.textareas.0.font, 0.relations.0.style',
    );

    const model = await s.request('POST', `${API}/model`, {
      yaml: true,
      body: { components: [{ ref: 'm', name: 'M', team: 'x' }], diagrams: [{ name: 'D', level: 'C2', layout: 'x' }], tags: [] },
    });
    t.is(model.status, 200, model.text);
    t.is(model.headers.get(HEADER), 'components.0.team, diagrams.0.layout, tags');
  });
});

test('what a header cannot carry is encoded, and a long list is cut short with ", ..."', async (t) => {
  await withServer(async (s) => {
    const odd = await s.post(`${API}/tag`, [{ name: 'x', color: 'red', 'two words': 1, 'a,b': 2, 'line\nbreak': 3, ümlaut: 4 }]);
    t.is(odd.status, 200, odd.text);
    t.is(odd.headers.get(HEADER), '0.two%20words, 0.a%2Cb, 0.line%0Abreak, 0.%C3%BCmlaut');

    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`unknown${i}`, i]));
    const wide = await s.post(`${API}/tag`, [{ name: 'y', color: 'red', ...many }]);
    t.is(wide.status, 200);
    const header = wide.headers.get(HEADER)!;
    t.true(header.startsWith('0.unknown0, 0.unknown1, '));
    t.true(header.endsWith(', ...'));
    t.is(header.split(', ').length, 101);

    const long = await s.post(`${API}/tag`, [{ name: 'z', color: 'red', ['k'.repeat(100_000)]: 1, ['j'.repeat(100_000)]: 2 }]);
    t.is(long.status, 200);
    t.is(long.headers.get(HEADER), `0.${'k'.repeat(198)}..., 0.${'j'.repeat(198)}...`);
  });
});

test('the seed diagram writes take fromRef/toRef as relation ends, and do not name them as ignored', async (t) => {
  await withServer(async (s) => {
    const instances = [{ ref: 'a' }, { ref: 'b' }];
    const diagram = await s.post(`${API}/diagram`, [
      { name: 'D', level: 'C1', componentInstances: instances, relations: [{ fromRef: 'a', toRef: 'b', labl: 'typo' }] },
    ]);
    t.is(diagram.status, 200, diagram.text);
    const [a, b] = diagram.body[0].componentInstances.map((i: { id: string }) => i.id);
    t.like(diagram.body[0].relations[0], { fromComponentInstance: a, toComponentInstance: b });
    t.is(diagram.headers.get(HEADER), '0.relations.0.labl');
    const model = await s.post(`${API}/model`, {
      diagrams: [{ name: 'E', level: 'C1', componentInstances: instances, relations: [{ fromComponentInstance: 'a', toRef: 'b' }] }],
    });
    t.is(model.status, 200, model.text);
    t.is(model.headers.get(HEADER), null);
  });
});

test("the current form's writes and POST /versions name the fields they ignored too, at every depth; none: no header", async (t) => {
  await withServer(async (s) => {
    const created = await s.post(`${API}/components`, { id: 'shop', name: 'Shop', descr: 'typo', attributes: [] });
    t.is(created.status, 201, created.text);
    t.is(created.headers.get(HEADER), 'descr');
    const clean = await s.post(`${API}/tags`, { id: 'pci', name: 'PCI', color: 'red' });
    t.is(clean.status, 201);
    t.is(clean.headers.get(HEADER), null);

    const patched = await s.request('PATCH', `${API}/components/shop`, { body: { nmae: 'Shop', state: 'ACTIVE' } });
    t.is(patched.status, 200, patched.text);
    t.is(patched.headers.get(HEADER), 'nmae');

    const batch = await s.request('PATCH', `${API}/tags/upsert-batch`, {
      body: [
        { id: 'pci', name: 'PCI', color: 'red' },
        { id: 'gdpr', name: 'GDPR', color: 'blue', colour: 'navy' },
      ],
    });
    t.is(batch.status, 200, batch.text);
    t.is(batch.headers.get(HEADER), '1.colour');

    const template = await s.post(`${API}/template`, {
      components: [{ id: 'db', name: 'DB', shape: 'cylinder' }],
      diagrams: [{ id: 'd', name: 'D', level: 'C1', componentInstances: [{ component: 'db', z: 1 }] }],
      notes: 'x',
    });
    t.is(template.status, 200, template.text);
    t.is(template.headers.get(HEADER), 'components.0.shape, diagrams.0.componentInstances.0.z, notes');

    // A refused write names them too.
    const refused = await s.post(`${API}/components`, { id: 'nameless', nmae: 'Oops' });
    t.is(refused.status, 400);
    t.is(refused.headers.get(HEADER), 'nmae');

    const version = await s.post(`${API}/versions`, { name: 'v1', descr: 'typo' });
    t.is(version.status, 201, version.text);
    t.is(version.headers.get(HEADER), 'descr');
  });
});
