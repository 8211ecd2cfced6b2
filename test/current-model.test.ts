import test from 'ava';
import { ApiError, ModelError } from '../src/errors.js';
import { Draft, type WriteOptions } from '../src/model/draft.js';
import type { Model } from '../src/model/types.js';
import { mergePatch, writeCurrent } from '../src/model/write/current.js';
import { deleteResource } from '../src/model/write/delete.js';
import { emptyModel, resourcePath } from '../src/model/files.js';
import { checkRequestsAgainstOpenApi } from './support/requests.js';

checkRequestsAgainstOpenApi();

// The current form's model steps (issue 11) with no git, no file system and no HTTP: the merge
// of a partial object, client-chosen ids, and delete with its referrer check and cascade.

function options(): WriteOptions {
  let n = 0;
  return { apiContext: '2026-01-01 00:00:00', newId: () => `1000000000000000000000${String(n++).padStart(4, '0')}`, layout: 'keep' };
}

/** A model with one tag, one component carrying it, and one diagram placing the component. */
async function seeded(): Promise<Model> {
  const model = emptyModel({ name: 'Acme', slug: 'acme', members: [] });
  model.types.set('0000000000000000000000000a', { id: '0000000000000000000000000a', slug: 'container', name: 'Container' });
  const draft = new Draft(model, options());
  await writeCurrent(draft, { tags: [{ id: 'core', name: 'Core', color: 'blue' }] }, 'create', 'single');
  await writeCurrent(
    draft,
    {
      components: [{ id: 'api', name: 'API', typeId: '0000000000000000000000000a', tags: ['core'] }],
      diagrams: [
        {
          id: 'ctx',
          name: 'Ctx',
          level: 'C1',
          componentInstances: [
            { ref: 'a', componentId: 'api', position: { x: 0, y: 0 }, width: 5, height: 5 },
            { ref: 'b', position: { x: 9, y: 0 }, width: 5, height: 5 },
          ],
          relations: [{ fromRef: 'a', toRef: 'b' }],
        },
      ],
    },
    'upsert',
    'template',
  );
  return draft.model;
}

test('mergePatch: only fields of the schema are taken, null clears, naming the type one way replaces both', async (t) => {
  const model = await seeded();
  const stored = model.components.get('api')!;
  const merged = mergePatch('component', stored, { desc: 'x', typeSlug: 'container', secret: 'never copied', id: 'other' });
  t.deepEqual(merged, {
    name: 'API',
    desc: 'x',
    inlineDesc: false,
    state: 'DRAFT',
    typeSlug: 'container',
    tags: ['core'],
    linksTo: [],
    attributes: [],
  });
  t.is(mergePatch('component', stored, { desc: null }).desc, null);
});

test('a PATCH that changes nothing leaves no change; one that changes a field changes one file', async (t) => {
  const base = await seeded();
  const same = new Draft(base, options());
  await writeCurrent(same, { components: [{ id: 'api', name: 'API' }] }, 'upsert', 'single');
  t.deepEqual(same.changes, []);
  const changed = new Draft(base, options());
  const { components } = await writeCurrent(changed, { components: [{ id: 'api', state: 'ACTIVE' }] }, 'upsert', 'single');
  t.deepEqual(
    changed.changes.map((c) => `${c.action} ${c.path}`),
    [`update ${resourcePath('component', 'api')}`],
  );
  t.like(components[0], { name: 'API', state: 'ACTIVE', tags: ['core'] });
  t.is(base.components.get('api')!.state, 'DRAFT', 'the base model is not mutated');
});

test('client-chosen ids: the pattern and uniqueness are checked before anything is built', async (t) => {
  const base = await seeded();
  const conflict = await t.throwsAsync(
    writeCurrent(new Draft(base, options()), { tags: [{ id: 'api', name: 'x', color: 'red' }] }, 'create', 'single'),
  );
  t.true(conflict instanceof ApiError && conflict.status === 409);
  await t.throwsAsync(writeCurrent(new Draft(base, options()), { tags: [{ id: 'A', name: 'x', color: 'red' }] }, 'create', 'single'), {
    instanceOf: ModelError,
    message: /^Invalid id 'A': /,
  });
});

test('delete: refused with the referrers listed, or cascaded into them', async (t) => {
  const base = await seeded();
  const refused = t.throws(() => deleteResource(new Draft(base, options()), 'component', 'api', false));
  t.regex(refused!.message, /^Component with id 'api' is still referred to by diagram 'ctx' \(Ctx: component instances\)\. /);
  const draft = new Draft(base, options());
  deleteResource(draft, 'component', 'api', true);
  t.deepEqual(
    draft.changes.map((c) => `${c.action} ${c.path}`),
    [`delete ${resourcePath('component', 'api')}`, `update ${resourcePath('diagram', 'ctx')}`],
  );
  const diagram = draft.model.diagrams.get('ctx')!;
  t.like(diagram.componentInstances[0], { component: null, placeholder: 'API', typeId: '0000000000000000000000000a' });
  t.is(diagram.relations.length, 1);
  t.false(draft.model.components.has('api'));
  t.true(base.components.has('api'), 'the base model is not mutated');

  const tag = new Draft(base, options());
  deleteResource(tag, 'tag', 'core', true);
  t.is(tag.model.components.get('api')!.tags, undefined);
});
