/**
 * The drawing as a pure function (src/drawing/): bounded text (issue 24.2 and 24.4), routes
 * around boxes, labels off boxes and each other, the C4 notation, marks for a draft's diff.
 * The same counts measured from Chromium's geometry: drawing-browser.test.ts.
 */
import test from 'ava';
import { laidOutDiagram, routingInput } from '../bench/drawing-fixture.js';
import { drawDiagram, GRID_PX, textAreaLines } from '../src/drawing/svg.js';
import { drawDiagramOffThread, OFF_THREAD_FROM } from '../src/drawing/draw-pool.js';
import { DrawingCache } from '../src/drawing/drawings.js';
import { BucketQueue, routeEdges, type RouteNode } from '../src/drawing/route.js';
import { clip, DRAWN_TEXT, textWidth, wrapText } from '../src/drawing/text.js';
import { emptyModel, type ModelUnderConstruction } from '../src/model/files.js';
import type { ComponentInstance, Diagram } from '../src/model/types.js';
import { drawnOnTop, runsOfRoutes } from './support/drawing-geometry.js';
import { component, diagram, instance, model, TYPES } from './support/drawing-model.js';

const count = (svg: string, needle: string) => svg.split(needle).length - 1;

// ---------------------------------------------------------------------------------------------
// Bounded, linear text (issue 24.2, 24.4)

test('a name, label or description is drawn from its first DRAWN_TEXT characters only: an 80 KB name draws what a 40 KB one does', (t) => {
  const drawWith = (length: number) => {
    const m = model();
    const long = 'Payment '.repeat(length / 8);
    component(m, 'c', long, 'container', { desc: long });
    component(m, 'e', 'Ledger', 'container');
    const d = diagram({
      componentInstances: [instance('a', 'c', 0, 0), instance('b', 'e', 30, 0)],
      relations: [{ id: 'r', fromComponentInstance: 'a', toComponentInstance: 'b', label: long, desc: long, linksTo: [] }],
    });
    return drawDiagram(d, m);
  };
  const at40k = drawWith(40_000);
  t.is(drawWith(80_000), at40k);
  t.true(at40k.length < 20_000, `${at40k.length} bytes`);
  t.is(clip('x'.repeat(10_000)).length, DRAWN_TEXT + 1);
  t.is(clip('short'), 'short');
});

test('one word longer than its box is cut where it stops fitting; words that fit are never split', (t) => {
  const font = { size: 13, bold: true };
  const lines = wrapText('Checkout Controller service', 100, font);
  t.deepEqual(lines, ['Checkout', 'Controller', 'service']);
  for (const line of lines) t.true(textWidth(line, font) <= 100);
  const long = wrapText('Supercalifragilisticexpialidocious', 80, font);
  t.true(long.length > 1);
  t.is(long.join(''), 'Supercalifragilisticexpialidocious');
  for (const line of long) t.true(textWidth(line, font) <= 80);
  // At most maxLines lines, the last one ending in an ellipsis.
  const capped = wrapText('one two three four five six seven', 40, font, 2);
  t.is(capped.length, 2);
  t.true(capped[1]!.endsWith('…'));
  // A long word without spaces is still one pass: 1 MB gives at most DRAWN_TEXT characters of lines.
  const huge = wrapText('x'.repeat(1_000_000), 100, font);
  t.true(huge.join('').length <= DRAWN_TEXT + 1);
});

test('bidi controls in model text are drawn as [U+XXXX], measured so: none left in the SVG for a renderer to obey', (t) => {
  const font = { size: 13, bold: true };
  // Measured as drawn: the shown form is wider than the control (one em), and wraps as such.
  t.deepEqual(wrapText('abc\u202edef', 500, font), ['abc[U+202E]def']);
  t.true(Math.max(...wrapText('abc\u202edef', 60, font).map((l) => textWidth(l, font))) <= 60);
  const m = model();
  component(m, 'c', 'Pay\u202ements', 'container');
  component(m, 'e', 'Ledger', 'container', { desc: 'desc\u2067ription' });
  const d = diagram({
    name: 'Dia\u2069\u202egram',
    componentInstances: [instance('a', 'c', 0, 0, { isContainer: true, width: 30, height: 14 }), instance('b', 'e', 40, 0)],
    relations: [{ id: 'r', fromComponentInstance: 'a', toComponentInstance: 'b', label: 're\u202ead', desc: 'd\u202ee', linksTo: [] }],
    textareas: [{ id: 't', position: { x: 0, y: 20 }, width: 30, text: 'no\u202ete' }],
  });
  const svg = drawDiagram(d, m);
  t.false(/[\u202a-\u202e\u2066-\u2069]/.test(svg));
  for (const shown of ['Pay[U+202E]ments', 'desc[U+2067]ription', 're[U+202E]ad', 'no[U+202E]te', 'Dia[U+2069][U+202E]gram', 'd[U+202E]e'])
    t.true(svg.includes(shown), shown);
});

