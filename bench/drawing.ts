/**
 * `npm run bench:drawing` (and the drawing section of `npm run bench`): a diagram posted
 * without positions, at 50, 200 and 1,000 instances (bench/drawing-fixture.ts) — automatic
 * layout, then the drawing (routing, labels, SVG; the routing alone too), then a PNG of that
 * SVG (resvg with the bundled DejaVu fonts) — the relations left direct elbows past the routing
 * budget, the pairs of relations drawn on top of each other (less than a pixel apart along a
 * common stretch), and the crossings of the routes against Graphviz `dot` on the same graph with
 * the same box sizes. Target: 200 instances drawn in under 300 ms. Then 1,000 relations between
 * the same two boxes (measureParallel). Prints the tables and writes bench/drawing-results.md
 * (`--no-write`: print only).
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { drawDiagram } from '../src/drawing/svg.js';
import { type Point, type RouteStats, routeEdges } from '../src/drawing/route.js';
import { countCrossings, dotCrossings, type Geometry } from '../test/support/drawing-geometry.js';
import { laidOutDiagram, routingInput } from './drawing-fixture.js';
import { machine, machineLines } from './report.js';
import { median } from './stats.js';

export interface DrawingFigure {
  instances: number;
  relations: number;
  layoutMs: number;
  drawMs: number;
  routeMs: number;
  svgBytes: number;
  pngMs: number | null;
  /** Relations drawn as direct elbows (past the routing budget) and searched on the whole grid. */
  elbows: number;
  fullGrid: number;
  /** Pairs of relations less than a pixel apart along a common stretch of more than a pixel. */
  onTop: number;
  crossings: number;
  dotCrossings: number;
}

/** Pairs of routes with parallel segments less than a pixel apart that share more than a pixel. */
export function routesOnTop(routes: ReadonlyMap<string, readonly Point[]>): number {
  const lines = new Map<string, Array<{ id: string; c: number; lo: number; hi: number }>>();
  for (const [id, pts] of routes) {
    for (let i = 1; i < pts.length; i++) {
      const p = pts[i - 1]!;
      const q = pts[i]!;
      const horizontal = p.y === q.y;
      const c = horizontal ? p.y : p.x;
      const segment = {
        id,
        c,
        lo: horizontal ? Math.min(p.x, q.x) : Math.min(p.y, q.y),
        hi: horizontal ? Math.max(p.x, q.x) : Math.max(p.y, q.y),
      };
      // Keyed by whole pixels: a pair less than a pixel apart is in one key or the next.
      const key = `${horizontal}:${Math.floor(c)}`;
      const list = lines.get(key);
      if (list) list.push(segment);
      else lines.set(key, [segment]);
    }
  }
  const pairs = new Set<string>();
  for (const [key, list] of lines) {
    const [axis, at] = key.split(':');
    const near = [...list, ...(lines.get(`${axis}:${Number(at) + 1}`) ?? [])];
    for (const s of list) {
      for (const u of near) {
        if (s.id === u.id || Math.abs(s.c - u.c) >= 1 || Math.min(s.hi, u.hi) - Math.max(s.lo, u.lo) <= 1) continue;
        pairs.add(s.id < u.id ? `${s.id} ${u.id}` : `${u.id} ${s.id}`);
      }
    }
  }
  return pairs.size;
}

async function pngOf(svg: string): Promise<(() => void) | null> {
  try {
    const { Resvg } = await import('@resvg/resvg-js');
    const fonts = join(import.meta.dirname, '..', 'node_modules', 'dejavu-fonts-ttf', 'ttf');
    return () => {
      new Resvg(svg, { font: { fontDirs: [fonts], loadSystemFonts: false, defaultFontFamily: 'DejaVu Sans' } }).render().asPng();
    };
  } catch {
    return null;
  }
}

export async function measureDrawing(sizes = [50, 200, 1000], runs = 3): Promise<DrawingFigure[]> {
  const figures: DrawingFigure[] = [];
  for (const n of sizes) {
    const { diagram, model, layoutTimes } = await laidOutDiagram(n, runs);
    let svg = drawDiagram(diagram, model);
    const drawTimes: number[] = [];
    for (let run = 0; run < runs; run++) {
      const began = performance.now();
      svg = drawDiagram(diagram, model);
      drawTimes.push(performance.now() - began);
    }
    // The routes the drawing draws, timed alone (before the PNG, whose memory would weigh on them);
    // their crossings (corners not rounded: the same crossings).
    const { nodes, edges } = routingInput(diagram);
    const boxes = nodes.map((node, k) => ({
      ...node,
      container: diagram.componentInstances[k]!.isContainer,
      title: null,
      brokenWords: [],
    }));
    const stats: RouteStats = { steps: 0, gridPoints: 0, nodes: 0, fullGrid: 0, direct: 0, narrowings: 0 };
    let routes = routeEdges(boxes, edges, stats);
    const routeTimes: number[] = [];
    for (let run = 0; run < runs; run++) {
      const began = performance.now();
      routes = routeEdges(boxes, edges);
      routeTimes.push(performance.now() - began);
    }
    const png = await pngOf(svg);
    let pngMs: number | null = null;
    if (png) {
      const began = performance.now();
      png();
      pngMs = performance.now() - began;
    }
    const geometry: Geometry = {
      boxes,
      labels: [],
      relations: diagram.relations.map((r) => ({
        id: r.id,
        from: r.fromComponentInstance,
        to: r.toComponentInstance,
        points: (routes.get(r.id) ?? []).map((p): [number, number] => [p.x, p.y]),
      })),
    };
    figures.push({
      instances: diagram.componentInstances.length,
      relations: diagram.relations.length,
      layoutMs: median(layoutTimes),
      drawMs: median(drawTimes),
      routeMs: median(routeTimes),
      svgBytes: Buffer.byteLength(svg),
      pngMs,
      elbows: stats.direct,
      fullGrid: stats.fullGrid,
      onTop: routesOnTop(routes),
      crossings: countCrossings(geometry.relations.map((r) => r.points)),
      dotCrossings: await dotCrossings(geometry, new Map(diagram.relations.map((r) => [r.id, r.label ?? '']))),
    });
  }
  return figures;
}

