/**
 * Where a relation's label goes when its own route has no free spot (src/drawing/labels.ts): the
 * nearest free spot, but not on another relation's line, where it reads as that relation's label.
 */
import test from 'ava';
import { laidOutDiagram } from '../bench/drawing-fixture.js';
import { drawDiagram } from '../src/drawing/svg.js';
import { passesThrough } from './support/drawing-geometry.js';
import { component, diagram, instance, model, relation } from './support/drawing-model.js';

type Box = { x: number; y: number; w: number; h: number };

function drawn(svg: string): { labels: Map<string, Box>; routes: Map<string, Array<{ x: number; y: number }>> } {
  const labels = new Map(
    [
      ...svg.matchAll(
        /<g class="relation-label[^"]*" data-id="([^"]*)"><rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)"/g,
      ),
    ].map((m) => [m[1]!, { x: +m[2]!, y: +m[3]!, w: +m[4]!, h: +m[5]! }] as const),
  );
  const routes = new Map(
    [...svg.matchAll(/<g class="relation[^"]*" data-id="([^"]*)"[^>]*>(?:<title>.*?<\/title>)?<path d="([^"]+)"/g)].map((m) => {
      const n = m[2]!.match(/-?\d+(\.\d+)?/g)!.map(Number);
      return [m[1]!, Array.from({ length: n.length / 2 }, (_, k) => ({ x: n[2 * k]!, y: n[2 * k + 1]! }))] as const;
    }),
  );
  return { labels, routes };
}

test("a label with no room on its own short route is put beside it, not on another relation's line (it lay on an unlabelled one, 100 px away, and read as its label)", (t) => {
  const m = model();
  const kinds = ['person', null, 'person', 'queue', 'software-system', 'person', 'queue'];
  kinds.forEach((type, k) => {
    if (type) component(m, `c${k}`, `Element ${k}`, type);
  });
  const at: Array<[number, number, number]> = [
    [0, 0, 40],
    [69, 0, 20],
    [44, 16, 17],
    [44, 0, 16],
    [0, 16, 40],
    [0, 32, 40],
    [48, 32, 16],
  ];
  const instances = at.map(([x, y, width], k) => instance(`i${k}`, kinds[k] ? `c${k}` : null, x, y, { width, height: 8 }));
  const relations = [
    relation('r0', 'i0', 'i4', 'Publishes events to the queue in batches of 100'),
    relation('r1', 'i3', 'i4', 'uses'),
    relation('r2', 'i3', 'i2', null),
    relation('r3', 'i4', 'i4', 'W'.repeat(32)),
  ];
  const { labels, routes } = drawn(drawDiagram(diagram({ componentInstances: instances, relations }), m));
  const label = labels.get('r3')!;
  for (const [id, route] of routes)
    if (id !== 'r3') t.false(passesThrough(route, label, 0.5), `r3's label ${JSON.stringify(label)} lies on ${id}`);
  // Still beside its loop: within a label's size of it.
  const loop = routes.get('r3')!;
  const near = { x: label.x - label.h, y: label.y - label.h, w: label.w + 2 * label.h, h: label.h * 3 };
  t.true(passesThrough(loop, near, 0.5), `r3's label ${JSON.stringify(label)} far from its loop ${JSON.stringify(loop)}`);
});

test("the bench's 50-instance diagrams of seeds 1 to 8: of the labels put off their own route, at most 2 lie on another relation's line (36 did), and no more of them than before", async (t) => {
  let offRoute = 0;
  let onAnother = 0;
  for (let seed = 1; seed <= 8; seed++) {
    const { diagram: d, model: m } = await laidOutDiagram(50, 0, seed);
    const { labels, routes } = drawn(drawDiagram(d, m));
    for (const [id, label] of labels) {
      if (passesThrough(routes.get(id)!, { x: label.x - 3, y: label.y - 3, w: label.w + 6, h: label.h + 6 }, 0)) continue;
      offRoute++;
      if ([...routes].some(([other, route]) => other !== id && passesThrough(route, label, 0.5))) onAnother++;
    }
  }
  t.true(onAnother <= 2, `${onAnother} of ${offRoute} labels off their route lie on another relation's line`);
  // As many as before are off their route (59 then): the spots looked at further are the ones clear of lines.
  t.true(offRoute <= 59, `${offRoute} labels off their route`);
});
