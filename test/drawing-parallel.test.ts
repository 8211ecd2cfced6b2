/**
 * Relations that join the same two boxes (either way) in the drawn SVG (src/drawing/route.ts,
 * PARALLEL_SPACING): each on a line of its own, far enough from the next for its label, and
 * each label on its own line, never on another line of the bundle. Measured on the paths and
 * label boxes of the SVG drawDiagram writes.
 */
import test from 'ava';
import { type RouteNode, type RouteStats, routeEdges } from '../src/drawing/route.js';
import { drawDiagram } from '../src/drawing/svg.js';
import type { ComponentInstance } from '../src/model/types.js';
import { passesThrough, type Run, runsOfSvg } from './support/drawing-geometry.js';
import { component, diagram, instance, model, relation } from './support/drawing-model.js';

type Box = { x: number; y: number; w: number; h: number };

function labelsOf(svg: string): Map<string, Box> {
  return new Map(
    [
      ...svg.matchAll(
        /<g class="relation-label[^"]*" data-id="([^"]*)"><rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)"/g,
      ),
    ].map((m) => [m[1]!, { x: +m[2]!, y: +m[3]!, w: +m[4]!, h: +m[5]! }] as const),
  );
}

/** Whether a straight stretch passes through the box shrunk by `inset` (negative: grown). */
function runThrough(r: Run, b: Box, inset: number): boolean {
  const [x0, x1, y0, y1] = r.horizontal ? [r.lo, r.hi, r.c, r.c] : [r.c, r.c, r.lo, r.hi];
  return x1 > b.x + inset && x0 < b.x + b.w - inset && y1 > b.y + inset && y0 < b.y + b.h - inset;
}

/** Four relations between A and B, two each way, labelled; drawn with A and B placed as given. */
function bundle(a: ComponentInstance, b: ComponentInstance, labels = ['reads orders', 'notifies', 'writes orders', 'sends invoices']) {
  const m = model();
  component(m, 'a', 'Web App', 'container');
  component(m, 'b', 'Orders API', 'container');
  const relations = labels.map((label, k) => (k % 2 === 0 ? relation(`r${k}`, 'A', 'B', label) : relation(`r${k}`, 'B', 'A', label)));
  const svg = drawDiagram(diagram({ componentInstances: [a, b], relations }), m, { legend: false });
  return { svg, runs: runsOfSvg(svg), labels: labelsOf(svg), ids: relations.map((r) => r.id) };
}

/** The least distance between parallel stretches of two different relations that share more than 2 px along their lines. */
function closest(runs: readonly Run[]): { d: number; pair: string } {
  let best = { d: Infinity, pair: '' };
  for (let i = 0; i < runs.length; i++) {
    for (let j = i + 1; j < runs.length; j++) {
      const [s, u] = [runs[i]!, runs[j]!];
      if (s.id === u.id || s.horizontal !== u.horizontal || Math.min(s.hi, u.hi) - Math.max(s.lo, u.lo) <= 2) continue;
      const d = Math.abs(s.c - u.c);
      if (d < best.d) best = { d, pair: `${s.id} ${u.id} at ${s.c} and ${u.c}` };
    }
  }
  return best;
}

for (const [name, a, b] of [
  ['side by side', instance('A', 'a', 0, 0), instance('B', 'b', 30, 0)],
  ['one above the other', instance('A', 'a', 0, 0), instance('B', 'b', 0, 20)],
  ['diagonal from each other (the routes bend)', instance('A', 'a', 0, 0), instance('B', 'b', 26, 18)],
] as const) {
  test(`four relations between two boxes ${name}, two each way: at least 16 px apart, each label on its own line and on no other (7 px apart, labels across the neighbours' lines before)`, (t) => {
    const { runs, labels, ids } = bundle(a, b);
    t.deepEqual(new Set(runs.map((r) => r.id)), new Set(ids), 'every relation drawn');
    const { d, pair } = closest(runs);
    t.true(d >= 16, `closest parallel stretches ${d.toFixed(1)} px apart: ${pair}`);
    t.is(labels.size, ids.length);
    for (const [id, label] of labels) {
      const own = runs.filter((r) => r.id === id);
      t.true(
        own.some((r) => runThrough(r, label, -3)),
        `${id}'s label ${JSON.stringify(label)} is not beside its own line`,
      );
      for (const r of runs)
        if (r.id !== id) t.false(runThrough(r, label, 0.5), `${id}'s label ${JSON.stringify(label)} lies on ${r.id}'s line`);
    }
  });
}

