/**
 * The current form of the API (issue 11), as its published workflow uses it, end to end over
 * real HTTP: list types; create two components with predictable ids; create a diagram with
 * `componentId`s, a `fromRef`/`toRef` relation and tag ids; fetch it back; template in JSON
 * and in YAML; search; delete. Each acknowledged write is one commit, each refusal none.
 */
import test from 'ava';
import { withServer } from './support/server.js';
import { API, lastCommitFiles, lastCommitMessage, no, ok } from './support/current.js';
import { resourcePath } from '../src/model/files.js';
import { checkRequestsAgainstOpenApi } from './support/requests.js';

checkRequestsAgainstOpenApi();

test('the published workflow, end to end', (t) =>
  withServer(async (s) => {
    // 1. List types.
    const types = await s.get(`${API}/types`);
    t.is(types.status, 200);
    const container = types.body.find((x: any) => x.slug === 'container').id;
    const database = types.body.find((x: any) => x.slug === 'database').id;

    // A tag to put on the diagram.
    const tag = await ok(t, s, 'POST', `${API}/tags`, { id: 'pci', name: 'PCI scope', color: 'red' }, { status: 201 });
    t.deepEqual(tag, { id: 'pci', name: 'PCI scope', desc: null, color: 'red', apiContext: tag.apiContext });

    // 2. Two components with predictable ids.
    const api = await ok(
      t,
      s,
      'POST',
      `${API}/components`,
      { id: 'payment-api', name: 'Payment API', typeId: container, inlineDesc: true, desc: 'Takes payments', tags: ['pci'] },
      { status: 201 },
    );
    t.deepEqual(api, {
      id: 'payment-api',
      name: 'Payment API',
      desc: 'Takes payments',
      inlineDesc: true,
      state: 'DRAFT',
      typeId: container,
      typeSlug: 'container',
      tags: ['pci'],
      linksTo: [],
      attributes: [],
      apiContext: api.apiContext,
    });
    t.deepEqual(await lastCommitFiles(s), [`A ${resourcePath('component', 'payment-api')}`]);
    t.true(
      (await lastCommitMessage(s)).startsWith(
        `POST /api/external/components: create 1\n\ncreate ${resourcePath('component', 'payment-api')} (Payment API)\n\nApi-Context: `,
      ),
    );
    await ok(t, s, 'POST', `${API}/components`, { id: 'ledger-db', name: 'Ledger DB', typeId: database }, { status: 201 });

    // 3. A diagram naming them by componentId, a relation by fromRef/toRef, tags by id.
    const diagram = await ok(
      t,
      s,
      'POST',
      `${API}/diagrams`,
      {
        id: 'payments-c2',
        name: 'Payments',
        level: 'C2',
        tags: ['pci'],
        componentInstances: [
          { ref: 'api', componentId: 'payment-api' },
          { ref: 'db', componentId: 'ledger-db' },
          { ref: 'bank', placeholder: { text: 'Bank', typeId: container } },
        ],
        relations: [
          { fromRef: 'api', toRef: 'db', label: 'SQL' },
          { fromRef: 'api', toRef: 'bank' },
        ],
      },
      { status: 201 },
    );
    t.is(diagram.id, 'payments-c2');
    t.deepEqual(diagram.tags, ['pci']);
    t.like(diagram.componentInstances[0], {
      ref: 'api',
      componentId: 'payment-api',
      placeholder: null,
      isContainer: false,
      parentId: null,
    });
    t.like(diagram.componentInstances[2], { ref: 'bank', componentId: null, placeholder: { text: 'Bank', typeId: container } });
    t.like(diagram.relations[0], { fromRef: 'api', toRef: 'db', label: 'SQL' });
    t.is(diagram.url, `${s.url}/orgs/${s.slug}/diagrams/payments-c2`);

    // 4. Fetch it back, by id and by ref; the seed's form reads the same diagram in its own shapes.
    t.deepEqual((await s.get(`${API}/diagrams/payments-c2`)).body, diagram);
    const seedView = (await s.get(`${API}/diagram/payments-c2`)).body;
    t.is(seedView.componentInstances[0].component, 'payment-api');
    t.is(seedView.relations[0].fromComponentInstance, diagram.componentInstances[0].id);
    t.is(seedView.tags[0].name, 'PCI scope');

    // 5. Template, JSON and YAML: one commit each, refs shared across components and diagrams.
    const json = await ok(t, s, 'POST', `${API}/template`, {
      components: [{ ref: 'web', name: 'Web Shop', typeId: container }],
      diagrams: [
        {
          ref: 'shop',
          name: 'Shop',
          level: 'C1',
          componentInstances: [
            { ref: 'w', componentId: 'web' },
            { ref: 'p', componentId: 'payment-api' },
          ],
          relations: [{ fromRef: 'w', toRef: 'p' }],
        },
      ],
    });
    t.is(json.components[0].name, 'Web Shop');
    t.is(json.diagrams[0].componentInstances[0].componentId, json.components[0].id);
    t.is((await lastCommitFiles(s)).length, 2);
    const yaml = await ok(
      t,
      s,
      'POST',
      `${API}/template`,
      {
        components: [{ id: 'fraud-check', name: 'Fraud check' }],
        diagrams: [],
      },
      { yaml: true },
    );
    t.deepEqual(
      yaml.components.map((c: any) => c.id),
      ['fraud-check'],
    );
    t.deepEqual(yaml.diagrams, []);
    // Posting the same template again changes nothing and makes no commit.
    await ok(t, s, 'POST', `${API}/template`, { components: [{ id: 'fraud-check', name: 'Fraud check' }] }, { yaml: true, commits: 0 });

    // 6. Search.
    const found = await s.get(`${API}/search/components?tagId=pci`);
    t.deepEqual(found.body, [
      {
        id: 'payment-api',
        name: 'Payment API',
        state: 'DRAFT',
        desc: 'Takes payments',
        type: { id: container, name: 'Container' },
        tags: ['pci'],
        attributes: [],
      },
    ]);
    t.deepEqual(
      (await s.get(`${API}/search/diagrams?componentId=ledger-db`)).body.map((d: any) => d.id),
      ['payments-c2'],
    );
    // One diagram, one url, in every answer that carries it (model/present.ts diagramUrl).
    t.is((await s.get(`${API}/search/diagrams?componentId=ledger-db`)).body[0].url, diagram.url);
    t.is((await s.get(`/api/external/diagram/payments-c2`)).body.url, diagram.url);
    const deps = (await s.get(`${API}/search/dependencies?componentId=payment-api`)).body;
    // In list order, id order: the generated id (it starts with a digit) before 'ledger-db'.
    t.deepEqual(deps, [
      {
        component: { id: json.components[0].id, name: 'Web Shop' },
        direction: 'upstream',
        diagrams: [{ id: json.diagrams[0].id, name: 'Shop' }],
      },
      { component: { id: 'ledger-db', name: 'Ledger DB' }, direction: 'downstream', diagrams: [{ id: 'payments-c2', name: 'Payments' }] },
    ]);

    // 7. Delete: refused while the diagram holds it, then with cascade in one commit.
    await no(
      t,
      s,
      'DELETE',
      `${API}/components/ledger-db`,
      undefined,
      409,
      "Component with id 'ledger-db' is still referred to by diagram 'payments-c2' (Payments: component instances). " +
        'Remove those references first, or delete with ?cascade=true to remove them in the same commit.',
    );
    const deleted = await ok(t, s, 'DELETE', `${API}/components/ledger-db?cascade=true`, undefined);
    t.is(deleted.id, 'ledger-db');
    t.deepEqual(
      (await lastCommitFiles(s)).sort(),
      [`D ${resourcePath('component', 'ledger-db')}`, `M ${resourcePath('diagram', 'payments-c2')}`].sort(),
    );
    t.regex(await lastCommitMessage(s), /^DELETE \/api\/external\/components\/ledger-db: update 1, delete 1\n/);
    const after = (await s.get(`${API}/diagrams/payments-c2`)).body;
    t.like(after.componentInstances[1], { ref: 'db', componentId: null, placeholder: { text: 'Ledger DB', typeId: database } });
    t.is(after.relations.length, 2, 'the placeholder keeps its relations');
    t.is((await s.get(`${API}/components/ledger-db`)).status, 404);
    // The file's history stays in git.
    t.regex(
      await s.git('log', '--format=%s', '--', resourcePath('component', 'ledger-db')),
      /DELETE.*\n.*POST \/api\/external\/components/,
    );
    const fsck = await s.git('fsck', '--strict');
    t.is(fsck.trim(), '');
  }));
