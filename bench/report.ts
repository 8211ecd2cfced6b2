/** The table, the ratios against the targets, bench/results.md and the chart. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { latencyChart, type Series } from './chart.js';
import { rulesSection } from './rules.js';
import type { BenchResults, SizeResults } from './run.js';
import { ROOT } from './server.js';
import { median, pairedDifference, pairedRatio, type Figure } from './stats.js';

export interface Machine {
  nproc: number;
  cpuModel: string;
  memoryGb: number;
  node: string;
  git: string;
  isomorphicGit: string;
  os: string;
  /** The file system the organizations' copies are written to (the temporary directory's). */
  fileSystem: string;
  /** The commit measured, and whether src/ had uncommitted changes. */
  revision: string;
  date: string;
  /** 1-minute load average when the run started and ended: other work on the machine. */
  loadBefore: number;
  loadAfter?: number;
}

function safe(fn: () => string, fallback = 'unknown'): string {
  try {
    return fn().trim();
  } catch {
    return fallback;
  }
}

/**
 * The file system's kind, and for ext4 whether it keeps a journal: without one, ext4 will not
 * reuse an inode freed in the last 60 s (360 s while its inode-table block is unwritten), and
 * each new file's inode is found by stepping over every such inode of its group
 * (fs/ext4/ialloc.c, recently_deleted()). Background packing frees thousands of loose objects'
 * inodes at a time, so there every file a commit creates costs more, and the floor, which never
 * deletes, does not pay it.
 */
function fileSystemOf(dir: string): string {
  const mount = safe(() => execFileSync('findmnt', ['-n', '-o', 'FSTYPE,SOURCE', '-T', dir], { encoding: 'utf8' }), '');
  const [type, source] = mount.split(/\s+/);
  if (!type) return 'unknown';
  if (type !== 'ext4' || !source) return type;
  const journal = safe(() => readFileSync(`/sys/fs/ext4/${source.split('/').pop()}/journal_task`, 'utf8'));
  return journal === 'unknown' ? 'ext4' : journal === '<none>' ? 'ext4 without a journal' : 'ext4 with a journal';
}

function revision(): string {
  const head = safe(() => execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }));
  const dirty = safe(() => execFileSync('git', ['-C', ROOT, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' }), '');
  return dirty === '' ? head : `${head} with uncommitted changes in src/ (${dirty.split('\n').length} files)`;
}

export function machine(): Machine {
  return {
    nproc: Number(safe(() => execFileSync('nproc', { encoding: 'utf8' }), String(os.availableParallelism()))),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGb: os.totalmem() / 2 ** 30,
    node: process.version,
    git: safe(() => execFileSync('git', ['--version'], { encoding: 'utf8' })),
    isomorphicGit: safe(
      () => (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'isomorphic-git', 'package.json'), 'utf8')) as { version: string }).version,
    ),
    os: `${os.type()} ${os.release()}`,
    fileSystem: fileSystemOf(os.tmpdir()),
    revision: revision(),
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    loadBefore: os.loadavg()[0]!,
  };
}

// ---------------------------------------------------------------------------------------
// Targets

export interface Check {
  target: string;
  measured: string;
  value: number;
  op: '≤' | '≥';
  bound: number;
  met: boolean;
}

const n = (size: number) => size.toLocaleString('en-US');
const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
const x = (value: number) => `${value.toFixed(2)}×`;

function check(target: string, measured: string, value: number, op: '≤' | '≥', bound: number): Check {
  return { target, measured, value, op, bound, met: Number.isFinite(value) && (op === '≤' ? value <= bound : value >= bound) };
}

function extremes(r: BenchResults): { small: SizeResults; mid: SizeResults; big: SizeResults } {
  const sorted = [...r.sizes].sort((a, b) => a.size - b.size);
  const mid = [...sorted].sort((a, b) => Math.abs(Math.log10(a.size) - 3) - Math.abs(Math.log10(b.size) - 3))[0]!;
  return { small: sorted[0]!, mid, big: sorted.at(-1)! };
}

