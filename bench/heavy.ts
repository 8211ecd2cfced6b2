/**
 * `npm run bench:heavy`: the worst latency of a light request of one organization while
 * another organization does heavy work (issue 15.1). One server in this process.
 *
 * - Writes: the heavy client posts three diagrams of 2,000 new instances and 4,000 relations
 *   (the default per-diagram limits' scale, laid out automatically) to `heavy`, one after another.
 * - Many components: one request creating 20,000, then one creating 45,000 components.
 * - Reads: an organization of `components` components (default 100,000) is read whole, once per
 *   answer form: the component list (JSON, YAML), the whole model (JSON, YAML) and the model in
 *   every export format, each built afresh, by curl in a process of its own.
 *
 * Meanwhile a light client reads `GET /api/external/tag` of `light` on a 10 ms schedule. A light
 * read's latency counts from the moment it was due, not from when the client got round to
 * sending it: a server that holds its event loop delays the client's timer too, and a latency
 * measured from the late send would not show it. The server's longest event-loop stall
 * (`monitorEventLoopDelay`) is reported beside it.
 *
 *   npm run bench:heavy                          writes before (layout on the request's thread)
 *                                                and after, and the reads; bench/heavy-results.md
 *   npm run bench:heavy -- --components 20000    reads of a smaller organization
 *   npm run bench:heavy -- --no-write            print only
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs, promisify } from 'node:util';
import { startServer, type RunningServer, type ServerOptions } from '../src/server.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { buildOrg } from './fixture.js';
import { machine } from './report.js';
import { percentile } from './stats.js';

const run = promisify(execFile);

export interface LightFigures {
  lightReads: number;
  p50: number;
  p99: number;
  worst: number;
  /** The server's longest event-loop stall meanwhile (ms). */
  stall: number;
}

