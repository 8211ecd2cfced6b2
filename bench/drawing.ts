/**
 * `npm run bench:drawing` (and the drawing section of `npm run bench`): a diagram posted
 * without positions, at 50, 200 and 1,000 instances (bench/drawing-fixture.ts) — automatic
 * layout, then the drawing (routing, labels, SVG), then a PNG of that SVG (resvg with the
 * bundled DejaVu fonts) — and the crossings of its routes against Graphviz `dot` on the same
 * graph with the same box sizes. Target: 200 instances drawn in under 300 ms. Prints a table
 * and writes bench/drawing-results.md (`--no-write`: print only).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { drawDiagram, GRID_PX } from '../src/drawing/svg.js';
import { routeEdges } from '../src/drawing/route.js';
import { countCrossings, dotCrossings, type Geometry } from '../test/support/drawing-geometry.js';
import { laidOutDiagram } from './drawing-fixture.js';
import { machine } from './report.js';
import { median } from './stats.js';

export interface DrawingFigure {
  instances: number;
  relations: number;
  layoutMs: number;
  drawMs: number;
  svgBytes: number;
  pngMs: number | null;
  crossings: number;
  dotCrossings: number;
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
    const png = await pngOf(svg);
    let pngMs: number | null = null;
    if (png) {
      const began = performance.now();
      png();
      pngMs = performance.now() - began;
    }
    // Crossings from the routes the drawing draws (corners not rounded: the same crossings).
    const boxes = diagram.componentInstances.map((i) => ({
      id: i.id,
      parent: i.parent,
      container: i.isContainer,
      title: null,
      brokenWords: [],
      x: i.position.x * GRID_PX,
      y: i.position.y * GRID_PX,
      w: i.width * GRID_PX,
      h: i.height * GRID_PX,
    }));
    const routes = routeEdges(
      boxes,
      diagram.relations.map((r) => ({ id: r.id, from: r.fromComponentInstance, to: r.toComponentInstance })),
    );
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
      svgBytes: Buffer.byteLength(svg),
      pngMs,
      crossings: countCrossings(geometry.relations.map((r) => r.points)),
      dotCrossings: await dotCrossings(geometry, new Map(diagram.relations.map((r) => [r.id, r.label ?? '']))),
    });
  }
  return figures;
}

export function renderDrawing(figures: DrawingFigure[]): string {
  const ms = (v: number | null) => (v === null ? '—' : v.toFixed(0));
  const rows = figures.map(
    (f) =>
      `| ${f.instances} | ${f.relations} | ${ms(f.layoutMs)} | ${ms(f.drawMs)}${f.instances === 200 ? (f.drawMs < 300 ? ' ✓' : ' ✗ (target 300)') : ''} | ${(f.svgBytes / 1024).toFixed(0)} KB | ${ms(f.pngMs)} | ${f.crossings} | ${f.dotCrossings} |`,
  );
  return [
    '## Drawing (issue 25)',
    '',
    'A diagram posted without positions (bench/drawing-fixture.ts): automatic layout, then the drawing',
    '(routing, labels, SVG; target: 200 instances under 300 ms), a PNG of it, and the crossings of its',
    "routes against Graphviz dot's on the same graph with the same box sizes. Medians, ms.",
    '',
    '| instances | relations | layout | drawing | SVG | PNG | crossings | dot |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { 'no-write': { type: 'boolean' }, sizes: { type: 'string' } } });
  const sizes = values.sizes ? values.sizes.split(',').map(Number) : undefined;
  const figures = await measureDrawing(sizes);
  const markdown = `# Drawing benchmark\n\n${JSON.stringify(machine())}\n\n${renderDrawing(figures)}`;
  console.log(markdown);
  if (!values['no-write']) await writeFile(join(import.meta.dirname, 'drawing-results.md'), markdown);
}
