import test from 'ava';
import fc from 'fast-check';
import { ModelError } from '../src/errors.js';
import { mergeModels, type MergeOutcome } from '../src/drafts/merge.js';
import { emptyModel, type ModelUnderConstruction } from '../src/model/files.js';
import { resourcePath } from '../src/model/paths.js';
import { modelProblems } from '../src/model/rules.js';
import type { Component, Diagram, Model, Tag } from '../src/model/types.js';

// The merge is pure: three models in, a model (or conflicts, or a broken rule) out. No git, no
// HTTP. Models here are built and edited the way writes leave them: every edit keeps the model
// valid (a deleted component takes its instances, their relations and links to it with it).

const TYPE = 'type-container';

function baseModel(components: number, diagrams: number): Model {
  const model = emptyModel({ name: 'Acme', slug: 'acme', members: ['ada@example.com'] });
  model.types.set(TYPE, { id: TYPE, slug: 'container', name: 'Container' });
  model.tags.set('tag-0', { id: 'tag-0', name: 'Core', desc: null, color: 'blue' });
  for (let i = 0; i < components; i++) {
    const id = `c-${i}`;
    model.components.set(id, {
      id,
      name: `Component ${i}`,
      desc: null,
      state: 'ACTIVE',
      typeId: TYPE,
      linksTo: i > 0 ? [`c-${i - 1}`] : [],
      attributes: [],
    });
  }
  for (let d = 0; d < diagrams; d++) {
    const instances = [...model.components.keys()].map((component, i) => ({
      id: `d${d}-i${i}`,
      component,
      placeholder: '',
      isContainer: false,
      parent: null,
      position: { x: i * 20, y: d * 10 },
      width: 10,
      height: 5,
    }));
    model.diagrams.set(`d-${d}`, {
      id: `d-${d}`,
      name: `Diagram ${d}`,
      desc: null,
      state: 'DRAFT',
      level: 'C2',
      tags: [],
      componentInstances: instances,
      textareas: [],
      relations: instances.slice(1).map((instance, i) => ({
        id: `d${d}-r${i}`,
        fromComponentInstance: instances[i].id,
        toComponentInstance: instance.id,
        label: null,
        desc: null,
        linksTo: [],
      })),
    });
  }
  return model;
}

/** A copy of the model whose maps and resources an edit may change. */
function copy(model: Model): ModelUnderConstruction {
  const clone = structuredClone({
    organization: model.organization,
    types: [...model.types],
    tags: [...model.tags],
    attributes: [...model.attributes],
    components: [...model.components],
    diagrams: [...model.diagrams],
  });
  return {
    organization: clone.organization,
    types: new Map(clone.types),
    tags: new Map(clone.tags),
    attributes: new Map(clone.attributes),
    components: new Map(clone.components),
    diagrams: new Map(clone.diagrams),
  };
}

type Edit =
  | { op: 'rename'; pick: number; text: string }
  | { op: 'describe'; pick: number; text: string }
  | { op: 'addComponent'; text: string; ref: boolean; linkTo: number }
  | { op: 'deleteComponent'; pick: number }
  | { op: 'move'; pick: number; item: number; x: number; y: number }
  | { op: 'relabel'; pick: number; item: number; text: string }
  | { op: 'addInstance'; pick: number; item: number }
  | { op: 'tag'; pick: number; color: Tag['color'] }
  | { op: 'deleteTag' }
  | { op: 'tagDiagram'; pick: number };

const text = fc.constantFrom('A', 'B', 'Payments', 'SQL', 'gRPC');
const pick = fc.nat(20);
const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ op: fc.constant('rename' as const), pick, text }),
  fc.record({ op: fc.constant('describe' as const), pick, text }),
  fc.record({ op: fc.constant('addComponent' as const), text, ref: fc.boolean(), linkTo: pick }),
  fc.record({ op: fc.constant('deleteComponent' as const), pick }),
  fc.record({ op: fc.constant('move' as const), pick, item: pick, x: fc.nat(200), y: fc.nat(200) }),
  fc.record({ op: fc.constant('relabel' as const), pick, item: pick, text }),
  fc.record({ op: fc.constant('addInstance' as const), pick, item: pick }),
  fc.record({ op: fc.constant('tag' as const), pick, color: fc.constantFrom('red' as const, 'green' as const) }),
  fc.record({ op: fc.constant('deleteTag' as const) }),
  fc.record({ op: fc.constant('tagDiagram' as const), pick }),
);

function nth<T>(map: ReadonlyMap<string, T>, n: number): T | undefined {
  if (map.size === 0) return undefined;
  return [...map.values()][n % map.size];
}

