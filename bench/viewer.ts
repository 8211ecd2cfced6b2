/**
 * The viewer's server-side rendering of one 40-instance diagram (issue 13: "a few
 * milliseconds"): the SVG drawing alone (what `.svg` and `Accept: image/svg+xml` send) and the
 * whole diagram page with its component panels, its drawing made anew each time (a page viewed
 * again reuses its kept drawing: src/drawing/drawings.ts).
 *
 * Measured on the code as the service runs it: bundled by esbuild as scripts/build.mjs bundles
 * dist/, in a process of its own (bench/viewer-measure.ts). In the benchmark's own process the
 * code is loaded through tsx, which wraps every function made (closures included, at each call
 * that makes one) to keep its name: the same drawing took ~35% longer there (3.99 against 2.89 ms).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BUNDLE_OPTIONS } from '../scripts/bundle-options.mjs';
import { emptyModel } from '../src/model/files.js';
import type { ComponentInstance, Diagram, Relation } from '../src/model/types.js';
import type { KeyRecord } from '../src/store/keys.js';
import { diagramPage } from '../src/viewer/pages.js';
import { drawDiagram } from '../src/drawing/svg.js';
import { median } from './stats.js';

export interface ViewerFigures {
  instances: number;
  /** Median ms of one drawing, and of one whole page. */
  svgMs: number;
  pageMs: number;
  svgBytes: number;
}

/** Four containers of seven components each, eight more outside (40 instances), a relation per component box. */
export function fortyInstanceDiagram() {
  const model = emptyModel({ name: 'Bench', slug: 'bench', members: [] });
  model.types.set('t', { id: 't', slug: 'container', name: 'Container' });
  model.attributes.set('a', { id: 'a', name: 'Docs', type: 'LINK', desc: null, required: false, forTypes: [] });
  const instances: ComponentInstance[] = [];
  for (let c = 0; c < 4; c++) {
    const box = `box${c}`;
    instances.push({
      id: box,
      component: null,
      placeholder: `System ${c}`,
      isContainer: true,
      parent: null,
      position: { x: c * 80, y: 0 },
      width: 76,
      height: 60,
    });
    for (let k = 0; k < 7; k++) instances.push(child(`c${c}-${k}`, box, c * 80 + 2 + (k % 4) * 18, 4 + Math.floor(k / 4) * 28));
  }
  for (let k = 0; k < 8; k++) instances.push(child(`top${k}`, null, k * 40, 70));
  function child(id: string, parent: string | null, x: number, y: number): ComponentInstance {
    model.components.set(id, {
      id,
      name: `Service ${id} with a longer name`,
      desc: `What ${id} does, in a sentence or two.`,
      state: 'ACTIVE',
      typeId: 't',
      linksTo: [],
      attributes: [{ id: 'a', value: `https://docs.example/${id}` }],
      apiContext: id.endsWith('1') ? 'ci run' : undefined,
    });
    return { id: `i-${id}`, component: id, placeholder: '', isContainer: false, parent, position: { x, y }, width: 16, height: 8 };
  }
  const boxes = instances.filter((i) => !i.isContainer);
  const relations: Relation[] = boxes.map((from, n) => ({
    id: `r${n}`,
    fromComponentInstance: from.id,
    toComponentInstance: boxes[(n + 5) % boxes.length]!.id,
    label: `calls ${n} over HTTPS`,
    desc: null,
    linksTo: [],
  }));
  const diagram: Diagram = {
    id: 'd',
    name: 'Forty boxes',
    desc: null,
    state: 'ACTIVE',
    level: 'C2',
    tags: [],
    componentInstances: instances,
    textareas: [{ id: 'ta', position: { x: 0, y: 82 }, width: 60, text: 'A note under the diagram\nwith two lines.' }],
    relations,
  };
  model.diagrams.set('d', diagram);
  return { model, diagram };
}

/** measureViewerHere, run on the bundled code in a process of its own (see the module comment). */
export async function measureViewer(samples: number): Promise<ViewerFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'c4store-bench-viewer-'));
  try {
    const script = join(dir, 'viewer-measure.mjs');
    // Imported here, not at the top: the bundled measurement imports this module too, and has no esbuild beside it.
    const { build } = await import('esbuild');
    await build({
      entryPoints: [join(import.meta.dirname, 'viewer-measure.ts')],
      outfile: script,
      ...BUNDLE_OPTIONS,
      external: [...BUNDLE_OPTIONS.external, 'esbuild'],
    });
    const { stdout } = await promisify(execFile)(process.execPath, [script, String(samples)], { cwd: join(import.meta.dirname, '..') });
    return JSON.parse(stdout) as ViewerFigures;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The figures, measured in this process on the code as this process loaded it. */
export async function measureViewerHere(samples: number): Promise<ViewerFigures> {
  const { model, diagram } = fortyInstanceDiagram();
  const key: KeyRecord = { id: 'k', org: 'bench', label: 'bench', role: 'editor', hash: '0'.repeat(64), created: '' };
  const time = async (render: () => string | Promise<string>) => {
    // Runs first for a while: the JIT takes more than a hundred drawings to optimize their many
    // functions (measured after 60 warm-up runs the first figure of a process was ~7 ms, the next ~4.5 ms).
    const warm = performance.now() + 2000;
    while (performance.now() < warm) await render();
    const runs: number[] = [];
    for (let i = 0; i < samples; i++) {
      const began = performance.now();
      await render();
      runs.push(performance.now() - began);
    }
    return median(runs);
  };
  const svg = () => drawDiagram(diagram, model, { componentHref: '#c-', editable: true });
  return {
    instances: diagram.componentInstances.length,
    svgMs: await time(svg),
    // A copy of the diagram each time: the page's drawing is made, not taken from the kept ones.
    pageMs: await time(() => diagramPage({ ...diagram }, model, { key, slug: 'bench' }, { commit: '0'.repeat(40) })),
    svgBytes: Buffer.byteLength(svg()),
  };
}
