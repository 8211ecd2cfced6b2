import test from 'ava';
import { pyyamlDump, pyyamlLoad } from './support/pyyaml.js';
import { withServer } from './support/server.js';

// YAML 1.1 clients (PyYAML here, the reader most Python clients use): what c4store writes they
// read with the right types, and what they write c4store reads as they meant it.

const API = '/api/external';
const FLOATS = [1e21, 1e-7, 5e-324, -2.5e-8, 1.7976931348623157e308, 12.5];

test('YAML answers and the files of the repository give PyYAML numbers where c4store stored numbers', async (t) => {
  await withServer(async (s) => {
    const [cost] = (await s.put(`${API}/attribute`, [{ name: 'Cost', type: 'NUMBER' }])).body;
    const made = (
      await s.post(
        `${API}/component`,
        FLOATS.map((value, i) => ({ name: `c${i}`, attributes: [{ id: cost.id, value }] })),
      )
    ).body;
    t.is(made.length, FLOATS.length);

    const answer = await s.get(`${API}/component`, { headers: { accept: 'application/yaml' } });
    t.is(answer.status, 200);
    t.true(answer.text.includes('value: 1.0e+21\n'), answer.text);
    const files = await Promise.all(
      made.map(async (c: { id: string }) => {
        const path = (await s.git('ls-tree', '-r', '--name-only', 'main')).split('\n').find((p) => p.endsWith(`${c.id}.yaml`))!;
        return s.git('show', `main:${path}`);
      }),
    );
    const [servedList, ...stored] = await pyyamlLoad([answer.text, ...files]);
    t.deepEqual(
      (servedList.value as Array<{ attributes: Array<{ value: unknown }> }>).map((c) => c.attributes[0].value),
      FLOATS,
    );
    t.deepEqual(
      stored.map((file) => (file.value as { attributes: Array<{ value: unknown }> }).attributes[0].value),
      FLOATS,
    );
  });
});

test('a body with %YAML 1.1 is read as YAML 1.1 clients mean it: 1e3, 0o17 and y stay strings', async (t) => {
  await withServer(async (s) => {
    const [cost] = (await s.put(`${API}/attribute`, [{ name: 'Cost', type: 'NUMBER' }])).body;
    const [code] = (await s.put(`${API}/attribute`, [{ name: 'Code', type: 'STRING' }])).body;
    const components = [
      {
        name: '1e3',
        desc: '0o17',
        attributes: [
          { id: code.id, value: 'y' },
          { id: cost.id, value: 1e21 },
        ],
      },
      {
        name: 'n',
        desc: '1_000',
        attributes: [
          { id: code.id, value: '6e-1' },
          { id: cost.id, value: 0.5 },
        ],
      },
    ];
    const yaml = { 'content-type': 'application/yaml' };
    // What PyYAML writes: the strings plain (they are strings in YAML 1.1), the numbers as 1.1 floats.
    const dumped = await pyyamlDump(components, 'version=(1, 1)');
    t.true(dumped.startsWith('%YAML 1.1\n'), dumped);
    t.regex(dumped, /name: 1e3\n/);
    t.regex(dumped, /desc: 0o17\n/);
    const reply = await s.request('POST', `${API}/component`, { raw: dumped, headers: yaml });
    t.is(reply.status, 200, reply.text);
    t.deepEqual(
      reply.body.map((c: { name: string; desc: string; attributes: unknown }) => ({
        name: c.name,
        desc: c.desc,
        attributes: c.attributes,
      })),
      components,
    );
    // Booleans of YAML 1.1 still are booleans; .5 and 1.0e+3 still are numbers.
    const [flag] = (await s.put(`${API}/attribute`, [{ name: 'Flag', type: 'BOOLEAN' }])).body;
    const typed = await s.request('POST', `${API}/component`, {
      raw: `%YAML 1.1\n---\n- name: typed\n  attributes:\n  - {id: ${flag.id}, value: yes}\n  - {id: ${cost.id}, value: .5}\n`,
      headers: yaml,
    });
    t.is(typed.status, 200, typed.text);
    t.deepEqual(typed.body[0].attributes, [
      { id: flag.id, value: true },
      { id: cost.id, value: 0.5 },
    ]);

    // The same PyYAML output without the directive is YAML 1.2, where 1e3 is a number.
    const plain = await pyyamlDump([{ name: '1e3' }]);
    t.is(plain, '- name: 1e3\n');
    const refused = await s.request('POST', `${API}/component`, { raw: plain, headers: yaml });
    t.is(refused.status, 400);
    t.deepEqual(refused.body, { error: 'Invalid JSON: 0.name: Expected string, received number' });
  });
});
