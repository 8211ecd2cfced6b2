/**
 * `npm run bench -- --scale` (or `npm run bench:scale`): c4store at 1,000, 10,000 and 100,000
 * components (issue 19). Per size: 1-client and 16-client updates (every size's rounds
 * interleaved, so a ratio between sizes is taken side by side), the full list and the first
 * and last page of a cursor walk, the trees a write adds, start-up (loose and packed, with and
 * without the blob cache) with its RSS, the repository's size before and after `git gc`, and
 * the time of a `git clone`. Writes its section of bench/results.md (between SCALE_BEGIN and
 * SCALE_END, which `npm run bench` keeps when it rewrites the rest).
 *
 *   npm run bench -- --scale                        1k, 10k, 100k
 *   npm run bench -- --scale --sizes 1000,10000     other sizes
 *   npm run bench -- --scale --no-write             print only
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { resourcePath } from '../src/model/paths.js';
import { buildOrg, type BenchOrg } from './fixture.js';
import { machine } from './report.js';
import { ROOT, serveProcess, type ServerProcess } from './server.js';
import { measureStartup, type StartupFigures } from './startup.js';
import { interleave, log, median, percentile, setQuiet, type Figure, type Measurement } from './stats.js';
import { settle, updateMeasurement } from './write.js';

export interface ScaleOptions {
  sizes: number[];
  rounds: number;
  /** Length of a measured round of updates (ms). */
  updateMs: number;
  warmupMs: number;
  /** Requests per read figure (full list, first page, last page). */
  reads: number;
  outDir?: string;
  /** No progress lines, no printed report (the smoke test). */
  quiet?: boolean;
}

export const SCALE_DEFAULTS: ScaleOptions = { sizes: [1000, 10000, 100000], rounds: 7, updateMs: 2000, warmupMs: 500, reads: 50 };

interface ReadTimes {
  p50: number;
  p99: number;
}

interface SizeFigures {
  size: number;
  buildMs: number;
  update1: Figure;
  update16: Figure;
  fullList: ReadTimes;
  firstPage: ReadTimes;
  lastPage: ReadTimes;
  /** Bytes of the tree objects one update adds: the root, `components/` and, sharded, its shard. */
  treeBytesPerWrite: number;
  componentsTreeBytes: number;
  largestShardEntries: number;
  looseBytes: number;
  packedBytes: number;
  gcMs: number;
  cloneMs: number;
  loose: StartupFigures;
  packed: StartupFigures;
}

const PAGE = 1000;
const headers = (org: BenchOrg) => ({ authorization: `Bearer ${org.key}`, 'content-type': 'application/json' });

function git(gitdir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 }).trim();
}