test('a 10 MB text area draws at most DRAWN_TEXTAREA_LINES lines: output bounded, whatever the width', (t) => {
  const m = model();
  const text = 'y'.repeat(10_000_000);
  const svg = drawDiagram(diagram({ textareas: [{ id: 'ta', position: { x: 0, y: 0 }, width: 1, text }] }), m);
  t.true(count(svg, '<text') <= 202, `${count(svg, '<text')} text elements`);
  t.true(svg.length < 60_000, `${svg.length} bytes`);
  t.true(svg.includes('>…</text>'));
  const wide = drawDiagram(
    diagram({ textareas: [{ id: 'ta', position: { x: 0, y: 0 }, width: 100, text: `${'z'.repeat(1000)}\n`.repeat(10_000) }] }),
    m,
  );
  t.true(wide.length < 60_000, `${wide.length} bytes`);
  // Lines are still cut as the layout counts them.
  t.deepEqual(textAreaLines('abcdef\r\ngh\rij', 4), ['abcd', 'ef', 'gh', 'ij']);
  t.is(textAreaLines('q'.repeat(1_000_000), 1, 10).length, 10);
});

// ---------------------------------------------------------------------------------------------
// Routes and labels

interface Seg {
  a: { x: number; y: number };
  b: { x: number; y: number };
}

function crossesInterior(s: Seg, r: { x: number; y: number; w: number; h: number }): boolean {
  // Orthogonal segments: the segment meets the open rectangle.
  const x0 = Math.min(s.a.x, s.b.x);
  const x1 = Math.max(s.a.x, s.b.x);
  const y0 = Math.min(s.a.y, s.b.y);
  const y1 = Math.max(s.a.y, s.b.y);
  return x1 > r.x + 0.5 && x0 < r.x + r.w - 0.5 && y1 > r.y + 0.5 && y0 < r.y + r.h - 0.5;
}

/** Every route orthogonal, from a side of its first box to a side of its second, through no box that is not an end or its container. */
function assertRoutes(
  t: { true: (v: boolean, m?: string) => void; false: (v: boolean, m?: string) => void; is: (a: unknown, b: unknown, m?: string) => void },
  nodes: readonly RouteNode[],
  edges: ReadonlyArray<{ id: string; from: string; to: string }>,
  routes: ReadonlyMap<string, Array<{ x: number; y: number }>>,
): void {
  t.is(routes.size, edges.length);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const e of edges) {
    const pts = routes.get(e.id)!;
    const exempt = new Set([e.from, e.to, byId.get(e.from)!.parent, byId.get(e.to)!.parent]);
    let through = '';
    let diagonal = false;
    for (let i = 1; i < pts.length; i++) {
      const s = { a: pts[i - 1]!, b: pts[i]! };
      if (!(s.a.x === s.b.x || s.a.y === s.b.y)) diagonal = true;
      for (const n of nodes) if (!exempt.has(n.id) && crossesInterior(s, n)) through ||= n.id;
    }
    t.false(diagonal, `${e.id} is orthogonal`);
    t.is(through, '', `${e.id} crosses no box`);
    // Nor its own ends, but where one holds the other: an arrow run through its box is hidden under it.
    const from = byId.get(e.from)!;
    const to = byId.get(e.to)!;
    if (from.parent !== to.id && to.parent !== from.id) {
      for (let i = 1; i < pts.length; i++) {
        const s = { a: pts[i - 1]!, b: pts[i]! };
        t.false(crossesInterior(s, from) || crossesInterior(s, to), `${e.id} runs through one of its own ends: ${JSON.stringify(pts)}`);
      }
    }
    const onSide = (p: { x: number; y: number }, n: RouteNode) =>
      (p.x >= n.x && p.x <= n.x + n.w && (p.y === n.y || p.y === n.y + n.h)) ||
      (p.y >= n.y && p.y <= n.y + n.h && (p.x === n.x || p.x === n.x + n.w));
    t.true(onSide(pts[0]!, byId.get(e.from)!), `${e.id} starts on its box`);
    t.true(onSide(pts[pts.length - 1]!, byId.get(e.to)!), `${e.id} ends on its box`);
  }
}

test('routes are orthogonal, start and end on their boxes, and never cross a box that is not an end or its container', (t) => {
  // A grid of boxes with relations jumping across it, and a container with children.
  const nodes: RouteNode[] = [];
  for (let i = 0; i < 5; i++)
    for (let j = 0; j < 5; j++) nodes.push({ id: `n${i}${j}`, parent: null, x: i * 300, y: j * 200, w: 200, h: 100 });
  nodes.push({ id: 'box', parent: null, x: 1600, y: 0, w: 500, h: 400 });
  nodes.push({ id: 'k1', parent: 'box', x: 1650, y: 60, w: 150, h: 80 });
  nodes.push({ id: 'k2', parent: 'box', x: 1900, y: 260, w: 150, h: 80 });
  const edges = [
    { id: 'a', from: 'n00', to: 'n44' },
    { id: 'b', from: 'n04', to: 'n40' },
    { id: 'c', from: 'n20', to: 'n24' },
    { id: 'd', from: 'n02', to: 'k1' },
    { id: 'e', from: 'k1', to: 'k2' },
    { id: 'f', from: 'n42', to: 'box' },
    { id: 'g', from: 'n11', to: 'n13' },
  ];
  const stats = { steps: 0, gridPoints: 0, nodes: 0, fullGrid: 0, direct: 0, narrowings: 0 };
  const routes = routeEdges(nodes, edges, stats);
  assertRoutes(t, nodes, edges, routes);
  t.is(stats.direct, 0, 'no relation is left a direct elbow');
});

