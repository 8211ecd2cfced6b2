/**
 * The ends of drawn relations (src/drawing/route.ts, keepEndLegs and the second search of
 * routeEdges; src/drawing/svg.ts, pathOf): a route's last leg is at least as long as the
 * arrowhead, so the arrowhead sits on a straight stretch and not on the turn before it, and its
 * first leg leaves its box before turning. Measured on the routes (routeEdges) and on the paths
 * of the SVG drawDiagram writes (rounded corners and all) for the bench's diagrams.
 */
import test from 'ava';
import { laidOutDiagram, routingInput } from '../bench/drawing-fixture.js';
import { ARROW_PX, routeEdges, type Point } from '../src/drawing/route.js';
import { drawDiagram } from '../src/drawing/svg.js';

const legLength = (p: Point, q: Point) => Math.abs(p.x - q.x) + Math.abs(p.y - q.y);

/**
 * The straight stretch each relation's path ends with (after its last rounded turn, `Q`), by
 * relation id: what the arrowhead (marker-end) is drawn along.
 */
function lastStretches(svg: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of svg.matchAll(/<g class="relation[^"]*" data-id="([^"]*)"[^>]*>(?:<title>[\s\S]*?<\/title>)?<path d="([^"]*)"/g)) {
    const points = [...m[2]!.matchAll(/([MLQ])([^MLQ]*)/g)].map(([, command, args]) => {
      const v = args!.trim().split(/[ ,]+/).map(Number);
      return { command, at: { x: v[v.length - 2]!, y: v[v.length - 1]! } };
    });
    const end = points[points.length - 1]!.at;
    const from = points[points.length - 2]!.at;
    out.set(m[1]!, legLength(from, end));
  }
  return out;
}

for (const instances of [50, 200]) {
  test(`the bench's ${instances}-instance diagram: every route's last leg at least the arrowhead's length (${ARROW_PX} px), its first at least 8 px; in the SVG, the arrowhead on a straight stretch (36 of the 50-instance diagram's 61 turned onto their box 4 to 11 px before it)`, async (t) => {
    const { diagram, model } = await laidOutDiagram(instances);
    const { nodes, edges } = routingInput(diagram);
    const routes = routeEdges(nodes, edges);
    const shortLast: string[] = [];
    const shortFirst: string[] = [];
    for (const [id, pts] of routes) {
      if (pts.length < 3) continue;
      const last = legLength(pts[pts.length - 2]!, pts[pts.length - 1]!);
      const first = legLength(pts[0]!, pts[1]!);
      if (last < ARROW_PX) shortLast.push(`${id}: ${last.toFixed(1)} px`);
      if (first < 8) shortFirst.push(`${id}: ${first.toFixed(1)} px`);
    }
    t.deepEqual(shortLast, [], 'last legs shorter than the arrowhead');
    t.deepEqual(shortFirst, [], 'first legs under 8 px');
    const stretches = lastStretches(drawDiagram(diagram, model));
    t.is(stretches.size, diagram.relations.length);
    // Coordinates are written to a tenth of a pixel.
    const under = [...stretches].filter(([, length]) => length < ARROW_PX - 0.15).map(([id, length]) => `${id}: ${length.toFixed(1)} px`);
    t.deepEqual(under, [], 'arrowheads drawn over a turn');
  });
}