/** Relations between the same two boxes, and what routing them took: the median ms, and nudging's passes over their constraints. */
export interface ParallelFigure {
  relations: number;
  layout: string;
  routeMs: number;
  narrowings: number;
}

/**
 * 1,000 relations (both ways, labelled) between two boxes side by side and diagonal from each
 * other: every one is a route of its own, nudged apart along the same stretch (3 to 5 s before
 * the separations narrowed a chain by what it must lose at once).
 */
export function measureParallel(relations = 1000, runs = 3): ParallelFigure[] {
  const figures: ParallelFigure[] = [];
  for (const [layout, b] of [
    ['side by side', { x: 420, y: 0 }],
    ['diagonal', { x: 364, y: 252 }],
  ] as const) {
    const boxes = [
      { id: 'a', parent: null, x: 0, y: 0, w: 224, h: 112 },
      { id: 'b', parent: null, ...b, w: 224, h: 112 },
    ];
    const edges = Array.from({ length: relations }, (_, k) => ({
      id: `r${k}`,
      from: k % 2 === 0 ? 'a' : 'b',
      to: k % 2 === 0 ? 'b' : 'a',
      label: { w: 80, h: 17 },
    }));
    const stats: RouteStats = { steps: 0, gridPoints: 0, nodes: 0, fullGrid: 0, direct: 0, narrowings: 0 };
    routeEdges(boxes, edges, stats);
    const times: number[] = [];
    for (let run = 0; run < runs; run++) {
      const began = performance.now();
      routeEdges(boxes, edges);
      times.push(performance.now() - began);
    }
    figures.push({ relations, layout, routeMs: median(times), narrowings: stats.narrowings });
  }
  return figures;
}

export function renderParallel(figures: ParallelFigure[]): string {
  return [
    '## Relations between the same two boxes',
    '',
    'Relations both ways between two boxes (bench/drawing.ts measureParallel), each routed and nudged',
    'apart from the others: routing, median ms, and the passes of nudging over their constraints.',
    '',
    '| relations | boxes | routing | passes |',
    '|---:|---|---:|---:|',
    ...figures.map((f) => `| ${f.relations} | ${f.layout} | ${f.routeMs.toFixed(0)} | ${f.narrowings} |`),
    '',
  ].join('\n');
}

export function renderDrawing(figures: DrawingFigure[]): string {
  const ms = (v: number | null) => (v === null ? '—' : v.toFixed(0));
  const rows = figures.map(
    (f) =>
      `| ${f.instances} | ${f.relations} | ${ms(f.layoutMs)} | ${ms(f.drawMs)}${f.instances === 200 ? (f.drawMs < 300 ? ' ✓' : ' ✗ (target 300)') : ''} | ${ms(f.routeMs)} | ${(f.svgBytes / 1024).toFixed(0)} KB | ${ms(f.pngMs)} | ${f.elbows} | ${f.onTop} | ${f.crossings} | ${f.dotCrossings} |`,
  );
  return [
    '## Drawing (issue 25)',
    '',
    'A diagram posted without positions (bench/drawing-fixture.ts): automatic layout, then the drawing',
    '(routing, labels, SVG; target: 200 instances under 300 ms) and the routing alone, a PNG of it;',
    'relations left direct elbows past the routing budget (they may cross boxes), pairs of relations',
    'drawn on top of each other (under a pixel apart along a common stretch), and the crossings of the',
    "routes against Graphviz dot's on the same graph with the same box sizes. Medians, ms.",
    '',
    '| instances | relations | layout | drawing | routing | SVG | PNG | elbows | on top | crossings | dot |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { 'no-write': { type: 'boolean' }, sizes: { type: 'string' } } });
  const sizes = values.sizes ? values.sizes.split(',').map(Number) : undefined;
  const before = machine();
  const figures = await measureDrawing(sizes);
  const parallel = measureParallel();
  const loadAfter = loadavg()[0]!;
  const markdown = `# Drawing benchmark\n\n${before.date}, code ${before.revision}.\n\n${machineLines({ ...before, loadAfter })}\n\n${renderDrawing(figures)}\n${renderParallel(parallel)}`;
  console.log(markdown);
  if (!values['no-write']) await writeFile(join(import.meta.dirname, 'drawing-results.md'), markdown);
}