test('a leg spread along its side never runs through the box the route ends at: the arrowhead stays in sight', (t) => {
  // Every component type in one column, related in a ring with skips (a drawing probe's diagram):
  // the leg out of the first box was spread along its side into the fourth box, its arrow under it.
  const column: Array<[string, string | null, number, number, number, number]> = [
    ['i0', null, 27, 0, 16, 8],
    ['i1', null, 9, 16, 21, 8],
    ['i2', null, 0, 32, 16, 8],
    ['i3', null, 18, 48, 16, 8],
    ['i4', null, 12, 64, 16, 8],
    ['i5', null, 10, 80, 16, 8],
    ['i6', null, 14, 96, 16, 8],
    ['i7', null, 18, 112, 16, 8],
    ['i8', null, 8, 128, 17, 8],
    ['i9', null, 18, 144, 16, 8],
    ['i10', null, 26, 160, 21, 14],
    ['i11', 'i10', 28, 164, 16, 8],
  ];
  const nodes: RouteNode[] = column.map(([id, parent, x, y, w, h]) => ({
    id,
    parent,
    x: x * GRID_PX,
    y: y * GRID_PX,
    w: w * GRID_PX,
    h: h * GRID_PX,
  }));
  const ring = [
    [0, 1],
    [0, 3],
    [1, 2],
    [1, 4],
    [2, 3],
    [2, 5],
    [3, 4],
    [3, 6],
    [4, 5],
    [4, 7],
    [5, 6],
    [5, 8],
    [6, 7],
    [6, 9],
    [7, 8],
    [7, 10],
    [8, 9],
    [8, 11],
    [9, 10],
    [9, 0],
    [10, 11],
    [10, 1],
    [11, 0],
    [11, 2],
  ];
  const edges = ring.map(([a, b]) => ({ id: `${a}-${b}`, from: `i${a}`, to: `i${b}` }));
  assertRoutes(t, nodes, edges, routeEdges(nodes, edges));
});

test('boxes placed by hand, no two on one line: the search graph holds a small part of the grid of their lines, and every relation is routed', (t) => {
  let seed = 1;
  const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const nodes: RouteNode[] = Array.from({ length: 300 }, (_, k) => ({
    id: `b${k}`,
    parent: null,
    x: (k % 17) * 400 + Math.floor(random() * 150),
    y: Math.floor(k / 17) * 250 + Math.floor(random() * 100),
    w: 200 + 2 * Math.floor(random() * 13),
    h: 100 + 2 * Math.floor(random() * 7),
  }));
  const edges = nodes
    .map((n, k) => ({ id: `r${k}`, from: n.id, to: `b${Math.floor(random() * nodes.length)}` }))
    .filter((e) => e.from !== e.to);
  const stats = { steps: 0, gridPoints: 0, nodes: 0, fullGrid: 0, direct: 0, narrowings: 0 };
  const routes = routeEdges(nodes, edges, stats);
  assertRoutes(t, nodes, edges, routes);
  t.is(stats.direct, 0);
  t.true(stats.nodes * 10 < stats.gridPoints, `${stats.nodes} nodes, ${stats.gridPoints} grid points`);
});

test("A*'s queue takes keys in order however far apart, holding a bounded array of buckets", (t) => {
  const queue = new BucketQueue();
  queue.clear(5);
  const keys = [28_000_005, 5, 3_000_000, 10, 28_000_006, 1_500_000];
  for (const [item, key] of keys.entries()) queue.push(item, key);
  const taken: number[] = [];
  while (queue.size > 0) taken.push(keys[queue.pop()]!);
  t.deepEqual(taken, [5, 10, 1_500_000, 3_000_000, 28_000_005, 28_000_006]);
  // A bucket per pixel up to the farthest key was an array of 28 million entries, filled and cleared per relation.
  t.true((queue as unknown as { heads: Int32Array }).heads.length <= 2 ** 21);
});

test('boxes at opposite ends of the positions a diagram holds (±1,000,000 units): every relation routed round the boxes', (t) => {
  const far = 1_000_000 * GRID_PX;
  const nodes: RouteNode[] = [
    { id: 'a', parent: null, x: -far, y: -far, w: 140, h: 84 },
    { id: 'b', parent: null, x: far, y: far, w: 140, h: 84 },
    { id: 'c', parent: null, x: far, y: -far, w: 140, h: 84 },
    { id: 'd', parent: null, x: 0, y: 0, w: 140, h: 84 },
  ];
  const edges = [
    { id: 'ab', from: 'a', to: 'b' },
    { id: 'ac', from: 'a', to: 'c' },
    { id: 'db', from: 'd', to: 'b' },
    { id: 'cd', from: 'c', to: 'd' },
  ];
  const stats = { steps: 0, gridPoints: 0, nodes: 0, fullGrid: 0, direct: 0, narrowings: 0 };
  const routes = routeEdges(nodes, edges, stats);
  assertRoutes(t, nodes, edges, routes);
  t.is(stats.direct, 0);
});

test('boxes placed on top of each other by hand: the relation is still routed (on the whole grid, through a box only where it must)', (t) => {
  const nodes: RouteNode[] = [
    { id: 'a', parent: null, x: 0, y: 0, w: 200, h: 100 },
    { id: 'over-a', parent: null, x: -20, y: -20, w: 240, h: 140 },
    { id: 'c', parent: null, x: 600, y: 0, w: 200, h: 100 },
  ];
  const edges = [{ id: 'r', from: 'a', to: 'c' }];
  const stats = { steps: 0, gridPoints: 0, nodes: 0, fullGrid: 0, direct: 0, narrowings: 0 };
  const pts = routeEdges(nodes, edges, stats).get('r')!;
  t.is(stats.fullGrid, 1);
  t.is(stats.direct, 0);
  for (let i = 1; i < pts.length; i++) t.true(pts[i - 1]!.x === pts[i]!.x || pts[i - 1]!.y === pts[i]!.y);
  t.is(pts[0]!.x, 200, 'leaves a by its side facing c');
  t.is(pts[pts.length - 1]!.x, 600, 'enters c by its side facing a');
  // Out of the box on top of a, then straight to c: no detour round it.
  t.true(pts.every((p) => p.y >= -20 && p.y <= 120));
});

