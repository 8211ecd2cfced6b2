/**
 * `npm run bench -- --filters`: filtered lists against the whole list (issue 30, point 3). At
 * 100,000 components, one `c4store serve` process: the current form's whole list (`GET
 * /components`, kept per commit), the same list filtered (`?state=ACTIVE`: every component of the
 * fixture matches, so the answer is as large as the whole list), a selective filter (`?name=`
 * matching 11 components), and `/search/components?state=ACTIVE`, which is built anew for every
 * request. Rounds interleave the paths, so the ratio is taken side by side. Writes its section of
 * bench/results.md (between FILTERS_BEGIN and FILTERS_END, which `npm run bench` keeps).
 *
 *   npm run bench -- --filters                   100,000 components
 *   npm run bench -- --filters --size 10000      another size
 *   npm run bench -- --filters --no-write        print only
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { buildOrg, type BenchOrg } from './fixture.js';
import { machine } from './report.js';
import { ROOT, serveProcess, type ServerProcess } from './server.js';
import { log, median, percentile, setQuiet } from './stats.js';
import { settle } from './write.js';

export interface FiltersOptions {
  size: number;
  rounds: number;
  /** Requests of each path per round. */
  perRound: number;
  /** Requests of the uncached search (each builds the answer anew). */
  searches: number;
  outDir?: string;
  quiet?: boolean;
}

export const FILTERS_DEFAULTS: FiltersOptions = { size: 100000, rounds: 7, perRound: 5, searches: 5 };

interface Times {
  p50: number;
  p99: number;
  bytes: number;
}

export interface FiltersFigures {
  size: number;
  buildMs: number;
  wholeList: Times;
  filteredAll: Times;
  filteredFew: Times;
  /** The first filtered request of the commit, which builds the answer. */
  firstFiltered: number;
  search: Times;
}

const WHOLE = '/api/external/components';
const FILTERED_ALL = '/api/external/components?state=ACTIVE';
/** At 100,000: `Service 9999` and `Service 99990`…`99999`, 11 components (the fixture names them `Service <n>`). */
const filteredFew = (size: number) => `/api/external/components?name=${encodeURIComponent(`Service ${size / 10 - 1}`)}`;
const SEARCH = '/api/external/search/components?state=ACTIVE';

async function timedGet(server: ServerProcess, org: BenchOrg, path: string): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${org.key}` } });
  const body = await response.arrayBuffer();
  const ms = performance.now() - t0;
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}\n${server.tail()}`);
  return { ms, bytes: body.byteLength };
}

const timesOf = (samples: Array<{ ms: number; bytes: number }>): Times => {
  const ms = samples.map((s) => s.ms);
  return { p50: median(ms), p99: percentile(ms, 99), bytes: samples[0]?.bytes ?? 0 };
};

export async function runFilters(partial: Partial<FiltersOptions> = {}): Promise<FiltersFigures> {
  const options = { ...FILTERS_DEFAULTS, ...partial };
  setQuiet(options.quiet ?? false);
  const began = performance.now();
  const before = machine();
  log(`building ${options.size} components…`);
  const org = await buildOrg(options.size);
  let server: ServerProcess | undefined;
  try {
    server = await serveProcess(org.dataDir);
    await settle(server, org);
    // The whole list is built by its first request; the filtered one's first request is timed apart.
    await timedGet(server, org, WHOLE);
    const firstFiltered = (await timedGet(server, org, FILTERED_ALL)).ms;
    await timedGet(server, org, filteredFew(options.size));
    const samples: Record<string, Array<{ ms: number; bytes: number }>> = { whole: [], all: [], few: [] };
    for (let round = 0; round < options.rounds; round++) {
      // Each round in another order, so that no path always follows the same one.
      const order = (['whole', 'all', 'few'] as const).map((_, i, a) => a[(i + round) % a.length]!);
      for (const name of order) {
        const path = name === 'whole' ? WHOLE : name === 'all' ? FILTERED_ALL : filteredFew(options.size);
        for (let i = 0; i < options.perRound; i++) samples[name]!.push(await timedGet(server, org, path));
      }
    }
    const search: Array<{ ms: number; bytes: number }> = [];
    for (let i = 0; i < options.searches; i++) search.push(await timedGet(server, org, SEARCH));
    const figures: FiltersFigures = {
      size: options.size,
      buildMs: org.buildMs,
      wholeList: timesOf(samples.whole!),
      filteredAll: timesOf(samples.all!),
      filteredFew: timesOf(samples.few!),
      firstFiltered,
      search: timesOf(search),
    };
    const markdown = render(figures, { ...before, loadAfter: loadavg()[0]! }, performance.now() - began, options);
    log(`\n${markdown}`);
    if (options.outDir) {
      const file = join(options.outDir, 'results.md');
      await writeFile(file, withFiltersSection(await readFile(file, 'utf8').catch(() => ''), markdown));
      log(`wrote the filters section of ${file}`);
    }
    return figures;
  } finally {
    await server?.stop();
    await rm(org.dataDir, { recursive: true, force: true });
  }
}