export function durableCost(s: SizeResults): number {
  return pairedDifference(s.durable.update1, s.writes.update1);
}

/** Latency ratio of two figures of one size (measured in the same rounds). */
const lat = (a: Figure, b: Figure) => pairedRatio(a, b, 'p50');
/** Throughput ratio of two figures of one size. */
const tput = (a: Figure, b: Figure) => pairedRatio(a, b, 'perSecond');

export function checks(r: BenchResults): Check[] {
  const { small, mid, big } = extremes(r);
  const worstDurable = [...r.sizes].sort((a, b) => durableCost(b) - durableCost(a))[0]!;
  const update = big.writes.update1.p50;
  return [
    check(
      `HTTP update p50 at ${n(big.size)} ≤ 0.5× git add && git commit`,
      `${ms(update)} ms vs ${ms(big.baselines.gitCli.p50)} ms`,
      lat(big.writes.update1, big.baselines.gitCli),
      '≤',
      0.5,
    ),
    big.reference
      ? check(
          `HTTP update p50 at ${n(big.size)} ≤ 2× the same at ${n(big.reference.size)} (measured side by side)`,
          `${ms(update)} ms vs ${ms(big.reference.update1.p50)} ms (separate runs: ${ms(small.writes.update1.p50)} ms)`,
          lat(big.writes.update1, big.reference.update1),
          '≤',
          2,
        )
      : check(
          `HTTP update p50 at ${n(big.size)} ≤ 2× the same at ${n(small.size)}`,
          `${ms(update)} ms vs ${ms(small.writes.update1.p50)} ms`,
          update / small.writes.update1.p50,
          '≤',
          2,
        ),
    check(
      `${n(mid.size)} components, 16 clients: ≥ 150 acknowledged writes/s`,
      `${mid.writes.update16.perSecond.toFixed(0)} writes/s`,
      mid.writes.update16.perSecond,
      '≥',
      150,
    ),
    check(
      `GET /component at ${n(big.size)} ≥ 0.8× the req/s of the precomputed-buffer route`,
      `${big.reads.c4store.component.perSecond.toFixed(0)} vs ${big.reads.buffer.component.perSecond.toFixed(0)} req/s`,
      tput(big.reads.c4store.component, big.reads.buffer.component),
      '≥',
      0.8,
    ),
    check(
      `start-up of ${n(r.startup.components)} components ≤ 1 s to first answer (restart; without the blob and model caches in brackets)`,
      `${ms(r.startup.firstAnswerMs)} ms (${ms(r.startup.noCacheMs)} ms)`,
      Math.max(r.startup.firstAnswerMs, r.startup.noCacheMs) / 1000,
      '≤',
      1,
    ),
    check(
      `resident memory with ${n(r.startup.components)} components loaded ≤ 250 MB`,
      `${r.startup.rssLoadedMb.toFixed(0)} MB`,
      r.startup.rssLoadedMb,
      '≤',
      250,
    ),
    check(
      `--durable costs ≤ 2 ms per write at p50 (worst size: ${n(worstDurable.size)})`,
      `${ms(worstDurable.durable.update1.p50)} − ${ms(worstDurable.writes.update1.p50)} ms`,
      durableCost(worstDurable),
      '≤',
      2,
    ),
    check(
      `viewer: drawing a ${r.viewer.instances}-instance diagram as SVG ≤ 5 ms (the whole page in brackets)`,
      `${ms(r.viewer.svgMs)} ms (${ms(r.viewer.pageMs)} ms), ${(r.viewer.svgBytes / 1024).toFixed(0)} KB`,
      Math.max(r.viewer.svgMs, r.viewer.pageMs),
      '≤',
      5,
    ),
  ];
}

