/**
 * A relation between an element and a boundary that holds it (src/drawing/route.ts, inward):
 * drawn inside the boundary, a short line from the element to the nearest inner side of the
 * boundary's wall (element → boundary) or from that side to the element (boundary → element),
 * never out through the wall and back. Measured on the paths of the SVG drawDiagram writes.
 */
import test from 'ava';
import { drawDiagram } from '../src/drawing/svg.js';
import type { ComponentInstance } from '../src/model/types.js';
import { passesThrough } from './support/drawing-geometry.js';
import { component, diagram, instance, model, relation } from './support/drawing-model.js';

type Box = { x: number; y: number; w: number; h: number };
type P = { x: number; y: number };
const GRID = 14;

/** Every point of each relation's path (its corners' control points included), by relation id. */
function pathsOf(svg: string): Map<string, P[]> {
  return new Map(
    [...svg.matchAll(/<g class="relation[^"]*" data-id="([^"]*)"[^>]*>(?:<title>.*?<\/title>)?<path d="([^"]+)"/g)].map((m) => {
      const n = m[2]!.match(/-?\d+(\.\d+)?/g)!.map(Number);
      return [m[1]!, Array.from({ length: n.length / 2 }, (_, k) => ({ x: n[2 * k]!, y: n[2 * k + 1]! }))] as const;
    }),
  );
}

const boxOf = (i: ComponentInstance): Box => ({ x: i.position.x * GRID, y: i.position.y * GRID, w: i.width * GRID, h: i.height * GRID });
const within = (p: P, b: Box, tolerance = 0.5) =>
  p.x >= b.x - tolerance && p.x <= b.x + b.w + tolerance && p.y >= b.y - tolerance && p.y <= b.y + b.h + tolerance;
/** Distance from p to the nearest side of b (p inside b). */
const toWall = (p: P, b: Box) => Math.min(p.x - b.x, b.x + b.w - p.x, p.y - b.y, b.y + b.h - p.y);
/** Distance from the box c to the nearest side of the box b that holds it. */
const gapToWall = (c: Box, b: Box) => Math.min(c.x - b.x, b.x + b.w - c.x - c.w, c.y - b.y, b.y + b.h - c.y - c.h);
const length = (pts: readonly P[]) => pts.slice(1).reduce((sum, p, k) => sum + Math.abs(p.x - pts[k]!.x) + Math.abs(p.y - pts[k]!.y), 0);

function payments() {
  const m = model();
  component(m, 'sys', 'Payments', 'software-system');
  component(m, 'api', 'Payments API', 'container');
  component(m, 'db', 'Ledger DB', 'database');
  component(m, 'web', 'Checkout', 'container');
  return m;
}

test('element → its boundary and boundary → element: a short line inside the boundary, between the element and the nearest inner side of the wall (they left through the wall and pointed back at it from outside)', (t) => {
  const m = payments();
  const P = instance('P', 'sys', 0, 0, { isContainer: true, width: 60, height: 30 });
  const A = instance('A', 'api', 6, 4, { parent: 'P' });
  const D = instance('D', 'db', 36, 4, { parent: 'P' });
  const W = instance('W', 'web', 6, 18, { parent: 'P' });
  const relations = [relation('up', 'W', 'P', 'reports to'), relation('down', 'P', 'D', 'owns'), relation('side', 'A', 'D', 'reads')];
  const paths = pathsOf(drawDiagram(diagram({ componentInstances: [P, A, D, W], relations }), m, { legend: false }));
  const wall = boxOf(P);
  for (const [id, child, childAtStart] of [
    ['up', W, true],
    ['down', D, false],
  ] as const) {
    const pts = paths.get(id)!;
    t.truthy(pts, `${id} drawn`);
    for (const p of pts) t.true(within(p, wall), `${id}: ${JSON.stringify(p)} outside the boundary ${JSON.stringify(wall)}`);
    const onWall = childAtStart ? pts[pts.length - 1]! : pts[0]!;
    const onChild = childAtStart ? pts[0]! : pts[pts.length - 1]!;
    t.true(toWall(onWall, wall) < 0.5, `${id}: its end ${JSON.stringify(onWall)} is not on the boundary's wall`);
    t.true(within(onChild, boxOf(child)), `${id}: its end ${JSON.stringify(onChild)} is not on ${child.id}`);
    const nearest = gapToWall(boxOf(child), wall);
    t.true(length(pts) <= nearest + 1, `${id}: ${length(pts)} px long, the nearest side is ${nearest} px away`);
    for (const other of [A, W, D]) if (other !== child) t.false(passesThrough(pts, boxOf(other), 1), `${id} runs through ${other.id}`);
  }
});

