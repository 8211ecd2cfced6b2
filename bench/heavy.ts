/**
 * `npm run bench:heavy`: the worst latency of a light request of one organization while
 * another organization posts large diagrams (issue 15.1). One server in this process; the
 * heavy client posts `writes` diagrams of 2,000 new instances and 4,000 relations (the default
 * per-diagram limits' scale, laid out automatically) to `heavy`, one after another, while a
 * light client reads `GET /api/external/tag` of `light` every 10 ms. Prints p50, p99 and the
 * worst latency of the light reads, with the heavy writes' own times.
 *
 *   npm run bench:heavy                 before (layout on the request's thread) and after; writes
 *                                       bench/heavy-results.md
 *   npm run bench:heavy -- --no-write   print only
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer, type ServerOptions } from '../src/server.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { machine } from './report.js';
import { percentile } from './stats.js';

export interface HeavyFigures {
  lightReads: number;
  p50: number;
  p99: number;
  worst: number;
  heavyWritesMs: number[];
}

/** A diagram of `instances` new boxes and `relations` relations, nothing placed. */
export function heavyDiagram(name: string, instances: number, relations: number): unknown[] {
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  return [
    {
      name,
      level: 'C2',
      componentInstances: Array.from({ length: instances }, (_, i) => ({ ref: `i${i}`, placeholder: `Service ${i}` })),
      relations: Array.from({ length: relations }, () => ({
        fromComponentInstance: `i${Math.floor(next() * instances)}`,
        toComponentInstance: `i${Math.floor(next() * instances)}`,
      })),
    },
  ];
}

export async function measureHeavy(
  options: { writes?: number; instances?: number; relations?: number; server?: Partial<ServerOptions> } = {},
): Promise<HeavyFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), 'c4store-heavy-'));
  const author = { name: 'bench', email: 'bench@bench' };
  const orgs = new Orgs(dataDir);
  await orgs.create('heavy', { name: 'Heavy', author });
  await orgs.create('light', { name: 'Light', author });
  const keys = new KeyStore(dataDir);
  const heavyKey = (await keys.create('heavy', { label: 'heavy' })).key;
  const lightKey = (await keys.create('light', { label: 'light' })).key;
  const server = await startServer({ dataDir, port: 0, log: () => {}, ...options.server });
  try {
    const read = async () => {
      const start = performance.now();
      const response = await fetch(`${server.url}/api/external/tag`, { headers: { 'x-api-key': lightKey } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`light read: ${response.status}`);
      return performance.now() - start;
    };
    await read();
    const latencies: number[] = [];
    let writing = true;
    const reader = (async () => {
      while (writing) {
        latencies.push(await read());
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const heavyWritesMs: number[] = [];
    for (let w = 0; w < (options.writes ?? 3); w++) {
      const start = performance.now();
      const response = await fetch(`${server.url}/api/external/diagram`, {
        method: 'POST',
        headers: { 'x-api-key': heavyKey, 'content-type': 'application/json' },
        body: JSON.stringify(heavyDiagram(`Heavy ${w}`, options.instances ?? 2000, options.relations ?? 4000)),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`heavy write: ${response.status}`);
      heavyWritesMs.push(performance.now() - start);
    }
    writing = false;
    await reader;
    return {
      lightReads: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      worst: Math.max(...latencies),
      heavyWritesMs,
    };
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function line(label: string, f: HeavyFigures): string {
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  return `| ${label} | ${f.lightReads} | ${ms(f.p50)} | ${ms(f.p99)} | ${ms(f.worst)} | ${f.heavyWritesMs.map(ms).join(', ')} |`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { 'no-write': { type: 'boolean' } } });
  const before = await measureHeavy({ server: { layoutThreads: 0 } });
  const after = await measureHeavy();
  const m = machine();
  const report = [
    '# Light reads during heavy writes',
    '',
    `${m.date}, revision ${m.revision}, Node ${m.node}, ${m.nproc} × ${m.cpuModel}, load ${m.loadBefore.toFixed(1)} before the run.`,
    'Three posts of a diagram with 2,000 new instances and 4,000 relations to one organization, one after',
    "another, while another organization's `GET /api/external/tag` is timed every 10 ms (`npm run bench:heavy`).",
    "Before: layout on the request's thread (`layoutThreads: 0`); after: layout on worker threads and the",
    "write step in slices. Before issue 16.2 the layout of 200 instances with 4,000 relations alone took 47 s on the request's",
    'thread, and every other request waited for it.',
    '',
    '| Layout | Light reads | p50 | p99 | Worst | Heavy writes |',
    '|---|---:|---:|---:|---:|---|',
    line("before (on the request's thread)", before),
    line('after (worker threads)', after),
    '',
  ].join('\n');
  console.log(report);
  if (!values['no-write']) await writeFile(new URL('./heavy-results.md', import.meta.url), report);
}
