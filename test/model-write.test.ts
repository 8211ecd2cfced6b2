import test from 'ava';
import { ModelError } from '../src/errors.js';
import { Draft, type WriteOptions } from '../src/model/draft.js';
import { emptyModel } from '../src/model/files.js';
import { shardOf } from '../src/model/paths.js';
import type { Model } from '../src/model/types.js';
import { writeAttributes } from '../src/model/write/attributes.js';
import { writeModel } from '../src/model/write/model.js';
import { writeTags } from '../src/model/write/tags.js';
import { turnIfDue } from '../src/model/write/turns.js';

// The write step is pure: a model and a request in, the next model and the changed files
// out. These tests run it with no git, no file system and no HTTP.

function baseModel(): Model {
  const model = emptyModel({ name: 'Acme', slug: 'acme', members: ['ada@example.com'] });
  model.types.set('0000000000000000000000000a', { id: '0000000000000000000000000a', slug: 'container', name: 'Container' });
  return model;
}

function options(): WriteOptions {
  let n = 0;
  return { apiContext: '2026-01-01 00:00:00', newId: () => `1000000000000000000000${String(n++).padStart(4, '0')}`, layout: 'keep' };
}

test('a write yields the next model and exactly the files it changed, leaving the base untouched', async (t) => {
  const base = baseModel();
  const draft = new Draft(base, options());
  const { components, diagrams } = await writeModel(
    draft,
    {
      components: [
        { ref: 'api', name: 'API', typeSlug: 'container', linksTo: ['db'] },
        { ref: 'db', name: 'DB' },
      ],
      diagrams: [
        { name: 'C2', level: 'C2', componentInstances: [{ ref: 'a', component: 'api', position: { x: 0, y: 0 }, width: 10, height: 5 }] },
      ],
    },
    'components.',
  );
  t.is(base.components.size, 0, 'the base model is not mutated');
  t.is(draft.model.components.size, 2);
  t.deepEqual(components[0].linksTo, [components[1].id]);
  t.is(diagrams[0].componentInstances[0].component, components[0].id);
  t.deepEqual(
    draft.changes.map((c) => `${c.action} ${c.path}`),
    [
      `create components/${shardOf(components[0].id)}/${components[0].id}.yaml`,
      `create components/${shardOf(components[1].id)}/${components[1].id}.yaml`,
      `create diagrams/${shardOf(diagrams[0].id)}/${diagrams[0].id}.yaml`,
    ],
  );
  t.regex(
    draft.changes[0].content,
    /^# yaml-language-server: \$schema=\.\.\/\.\.\/\.c4store\/schemas\/component\.json\nid: \S+\nref: api\nname: API\n/,
  );
});

test('re-applying the same request to its result changes nothing', async (t) => {
  const first = new Draft(baseModel(), options());
  await writeTags(first, [{ ref: 'pci', name: 'PCI', color: 'red' }]);
  const second = new Draft(first.model, { ...options(), apiContext: '2026-02-02 00:00:00' });
  const [tag] = await writeTags(second, [{ ref: 'pci', name: 'PCI', color: 'red' }]);
  t.is(second.changes.length, 0);
  t.is(tag.apiContext, '2026-01-01 00:00:00', 'a defaulted apiContext is not a change');
});

test('rules refuse with the contract texts', async (t) => {
  const draft = new Draft(baseModel(), options());
  const [tier] = await writeAttributes(draft, [{ name: 'Tier', type: 'LIST', list: ['gold'] }], true);
  // The message is the rule's text exactly; what it concerns is kept beside it, and `detailed` says both.
  const list = await t.throwsAsync(
    writeModel(new Draft(draft.model, options()), { components: [{ name: 'X', attributes: [{ id: tier.id, value: 'bronze' }] }] }, ''),
    { instanceOf: ModelError, message: `Value for LIST attribute '${tier.id}' must be one of: gold.` },
  );
  t.deepEqual(list?.context, ["attribute 'Tier'", "element 0 'X'"]);
  t.is(list?.detailed, `Value for LIST attribute '${tier.id}' must be one of: gold. (attribute 'Tier', element 0 'X')`);
  const ref = await t.throwsAsync(
    writeModel(
      new Draft(draft.model, options()),
      { diagrams: [{ name: 'D', level: 'C1', componentInstances: [{ component: 'nope' }] }] },
      '',
    ),
    { instanceOf: ModelError, message: `Ref 'nope' does not resolve to a component.` },
  );
  t.deepEqual(ref?.context, ["element 0 'D'"]);
  const duplicate = await t.throwsAsync(
    writeAttributes(new Draft(draft.model, options()), [{ name: 'L', type: 'LIST', list: ['a', 'a'] }], false),
    { instanceOf: ModelError, message: 'Duplicate list values are not allowed, got several of: a' },
  );
  t.deepEqual(duplicate?.context, ["element 0 'L'"]);
});

test.serial('a write step takes a turn of the event loop only after running 8 ms in one go', async (t) => {
  const draft = new Draft(baseModel(), options());
  let turns = 0;
  const watch = () => setImmediate(() => turns++);
  watch();
  // The first look starts the step's share of the event loop: no turn, however busy the machine
  // (a loop of quick looks asserted here before depended on the clock and failed on a busy one).
  await turnIfDue(draft);
  t.is(turns, 0);
  const until = performance.now() + 10;
  while (performance.now() < until) {
    // A long element.
  }
  await turnIfDue(draft);
  t.is(turns, 1, 'past 8 ms, other work ran before the step went on');
});