export interface HeavyFigures extends LightFigures {
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

/**
 * Runs `read` every `intervalMs` until stopped; each latency counts from the moment the read
 * was due (a read delayed by a held event loop shows the delay). A read that overruns its slot
 * pushes the schedule back rather than queueing the missed slots.
 */
export function scheduledReads(read: () => Promise<void>, intervalMs = 10): { stop(): Promise<LightFigures> } {
  const latencies: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  let running = true;
  const reading = (async () => {
    let due = performance.now();
    while (running) {
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await read();
      const done = performance.now();
      latencies.push(done - due);
      due = Math.max(due + intervalMs, done);
    }
  })();
  return {
    async stop() {
      running = false;
      await reading;
      loop.disable();
      return {
        lightReads: latencies.length,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        worst: Math.max(...latencies),
        stall: loop.max / 1e6,
      };
    },
  };
}

/** A light read of `GET /api/external/tag` with `key`. */
export function lightRead(server: RunningServer, key: string): () => Promise<void> {
  return async () => {
    const response = await fetch(`${server.url}/api/external/tag`, { headers: { 'x-api-key': key } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`light read: ${response.status}`);
  };
}

/** A second organization, `light`, in `dataDir`: the key of its light reads. */
export async function lightOrg(dataDir: string): Promise<string> {
  await new Orgs(dataDir).create('light', { name: 'Light', author: { name: 'bench', email: 'bench@bench' } });
  return (await new KeyStore(dataDir).create('light', { label: 'light' })).key;
}

/** `count` new components, as one request's body. */
export function manyComponents(count: number, prefix: string): unknown[] {
  return Array.from({ length: count }, (_, i) => ({ ref: `${prefix}-${i}`, name: `Service ${i}`, desc: `Part ${i} of the business.` }));
}

/**
 * `writes` heavy writes to one organization, one after another, while another's light reads
 * are timed. By default each posts a diagram of `instances` new instances and `relations`
 * relations; `post` gives another request instead (path and body of write number `w`).
 */
export async function measureHeavy(
  options: {
    writes?: number;
    instances?: number;
    relations?: number;
    post?: (w: number) => { path: string; body: unknown };
    server?: Partial<ServerOptions>;
  } = {},
): Promise<HeavyFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), 'c4store-heavy-'));
  await new Orgs(dataDir).create('heavy', { name: 'Heavy', author: { name: 'bench', email: 'bench@bench' } });
  const heavyKey = (await new KeyStore(dataDir).create('heavy', { label: 'heavy' })).key;
  const lightKey = await lightOrg(dataDir);
  const server = await startServer({ dataDir, port: 0, log: () => {}, ...options.server });
  try {
    const read = lightRead(server, lightKey);
    await read();
    const reads = scheduledReads(read);
    const heavyWritesMs: number[] = [];
    for (let w = 0; w < (options.writes ?? 3); w++) {
      const { path, body } = options.post?.(w) ?? {
        path: '/api/external/diagram',
        body: heavyDiagram(`Heavy ${w}`, options.instances ?? 2000, options.relations ?? 4000),
      };
      const start = performance.now();
      const response = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': heavyKey, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`heavy write: ${response.status}`);
      heavyWritesMs.push(performance.now() - start);
    }
    return { ...(await reads.stop()), heavyWritesMs };
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The whole-organization reads of the reads section: path and Accept. */
export const LARGE_READS: ReadonlyArray<{ label: string; path: string; accept: string }> = [
  { label: 'component list, JSON', path: '/api/external/component', accept: 'application/json' },
  { label: 'component list, YAML', path: '/api/external/component', accept: 'application/yaml' },
  { label: 'whole model, JSON', path: '/api/external/model', accept: 'application/json' },
  { label: 'whole model, YAML', path: '/api/external/model', accept: 'application/yaml' },
  { label: 'Structurizr DSL export', path: '/api/external/model', accept: 'text/vnd.structurizr.dsl' },
  { label: 'PlantUML export', path: '/api/external/model', accept: 'text/x-plantuml' },
  { label: 'Mermaid export', path: '/api/external/model', accept: 'text/vnd.mermaid' },
  { label: 'LikeC4 export', path: '/api/external/model', accept: 'text/vnd.likec4' },
];

/**
 * A large GET by curl, in a process of its own: receiving 70 MB in this process would hold the
 * light reads' event loop (the server's is the one measured), as it did with fetch.
 */
export async function largeRead(url: string, key: string, accept: string): Promise<{ status: number; bytes: number }> {
  const { stdout } = await run('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code} %{size_download}',
    '-H',
    `x-api-key: ${key}`,
    '-H',
    `accept: ${accept}`,
    url,
  ]);
  const [status, bytes] = stdout.split(' ').map(Number);
  return { status: status!, bytes: bytes! };
}

export interface ReadFigures extends LightFigures {
  label: string;
  bytes: number;
  ms: number;
}

/**
 * Each of LARGE_READS of an organization of `components` components, built afresh (the model
 * is loaded first), while the light organization's reads are timed.
 */
export async function measureLargeReads(components: number): Promise<ReadFigures[]> {
  const org = await buildOrg(components);
  const lightKey = await lightOrg(org.dataDir);
  const server = await startServer({ dataDir: org.dataDir, port: 0, log: () => {} });
  try {
    const read = lightRead(server, lightKey);
    await read();
    // Loaded before the measured reads: the load is not what is measured here.
    await (await fetch(`${server.url}/api/external/tag`, { headers: { 'x-api-key': org.key } })).arrayBuffer();
    const figures: ReadFigures[] = [];
    for (const { label, path, accept } of LARGE_READS) {
      const reads = scheduledReads(read);
      const start = performance.now();
      const { status, bytes } = await largeRead(`${server.url}${path}`, org.key, accept);
      const ms = performance.now() - start;
      if (status !== 200) throw new Error(`${label}: ${status}`);
      figures.push({ label, bytes, ms, ...(await reads.stop()) });
    }
    return figures;
  } finally {
    await server.close();
    await rm(org.dataDir, { recursive: true, force: true });
  }
}