test('labels three lines tall on relations side by side: their lines drawn far enough apart that no label lies on another line of the bundle', (t) => {
  const long = 'Publishes order events to the fulfilment topic in batches of one hundred, every minute';
  const { runs, labels } = bundle(instance('A', 'a', 0, 0, { height: 14 }), instance('B', 'b', 34, 0, { height: 14 }), [long, long, long]);
  for (const [id, label] of labels) {
    t.true(label.h > 40, `${id}'s label wraps (${label.h} px tall)`);
    for (const r of runs)
      if (r.id !== id) t.false(runThrough(r, label, 0.5), `${id}'s label ${JSON.stringify(label)} lies on ${r.id}'s line`);
  }
});

test('three relations between boxes whose facing sides leave little room: still each on its own line, as far apart as the sides allow', (t) => {
  // Facing sides 4 units (56 px) tall: 48 px of room between the corners' clearances.
  const { runs } = bundle(instance('A', 'a', 0, 0, { height: 4 }), instance('B', 'b', 30, 0, { height: 4 }), ['a', 'b', 'c']);
  const { d, pair } = closest(runs);
  t.true(d >= 15, `closest ${d.toFixed(1)} px apart: ${pair}`);
  for (const r of runs) t.true(r.c > 4 - 0.01 && r.c < 52 + 0.01, `${r.id} at ${r.c} off the facing sides`);
});

for (const [name, b] of [
  ['side by side', { x: 420, y: 0 }],
  ['diagonal from each other', { x: 364, y: 252 }],
] as const) {
  test(`a thousand relations between two boxes ${name}, both ways: each routed from one box's side to the other's, through neither, their gaps narrowed in a few passes over their constraints (204 and 298 passes over half a million constraints before, 3 to 5 s; 12 and 36 before gaps first narrowed no further than a pixel, 20 and 79 since)`, (t) => {
    const boxes: RouteNode[] = [
      { id: 'a', parent: null, x: 0, y: 0, w: 224, h: 112 },
      { id: 'b', parent: null, ...b, w: 224, h: 112 },
    ];
    const edges = Array.from({ length: 1000 }, (_, k) => ({
      id: `r${k}`,
      from: k % 2 === 0 ? 'a' : 'b',
      to: k % 2 === 0 ? 'b' : 'a',
      label: { w: 80, h: 17 },
    }));
    const stats: RouteStats = { steps: 0, gridPoints: 0, nodes: 0, fullGrid: 0, direct: 0, narrowings: 0 };
    const routes = routeEdges(boxes, edges, stats);
    t.is(routes.size, edges.length);
    t.is(stats.direct, 0);
    const onSide = (p: { x: number; y: number }, n: RouteNode) =>
      (Math.abs(p.x - n.x) < 0.01 || Math.abs(p.x - n.x - n.w) < 0.01 ? p.y >= n.y && p.y <= n.y + n.h : false) ||
      (Math.abs(p.y - n.y) < 0.01 || Math.abs(p.y - n.y - n.h) < 0.01 ? p.x >= n.x && p.x <= n.x + n.w : false);
    for (const e of edges) {
      const pts = routes.get(e.id)!;
      const [from, to] = e.from === 'a' ? boxes : [boxes[1]!, boxes[0]!];
      t.true(onSide(pts[0]!, from!) && onSide(pts[pts.length - 1]!, to!), `${e.id}: ${JSON.stringify(pts)}`);
      for (const n of boxes) t.false(passesThrough(pts, n, 1), `${e.id} through ${n.id}`);
    }
    t.true(stats.narrowings <= 100, `${stats.narrowings} passes`);
  });
}