/** One side's edits, each leaving a valid model; `side` keeps the two sides' new ids apart, as random ids are. */
function applyEdits(base: Model, edits: readonly Edit[], side: string): Model {
  const model = copy(base);
  edits.forEach((e, n) => {
    const component = nth(model.components, 'pick' in e ? e.pick : 0) as Component | undefined;
    const diagram = nth(model.diagrams, 'pick' in e ? e.pick : 0) as Diagram | undefined;
    switch (e.op) {
      case 'rename':
        if (component) component.name = e.text;
        return;
      case 'describe':
        if (component) component.desc = e.text;
        return;
      case 'addComponent': {
        const id = `${side}-new-${n}`;
        const target = nth(model.components, e.linkTo);
        // Refs are unique on each side; two sides may still give one ref to two new components.
        const ref = e.ref && ![...model.components.values()].some((c) => c.ref === `ref-${e.text}`);
        model.components.set(id, {
          id,
          ...(ref ? { ref: `ref-${e.text}` } : {}),
          name: e.text,
          desc: null,
          state: 'DRAFT',
          typeId: TYPE,
          linksTo: target ? [target.id] : [],
          attributes: [],
        });
        return;
      }
      case 'deleteComponent': {
        if (!component) return;
        model.components.delete(component.id);
        for (const other of model.components.values()) other.linksTo = other.linksTo.filter((id) => id !== component.id);
        for (const d of model.diagrams.values()) {
          const gone = new Set(d.componentInstances.filter((i) => i.component === component.id).map((i) => i.id));
          d.componentInstances = d.componentInstances.filter((i) => !gone.has(i.id));
          d.relations = d.relations.filter((r) => !gone.has(r.fromComponentInstance) && !gone.has(r.toComponentInstance));
        }
        return;
      }
      case 'move': {
        const instance = diagram?.componentInstances[e.item % Math.max(1, diagram.componentInstances.length)];
        if (instance) instance.position = { x: e.x, y: e.y };
        return;
      }
      case 'relabel': {
        const relation = diagram?.relations[e.item % Math.max(1, diagram.relations.length)];
        if (relation) relation.label = e.text;
        return;
      }
      case 'addInstance': {
        const target = nth(model.components, e.item);
        if (!diagram || !target) return;
        const id = `${side}-inst-${n}`;
        const from = diagram.componentInstances[0];
        diagram.componentInstances.push({
          id,
          component: target.id,
          placeholder: '',
          isContainer: false,
          parent: null,
          position: { x: 0, y: 100 },
          width: 10,
          height: 5,
        });
        if (from) {
          diagram.relations.push({
            id: `${side}-rel-${n}`,
            fromComponentInstance: from.id,
            toComponentInstance: id,
            label: 'uses',
            desc: null,
            linksTo: [],
          });
        }
        return;
      }
      case 'tag': {
        const tag = nth(model.tags, e.pick);
        if (tag) model.tags.set(tag.id, { ...tag, color: e.color });
        return;
      }
      case 'deleteTag': {
        model.tags.delete('tag-0');
        for (const d of model.diagrams.values()) d.tags = d.tags.filter((id) => id !== 'tag-0');
        return;
      }
      case 'tagDiagram':
        if (diagram && model.tags.has('tag-0') && !diagram.tags.includes('tag-0')) diagram.tags = [...diagram.tags, 'tag-0'];
        return;
    }
  });
  return model;
}

/** A model as plain data, independent of map order and of the order of nested lists. */
function canonical(model: Model): string {
  const byId = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      const items = value.map(byId);
      return items.every((item) => typeof item === 'object' && item !== null && 'id' in item)
        ? [...items].sort((a, b) => String((a as { id: string }).id).localeCompare(String((b as { id: string }).id)))
        : items;
    }
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(
        Object.entries(value)
          .filter(([, v]) => v !== undefined)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => [k, byId(v)]),
      );
    }
    return value;
  };
  const sortedMap = (map: ReadonlyMap<string, unknown>) => [...map.keys()].sort().map((id) => byId(map.get(id)));
  return JSON.stringify({
    organization: byId(model.organization),
    types: sortedMap(model.types),
    tags: sortedMap(model.tags),
    attributes: sortedMap(model.attributes),
    components: sortedMap(model.components),
    diagrams: sortedMap(model.diagrams),
  });
}

function merged(t: { fail: (message: string) => void }, outcome: MergeOutcome): Model {
  if (outcome.outcome !== 'merged') {
    t.fail(`expected a clean merge, got ${JSON.stringify(outcome).slice(0, 400)}`);
    throw new Error('not merged');
  }
  return outcome.model;
}