const ms = (n: number) => `${n.toFixed(0)} ms`;

function writeLine(label: string, f: HeavyFigures): string {
  return `| ${label} | ${f.lightReads} | ${ms(f.p50)} | ${ms(f.p99)} | ${ms(f.worst)} | ${ms(f.stall)} | ${f.heavyWritesMs.map(ms).join(', ')} |`;
}

function readLine(f: ReadFigures): string {
  return `| ${f.label} | ${(f.bytes / 1e6).toFixed(1)} MB in ${ms(f.ms)} | ${f.lightReads} | ${ms(f.p50)} | ${ms(f.worst)} | ${ms(f.stall)} |`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { 'no-write': { type: 'boolean' }, components: { type: 'string', default: '100000' } } });
  const components = Number(values.components);
  const m = machine();
  const before = await measureHeavy({ server: { layoutThreads: 0 } });
  const after = await measureHeavy();
  const many: Array<[count: number, figures: HeavyFigures]> = [];
  for (const count of [20_000, 45_000]) {
    const post = () => ({ path: '/api/external/component', body: manyComponents(count, 'c') });
    many.push([count, await measureHeavy({ writes: 1, post })]);
  }
  const reads = await measureLargeReads(components);
  const report = [
    '# Light reads during heavy work',
    '',
    `${m.date}, revision ${m.revision}, Node ${m.node}, ${m.nproc} × ${m.cpuModel}, load ${m.loadBefore.toFixed(1)} before the run.`,
    "Another organization's `GET /api/external/tag` is due every 10 ms throughout; a light read's latency counts",
    'from the moment it was due. "Stall" is the server\'s longest event-loop delay meanwhile (`monitorEventLoopDelay`).',
    '`npm run bench:heavy`.',
    '',
    '## During heavy writes',
    '',
    'Three posts of a diagram with 2,000 new instances and 4,000 relations to one organization, one after',
    "another. Before: layout on the request's thread (`layoutThreads: 0`); after: layout on worker threads and the",
    "write step in slices. Before issue 16.2 the layout of 200 instances with 4,000 relations alone took 47 s on the request's",
    'thread, and every other request waited for it.',
    '',
    '| Layout | Light reads | p50 | p99 | Worst | Stall | Heavy writes |',
    '|---|---:|---:|---:|---:|---:|---|',
    writeLine("before (on the request's thread)", before),
    writeLine('after (worker threads)', after),
    '',
    '## During a write of many components',
    '',
    'One request creating that many components (the bound is 50,000 elements a write). Before (revision',
    '4b1f414, same machine, quiet, measured the same way): the longest stall was 0.42 s at 10,000 components,',
    '1.06 s at 30,000 and 1.78 s at 45,000; the commit compressed and wrote every blob in one go.',
    '',
    '| Components | Light reads | p50 | p99 | Worst | Stall | The write |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...many.map(([count, figures]) => writeLine(count.toLocaleString('en'), figures)),
    '',
    `## During large reads (${components.toLocaleString('en')} components)`,
    '',
    'One organization of that many components (one diagram per 10) read whole, each answer built afresh, one',
    'after another. Answers are built in slices of the event loop (src/slices.ts).',
    '',
    '| Answer | Size and time | Light reads | p50 | Worst | Stall |',
    '|---|---:|---:|---:|---:|---:|',
    ...reads.map(readLine),
    '',
    'Before the slices (revision baaed26, 100,000 components, same machine, quiet, measured with the same',
    "monitor in the server's process): the longest stall was 287 ms for the component list in JSON, 1,016 ms in",
    'YAML, 724 ms and 2,659 ms for the whole model in JSON and YAML, and 1.5-2.4 s for each export.',
    '',
  ].join('\n');
  console.log(report);
  if (!values['no-write']) await writeFile(new URL('./heavy-results.md', import.meta.url), report);
}