test('routes that share a channel are nudged apart: none is drawn on top of another, through the channel and round its bends', (t) => {
  // Three boxes above a wall with one gap, three below: every relation runs through the gap.
  const nodes: RouteNode[] = [
    ...[0, 1, 2].map((i) => ({ id: `top${i}`, parent: null, x: i * 300, y: 0, w: 200, h: 100 })),
    { id: 'wall-left', parent: null, x: -1200, y: 300, w: 1500, h: 100 },
    { id: 'wall-right', parent: null, x: 400, y: 300, w: 1500, h: 100 },
    ...[0, 1, 2].map((i) => ({ id: `bottom${i}`, parent: null, x: i * 300, y: 600, w: 200, h: 100 })),
    // Two boxes one above the other, related three times: straight routes, side by side.
    { id: 'up', parent: null, x: 2400, y: 0, w: 200, h: 100 },
    { id: 'down', parent: null, x: 2400, y: 400, w: 200, h: 100 },
  ];
  const edges = [
    ...[0, 1, 2].flatMap((i) => [0, 1, 2].map((j) => ({ id: `r${i}${j}`, from: `top${i}`, to: `bottom${j}` }))),
    { id: 'same1', from: 'up', to: 'down' },
    { id: 'same2', from: 'up', to: 'down' },
    { id: 'back', from: 'down', to: 'up' },
  ];
  const routes = routeEdges(nodes, edges);
  assertRoutes(t, nodes, edges, routes);
  t.deepEqual(drawnOnTop(runsOfRoutes(routes)), []);
  // Through the gap (300 to 400) side by side, at least MIN_SPACING (2 px) apart.
  const inGap = [...routes.values()]
    .flatMap((pts) => pts.slice(1).map((q, i) => [pts[i]!, q] as const))
    .filter(([p, q]) => p.x === q.x && p.x > 300 && p.x < 400 && Math.min(p.y, q.y) < 300 && Math.max(p.y, q.y) > 400)
    .map(([p]) => p.x)
    .sort((a, b) => a - b);
  t.is(inGap.length, 9);
  for (let i = 1; i < inGap.length; i++) t.true(inGap[i]! - inGap[i - 1]! >= 2, inGap.join(' '));
});

test("the bench's 200-instance diagram: every relation routed round the boxes (none left a direct elbow), each on a line of its own", async (t) => {
  const { nodes, edges } = routingInput((await laidOutDiagram(200)).diagram);
  const stats = { steps: 0, gridPoints: 0, nodes: 0, fullGrid: 0, direct: 0, narrowings: 0 };
  const routes = routeEdges(nodes, edges, stats);
  t.true(edges.length >= 240);
  assertRoutes(t, nodes, edges, routes);
  t.is(stats.direct, 0, 'no relation past the budget');
  t.is(stats.fullGrid, 0, 'every route found on the sparse graph');
  // Where more routes share a channel than it has room for at MIN_SPACING they are closer
  // still, but never on one line.
  t.deepEqual(drawnOnTop(runsOfRoutes(routes), 0.01), []);
});

test("the bench's 50- and 200-instance diagrams: no two routes drawn under a pixel apart (at 200, 212 pairs were before squeezed routes were ordered by their room, 27 before full channels cost more)", async (t) => {
  for (const size of [50, 200]) {
    const { nodes, edges } = routingInput((await laidOutDiagram(size)).diagram);
    const routes = routeEdges(nodes, edges);
    assertRoutes(t, nodes, edges, routes);
    const close = drawnOnTop(runsOfRoutes(routes));
    t.deepEqual(close, [], `${size} instances: ${close.length} pairs under a pixel apart`);
  }
});

test('routes passing between the side walls of two stacked boundaries 14 px apart leave the one they start in through its side: none drawn on top of another (6 pairs before)', (t) => {
  // Taken from a 200-instance layout: b1's right wall at 2828 px, b2's below it at 2814; routes
  // from b1 down to b3 past b2 ran at b2's margin line, which is inside b1, and nudging kept them
  // inside b1 and outside b2: 9 routes in the 6 px between, 6 pairs under a pixel apart.
  const at = (id: string, parent: string | null, x: number, y: number, w: number, h: number): RouteNode => ({ id, parent, x, y, w, h });
  const nodes = [
    at('b1', null, 1428, 1638, 1400, 1302),
    at('e55', 'b1', 2100, 2576, 224, 84),
    at('e56', 'b1', 2590, 2576, 196, 84),
    at('e64', 'b1', 2156, 2702, 210, 84),
    at('e77', 'b1', 2576, 2072, 196, 84),
    at('e79', 'b1', 2576, 2828, 210, 84),
    at('e92', 'b1', 2142, 1694, 196, 84),
    at('b2', null, 1414, 3052, 1400, 1288),
    at('b3', null, 1386, 4452, 1400, 1302),
    at('e137', 'b3', 2534, 5390, 210, 84),
    at('e138', 'b3', 2170, 4634, 196, 84),
    at('e147', 'b3', 2170, 5138, 224, 84),
    at('e152', 'b3', 2184, 4886, 196, 84),
    at('e155', 'b3', 2394, 4634, 224, 84),
    at('e168', 'b3', 2562, 4508, 196, 84),
    at('e169', 'b3', 2156, 5264, 196, 84),
    at('e190', null, 1918, 5866, 336, 112),
  ];
  const pairs = [
    ['e55', 'e155'],
    ['e56', 'e152'],
    ['e56', 'e147'],
    ['e137', 'e77'],
    ['e64', 'e168'],
    ['e79', 'e169'],
    ['e79', 'e155'],
    ['e79', 'e190'],
    ['e138', 'e92'],
  ] as const;
  const edges = pairs.map(([from, to], k) => ({ id: `r${k}`, from, to }));
  const routes = routeEdges(nodes, edges);
  assertRoutes(t, nodes, edges, routes);
  t.deepEqual(drawnOnTop(runsOfRoutes(routes)), []);
});

