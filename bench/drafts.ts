/**
 * `npm run bench:drafts`: what drafts cost at 10,000 components (issue 26).
 * - A write to a draft against the same write to `main` (target: ratio ≤ 1.2×): one component's
 *   description changed, one client, alternating rounds so that both see the same machine.
 * - Merging a draft that touched 100 components into a `main` that moved meanwhile (target: under
 *   1 s), over HTTP: `POST /api/external/drafts/<name>/merge`, conflict-free.
 * Writes bench/drafts-results.md (unless --no-write).
 */
import { rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../src/server.js';
import { buildOrg, updateBody } from './fixture.js';
import { machine, machineLines } from './report.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' },
    writes: { type: 'string', default: '40' },
    'no-write': { type: 'boolean', default: false },
  },
});
const size = Number(values.size);
const rounds = Number(values.rounds);
const writesPerRound = Number(values.writes);

const m = machine();
const org = await buildOrg(size);
const server = await startServer({ dataDir: org.dataDir, port: 0, log: () => {} });
const API = `${server.url}/api/external`;
const headers = { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' };

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

let n = 0;
/** One round of single-component writes (to main, or to a draft), the median time of one. */
async function writeRound(draft: string | undefined): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < writesPerRound; i++) {
    const component = org.components[(n++ * 7919) % org.components.length]!;
    const began = performance.now();
    await call('POST', `/component${draft ? `?draft=${draft}` : ''}`, [updateBody(component, `Revision ${n}`)]);
    times.push(performance.now() - began);
  }
  return median(times);
}

try {
  // Warm both paths (snapshots loaded, workers started).
  await call('POST', '/drafts', { name: 'writes' });
  await writeRound(undefined);
  await writeRound('writes');
  const mainTimes: number[] = [];
  const draftTimes: number[] = [];
  for (let round = 0; round < rounds; round++) {
    mainTimes.push(await writeRound(undefined));
    draftTimes.push(await writeRound('writes'));
  }
  const mainWrite = median(mainTimes);
  const draftWrite = median(draftTimes);

  const merges: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const name = `touch-100-${round}`;
    await call('POST', '/drafts', { name });
    const touched = org.components.slice(round * 100, round * 100 + 100);
    await call(
      'POST',
      `/component?draft=${name}`,
      touched.map((c) => updateBody(c, `Proposed ${round}`)),
    );
    // main moves meanwhile, elsewhere: a real three-way merge, not a fast path.
    await call('POST', '/component', [updateBody(org.components[org.components.length - 1 - round]!, `Main moved ${round}`)]);
    const began = performance.now();
    const merged = (await call('POST', `/drafts/${name}/merge`)) as { state: string; committed: boolean };
    merges.push(performance.now() - began);
    if (merged.state !== 'merged' || !merged.committed) throw new Error(`merge ${name}: ${JSON.stringify(merged)}`);
  }
  const merge = median(merges);

  const ratio = draftWrite / mainWrite;
  const rows = [
    ['write of one component to main (median of round medians)', `${mainWrite.toFixed(1)} ms`, ''],
    [
      'the same write to a draft',
      `${draftWrite.toFixed(1)} ms`,
      `ratio ${ratio.toFixed(2)}× (target ≤ 1.2×) ${ratio <= 1.2 ? 'met' : 'NOT met'}`,
    ],
    [
      `merge of a draft touching 100 components into main (${size.toLocaleString('en')} components)`,
      `${merge.toFixed(0)} ms`,
      `target < 1,000 ms ${merge < 1000 ? 'met' : 'NOT met'}; rounds: ${merges.map((m) => m.toFixed(0)).join(', ')} ms`,
    ],
  ];
  const table = ['| figure | value | note |', '|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  const report = `# Drafts: write and merge costs\n\n${size.toLocaleString('en')} components, ${org.diagrams} diagrams; ${rounds} rounds of ${writesPerRound} writes each way, alternating; ${rounds} merges.\n\n${m.date}, code ${m.revision}.\n\n${machineLines({ ...m, loadAfter: loadavg()[0]! })}\n\n${table}\n`;
  console.log(report);
  if (!values['no-write']) await writeFile(join(import.meta.dirname, 'drafts-results.md'), report);
} finally {
  await server.close();
  await rm(org.dataDir, { recursive: true, force: true });
}