export const FILTERS_BEGIN = '<!-- filters section: npm run bench -- --filters -->';
export const FILTERS_END = '<!-- end of filters section -->';

/** The filters section of `results` (a results.md), or ''. */
export function filtersSectionOf(results: string): string {
  const begin = results.indexOf(FILTERS_BEGIN);
  const end = results.indexOf(FILTERS_END);
  return begin >= 0 && end > begin ? results.slice(begin, end + FILTERS_END.length) : '';
}

/** `results` with its filters section replaced by (or, if none, followed by) `section`, a whole block or its text. */
export function withFiltersSection(results: string, section: string): string {
  const text = section.startsWith(FILTERS_BEGIN) ? section.slice(FILTERS_BEGIN.length, -FILTERS_END.length) : section;
  const block = `${FILTERS_BEGIN}\n${text.trim()}\n${FILTERS_END}`;
  const old = filtersSectionOf(results);
  return old ? results.replace(old, block) : `${results.trimEnd()}\n\n${block}\n`;
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function render(f: FiltersFigures, m: ReturnType<typeof machine> & { loadAfter: number }, totalMs: number, o: FiltersOptions): string {
  const ratio = f.filteredAll.p50 / f.wholeList.p50;
  const row = (label: string, path: string, t: Times) => `| ${label} | \`${path}\` | ${mb(t.bytes)} | ${ms(t.p50)} ms | ${ms(t.p99)} ms |`;
  return `${[
    '## Filtered lists (issue 30, point 3)',
    '',
    `Produced by \`npm run bench -- --filters\` (bench/filters.ts) in one run of ${(totalMs / 60000).toFixed(1)} minutes, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
    `Code measured: ${m.revision}. Machine: \`nproc\` = ${m.nproc}, ${m.memoryGb.toFixed(0)} GB RAM; node ${m.node}. ` +
      `1-minute load average ${m.loadBefore.toFixed(1)} at the start and ${m.loadAfter.toFixed(1)} at the end (other work on the same cores).`,
    '',
    `${f.size.toLocaleString('en')} components (every one \`ACTIVE\`), one \`c4store serve\` process; ${o.rounds} rounds of ${o.perRound} requests`,
    'of each list path, interleaved; one client. A filtered answer is built by the first request of its commit and filters',
    `(here ${ms(f.firstFiltered)} ms), then served as the same bytes, as the whole list is.`,
    '',
    '| | path | answer | p50 | p99 |',
    '| --- | --- | ---: | ---: | ---: |',
    row('whole list (cached per commit)', WHOLE, f.wholeList),
    row('filtered, every component matches', FILTERED_ALL, f.filteredAll),
    row('filtered by a part of the name (a few match)', filteredFew(f.size), f.filteredFew),
    row('search, built per request (before)', SEARCH, f.search),
    '',
    '| target | measured | met |',
    '| --- | ---: | ---: |',
    `| a repeated filtered list at ${f.size.toLocaleString('en')} within 1.5× of the cached whole list | ${ms(f.filteredAll.p50)} vs ${ms(f.wholeList.p50)} ms: ${ratio.toFixed(2)}× | ${ratio <= 1.5 ? '**met**' : 'missed'} |`,
  ].join('\n')}\n`;
}

/** The command line of the filters section (also reached through `npm run bench -- --filters`). */
export function filtersCli(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      filters: { type: 'boolean' },
      size: { type: 'string' },
      rounds: { type: 'string' },
      out: { type: 'string' },
      'no-write': { type: 'boolean' },
    },
  });
  const options: Partial<FiltersOptions> = { outDir: values['no-write'] ? undefined : (values.out ?? join(ROOT, 'bench')) };
  if (values.size) options.size = Number(values.size);
  if (values.rounds) options.rounds = Number(values.rounds);
  runFilters(options).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) filtersCli(process.argv.slice(2));