test("an element right under its boundary's title: the line to the wall goes another way than across the title", (t) => {
  const m = payments();
  // The top wall is 28 px above the element, the left one 42 px: the nearest is behind the title,
  // which runs above the whole element (from the wall to some 185 px along).
  const P = instance('P', 'sys', 0, 0, { isContainer: true, width: 60, height: 30 });
  const A = instance('A', 'api', 3, 2, { parent: 'P', width: 9 });
  const relations = [relation('up', 'A', 'P', 'reports to'), relation('down', 'P', 'A', null)];
  const paths = pathsOf(drawDiagram(diagram({ componentInstances: [P, A], relations }), m, { legend: false }));
  // The title "Payments [software system]" lies in the top 26 px, from the left wall on (150 px of it at least).
  const title = { x: 0, y: 0, w: 150, h: 26 };
  for (const id of ['up', 'down']) {
    const pts = paths.get(id)!;
    for (const p of pts) t.true(within(p, boxOf(P)), `${id}: ${JSON.stringify(p)} outside the boundary`);
    t.false(passesThrough(pts, title, 0), `${id} crosses the boundary's title: ${JSON.stringify(pts)}`);
    t.true(length(pts) <= 42 + 1, `${id}: ${length(pts)} px long`);
  }
});

test('two relations between an element and its boundary, and one from a boundary to an element two levels down: each its own line inside, 16 px apart or more', (t) => {
  const m = payments();
  component(m, 'inner', 'Ledger', 'software-system');
  const P = instance('P', 'sys', 0, 0, { isContainer: true, width: 60, height: 40 });
  const Q = instance('Q', 'inner', 4, 4, { isContainer: true, width: 30, height: 20, parent: 'P' });
  const D = instance('D', 'db', 8, 8, { parent: 'Q' });
  const W = instance('W', 'web', 40, 20, { parent: 'P' });
  const relations = [relation('a', 'W', 'P', 'reports to'), relation('b', 'P', 'W', 'configures'), relation('c', 'P', 'D', 'owns')];
  const paths = pathsOf(drawDiagram(diagram({ componentInstances: [P, Q, D, W], relations }), m, { legend: false }));
  for (const id of ['a', 'b', 'c']) for (const p of paths.get(id)!) t.true(within(p, boxOf(P)), `${id}: ${JSON.stringify(p)} outside P`);
  const [a, b] = [paths.get('a')!, paths.get('b')!];
  // Both straight, perpendicular to the same wall: apart along it.
  const along = (pts: P[]) => (pts[0]!.x === pts[pts.length - 1]!.x ? pts[0]!.x : pts[0]!.y);
  t.is(a.length, 2, JSON.stringify(a));
  t.is(b.length, 2, JSON.stringify(b));
  t.true(Math.abs(along(a) - along(b)) >= 16, `a at ${along(a)}, b at ${along(b)}`);
  t.true(length(paths.get('c')!) <= gapToWall(boxOf(D), boxOf(P)) + 1, JSON.stringify(paths.get('c')));
});

test("other relations keep off the line drawn inside a boundary to its wall: none runs along it (a relation out of the element's same side took the very same line) nor across it (one passing between the element and the wall crossed it)", (t) => {
  const m = payments();
  component(m, 'ext', 'Bank', 'software-system');
  component(m, 'left', 'Admin', 'container');
  component(m, 'right', 'Worker', 'container');
  const P = instance('P', 'sys', 0, 0, { isContainer: true, width: 60, height: 30 });
  const A = instance('A', 'api', 22, 3, { parent: 'P' });
  const B = instance('B', 'left', 2, 3, { parent: 'P' });
  const C = instance('C', 'right', 42, 3, { parent: 'P' });
  const D = instance('D', 'db', 22, 18, { parent: 'P' });
  const X = instance('X', 'ext', 22, -14);
  const relations = [
    relation('up', 'A', 'P', 'reports to'),
    relation('out', 'A', 'X', 'pays through'),
    relation('across', 'B', 'C', 'hands over'),
    relation('down', 'X', 'D', null),
  ];
  const paths = pathsOf(drawDiagram(diagram({ componentInstances: [P, A, B, C, D, X], relations }), m, { legend: false }));
  const up = paths.get('up')!;
  t.is(up.length, 2, JSON.stringify(up));
  t.true(toWall(up[1]!, boxOf(P)) < 0.5, `up ends on the wall: ${JSON.stringify(up)}`);
  // The line, and 3 px either side of it.
  const [p, q] = [up[0]!, up[1]!];
  const strip = { x: Math.min(p.x, q.x) - 3, y: Math.min(p.y, q.y), w: Math.abs(p.x - q.x) + 6, h: Math.abs(p.y - q.y) };
  for (const id of ['out', 'across', 'down']) {
    const pts = paths.get(id)!;
    t.truthy(pts, `${id} drawn`);
    t.false(passesThrough(pts, strip, 0), `${id} runs along or across the line ${JSON.stringify(up)}: ${JSON.stringify(pts)}`);
  }
});