function bytesOf(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

async function timedGets(server: ServerProcess, org: BenchOrg, path: string, count: number): Promise<ReadTimes> {
  const times: number[] = [];
  for (let i = 0; i < count + 2; i++) {
    const t0 = performance.now();
    const response = await fetch(server.url + path, { headers: headers(org) });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}\n${server.tail()}`);
    if (i >= 2) times.push(performance.now() - t0); // two warm-ups: the first builds the snapshot's list
  }
  return { p50: median(times), p99: percentile(times, 99) };
}

function updates(server: ServerProcess, org: BenchOrg, connections: number): Measurement {
  return updateMeasurement(server, org, connections, {
    key: `${org.components.length}:update${connections}`,
    label: `${org.components.length} update, ${connections} client${connections > 1 ? 's' : ''}`,
    edit: 'scale edit',
  });
}

/** The trees a commit adds over its parent (bytes), read from the repository. */
function treeBytesOfLastWrite(org: BenchOrg): number {
  const added = git(org.gitdir, 'diff-tree', '-r', '-t', '--no-commit-id', 'main^', 'main')
    .split('\n')
    .filter((line) => line.split(' ')[1] === '040000')
    .map((line) => line.split(' ')[3]!);
  const root = git(org.gitdir, 'rev-parse', 'main^{tree}');
  return [root, ...added].reduce((sum, oid) => sum + Number(git(org.gitdir, 'cat-file', '-s', oid)), 0);
}

function largestShard(org: BenchOrg): number {
  let largest = 0;
  for (const line of git(org.gitdir, 'ls-tree', 'main:components').split('\n')) {
    const [mode, , oid] = line.split(/\s+/);
    if (mode === '040000') largest = Math.max(largest, git(org.gitdir, 'ls-tree', oid!).split('\n').length);
  }
  return largest;
}

export async function runScale(partial: Partial<ScaleOptions> = {}): Promise<SizeFigures[]> {
  const options = { ...SCALE_DEFAULTS, ...partial };
  setQuiet(options.quiet ?? false);
  const began = performance.now();
  const before = machine();
  const orgs: BenchOrg[] = [];
  const servers: ServerProcess[] = [];
  const results: SizeFigures[] = [];
  const workDir = await mkdtemp(join(tmpdir(), 'c4store-scale-'));
  try {
    for (const size of options.sizes) {
      log(`building ${size} components…`);
      const org = await buildOrg(size);
      orgs.push(org);
      log(`  built in ${(org.buildMs / 1000).toFixed(1)} s`);
    }
    for (const org of orgs) servers.push(await serveProcess(org.dataDir));
    for (let i = 0; i < orgs.length; i++) await settle(servers[i]!, orgs[i]!);

    log('updates, every size in the same rounds:');
    const one = await interleave(
      orgs.map((org, i) => updates(servers[i]!, org, 1)),
      {
        rounds: options.rounds,
        durationMs: options.updateMs,
        warmupMs: options.warmupMs,
        pauseMs: 50,
      },
    );
    const sixteen = await interleave(
      orgs.map((org, i) => updates(servers[i]!, org, 16)),
      {
        rounds: options.rounds,
        durationMs: options.updateMs,
        warmupMs: options.warmupMs,
        pauseMs: 50,
      },
    );

    for (let i = 0; i < orgs.length; i++) {
      const org = orgs[i]!;
      const server = servers[i]!;
      const size = org.components.length;
      const ids = org.components.map((c) => c.id).sort();
      const lastCursor = ids[Math.max(0, ids.length - PAGE - 1)]!;
      const fullList = await timedGets(
        server,
        org,
        '/api/external/component',
        Math.max(3, Math.round(options.reads * Math.min(1, 10000 / size))),
      );
      const firstPage = await timedGets(server, org, `/api/external/component?limit=${PAGE}`, options.reads);
      const lastPage = await timedGets(server, org, `/api/external/component?limit=${PAGE}&cursor=${lastCursor}`, options.reads);
      log(
        `${size}: full list ${fullList.p50.toFixed(1)} ms, first page ${firstPage.p50.toFixed(1)} ms, last page ${lastPage.p50.toFixed(1)} ms`,
      );
      await server.stop();
      const treeBytesPerWrite = treeBytesOfLastWrite(org);
      const componentsTreeBytes = Number(git(org.gitdir, 'cat-file', '-s', 'main:components'));
      const largestShardEntries = largestShard(org);
      // The shard of some component, to check the layout is what the trees say.
      git(org.gitdir, 'cat-file', '-e', `main:${resourcePath('component', org.components[0]!.id)}`);

      const looseBytes = bytesOf(join(org.gitdir, 'objects'));
      log(`${size}: start-up, loose`);
      const loose = await measureStartup(org, 1);
      const gc0 = performance.now();
      git(org.gitdir, 'gc', '--quiet', '--prune=now');
      const gcMs = performance.now() - gc0;
      const packedBytes = bytesOf(join(org.gitdir, 'objects'));
      log(`${size}: start-up, packed`);
      const packed = await measureStartup(org, 1);
      const clone0 = performance.now();
      execFileSync('git', ['clone', '-q', '--bare', org.gitdir, join(workDir, `clone-${size}.git`)]);
      const cloneMs = performance.now() - clone0;
      await rm(join(workDir, `clone-${size}.git`), { recursive: true, force: true });
      results.push({
        size,
        buildMs: org.buildMs,
        update1: one[`${size}:update1`]!,
        update16: sixteen[`${size}:update16`]!,
        fullList,
        firstPage,
        lastPage,
        treeBytesPerWrite,
        componentsTreeBytes,
        largestShardEntries,
        looseBytes,
        packedBytes,
        gcMs,
        cloneMs,
        loose,
        packed,
      });
    }
  } finally {
    for (const server of servers) await server.stop();
    for (const org of orgs) await rm(org.dataDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
  }
  const markdown = render(results, { ...before, loadAfter: machine().loadBefore }, performance.now() - began);
  log(`\n${markdown}`);
  if (options.outDir) {
    const file = join(options.outDir, 'results.md');
    await writeFile(file, withScaleSection(await readFile(file, 'utf8').catch(() => ''), markdown));
    log(`wrote the scale section of ${file}`);
  }
  return results;
}

export const SCALE_BEGIN = '<!-- scale section: npm run bench -- --scale -->';
export const SCALE_END = '<!-- end of scale section -->';

/** The scale section of `results` (a results.md), or ''. */
export function scaleSectionOf(results: string): string {
  const begin = results.indexOf(SCALE_BEGIN);
  const end = results.indexOf(SCALE_END);
  return begin >= 0 && end > begin ? results.slice(begin, end + SCALE_END.length) : '';
}

/** `results` with its scale section replaced by (or, if none, followed by) `section`. */
export function withScaleSection(results: string, section: string): string {
  const block = `${SCALE_BEGIN}\n${section.trim()}\n${SCALE_END}`;
  const old = scaleSectionOf(results);
  return old ? results.replace(old, block) : `${results.trimEnd()}\n\n${block}\n`;
}

// The issue's measurements of the code before sharding, packed reads by git and paging by search.
const BEFORE = [
  '### Before (issue 19, measured on the flat layout)',
  '',
  '| | 10k | 50k | 100k |',
  '|---|---|---|---|',
  '| single update, p50 | 4.0–5.7 ms | 16–17 ms | 31–32 ms |',
  '| writes/s, 16 clients | 204–302 | 55–63 | 31–33 (p99 ≈ 1 s) |',
  '| `components/` tree written by every commit | 0.6 MB | 2.9 MB | 5.9 MB |',
  '| repository on disk after the run (loose) | 0.9–1.3 GB | 3.1–3.6 GB | 6.5–6.9 GB (a clone packs it into 40 MB) |',
  '| last page of a cursor walk (limit 1000) vs the first | 6 / 4 ms | 20 / 9 ms | 26 / 4–6 ms |',
  '| start-up, first answer, packed repo (after `git gc`), no blob cache | | | 18.3–19.1 s, RSS up to 1 GB (loose: 11 s cold, 2.7 s warm; with the cache 1.4–1.9 s) |',
];

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

function render(results: SizeFigures[], m: ReturnType<typeof machine> & { loadAfter: number }, totalMs: number): string {
  const head = `| | ${results.map((r) => `${r.size.toLocaleString('en')} components`).join(' | ')} |\n| --- |${results.map(() => ' ---: |').join('')}`;
  const row = (label: string, value: (r: SizeFigures) => string) => `| ${label} | ${results.map(value).join(' | ')} |`;
  const smallest = results[0]!;
  const largest = results[results.length - 1]!;
  const tenK = results.find((r) => r.size === 10000);
  const lines = [
    '## Scale (issue 19)',
    '',
    `Produced by \`npm run bench -- --scale\` (bench/scale.ts) in one run of ${(totalMs / 60000).toFixed(1)} minutes, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
    `Code measured: ${m.revision}. ` +
      `Machine: \`nproc\` = ${m.nproc}, ${m.memoryGb.toFixed(0)} GB RAM; node ${m.node}, ${m.git.trim()}. ` +
      `1-minute load average ${m.loadBefore.toFixed(1)} at the start and ${m.loadAfter.toFixed(1)} at the end (other work on the same cores).`,
    '',
    'Organizations of N components with one diagram per 10 components, built as for `npm run bench`; one `c4store serve` process',
    "per size. Updates: `POST /api/external/component` of one component with a new `desc`, every size's rounds interleaved",
    `(medians over ${results[0]?.update1.rounds ?? 0} rounds). Start-up: spawn to the first 200 of \`GET /component\`.`,
    '',
    '### After (this run)',
    '',
    head,
    row('update p50 / p99, 1 client', (r) => `${ms(r.update1.p50)} / ${ms(r.update1.p99)} ms`),
    row('writes/s, 16 clients (p99)', (r) => `${r.update16.perSecond.toFixed(0)} (${ms(r.update16.p99)} ms)`),
    row('trees written by one update (root + components/ + shard)', (r) => kb(r.treeBytesPerWrite)),
    row('`components/` tree · largest shard', (r) => `${kb(r.componentsTreeBytes)} · ${r.largestShardEntries} entries`),
    row('`GET /component`, full list, p50', (r) => `${ms(r.fullList.p50)} ms`),
    row(`first / last page (limit ${PAGE}), p50`, (r) => `${ms(r.firstPage.p50)} / ${ms(r.lastPage.p50)} ms`),
    row('start-up loose, with the blob and model caches (without)', (r) => `${ms(r.loose.firstAnswerMs)} ms (${ms(r.loose.noCacheMs)} ms)`),
    row(
      'start-up packed, with the blob and model caches (without)',
      (r) => `${ms(r.packed.firstAnswerMs)} ms (${ms(r.packed.noCacheMs)} ms)`,
    ),
    row('RSS after start-up: loose · packed', (r) => `${r.loose.rssLoadedMb.toFixed(0)} · ${r.packed.rssLoadedMb.toFixed(0)} MB`),
    row(
      'repository: loose → after `git gc` (gc time)',
      (r) => `${mb(r.looseBytes)} → ${mb(r.packedBytes)} (${(r.gcMs / 1000).toFixed(1)} s)`,
    ),
    row('`git clone --bare`', (r) => `${ms(r.cloneMs)} ms`),
    row('build (one commit of every file)', (r) => `${(r.buildMs / 1000).toFixed(1)} s`),
    '',
    '### Targets',
    '',
    '| target | measured | met |',
    '| --- | ---: | ---: |',
    `| update p50 at ${largest.size.toLocaleString('en')} ≤ 1.5× the same at ${smallest.size.toLocaleString('en')} (interleaved) | ${ms(largest.update1.p50)} vs ${ms(smallest.update1.p50)} ms: ${(largest.update1.p50 / smallest.update1.p50).toFixed(2)}× | ${largest.update1.p50 <= 1.5 * smallest.update1.p50 ? '**met**' : 'missed'} |`,
    tenK && tenK !== largest
      ? `| 16-client writes/s at ${largest.size.toLocaleString('en')} ≥ 0.8× the 10,000 figure | ${largest.update16.perSecond.toFixed(0)} vs ${tenK.update16.perSecond.toFixed(0)}: ${(largest.update16.perSecond / tenK.update16.perSecond).toFixed(2)}× | ${largest.update16.perSecond >= 0.8 * tenK.update16.perSecond ? '**met**' : 'missed'} |`
      : '| 16-client writes/s at the largest size ≥ 0.8× the 10,000 figure | (10,000 not measured) | |',
    `| packed start-up without the caches ≤ 2× loose with them (${largest.size.toLocaleString('en')}) | ${ms(largest.packed.noCacheMs)} vs ${ms(largest.loose.firstAnswerMs)} ms: ${(largest.packed.noCacheMs / largest.loose.firstAnswerMs).toFixed(2)}× | ${largest.packed.noCacheMs <= 2 * largest.loose.firstAnswerMs ? '**met**' : 'missed'} |`,
    `| RSS under 1 GB (packed, ${largest.size.toLocaleString('en')}) | ${largest.packed.rssLoadedMb.toFixed(0)} MB | ${largest.packed.rssLoadedMb < 1024 ? '**met**' : 'missed'} |`,
    `| last page costs what the first does (${largest.size.toLocaleString('en')}) | ${ms(largest.lastPage.p50)} vs ${ms(largest.firstPage.p50)} ms: ${(largest.lastPage.p50 / largest.firstPage.p50).toFixed(2)}× | ${largest.lastPage.p50 <= 1.5 * largest.firstPage.p50 ? '**met**' : 'missed'} |`,
    `| no directory over 3,000 entries, no tree over 1 MB | largest shard ${largest.largestShardEntries} entries; \`components/\` ${kb(largest.componentsTreeBytes)} | ${largest.largestShardEntries <= 3000 ? '**met**' : 'missed'} |`,
  ];
  return `${[...lines, '', ...BEFORE].join('\n')}\n`;
}

/** The command line of the scale section (also reached through `npm run bench -- --scale`). */
export function scaleCli(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      scale: { type: 'boolean' },
      sizes: { type: 'string' },
      rounds: { type: 'string' },
      out: { type: 'string' },
      'no-write': { type: 'boolean' },
    },
  });
  const options: Partial<ScaleOptions> = { outDir: values['no-write'] ? undefined : (values.out ?? join(ROOT, 'bench')) };
  if (values.sizes) options.sizes = values.sizes.split(',').map(Number);
  if (values.rounds) options.rounds = Number(values.rounds);
  runScale(options).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) scaleCli(process.argv.slice(2));