test('a large diagram is drawn on a worker thread, the event loop free meanwhile: the same SVG as drawn at once', async (t) => {
  const { diagram, model } = await laidOutDiagram(200);
  t.true(diagram.componentInstances.length + diagram.relations.length >= OFF_THREAD_FROM);
  const options = { componentHref: '#c-', editable: true, marks: new Map([[diagram.relations[0]!.id, 'added' as const]]) };
  const drawing = drawDiagramOffThread(diagram, model, options);
  // Timers run while the worker draws (drawn here, on the calling thread, the whole drawing
  // would be done before the first tick could run). Counted, not timed: the suite runs on busy machines.
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const svg = await drawing;
  clearInterval(timer);
  t.true(ticks > 0);
  t.is(svg, drawDiagram(diagram, model, options));
  // A small one is drawn at once.
  const small = diagram.componentInstances.slice(0, 5);
  const few = { ...diagram, componentInstances: small, relations: [] };
  t.is(await drawDiagramOffThread(few, model), drawDiagram(few, model));
});

test('every relation, its arrowhead included, lies inside the picture: boxes by hand, overlapping, nested, self-relations, past the routing budget', (t) => {
  // Not only for looks: resvg (2.6.2) aborts the whole process, worker thread or not, when it
  // draws a marker wholly outside its canvas, so a relation drawn off the picture would let a
  // PNG request kill the server.
  const ARROW_PX = 12; // the marker: 8 stroke widths of 1.4 px, its tip at the path's end
  const ARROW_LENGTH = 11.2;
  const STROKE_PX = 1;
  let seed = 11;
  const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const m = model();
  for (let k = 0; k < 30; k++) component(m, `c${k}`, `Component ${k}`, TYPES[k % TYPES.length]!);
  let paths = 0;
  for (let round = 0; round < 150; round++) {
    const n = 2 + Math.floor(random() * 14);
    const span = 8 + Math.floor(random() * 70);
    const instances = Array.from({ length: n }, (_, k) =>
      instance(`i${k}`, `c${k}`, Math.floor(random() * span), Math.floor(random() * span), {
        width: 4 + Math.floor(random() * 20),
        height: 3 + Math.floor(random() * 9),
      }),
    );
    // Now and then a container holding the instances that lie inside it.
    if (random() < 0.3) {
      const outer = instances[0]!;
      Object.assign(outer, { isContainer: true, width: outer.width + 20, height: outer.height + 14 });
      for (const inner of instances.slice(1)) {
        const inside =
          inner.position.x >= outer.position.x &&
          inner.position.y >= outer.position.y &&
          inner.position.x + inner.width <= outer.position.x + outer.width &&
          inner.position.y + inner.height <= outer.position.y + outer.height;
        if (inside) inner.parent = outer.id;
      }
    }
    const relations = Array.from({ length: Math.floor(random() * n * 2.5) }, (_, k) => ({
      id: `r${k}`,
      fromComponentInstance: `i${Math.floor(random() * n)}`,
      toComponentInstance: `i${Math.floor(random() * n)}`,
      label: random() < 0.5 ? `calls ${k}` : null,
      desc: null,
    }));
    const svg = drawDiagram(diagram({ componentInstances: instances, relations } as Partial<Diagram>), m);
    const [x, y, w, h] = /viewBox="([^"]+)"/.exec(svg)![1]!.split(' ').map(Number) as [number, number, number, number];
    for (const [, d] of svg.matchAll(/<path d="([^"]+)" marker-end=/g)) {
      paths++;
      // The arrowhead sits on a straight stretch (as long as it, where the last leg allows), not on the last bend's curve.
      const lastBend = /Q(-?[\d.]+),(-?[\d.]+) (-?[\d.]+),(-?[\d.]+) L(-?[\d.]+),(-?[\d.]+)$/.exec(d!);
      if (lastBend) {
        const [corner, curveEnd, tip] = [1, 3, 5].map((k) => ({ x: Number(lastBend[k]), y: Number(lastBend[k + 1]) })) as [
          { x: number; y: number },
          { x: number; y: number },
          { x: number; y: number },
        ];
        const leg = Math.abs(tip.x - corner.x) + Math.abs(tip.y - corner.y);
        const straight = Math.abs(tip.x - curveEnd.x) + Math.abs(tip.y - curveEnd.y);
        t.true(
          straight >= Math.min(ARROW_LENGTH - 0.2, leg - 2.2),
          `round ${round}: ${d} leaves the arrow ${straight} px of a ${leg} px leg`,
        );
      }
      const numbers = d!.match(/-?\d+(\.\d+)?/g)!.map(Number);
      // The route may run in the margin (round a box at the picture's edge), not past it; the
      // arrowhead, at the path's end on its box, lies wholly inside.
      for (let i = 0; i < numbers.length; i += 2) {
        const inset = i === numbers.length - 2 ? ARROW_PX : STROKE_PX;
        const [px, py] = [numbers[i]!, numbers[i + 1]!];
        t.true(
          px >= x + inset && px <= x + w - inset && py >= y + inset && py <= y + h - inset,
          `round ${round}: ${d} in ${x} ${y} ${w} ${h}`,
        );
      }
    }
  }
  t.true(paths > 500, `${paths} relations drawn`);
});

