/**
 * The viewer's pages as pure functions of a model: how much of the model one page reads. A
 * diagram page shows a panel per component, and each panel lists the diagrams the component
 * appears on; this counts the instances read, so no timing is involved.
 */
import test from 'ava';
import { emptyModel } from '../src/model/files.js';
import type { Component, ComponentInstance, Diagram, Model } from '../src/model/types.js';
import type { KeyRecord } from '../src/store/keys.js';
import { componentPage, diagramPage } from '../src/viewer/pages.js';

const KEY: KeyRecord = { id: 'k1', org: 'acme', label: 'test', role: 'reader', hash: '0'.repeat(64), created: '2026-01-01T00:00:00Z' };

/**
 * `diagrams` diagrams of `boxes` boxes each, every box a component of its own, plus one component
 * shared by all; every read of a diagram's `componentInstances` is counted in `reads`.
 */
function countedModel(diagrams: number, boxes: number): { model: Model; reads: Map<string, number> } {
  const model = emptyModel({ name: 'Acme', slug: 'acme', members: [] });
  const reads = new Map<string, number>();
  const component = (id: string): Component => ({
    id,
    name: `Component ${id}`,
    desc: null,
    state: 'ACTIVE',
    typeId: null,
    linksTo: [],
    attributes: [],
  });
  model.components.set('shared', component('shared'));
  for (let d = 0; d < diagrams; d++) {
    const id = `d${d}`;
    const instances: ComponentInstance[] = [];
    for (let b = 0; b < boxes; b++) {
      const componentId = b === 0 ? 'shared' : `c${d}-${b}`;
      if (b > 0) model.components.set(componentId, component(componentId));
      const position = { x: (b % 10) * 20, y: Math.floor(b / 10) * 10 };
      instances.push({
        id: `i${d}-${b}`,
        component: componentId,
        placeholder: '',
        isContainer: false,
        parent: null,
        position,
        width: 16,
        height: 8,
      });
    }
    const diagram = {
      id,
      name: `Diagram ${d}`,
      desc: null,
      state: 'ACTIVE',
      level: 'C2',
      tags: [],
      textareas: [],
      relations: [],
    } as unknown as Diagram;
    Object.defineProperty(diagram, 'componentInstances', {
      enumerable: true,
      get: () => {
        reads.set(id, (reads.get(id) ?? 0) + 1);
        return instances;
      },
    });
    model.diagrams.set(id, diagram);
  }
  return { model, reads };
}

/** Reads of every diagram but `shown`, whose own drawing reads it as often as it likes. */
function othersRead(reads: Map<string, number>, shown: string): number {
  let total = 0;
  for (const [id, count] of reads) if (id !== shown) total += count;
  return total;
}

test('a diagram page reads each other diagram at most once per snapshot, however many boxes it shows', async (t) => {
  for (const boxes of [5, 50, 200]) {
    const diagrams = 20;
    const { model, reads } = countedModel(diagrams, boxes);
    const html = await diagramPage(model.diagrams.get('d0')!, model, { key: KEY, slug: 'acme' }, { commit: 'c0' });
    // Every panel of the shared component lists all twenty diagrams.
    t.true(html.includes('Diagram 19'));
    // Before: every panel scanned every diagram (boxes × diagrams reads). Now one pass, whatever `boxes`.
    t.is(othersRead(reads, 'd0'), diagrams - 1, `${boxes} boxes`);
    reads.clear();
    // The next page of the same snapshot reads no other diagram at all.
    await diagramPage(model.diagrams.get('d1')!, model, { key: KEY, slug: 'acme' }, { commit: 'c0' });
    componentPage(model.components.get('shared')!, model, { key: KEY, slug: 'acme' });
    t.is(othersRead(reads, 'd1'), 0, `${boxes} boxes, second page`);
  }
});

test("a component's panel lists each diagram it appears on once, in the model's order", (t) => {
  const { model } = countedModel(3, 4);
  // The shared component twice on d1: still one entry.
  const d1 = model.diagrams.get('d1')!;
  d1.componentInstances.push({ ...d1.componentInstances[0]!, id: 'again', position: { x: 100, y: 100 } });
  const html = componentPage(model.components.get('shared')!, model, { key: KEY, slug: 'acme' });
  const listed = [...html.matchAll(/<li><a href="\/orgs\/acme\/diagrams\/(d\d)">/g)].map((m) => m[1]);
  t.deepEqual(listed, ['d0', 'd1', 'd2']);
});
