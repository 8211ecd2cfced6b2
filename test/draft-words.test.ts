/** A draft's changes: the diff (src/history/diff.ts) and a reviewer's words for it (src/drafts/words.ts). */
import test from 'ava';
import { describeChanges } from '../src/drafts/words.js';
import { diffModels } from '../src/history/diff.js';
import { emptyModel } from '../src/model/files.js';
import type { Diagram, Model, Tag } from '../src/model/types.js';

function withDiagram(diagram: Partial<Diagram>): Model {
  const model = emptyModel({ name: 'Acme', slug: 'acme', members: [] });
  const full = {
    id: 'd1',
    name: 'Payments',
    level: 'C2',
    desc: null,
    state: 'DRAFT',
    tags: [],
    componentInstances: [],
    textareas: [],
    relations: [],
    ...diagram,
  } as Diagram;
  (model.diagrams as Map<string, Diagram>).set(full.id, full);
  return model;
}

test('text areas added, removed, edited and moved are told apart', (t) => {
  const note = (id: string, text: string, x = 0) => ({ id, text, position: { x, y: 0 }, width: 100 });
  const before = withDiagram({ textareas: [note('t1', 'Old'), note('t2', 'Kept'), note('t3', 'Here')] as Diagram['textareas'] });
  const after = withDiagram({
    textareas: [note('t2', 'Kept, edited'), note('t3', 'Here', 50), note('t4', 'New'), note('t5', 'Newer')] as Diagram['textareas'],
  });
  t.deepEqual(describeChanges(diffModels(before, after)), [
    'on Payments: added 2 text areas, removed 1 text area, moved 1 text area, edited 1 text area',
  ]);
});

test('a list emptied is [] in the diff, as the API answers it, not null', (t) => {
  const before = withDiagram({ tags: ['t1'] });
  const after = withDiagram({});
  delete (after.diagrams.get('d1') as Partial<Diagram>).tags;
  t.deepEqual(diffModels(before, after).changed[0]?.fields, [{ field: 'tags', old: ['t1'], new: [] }]);
  t.deepEqual(diffModels(after, withDiagram({ tags: [] })).changed, [], 'left out and empty are the same');
});

test('a resource whose one change is its apiContext is said so; beside other changes apiContext goes unsaid', (t) => {
  const before = withDiagram({ apiContext: '2026-11-22 00:41:49' });
  t.deepEqual(describeChanges(diffModels(before, withDiagram({ apiContext: 'pipeline run 43' }))), ['on Payments: changed apiContext']);
  t.deepEqual(describeChanges(diffModels(before, withDiagram({ name: 'Billing', apiContext: 'pipeline run 43' }))), [
    "on Billing: renamed 'Payments' to 'Billing'",
  ]);
  const tagged = (apiContext: string) => {
    const model = withDiagram({});
    (model.tags as Map<string, Tag>).set('t1', { id: 't1', name: 'PCI', apiContext } as Tag);
    return model;
  };
  t.deepEqual(describeChanges(diffModels(tagged('run 1'), tagged('run 2'))), ['on PCI: changed apiContext']);
});

test("the organization's change, which is no resource, is said first from the diff's organization", (t) => {
  const acme = { name: 'Acme', slug: 'acme', members: ['ada@example.com', 'linus@example.com'] };
  const said = (after: typeof acme) => describeChanges(diffModels(emptyModel(acme), emptyModel(after)));
  t.deepEqual(said(acme), []);
  t.deepEqual(said({ ...acme, name: 'Acme Corp', members: ['ada@example.com', 'grace@example.com', 'ken@example.com'] }), [
    "renamed the organization 'Acme' to 'Acme Corp'",
    'added members grace@example.com, ken@example.com',
    'removed member linus@example.com',
  ]);
  t.deepEqual(said({ ...acme, members: ['linus@example.com', 'ada@example.com'] }), ['reordered the members']);
  t.deepEqual(said({ ...acme, slug: 'acme-corp' }), ["changed the organization's slug 'acme' to 'acme-corp'"]);
  // Before the resources' changes.
  const renamed = emptyModel({ ...acme, name: 'Acme Corp' });
  renamed.tags.set('t1', { id: 't1', name: 'PCI' } as Tag);
  t.deepEqual(describeChanges(diffModels(emptyModel(acme), renamed)), ["renamed the organization 'Acme' to 'Acme Corp'", 'added tag PCI']);
});

test('a spelling writes what came from the model apart from the words around it (the draft page isolates each name)', (t) => {
  const before = withDiagram({
    relations: [{ id: 'r1', fromComponentInstance: 'a', toComponentInstance: 'b', label: 'old', desc: null, linksTo: [] }],
  } as Partial<Diagram>);
  const after = withDiagram({
    name: 'Pay<ments>',
    relations: [{ id: 'r1', fromComponentInstance: 'a', toComponentInstance: 'b', label: 'S&Q', desc: null, linksTo: [] }],
  } as Partial<Diagram>);
  const spelling = { text: (words: string) => words.toUpperCase(), name: (value: string) => `{${value}}` };
  t.deepEqual(describeChanges(diffModels(before, after), spelling), [
    "ON {Pay<ments>}: RENAMED '{Payments}' TO '{Pay<ments>}', RELABELLED '{S&Q}'",
  ]);
  // Plain text by default, as the agents' tools and the API's words have it.
  t.deepEqual(describeChanges(diffModels(before, after)), ["on Pay<ments>: renamed 'Payments' to 'Pay<ments>', relabelled 'S&Q'"]);
});

test("a component's new type is one change in words, though the API's diff names it twice (typeId and typeSlug)", (t) => {
  const diff = {
    added: [],
    removed: [],
    changed: [
      {
        kind: 'component' as const,
        id: 'pay',
        name: 'Payments',
        fields: [
          { field: 'typeId', old: 't-container', new: 't-database' },
          { field: 'typeSlug', old: 'container', new: 'database' },
        ],
      },
    ],
  };
  t.deepEqual(describeChanges(diff), ['on Payments: changed the type']);
});