test("a relation from a box to itself is drawn, as a loop into its top, each of a box's loops wider than the one before, labelled", (t) => {
  const m = model();
  component(m, 'c1', 'Retrying worker', 'container');
  component(m, 'c2', 'Store', 'database');
  const a = instance('a', 'c1', 0, 10);
  const relations = [
    { id: 'r1', fromComponentInstance: 'a', toComponentInstance: 'a', label: 'calls itself', desc: null, linksTo: [] },
    { id: 'r2', fromComponentInstance: 'a', toComponentInstance: 'a', label: 'retries', desc: null, linksTo: [] },
    { id: 'r3', fromComponentInstance: 'a', toComponentInstance: 'b', label: 'normal', desc: null, linksTo: [] },
  ];
  const svg = drawDiagram(diagram({ componentInstances: [a, instance('b', 'c2', 30, 10)], relations }), m);
  const box = { x: 0, y: 10 * GRID_PX, w: 16 * GRID_PX, h: 8 * GRID_PX };
  const loops = ['r1', 'r2'].map((id) => {
    const d = new RegExp(`data-id="${id}" data-from="a" data-to="a"><path d="([^"]+)"`).exec(svg)?.[1];
    t.truthy(d, `${id} is drawn`);
    const numbers = d!.match(/-?\d+(\.\d+)?/g)!.map(Number);
    const points = Array.from({ length: numbers.length / 2 }, (_, k) => ({ x: numbers[2 * k]!, y: numbers[2 * k + 1]! }));
    const [first, last, beforeLast] = [points[0]!, points.at(-1)!, points.at(-2)!];
    t.is(first.x, box.x + box.w, 'out of its right side');
    t.is(last.y, box.y, 'into its top');
    t.true(beforeLast.y < last.y && beforeLast.x === last.x, 'the arrow points down into the box');
    return Math.max(...points.map((p) => p.x));
  });
  t.true(loops[1]! > loops[0]!, 'the second loop goes wider');
  for (const label of ['calls itself', 'retries', 'normal']) t.true(svg.includes(`>${label}</tspan>`), label);
  t.is(count(svg, '<g class="relation"'), 3);
});

test('a loop goes round a corner with room: never through the boxes beside it', (t) => {
  // Boxes close above and to the right: the loops go round the bottom-left corner.
  const nodes: RouteNode[] = [
    { id: 'a', parent: null, x: 280, y: 280, w: 224, h: 112 },
    { id: 'right', parent: null, x: 518, y: 280, w: 224, h: 112 },
    { id: 'above', parent: null, x: 200, y: 154, w: 400, h: 112 },
  ];
  const edges = [1, 2, 3].map((k) => ({ id: `self${k}`, from: 'a', to: 'a' }));
  const routes = routeEdges(nodes, edges);
  const [a, right, above] = nodes as [RouteNode, RouteNode, RouteNode];
  for (const e of edges) {
    const pts = routes.get(e.id)!;
    for (let i = 1; i < pts.length; i++) {
      const s = { a: pts[i - 1]!, b: pts[i]! };
      t.false(crossesInterior(s, right) || crossesInterior(s, above) || crossesInterior(s, a), `${e.id}: ${JSON.stringify(pts)}`);
    }
    const [last, beforeLast] = [pts.at(-1)!, pts.at(-2)!];
    t.is(last.y, a.y + a.h, `${e.id} comes back into the bottom`);
    t.true(beforeLast.y > last.y, `${e.id} points up into the box`);
  }
  const ends = edges.map((e) => routes.get(e.id)!.at(-1)!.x);
  t.true(Math.min(...ends.slice(1).map((x, k) => Math.abs(x - ends[k]!))) >= 11.2, 'arrowheads an arrowhead apart');
});

test('routes sharing a side of a box are spread along it', (t) => {
  const nodes: RouteNode[] = [
    { id: 'top', parent: null, x: 0, y: 0, w: 600, h: 100 },
    { id: 'a', parent: null, x: -200, y: 300, w: 150, h: 80 },
    { id: 'b', parent: null, x: 225, y: 300, w: 150, h: 80 },
    { id: 'c', parent: null, x: 650, y: 300, w: 150, h: 80 },
  ];
  const routes = routeEdges(
    nodes,
    ['a', 'b', 'c'].map((to) => ({ id: to, from: 'top', to })),
  );
  const starts = [...routes.values()].map((p) => `${p[0]!.x},${p[0]!.y}`);
  t.is(new Set(starts).size, 3, starts.join(' '));
});