function formatValue(c: Check): string {
  if (c.target.includes('writes/s')) return c.value.toFixed(0);
  if (c.target.includes('memory')) return `${c.value.toFixed(0)} MB`;
  if (c.target.includes('--durable') || c.target.startsWith('viewer:')) return `${c.value.toFixed(2)} ms`;
  if (c.target.includes('start-up')) return `${c.value.toFixed(2)} s`;
  return x(c.value);
}

// ---------------------------------------------------------------------------------------
// Tables

function cell(f: Figure): string {
  return `${ms(f.p50)} / ${ms(f.p99)} · ${f.perSecond >= 100 ? f.perSecond.toFixed(0) : f.perSecond.toFixed(1)}/s`;
}

function table(header: string[], rows: string[][]): string {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

function figureTable(r: BenchResults): string {
  const rows: Array<[string, (s: SizeResults) => string]> = [
    ['**c4store** update, 1 client', (s) => cell(s.writes.update1)],
    ['**c4store** update, 16 clients', (s) => cell(s.writes.update16)],
    ['**c4store** `/model` import, 100 components + 10 diagrams', (s) => cell(s.writes.import100)],
    ['**c4store --durable** update, 1 client', (s) => cell(s.durable.update1)],
    ['**c4store --durable** update, 16 clients', (s) => cell(s.durable.update16)],
    ['**c4store --durable** `/model` import', (s) => cell(s.durable.import100)],
    ['floor: `Repo.commit`, no HTTP, no lock', (s) => cell(s.baselines.floor)],
    ['floor + write lock (`withWriteLock`)', (s) => cell(s.baselines.floorLocked)],
    ['floor, durable (`Repo` with fsync)', (s) => cell(s.baselines.floorDurable)],
    [
      'floor in the server’s own repository, between its rounds (default · durable, p50 ms)',
      (s) => `${ms(s.baselines.floorInServer.p50)} · ${ms(s.baselines.floorInServerDurable.p50)}`,
    ],
    ['usual way: `git add <file> && git commit`', (s) => cell(s.baselines.gitCli)],
    ['usual way: isomorphic-git `add` + `commit`', (s) => cell(s.baselines.isomorphicGit)],
    ['**c4store** `GET /component`, 16 clients', (s) => cell(s.reads.c4store.component)],
    ['buffer route, same bytes', (s) => cell(s.reads.buffer.component)],
    ['**c4store** `GET /model`, 16 clients', (s) => cell(s.reads.c4store.model)],
    ['buffer route, same bytes', (s) => cell(s.reads.buffer.model)],
    [
      'response size `/component` · `/model`',
      (s) => `${(s.reads.bytes.component / 1e6).toFixed(2)} MB · ${(s.reads.bytes.model / 1e6).toFixed(2)} MB`,
    ],
    ['first GET of a fresh server (loads the model)', (s) => `${ms(s.firstGetMs)} ms`],
  ];
  return table(
    ['p50 / p99 ms · per second', ...r.sizes.map((s) => `${n(s.size)} components`)],
    rows.map(([label, f]) => [label, ...r.sizes.map(f)]),
  );
}

/** An update's time in the server outside its commit (request − commit, the means the server reports). */
function outsideCommit(update: Figure): string {
  return update.server ? `${ms(update.server.requestMs - update.server.commitMs)} ms` : '–';
}

/** The server's mean commit ÷ the floor's mean (each a median over rounds). */
function commitRatio(update: Figure, floor: Figure): string {
  return update.server ? x(update.server.commitMs / median(floor.perRound.mean)) : '–';
}

function ratioTable(r: BenchResults): string {
  const small = extremes(r).small;
  const rows: Array<[string, (s: SizeResults) => string]> = [
    ['c4store update ÷ floor (p50)', (s) => x(lat(s.writes.update1, s.baselines.floor))],
    ['c4store update ÷ floor + write lock (p50)', (s) => x(lat(s.writes.update1, s.baselines.floorLocked))],
    ['c4store update ÷ `git add && git commit` (p50)', (s) => x(lat(s.writes.update1, s.baselines.gitCli))],
    ['c4store update ÷ isomorphic-git add + commit (p50)', (s) => x(lat(s.writes.update1, s.baselines.isomorphicGit))],
    [`c4store update ÷ the same at ${n(small.size)} (p50, separate runs)`, (s) => x(s.writes.update1.p50 / small.writes.update1.p50)],
    [
      `c4store update ÷ the same at ${n(small.size)} (p50, side by side)`,
      (s) => (s.reference ? x(lat(s.writes.update1, s.reference.update1)) : s === small ? x(1) : '–'),
    ],
    ['c4store 16 clients ÷ 1 client (writes/s)', (s) => x(tput(s.writes.update16, s.writes.update1))],
    ['--durable − default, update p50 (ms)', (s) => `${durableCost(s) >= 0 ? '+' : ''}${durableCost(s).toFixed(2)} ms`],
    ['--durable update ÷ floor, durable (p50)', (s) => x(lat(s.durable.update1, s.baselines.floorDurable))],
    [
      'update ÷ the floor in the server’s own repository, default · --durable (p50)',
      (s) => `${x(lat(s.writes.update1, s.baselines.floorInServer))} · ${x(lat(s.durable.update1, s.baselines.floorInServerDurable))}`,
    ],
    [
      'update, the server’s own time outside its commit, default · --durable (ms; means it reports in /metrics)',
      (s) => `${outsideCommit(s.writes.update1)} · ${outsideCommit(s.durable.update1)}`,
    ],
    [
      'update, its commit inside the server ÷ the floor’s, default · --durable (means)',
      (s) => `${commitRatio(s.writes.update1, s.baselines.floor)} · ${commitRatio(s.durable.update1, s.baselines.floorDurable)}`,
    ],
    [
      'the same ÷ the floor’s in the server’s own repository, default · --durable (means)',
      (s) =>
        `${commitRatio(s.writes.update1, s.baselines.floorInServer)} · ${commitRatio(s.durable.update1, s.baselines.floorInServerDurable)}`,
    ],
    ['`GET /component` ÷ buffer route (req/s)', (s) => x(tput(s.reads.c4store.component, s.reads.buffer.component))],
    ['`GET /model` ÷ buffer route (req/s)', (s) => x(tput(s.reads.c4store.model, s.reads.buffer.model))],
  ];
  return table(
    ['ratio', ...r.sizes.map((s) => `${n(s.size)}`)],
    rows.map(([label, f]) => [label, ...r.sizes.map(f)]),
  );
}

function checkTable(r: BenchResults): string {
  return table(
    ['target (issue 5)', 'measured', 'ratio / value', 'met'],
    checks(r).map((c) => [c.target, c.measured, formatValue(c), c.met ? '**met**' : '**not met**']),
  );
}

/** Issue 30.2's two ratios at every size: against the floor as the issue defines it (a never-packed copy). */
function writeFloorTable(r: BenchResults): string {
  const sizes = [...r.sizes].sort((a, b) => a.size - b.size);
  const row = (target: string, bound: number, ratio: (s: SizeResults) => number): string[] => {
    const values = sizes.map(ratio);
    return [target, ...values.map(x), values.every((v) => Number.isFinite(v) && v <= bound) ? '**met**' : '**not met**'];
  };
  return table(
    ['target (issue 30.2)', ...sizes.map((s) => n(s.size)), 'met'],
    [
      row('HTTP update ÷ floor (p50) ≤ 3×', 3, (s) => lat(s.writes.update1, s.baselines.floor)),
      row('--durable update ÷ floor, durable (p50) ≤ 1.5×', 1.5, (s) => lat(s.durable.update1, s.baselines.floorDurable)),
    ],
  );
}

function choicesSection(r: BenchResults): string {
  const c = r.choices;
  const big = r.sizes.find((s) => s.size === c.components) ?? extremes(r).big;
  const lines = [
    `Measured in the same run on the ${n(c.components)}-component repository:`,
    '',
    table(
      ['choice', 'c4store', 'instead', 'bought'],
      [
        [
          `loose objects read with node's zlib, synchronously in ${'≤'}4 ms slices (start-up: every one of ${n(c.loadBlobs.blobs)} blobs)`,
          `${ms(c.loadBlobs.c4store)} ms`,
          `${ms(c.loadBlobs.isomorphicGit)} ms (isomorphic-git \`readBlob\`)`,
          x(c.loadBlobs.isomorphicGit / c.loadBlobs.c4store),
        ],
        [
          `a cold start's blobs from one verified cache file (\`c4store-blob-cache\`, \`Repo.readBlobs\`)`,
          `${ms(c.loadBlobs.cached)} ms`,
          `${ms(c.loadBlobs.c4store)} ms (the loose objects, as above)`,
          x(c.loadBlobs.c4store / c.loadBlobs.cached),
        ],
        [
          'blobs written with node crypto + zlib',
          `${ms(c.writeBlob.c4store)} ms`,
          `${ms(c.writeBlob.isomorphicGit)} ms (isomorphic-git \`writeBlob\`)`,
          x(c.writeBlob.isomorphicGit / c.writeBlob.c4store),
        ],
        [
          'object-level commit: only the trees on the changed path, entries kept as raw bytes (`Repo.commit`)',
          `${ms(c.objectCommit.c4store)} ms`,
          `${ms(c.objectCommit.isomorphicGit)} ms (isomorphic-git readTree/writeTree/writeCommit/writeRef)`,
          x(c.objectCommit.isomorphicGit / c.objectCommit.c4store),
        ],
        [
          `trees stored uncompressed (the ${(c.bigTree.bytes / 1024).toFixed(0)} KiB \`components/\` tree), blobs and commits deflated`,
          `${ms(c.bigTree.level0)} ms`,
          `${ms(c.bigTree.level1)} ms (deflate level 1, git's default)`,
          `${ms(c.bigTree.level1 - c.bigTree.level0)} ms per commit`,
        ],
        [
          'no index, no working tree (object-level commits) vs the usual way',
          `${ms(big.baselines.floor.p50)} ms (floor)`,
          `${ms(big.baselines.gitCli.p50)} ms (git CLI), ${ms(big.baselines.isomorphicGit.p50)} ms (isomorphic-git)`,
          x(lat(big.baselines.gitCli, big.baselines.floor)),
        ],
        [
          `the next model's components map as a layer over the stored one (\`LayeredMap\`), per write over ${n(c.components)} components`,
          `${ms(c.nextModel.layered)} ms`,
          `${ms(c.nextModel.copy)} ms (a copy of the Map, as before)`,
          x(c.nextModel.copy / c.nextModel.layered),
        ],
        [
          'one bundled file (esbuild) instead of one file per module: `node dist/cli.js --help`, spawn to exit',
          `${ms(c.processStart.bundled)} ms`,
          `${ms(c.processStart.modules)} ms (one file per module)`,
          `${ms(c.processStart.modules - c.processStart.bundled)} ms per start`,
        ],
        [
          'GET bodies serialized once per commit, then sent as one Buffer',
          `${big.reads.c4store.component.perSecond.toFixed(0)} req/s`,
          `${big.reads.buffer.component.perSecond.toFixed(0)} req/s (the floor: a precomputed Buffer)`,
          `${x(tput(big.reads.c4store.component, big.reads.buffer.component))} of the floor`,
        ],
      ],
    ),
    '',
    'Not in the table: queued writers of one process pass the cross-process lock on instead of releasing and retaking it ' +
      '(src/store/lock.ts; the "16 clients ÷ 1 client" row above, and an A/B of the four-process torture run in ' +
      'docs/reliability.md §5); a start without the blob cache reads loose objects on a worker thread while the main ' +
      'thread parses (src/store/loose-reader.ts; the start-up section).',
    '',
    `An update at ${n(big.size)} components, p50 with 1 client: the store's commit alone ${ms(big.baselines.floor.p50)} ms, ` +
      `with the cross-process write lock ${ms(big.baselines.floorLocked.p50)} ms, through HTTP (authentication, body parsing, ` +
      `validation, model step, commit, response) ${ms(big.writes.update1.p50)} ms.`,
    '',
    "Why creating a file is dear on this machine kind (issue 30.2's open question): its root file system is ext4 without a " +
      'journal (`/sys/fs/ext4/<disk>/journal_task` is `<none>`). Without a journal, ext4 will not hand out an inode freed in ' +
      'the last 60 s (360 s while its inode table block is dirty) and skips such inodes one by one on every allocation ' +
      '(fs/ext4/ialloc.c, `recently_deleted`; `perf record` of a loop creating files: it and its buffer lookups are ~40% of ' +
      'the samples), so a new file costs 0.1–0.5 ms of kernel time whenever many files were deleted lately (~5 µs on tmpfs). ' +
      'Background packing deletes the loose objects it packs (five per update) and the server packs while it writes; the ' +
      "floor's loop does not. An update creates five objects' files and the ref's lock file; renaming the lock over the ref " +
      "costs ~0.2 ms more (ext4's auto_da_alloc starts writing a file renamed over another). Empty files made ahead of time " +
      'in the thread pool (off the write path) changed nothing in an interleaved A/B (median 0.99×): the kernel time only ' +
      'moves to the other core, which the load generator and git need on two cores. The same server on the same disk, its ' +
      'data on an ext4 image mounted by loop, 2,500 sequential updates at 1,000 (2026-11-27): without a journal the commit ' +
      'took 2.07 and 1.95 ms with packing and 1.13 ms with `--pack-every 0`; with a journal (the default of mkfs.ext4) 0.96 ' +
      'and 1.15 ms with packing and 1.14 ms without. A whole `npm run bench` on the journaled image put the commit inside ' +
      "the server at 1.27–1.34× the floor's in its own repository (means; this run's are in the Ratios section), the update at " +
      "1.83–2.57× the floor (--durable 1.47–1.96×, its floor's fsyncs each a journal commit: 2.96–3.72 ms). To measure on " +
      'another file system, point TMPDIR at it (the machine line above names the one measured).',
    '',
    'What the server does about it since 2026-11-28 (src/store/spare-files.ts): packing no longer deletes the loose ' +
      'objects it packed, nor does a commit free the ref it replaces; their files are kept (the objects emptied) and each new ' +
      'object or ref lock is written into one of them, so once a repository has been packed a write creates and frees no ' +
      'file. An interleaved A/B of two repositories of 1,000 files on this disk (4,000 commits each, packed every 500, load ' +
      '7–11): a commit took 0.66 ms (p50) with spare files and 2.25 ms without; durable 2.06 and 3.86 ms. The floor in the ' +
      "never-packed original still creates its objects' files (its ref lock is a spare file too, the same `Repo.commit`).",
    '',
    `In this run, at ${n(big.size)} components, the commit inside the server (the same \`Repo.commit\`, in a repository it packs ` +
      `as it goes) took ${commitRatio(big.writes.update1, big.baselines.floor)} the floor's in the never-packed original and ` +
      `${commitRatio(big.writes.update1, big.baselines.floorInServer)} the floor's committed into the server's own repository ` +
      `between its rounds; the server's own time outside its commit was ${outsideCommit(big.writes.update1)} (rows of the ` +
      `Ratios section). The floor in the server's repository took ${ms(big.baselines.floorInServer.p50)} ms (durable ` +
      `${ms(big.baselines.floorInServerDurable.p50)}) against ${ms(big.baselines.floor.p50)} ms ` +
      `(${ms(big.baselines.floorDurable.p50)}) in the original (p50), and the update is ` +
      `${x(lat(big.writes.update1, big.baselines.floorInServer))} (--durable ` +
      `${x(lat(big.durable.update1, big.baselines.floorInServerDurable))}) of it. What a file's creation costs is first the ` +
      "file system's state at that moment (the inodes freed lately near it, writeback under way): a CPU profile put ~370 µs " +
      "in each creation of the server's files one day and ~65 µs the next, and a floor loop timed back to back in a fresh " +
      "copy cost what the server's commits cost in runs beside it (1.4–1.7 ms and 1.2–1.7 ms at 10,000, 2026-11-27); only a " +
      'floor in the same repository at the same time shares that state (a copy packed once before the rounds, this ' +
      "report's earlier yardstick, did not). What remains beside that floor runs beside the server's commits and not the " +
      "floor's: its packing (git repack of 1,000 commits' loose objects takes ~0.6 s of CPU at 10,000, at the lowest " +
      'priority, then deletes them). In three interleaved pairs of 2,000 sequential updates at 10,000 the commit took ' +
      '1.66 / 1.71 / 1.25 ms with packing every 1,000 commits and 1.34 / 1.26 / 1.28 ms with `--pack-every 0` (git: 1.1–1.6 ' +
      'against 0.33 ms of CPU an update).',
    '',
    `The disk's own price of durability here: fsync of a new 200-byte file ${ms(c.fsync.file)} ms, of a directory ` +
      `${ms(c.fsync.directory)} ms (medians). A durable commit syncs its objects and the ref's lock file side by side, then the objects' ` +
      `directories, then renames the lock and syncs its directory: three rounds of fsync; ` +
      `the floor, durable, costs ${ms(big.baselines.floorDurable.p50 - big.baselines.floor.p50)} ms more than the floor at ${n(big.size)}.`,
  ];
  return lines.join('\n');
}

/** The machine, the code and the load of a run, for the head of every results file. */
export function machineLines(m: Machine): string {
  const load =
    m.loadAfter === undefined
      ? `1-minute load average ${m.loadBefore.toFixed(1)} at the start`
      : `1-minute load average ${m.loadBefore.toFixed(1)} at the start and ${m.loadAfter.toFixed(1)} at the end`;
  return (
    `**Machine:** \`nproc\` = ${m.nproc} (${m.cpuModel}), ${m.memoryGb.toFixed(0)} GB RAM, ${m.os}, ${m.fileSystem} under the ` +
    `temporary directory; node ${m.node}, ${m.git}, isomorphic-git ${m.isomorphicGit}.\n${load} (other work on the same ${m.nproc} cores).`
  );
}

export function renderMarkdown(r: BenchResults): string {
  const m = r.machine;
  const s = r.startup;
  const o = r.options;
  return `# c4store benchmark

Produced by \`npm run bench\` (bench/run.ts) in one run of ${(r.totalMs / 60000).toFixed(1)} minutes, ${m.date}.
Absolute times drift on a shared machine; the ratios, taken within the same run on the same data, are what to compare.

**Code measured:** ${m.revision}.

${machineLines(m)}

## Targets

${checkTable(r)}

${writeFloorTable(r)}

## Figures

Organizations of N components with one diagram per 10 components (10 laid-out instances, 9 relations, a text area
each), built with \`Orgs.create\` and one \`Repo.commit\` of files made by the service's own \`serialize\`.
Every figure is the median over ${o.rounds} rounds of ${o.durationMs} ms after a ${o.warmupMs} ms warm-up
(1-client updates: rounds of ${o.updateDurationMs} ms, reads: rounds of ${o.readDurationMs} ms, for enough samples per round;
imports: ${o.imports} per round after 2 warm-up imports), ${o.pauseMs} ms apart; HTTP load from autocannon used as a library,
each server (\`node dist/cli.js serve\`, the buffer route) in its own process, the baselines in the benchmark's process
while the servers sit idle. The default and the \`--durable\` server each write to a copy of their own of the organization,
the baselines to the original (but for the floors in a server's own repository, which catch the server up, untimed, after
each round), so that no measured window begins by loading commits made in another figure's window.

${figureTable(r)}

An **update** is \`POST /api/external/component\` with one component's id, every field as stored and a new \`desc\`;
the baselines commit exactly the file that update writes. The **import** posts 100 components (by ref) and 10
diagrams with positions and sizes (no layout) to \`/api/external/model\`; every one of the 110 files changes.

## Ratios

Within one size every figure is measured in the same rounds (round 1 of each, then round 2 of each, …), so a ratio
there is the median of the per-round ratios and drift of the shared machine between rounds cancels out; the
comparisons across sizes divide medians taken minutes apart, except the side-by-side row, whose ${n(extremes(r).small.size)}-component
organization is measured again in the rounds of the largest size.

${ratioTable(r)}

The three rows on the server’s own time and its commit split an update as the server itself sees it: around each 1-client round the benchmark reads the
server's \`/metrics\` (requests of \`POST /api/external/component\` from arrival to answer, and \`c4store_write_commit_seconds\`),
so "outside its commit" is HTTP, routing, the key, the schema check, the model step, the lock and the answer, and the
commit inside the server is the same \`Repo.commit\` the floors time, made in a repository the server packs as it goes
(the floor in the server's own repository commits into it between the server's rounds, then asks the server for a
component, untimed, so that the server's next measured write does not start by loading the floor's commits).

## Start-up and memory

| ${n(s.components)} components | |
| --- | ---: |
| spawn → first 200 of \`GET /api/external/component\` (median of ${o.startupRounds}) | ${ms(s.firstAnswerMs)} ms |
| of which spawn → \`listening on\` | ${ms(s.listeningMs)} ms |
| the same first answer with neither the blob nor the model cache (the first start after a bulk import, or the cache files deleted; median of ${o.startupRounds}) | ${ms(s.noCacheMs)} ms |
| resident memory (VmRSS) right after | ${s.rssLoadedMb.toFixed(0)} MB |
| resident memory of the server that answered the run's writes at this size, after ${n(r.memory.writes)} writes (the last ones single-component updates, 16 clients, ${r.memory.writesPerSecond.toFixed(0)} writes/s) | ${r.memory.rssMb.toFixed(0)} MB |

The page cache is warm (the repository was just written), as it is for a restarted server.

## What each choice bought

${choicesSection(r)}

## Model rules at many attributes

${rulesSection(r.rules)}

\`git fsck --full\` of the ${n(extremes(r).small.size)}-component repository after every write of the run: ${r.fsck}.

![p50 latency against model size](latency.svg)
`;
}

export function renderChart(r: BenchResults): string {
  const points = (f: (s: SizeResults) => number): Array<[number, number]> => r.sizes.map((s) => [s.size, f(s)]);
  const series: Series[] = [
    { label: 'c4store update', color: '#1f77b4', points: points((s) => s.writes.update1.p50) },
    { label: 'c4store --durable update', color: '#17becf', points: points((s) => s.durable.update1.p50) },
    { label: 'floor (Repo.commit)', color: '#2ca02c', dashed: true, points: points((s) => s.baselines.floor.p50) },
    { label: 'git add && git commit', color: '#d62728', dashed: true, points: points((s) => s.baselines.gitCli.p50) },
    { label: 'isomorphic-git add+commit', color: '#ff7f0e', dashed: true, points: points((s) => s.baselines.isomorphicGit.p50) },
    { label: 'GET /component (16 clients)', color: '#9467bd', points: points((s) => s.reads.c4store.component.p50) },
    { label: 'buffer route /component', color: '#9467bd', dashed: true, points: points((s) => s.reads.buffer.component.p50) },
    { label: 'GET /model (16 clients)', color: '#8c564b', points: points((s) => s.reads.c4store.model.p50) },
    { label: 'buffer route /model', color: '#8c564b', dashed: true, points: points((s) => s.reads.buffer.model.p50) },
  ];
  const m = r.machine;
  return latencyChart(
    'c4store: p50 latency against model size',
    `writes: 1 client · reads: 16 clients · nproc ${m.nproc}, node ${m.node} · ${m.date}`,
    series,
  );
}