const sides = fc.record({
  components: fc.integer({ min: 0, max: 6 }),
  diagrams: fc.integer({ min: 0, max: 2 }),
  main: fc.array(edit, { maxLength: 6 }),
  draft: fc.array(edit, { maxLength: 6 }),
});

test('property: a draft merged into a main that has not moved is the draft', (t) => {
  fc.assert(
    fc.property(sides, ({ components, diagrams, draft }) => {
      const base = baseModel(components, diagrams);
      const proposal = applyEdits(base, draft, 'draft');
      const result = mergeModels(base, base, proposal);
      return result.outcome === 'merged' && canonical(result.model) === canonical(proposal);
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('property: merging a draft that changed nothing leaves main as it is', (t) => {
  fc.assert(
    fc.property(sides, ({ components, diagrams, main }) => {
      const base = baseModel(components, diagrams);
      const moved = applyEdits(base, main, 'main');
      const result = mergeModels(base, moved, base);
      return result.outcome === 'merged' && canonical(result.model) === canonical(moved);
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('property: a merged model never breaks a rule; what cannot merge says why', (t) => {
  let counts = { merged: 0, conflicts: 0, invalid: 0 };
  fc.assert(
    fc.property(sides, ({ components, diagrams, main, draft }) => {
      const base = baseModel(components, diagrams);
      const result = mergeModels(base, applyEdits(base, main, 'main'), applyEdits(base, draft, 'draft'));
      counts = { ...counts, [result.outcome]: counts[result.outcome] + 1 };
      if (result.outcome === 'merged') return modelProblems(result.model).length === 0;
      if (result.outcome === 'conflicts') {
        return (
          result.conflicts.length > 0 &&
          result.conflicts.every((c) => c.kind && c.id && c.field && 'base' in c && 'main' in c && 'draft' in c)
        );
      }
      return result.error instanceof ModelError && result.error.message.length > 0;
    }),
    { numRuns: 500 },
  );
  // The generator reaches every outcome (else the property proves less than it says).
  t.true(counts.merged > 0 && counts.conflicts > 0 && counts.invalid > 0, JSON.stringify(counts));
});

test('property: the merge does not care which side is called main', (t) => {
  fc.assert(
    fc.property(sides, ({ components, diagrams, main, draft }) => {
      const base = baseModel(components, diagrams);
      const [a, b] = [applyEdits(base, main, 'main'), applyEdits(base, draft, 'draft')];
      const one = mergeModels(base, a, b);
      const other = mergeModels(base, b, a);
      if (one.outcome !== other.outcome) return false;
      if (one.outcome === 'merged' && other.outcome === 'merged') return canonical(one.model) === canonical(other.model);
      return true;
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('property: resolving every conflict one way leaves no conflict', (t) => {
  fc.assert(
    fc.property(sides, fc.constantFrom('main' as const, 'draft' as const), ({ components, diagrams, main, draft }, take) => {
      const base = baseModel(components, diagrams);
      const [a, b] = [applyEdits(base, main, 'main'), applyEdits(base, draft, 'draft')];
      const first = mergeModels(base, a, b);
      if (first.outcome !== 'conflicts') return true;
      const again = mergeModels(
        base,
        a,
        b,
        first.conflicts.map(({ kind, id, field }) => ({ kind, id, field, take })),
      );
      return again.outcome !== 'conflicts';
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('one side renames a component, the other moves its box and relabels a relation: all three survive', (t) => {
  const base = baseModel(3, 1);
  const main = applyEdits(base, [{ op: 'rename', pick: 1, text: 'Payments' }], 'main');
  const draft = applyEdits(
    base,
    [
      { op: 'move', pick: 0, item: 1, x: 120, y: 40 },
      { op: 'relabel', pick: 0, item: 0, text: 'SQL' },
    ],
    'draft',
  );
  const model = merged(t, mergeModels(base, main, draft));
  t.is(model.components.get('c-1')?.name, 'Payments');
  const diagram = model.diagrams.get('d-0')!;
  t.deepEqual(diagram.componentInstances[1].position, { x: 120, y: 40 });
  t.is(diagram.relations[0].label, 'SQL');
});

test('the same field changed differently on both sides is a conflict with its three values, settled by a resolution', (t) => {
  const base = baseModel(2, 1);
  const main = applyEdits(
    base,
    [
      { op: 'move', pick: 0, item: 0, x: 5, y: 5 },
      { op: 'rename', pick: 0, text: 'A' },
    ],
    'main',
  );
  const draft = applyEdits(
    base,
    [
      { op: 'move', pick: 0, item: 0, x: 9, y: 9 },
      { op: 'rename', pick: 0, text: 'B' },
    ],
    'draft',
  );
  const result = mergeModels(base, main, draft);
  t.is(result.outcome, 'conflicts');
  if (result.outcome !== 'conflicts') return;
  t.deepEqual(result.conflicts, [
    { kind: 'component', id: 'c-0', name: 'B', field: 'name', base: 'Component 0', main: 'A', draft: 'B' },
    {
      kind: 'diagram',
      id: 'd-0',
      name: 'Diagram 0',
      field: 'componentInstances.d0-i0.position',
      base: { x: 0, y: 0 },
      main: { x: 5, y: 5 },
      draft: { x: 9, y: 9 },
    },
  ]);
  const settled = merged(
    t,
    mergeModels(base, main, draft, [
      { kind: 'component', id: 'c-0', field: 'name', take: 'main' },
      { kind: 'diagram', id: 'd-0', field: 'componentInstances.d0-i0.position', take: 'draft' },
    ]),
  );
  t.is(settled.components.get('c-0')?.name, 'A');
  t.deepEqual(settled.diagrams.get('d-0')?.componentInstances[0].position, { x: 9, y: 9 });
});

test('a component deleted on main but used by new work in the draft is refused with the rule', (t) => {
  const base = baseModel(3, 0);
  const main = applyEdits(base, [{ op: 'deleteComponent', pick: 2 }], 'main');
  const draft = applyEdits(base, [{ op: 'addComponent', text: 'Fraud Check', ref: false, linkTo: 2 }], 'draft');
  const result = mergeModels(base, main, draft);
  if (result.outcome !== 'invalid') return t.fail(result.outcome);
  t.true(result.error instanceof ModelError);
  t.is(result.error.message, `${resourcePath('component', 'draft-new-0')}: Component with id 'c-2' does not exist.`);
  t.deepEqual(result.error.context, [], 'the link names the component itself: nothing to add');
});

test('deleted on one side, changed on the other: a conflict on the whole resource', (t) => {
  const base = baseModel(2, 0);
  const main = applyEdits(base, [{ op: 'rename', pick: 1, text: 'Ledger' }], 'main');
  const draft = applyEdits(base, [{ op: 'deleteComponent', pick: 1 }], 'draft');
  const result = mergeModels(base, main, draft);
  t.is(result.outcome, 'conflicts');
  if (result.outcome !== 'conflicts') return;
  t.like(result.conflicts[0], { kind: 'component', id: 'c-1', field: '*', draft: null });
  const taken = merged(t, mergeModels(base, main, draft, [{ kind: 'component', id: 'c-1', field: '*', take: 'draft' }]));
  t.false(taken.components.has('c-1'));
});

test("apiContext written on both sides: the later time stands, compared as times; two labels a client gave are a conflict like any field's", (t) => {
  const base = baseModel(1, 0);
  /** c-0 with `apiContext` and one more field changed (each side its own field, so only apiContext is written on both). */
  const written = (apiContext: string, field: 'name' | 'desc') => {
    const model = copy(base);
    const component = model.components.get('c-0')!;
    model.components.set('c-0', { ...component, [field]: `${field} ${apiContext}`, apiContext });
    return model;
  };
  const later = (main: string, draft: string) => merged(t, mergeModels(base, written(main, 'name'), written(draft, 'desc')));
  // 09:00 UTC is later than 10:00 at +02:00 (08:00 UTC), though 'T' sorts after ' ' as text.
  t.is(later('2026-03-01T10:00:00+02:00', '2026-03-01 09:00:00').components.get('c-0')?.apiContext, '2026-03-01 09:00:00');
  t.is(later('2026-03-01 09:00:00', '2026-03-01T10:00:00+02:00').components.get('c-0')?.apiContext, '2026-03-01 09:00:00');
  t.is(later('2026-03-01 09:00:00', '2026-03-01 09:00:01').components.get('c-0')?.apiContext, '2026-03-01 09:00:01');
  for (const [main, draft] of [
    ['import #9', 'import #10'],
    ['import #9', '2026-03-01 09:00:00'],
  ]) {
    const result = mergeModels(base, written(main, 'name'), written(draft, 'desc'));
    if (result.outcome !== 'conflicts') return t.fail(result.outcome);
    t.deepEqual(result.conflicts, [{ kind: 'component', id: 'c-0', name: 'Component 0', field: 'apiContext', base: null, main, draft }]);
  }
});