function labelBoxes(svg: string): Array<{ x: number; y: number; w: number; h: number }> {
  return [
    ...svg.matchAll(/<g class="relation-label[^"]*" data-id="[^"]*"><rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)"/g),
  ].map((m) => ({
    x: +m[1]!,
    y: +m[2]!,
    w: +m[3]!,
    h: +m[4]!,
  }));
}

test('labels lie off every box and off each other, even when many relations meet', (t) => {
  const m = model();
  const insts: ComponentInstance[] = [];
  for (let i = 0; i < 12; i++) {
    component(m, `c${i}`, `Service number ${i}`, 'container');
    insts.push(instance(`i${i}`, `c${i}`, (i % 4) * 24, Math.floor(i / 4) * 16));
  }
  const relations = [];
  for (let i = 0; i < 12; i++) {
    for (const j of [(i + 1) % 12, (i + 5) % 12]) {
      relations.push({
        id: `r${i}-${j}`,
        fromComponentInstance: `i${i}`,
        toComponentInstance: `i${j}`,
        label: `Calls ${j} over HTTPS`,
        desc: null,
        linksTo: [],
      });
    }
  }
  const svg = drawDiagram(diagram({ componentInstances: insts, relations }), m);
  const labels = labelBoxes(svg);
  t.is(labels.length, relations.length);
  const overlap = (a: { x: number; y: number; w: number; h: number }, b: { x: number; y: number; w: number; h: number }) =>
    a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  for (let i = 0; i < labels.length; i++) {
    for (const inst of insts) {
      const b = { x: inst.position.x * GRID_PX, y: inst.position.y * GRID_PX, w: inst.width * GRID_PX, h: inst.height * GRID_PX };
      t.false(overlap(labels[i]!, b), `label ${i} on ${inst.id}`);
    }
    for (let j = i + 1; j < labels.length; j++) t.false(overlap(labels[i]!, labels[j]!), `labels ${i} and ${j}`);
  }
  // Every relation is one path, with the data attributes tools read.
  t.is(count(svg, '<g class="relation" data-id='), relations.length);
  t.regex(svg, /<g class="relation" data-id="r0-1" data-from="i0" data-to="i1"><path d="M/);
});

// ---------------------------------------------------------------------------------------------
// The C4 notation and marks

test('each kind gets its shape and style: person, system, container, component, database cylinder, queue pipe, external, placeholder; a legend of the kinds shown', (t) => {
  const m = model();
  const insts: ComponentInstance[] = [];
  TYPES.forEach((slug, n) => {
    component(m, slug, `The ${slug}`, slug, { desc: `What the ${slug} does.\nSecond line not shown.` });
    insts.push(instance(slug, slug, n * 20, 0));
  });
  component(m, 'ext', 'Bank', 'software-system', { tags: ['ext'] });
  insts.push(instance('ext', 'ext', 0, 20), instance('ph', null, 20, 20, { placeholder: 'Later' }));
  const svg = drawDiagram(diagram({ componentInstances: insts }), m);
  for (const slug of TYPES) t.regex(svg, new RegExp(`class="box k-${slug} [^"]*" data-kind="instance" data-id="${slug}"`));
  t.regex(svg, /class="box k-external [^"]*" data-kind="instance" data-id="ext"/);
  t.regex(svg, /class="box k-placeholder [^"]*" data-kind="instance" data-id="ph"/);
  t.regex(svg, /data-id="person"[^>]*><rect class="body"[^>]*\/><circle class="shape"/, 'a person has a head');
  t.regex(svg, /data-id="database"[^>]*><rect class="body"[^>]*\/><path class="shape" d="M[^"]* A/, 'a database is a cylinder');
  t.regex(svg, /data-id="queue"[^>]*><rect class="body"[^>]*\/><path class="shape" d="M[^"]* H[^"]* A/, 'a queue is a pipe');
  // Type and the first line of the description in the box.
  t.true(svg.includes('>[container]</text>'));
  t.true(svg.includes('What the container does.'));
  t.false(svg.includes('Second line not shown'));
  const legend = /<g class="legend"[\s\S]*?<\/g><\/svg>/.exec(svg)?.[0] ?? '';
  for (const word of ['Person', 'Software system', 'Container', 'Component', 'Database', 'Queue', 'External', 'Placeholder'])
    t.true(legend.includes(`>${word}<`), word);
  t.false(legend.includes('>Boundary<'), 'only the kinds on the diagram');
  t.false(drawDiagram(diagram({ componentInstances: insts }), m, { legend: false }).includes('class="legend"'));
});

test('marks put c4-added, c4-removed and c4-changed on the groups of instances, text areas and relations; removed ones are drawn faded', (t) => {
  const m = model();
  component(m, 'a', 'A', 'container');
  component(m, 'b', 'B', 'container');
  const d = diagram({
    componentInstances: [instance('ia', 'a', 0, 0), instance('ib', 'b', 30, 0)],
    textareas: [{ id: 'ta', position: { x: 0, y: 20 }, width: 10, text: 'note' }],
    relations: [{ id: 'r', fromComponentInstance: 'ia', toComponentInstance: 'ib', label: 'uses', desc: null, linksTo: [] }],
  });
  const marks = new Map([
    ['ia', 'added'],
    ['ib', 'changed'],
    ['ta', 'removed'],
    ['r', 'removed'],
  ] as const);
  const svg = drawDiagram(d, m, { marks });
  t.regex(svg, /<g class="box k-container component c4-added" data-kind="instance" data-id="ia"/);
  t.regex(svg, /<g class="box k-container component c4-changed" data-kind="instance" data-id="ib"/);
  t.regex(svg, /<g class="textarea c4-removed" data-kind="textarea" data-id="ta"/);
  t.regex(svg, /<g class="relation c4-removed" data-id="r" data-from="ia" data-to="ib">/);
  t.regex(svg, /<g class="relation-label c4-removed" data-id="r">/);
  t.regex(svg, /\.c4-removed\{opacity:\.4\}/);
  t.notRegex(drawDiagram(d, m), /class="[^"]*c4-(added|removed|changed)/, 'no marks, no classes');
});

