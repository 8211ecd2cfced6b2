/**
 * `npm run bench:layout`: automatic layout time (src/layout/) as diagrams grow, to show that it
 * grows near-linearly (issue 16.2): 200 instances with 100, 1,000 and 4,000 relations, as many
 * instances as relations, and new children added to a placed container. Median of a few runs
 * after one warm-up (the first call in a process pays for compiling it). Prints a table and
 * writes bench/layout-results.md (`--no-write`: print only).
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { layoutDiagram, type LayoutInput, type LayoutInstance } from '../src/layout/layout.js';
import { layoutInputOf, syntheticDiagram } from './drawing-fixture.js';
import { machine } from './report.js';
import { median } from './stats.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const leaf = (id: string, label: string): LayoutInstance => ({ id, parent: null, isContainer: false, label });

/** `instances` new boxes with `relations` random relations between them. */
export function randomDiagram(instances: number, relations: number, seed = 1): LayoutInput {
  const rnd = rng(seed);
  return {
    instances: Array.from({ length: instances }, (_, i) => leaf(`i${i}`, `Service ${i}`)),
    relations: Array.from({ length: relations }, () => ({
      from: `i${Math.floor(rnd() * instances)}`,
      to: `i${Math.floor(rnd() * instances)}`,
    })),
    textareas: [],
  };
}

/** The drawing fixture (bench/drawing-fixture.ts): people, containers of 30–45 children, externals. */
export function containersDiagram(instances: number): LayoutInput {
  return layoutInputOf(syntheticDiagram(instances));
}

/** A placed container with one placed child and `children` new ones, chained by relations. */
export function newChildren(children: number): LayoutInput {
  const instances: LayoutInstance[] = [
    { id: 'c', parent: null, isContainer: true, label: 'Container', position: { x: 0, y: 0 } },
    { id: 'k0', parent: 'c', isContainer: false, label: 'Part 0', position: { x: 2, y: 4 }, width: 16, height: 8 },
    { id: 'n', parent: null, isContainer: false, label: 'Neighbour', position: { x: 0, y: 60 }, width: 16, height: 8 },
  ];
  for (let i = 1; i <= children; i++) instances.push({ id: `k${i}`, parent: 'c', isContainer: false, label: `Part ${i}` });
  const relations = Array.from({ length: children - 1 }, (_, i) => ({ from: `k${i + 1}`, to: `k${i + 2}` }));
  return { instances, relations, textareas: [] };
}

export interface LayoutFigure {
  case: string;
  instances: number;
  relations: number;
  ms: number;
}

async function timeLayout(input: LayoutInput, runs: number): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    await layoutDiagram(input);
    times.push(performance.now() - start);
  }
  return median(times);
}

export async function measureLayout(runs = 5): Promise<LayoutFigure[]> {
  await layoutDiagram(randomDiagram(50, 60, 99)); // warm-up
  const cases: Array<[string, LayoutInput]> = [];
  for (const relations of [100, 1000, 4000]) cases.push([`200 instances, ${relations} relations`, randomDiagram(200, relations)]);
  for (const n of [100, 1000, 4000]) cases.push([`${n} instances, ${n} relations`, randomDiagram(n, n)]);
  for (const n of [100, 1000]) cases.push([`${n} new children of a placed container`, newChildren(n)]);
  for (const n of [66, 200]) cases.push([`${n} instances in containers of up to 45 children (drawing fixture)`, containersDiagram(n)]);
  const out: LayoutFigure[] = [];
  for (const [name, input] of cases) {
    out.push({ case: name, instances: input.instances.length, relations: input.relations.length, ms: await timeLayout(input, runs) });
  }
  return out;
}

export function renderLayout(figures: readonly LayoutFigure[]): string {
  const m = machine();
  const lines = [
    '# Layout benchmark',
    '',
    `${m.date}, revision ${m.revision}, Node ${m.node}, ${m.nproc} × ${m.cpuModel}, load ${m.loadBefore.toFixed(1)} before the run.`,
    'Median of 5 runs after a warm-up (`npm run bench:layout`).',
    'Before issue 16.2 (same machine class): 1,000 → 2,000 → 4,000 relations took 4.7 → 13 → 47 s,',
    'and adding 1,000 children to a placed container 65 s.',
    '',
    '| Diagram | Instances | Relations | Layout (ms) |',
    '|---|---:|---:|---:|',
    ...figures.map((f) => `| ${f.case} | ${f.instances} | ${f.relations} | ${f.ms.toFixed(1)} |`),
    '',
  ];
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { 'no-write': { type: 'boolean' } } });
  const figures = await measureLayout();
  const report = renderLayout(figures);
  console.log(report);
  if (!values['no-write']) await writeFile(new URL('./layout-results.md', import.meta.url), report);
}
