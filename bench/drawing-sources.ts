/**
 * `node --import=tsx bench/drawing-sources.ts [instances] [seeds]`: where the crossings of the
 * drawing benchmark's diagrams (bench/drawing-fixture.ts, seed 7 is the bench's) come from. For
 * each seed: the crossings of our routed relations; of straight lines between the centres of the
 * boxes of our layout (the layout's share: the router cannot take many away); of our router on
 * dot's positions for the same boxes, boundaries as clusters (the router's share, against dot's
 * own splines); and our routed crossings by the kind of the two relations crossing (`in`: both
 * ends in one boundary, `out`: one end in a boundary, `top`: neither).
 */
import { parseArgs } from 'node:util';
import { layoutDiagram } from '../src/layout/layout.js';
import { routeEdges, type RouteEdge, type RouteNode } from '../src/drawing/route.js';
import { countCrossings, dotCrossings } from '../test/support/drawing-geometry.js';
import { layoutInputOf, syntheticDiagram } from './drawing-fixture.js';

type P = [number, number];

/** Crossings of straight lines between the centres of the boxes each relation joins. */
export function straightCrossings(nodes: readonly RouteNode[], edges: readonly RouteEdge[]): number {
  const centre = new Map(nodes.map((n) => [n.id, [n.x + n.w / 2, n.y + n.h / 2] as P]));
  const segs = edges.map((e) => [centre.get(e.from)!, centre.get(e.to)!] as const);
  const turn = (a: P, b: P, c: P) => Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
  let k = 0;
  for (let i = 0; i < segs.length; i++) {
    for (let j = i + 1; j < segs.length; j++) {
      const [a, b] = segs[i]!;
      const [c, d] = segs[j]!;
      if (turn(a, b, c) * turn(a, b, d) < 0 && turn(c, d, a) * turn(c, d, b) < 0) k++;
    }
  }
  return k;
}

/** The boxes as dot places them (same sizes, boundaries as clusters around their children), in px. */
async function dotPositions(
  nodes: readonly RouteNode[],
  edges: readonly RouteEdge[],
  containers: ReadonlySet<string>,
): Promise<RouteNode[]> {
  const { Graphviz } = await import('@hpcc-js/wasm-graphviz');
  const graphviz = await Graphviz.load();
  const q = (s: string) => JSON.stringify(s);
  const size = (b: RouteNode) => `${q(b.id)} [width=${(b.w / 72).toFixed(3)} height=${(b.h / 72).toFixed(3)}];`;
  const lines = ['digraph G {', 'node [shape=box fixedsize=true label=""];'];
  for (const b of nodes) if (!b.parent && !containers.has(b.id)) lines.push(size(b));
  for (const c of containers) lines.push(`subgraph ${q(`cluster_${c}`)} {`, ...nodes.filter((b) => b.parent === c).map(size), '}');
  for (const e of edges) lines.push(`${q(e.from)} -> ${q(e.to)};`);
  lines.push('}');
  const out = JSON.parse(graphviz.layout(lines.join('\n'), 'json', 'dot')) as {
    bb: string;
    objects?: Array<{ name: string; pos?: string; bb?: string }>;
  };
  const height = Number(out.bb.split(',')[3]);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const placed = new Map<string, RouteNode>();
  for (const o of out.objects ?? []) {
    if (o.pos && byId.has(o.name)) {
      const [x, y] = o.pos.split(',').map(Number) as [number, number];
      const n = byId.get(o.name)!;
      placed.set(n.id, { ...n, x: x - n.w / 2, y: height - y - n.h / 2 });
    } else if (o.bb && o.name.startsWith('cluster_')) {
      const [x0, y0, x1, y1] = o.bb.split(',').map(Number) as [number, number, number, number];
      const n = byId.get(o.name.slice('cluster_'.length))!;
      placed.set(n.id, { ...n, x: x0, y: height - y1, w: x1 - x0, h: y1 - y0 });
    }
  }
  return nodes.map((n) => placed.get(n.id) ?? n);
}

const routed = (nodes: readonly RouteNode[], edges: readonly RouteEdge[]): P[][] => {
  const routes = routeEdges(nodes, edges);
  return edges.map((e) => (routes.get(e.id) ?? []).map((p): P => [p.x, p.y]));
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const { positionals } = parseArgs({ allowPositionals: true });
  const n = Number(positionals[0] ?? 50);
  const seeds = (positionals[1] ?? '7').split(',').map(Number);
  for (const seed of seeds) {
    const synthetic = syntheticDiagram(n, seed);
    const { diagram } = synthetic;
    const input = layoutInputOf(synthetic);
    const layout = await layoutDiagram(input);
    const nodes: RouteNode[] = input.instances.map((i) => {
      const b = layout.instances.get(i.id)!;
      return { id: i.id, parent: i.parent, x: b.position.x * 14, y: b.position.y * 14, w: b.width * 14, h: b.height * 14 };
    });
    const edges: RouteEdge[] = diagram.relations.map((r, k) => ({ id: `r${k}`, from: r.fromComponentInstance, to: r.toComponentInstance }));
    const containers = new Set(input.instances.filter((i) => i.isContainer).map((i) => i.id));
    const ours = routed(nodes, edges);
    const parent = new Map(nodes.map((b) => [b.id, b.parent]));
    const kind = (e: RouteEdge) => {
      const a = parent.get(e.from);
      const b = parent.get(e.to);
      return a && a === b ? 'in' : a || b ? 'out' : 'top';
    };
    const byKind = new Map<string, number>();
    for (let i = 0; i < edges.length; i++) {
      for (let j = i + 1; j < edges.length; j++) {
        const c = countCrossings([ours[i]!, ours[j]!]);
        if (c === 0) continue;
        const k = [kind(edges[i]!), kind(edges[j]!)].sort().join('–');
        byKind.set(k, (byKind.get(k) ?? 0) + c);
      }
    }
    const dot = await dotPositions(nodes, edges, containers);
    const boxes = nodes.map((b) => ({ ...b, container: containers.has(b.id), title: null, brokenWords: [] }));
    const dotOwn = await dotCrossings({ boxes, labels: [], relations: edges.map((e) => ({ ...e, points: [] })) }, new Map());
    console.log(
      `${n} instances, seed ${seed}: routed ${countCrossings(ours)}, straight ${straightCrossings(nodes, edges)}; ` +
        `dot's positions: routed by us ${countCrossings(routed(dot, edges))}, straight ${straightCrossings(dot, edges)}, dot's splines ${dotOwn}; ` +
        `routed by kind ${[...byKind]
          .sort()
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    );
  }
}