test('a diagram at the instance limit is drawn with every relation: past the routing budget, relations are direct elbows', (t) => {
  const model = emptyModel({ name: 'x', slug: 'x', members: [] });
  const n = 2000;
  const instances = Array.from({ length: n }, (_, i) => ({
    id: `i${i}`,
    component: null,
    placeholder: `Box ${i}`,
    isContainer: false,
    parent: null,
    position: { x: (i % 40) * 20, y: Math.floor(i / 40) * 12 },
    width: 16,
    height: 8,
  }));
  const relations = Array.from({ length: 2 * n }, (_, i) => ({
    id: `r${i}`,
    fromComponentInstance: `i${i % n}`,
    toComponentInstance: `i${(i * 7 + 13) % n}`,
    label: `calls ${i}`,
    desc: null,
    linksTo: [],
  }));
  const diagram = {
    id: 'd',
    name: 'Big',
    desc: null,
    state: 'DRAFT',
    level: 'C2',
    tags: [],
    componentInstances: instances,
    textareas: [],
    relations,
  } as unknown as Diagram;
  const svg = drawDiagram(diagram, model);
  t.is(svg.split('<g class="relation" ').length - 1, 2 * n);
  t.is(svg.split('<g class="relation-label"').length - 1, 2 * n);
});

// ---------------------------------------------------------------------------------------------
// Drawings kept (drawings.ts)

test('a drawing is kept for the same diagram, collections and options; a changed component, type or tag is drawn anew', async (t) => {
  const m = model();
  component(m, 'api', 'Shop API', 'container');
  component(m, 'db', 'Orders DB', 'database');
  const d = diagram({
    componentInstances: [instance('a', 'api', 0, 0), instance('b', 'db', 30, 0)],
    relations: [{ id: 'r', fromComponentInstance: 'a', toComponentInstance: 'b', label: 'reads', desc: null, linksTo: [] }],
  });
  const cache = new DrawingCache();
  const first = cache.draw(d, m);
  t.is(cache.draw(d, m), first, 'asked again while drawing: the same drawing');
  t.is(await first, drawDiagram(d, m));
  t.is(cache.draw(d, m), first, 'asked again once drawn');
  // What a write to another diagram makes: a new model object, the same component, type and tag collections.
  const afterOtherWrite: ModelUnderConstruction = { ...m, diagrams: new Map(m.diagrams) };
  t.is(cache.draw(d, afterOtherWrite), first);
  const linked = cache.draw(d, m, { componentHref: '#c-' });
  t.not(linked, first, 'other options, another drawing');
  t.true((await linked).includes('href="#c-api"'));

  // What a write to a component makes: a new components collection.
  const renamed = new Map(m.components);
  renamed.set('api', { ...renamed.get('api')!, name: 'Checkout API' });
  const afterRename = await cache.draw(d, { ...m, components: renamed });
  t.true(afterRename.includes('Checkout API'));
  t.false(afterRename.includes('Shop API'));
  const retyped = new Map(m.types);
  retyped.set('t-database', { id: 't-database', slug: 'database', name: 'Ledger store' });
  t.true((await cache.draw(d, { ...m, types: retyped })).includes('Ledger store'));
  const retagged = new Map(m.tags);
  t.not(cache.draw(d, { ...m, tags: retagged }), first);
  // A draft's visual diff is made per request: never kept.
  const marks = new Map([['r', 'added' as const]]);
  t.not(cache.draw(d, m, { marks }), cache.draw(d, m, { marks }));
});

test('drawings are kept up to a total size, the least recently used first out, and a few variants per diagram', async (t) => {
  const m = model();
  const diagrams = ['x', 'y', 'z'].map((id) => {
    component(m, id, `Component ${id}`, 'container');
    return diagram({ id, componentInstances: [instance(`i-${id}`, id, 0, 0)] });
  });
  const one = drawDiagram(diagrams[0]!, m).length;
  const cache = new DrawingCache(Math.floor(one * 2.5));
  await cache.draw(diagrams[0]!, m);
  await cache.draw(diagrams[1]!, m);
  const kept = cache.draw(diagrams[0]!, m); // used again: now the most recent
  await cache.draw(diagrams[2]!, m); // past the size: y goes
  t.is(cache.size.drawings, 2);
  t.true(cache.size.chars <= one * 2.5);
  t.is(cache.draw(diagrams[0]!, m), kept);
  const roomy = new DrawingCache();
  for (const href of ['#a-', '#b-', '#c-', '#d-', '#e-', '#f-']) await roomy.draw(diagrams[0]!, m, { componentHref: href });
  t.is(roomy.size.drawings, 4, 'four variants of one diagram at most');
});
