/**
 * `npm run bench`: c4store beside the floor (its own store layer) and beside the usual
 * git-backed store (git CLI, isomorphic-git on a working tree), at 100, 1,000 and 10,000
 * components; prints a table with the ratios and writes bench/results.md and bench/latency.svg.
 *
 *   npm run bench                       the full run (under 10 minutes on 2 cores)
 *   npm run bench -- --sizes 100,1000   other sizes
 *   npm run bench -- --profile DIR      servers run with --cpu-prof, profiles in DIR
 *   npm run bench -- --out DIR          write results.md and latency.svg to DIR instead of bench/
 *   npm run bench -- --no-write         print only
 *   npm run bench -- --scale            the scale section instead (bench/scale.ts: 1k, 10k, 100k)
 *   npm run bench -- --filters          the filtered-lists section instead (bench/filters.ts: 100k)
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { baselineMeasurements, type BaselineFigures } from './baselines.js';
import { measureChoices, type ChoiceFigures } from './choices.js';
import { filtersCli, filtersSectionOf, withFiltersSection } from './filters.js';
import { buildOrg, copyDataDir, type BenchOrg } from './fixture.js';
import { readMeasurements, startBufferRoute, type ReadFigures } from './read.js';
import { measureRules, type RulesFigures } from './rules.js';
import { SCALE_BEGIN, SCALE_END, scaleCli, scaleSectionOf, withScaleSection } from './scale.js';
import { machine, renderChart, renderMarkdown, type Machine } from './report.js';
import { serveProcess, ROOT, type ServerProcess, type SpawnOptions } from './server.js';
import { measureStartup, memoryAfterWrites, type MemoryAfterWrites, type StartupFigures } from './startup.js';
import { settle, writeMeasurements, type WriteFigures } from './write.js';
import { measureViewer, type ViewerFigures } from './viewer.js';
import { measureDrawing, renderDrawing } from './drawing.js';
import { interleave, log, setQuiet, type Figure, type Measurement } from './stats.js';

export interface BenchOptions {
  sizes: number[];
  rounds: number;
  /** Length of one measured round (ms). */
  durationMs: number;
  /**
   * Length of a measured round of reads (ms). At 10,000 components a response is 2.9 MB and a
   * 300 ms round holds only ~200 of them, too few for a steady ratio between two servers (runs
   * of the same code gave 0.68× to 1.03× with 300 ms rounds).
   */
  readDurationMs: number;
  /**
   * Length of a measured round of 1-client updates (ms). The durable cost is the difference of
   * two such medians of ~6 ms, for a bound of 2 ms: 300 ms rounds (~50 writes at 10,000
   * components) left it within ±0.5 ms of noise between runs.
   */
  updateDurationMs: number;
  /** Warm-up before each figure (ms). */
  warmupMs: number;
  /** Idle time between two measurements (ms). */
  pauseMs: number;
  /** /model imports per round. */
  imports: number;
  /** Model size of the start-up, memory and design-choice figures (built anew if not in `sizes`). */
  startupSize: number;
  startupRounds: number;
  /** Writes before the second memory reading. */
  rssWrites: number;
  /** Servers run with --cpu-prof, their profiles written here. */
  profileDir?: string;
  /** Samples of each design-choice micro-measurement. */
  choiceSamples: number;
  /** Attribute counts and component count of the model-rules figures (bench/rules.ts), and samples of each. */
  rulesAttributes: number[];
  rulesComponents: number;
  rulesSamples: number;
  /** Instances of the drawing section's diagrams (bench/drawing.ts); default 50, 200, 1,000. */
  drawingSizes?: number[];
  /** Where results.md and latency.svg go; none: nothing is written. */
  outDir?: string;
  /** No progress lines, no printed report. */
  quiet?: boolean;
}

export const DEFAULTS: BenchOptions = {
  sizes: [100, 1000, 10000],
  rounds: 5,
  durationMs: 300,
  readDurationMs: 1000,
  updateDurationMs: 1000,
  warmupMs: 150,
  pauseMs: 50,
  imports: 2,
  startupSize: 10000,
  startupRounds: 3,
  rssWrites: 10000,
  choiceSamples: 20,
  rulesAttributes: [5000, 50000],
  rulesComponents: 10000,
  rulesSamples: 10,
};

export interface SizeResults {
  size: number;
  diagrams: number;
  buildMs: number;
  /** The first GET of a freshly started server, which loads the model (ms). */
  firstGetMs: number;
  baselines: BaselineFigures;
  reads: ReadFigures;
  writes: WriteFigures;
  durable: WriteFigures;
  /** The smallest organization's 1-client update, measured in the same rounds as this (the largest) size. */
  reference?: { size: number; update1: Figure };
}

export interface BenchResults {
  options: BenchOptions;
  machine: Machine;
  sizes: SizeResults[];
  startup: StartupFigures;
  memory: MemoryAfterWrites;
  choices: ChoiceFigures;
  /** The viewer's rendering of a 40-instance diagram (in the benchmark's process). */
  viewer: ViewerFigures;
  rules: RulesFigures;
  /** `git fsck --full` of the smallest organization after every write of the run. */
  fsck: string;
  totalMs: number;
}

function spawnOptions(options: BenchOptions, name: string): SpawnOptions {
  return options.profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${join(options.profileDir, name)}`] } : {};
}

async function firstGet(server: ServerProcess, org: BenchOrg): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(`${server.url}/api/external/component`, { headers: { authorization: `Bearer ${org.key}` } });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`GET /component: ${response.status}\n${server.tail()}`);
  return performance.now() - t0;
}

function elapsed(since: number): string {
  return `${((performance.now() - since) / 60000).toFixed(1)} min`;
}

function prefixed(prefix: string, measurements: Measurement[]): Measurement[] {
  return measurements.map((m) => ({ ...m, key: prefix + m.key }));
}

function fsck(gitdir: string): string {
  try {
    execFileSync('git', ['--git-dir', gitdir, 'fsck', '--full', '--no-dangling'], { stdio: 'pipe' });
    return 'clean';
  } catch (error) {
    return `errors: ${String((error as { stderr?: Buffer }).stderr ?? error)
      .trim()
      .split('\n')
      .slice(0, 5)
      .join('; ')}`;
  }
}

export async function run(partial: Partial<BenchOptions> = {}): Promise<BenchResults> {
  const options: BenchOptions = { ...DEFAULTS, ...partial };
  setQuiet(options.quiet ?? false);
  // Made now, not after the run: a missing --out directory used to fail its last step, 9 minutes in.
  if (options.outDir) await mkdir(options.outDir, { recursive: true });
  const began = performance.now();
  const before = machine();
  const timing = { rounds: options.rounds, durationMs: options.durationMs, warmupMs: options.warmupMs, pauseMs: options.pauseMs };
  const order = [...options.sizes].sort((a, b) => a - b);
  const sizes: SizeResults[] = [];
  let startup: StartupFigures | undefined;
  let memory: MemoryAfterWrites | undefined;
  let choices: ChoiceFigures | undefined;
  let fsckResult = 'not run';
  const cleanup: string[] = [];
  try {
    for (const size of order) {
      log(`\n${size.toLocaleString('en-US')} components [${elapsed(began)}]`);
      const org = await buildOrg(size);
      const workDir = await mkdtemp(join(tmpdir(), `c4store-bench-work-${size}-`));
      cleanup.push(org.dataDir, workDir);
      log(`    built in ${org.buildMs.toFixed(0)} ms (${size} components, ${org.diagrams} diagrams, one commit)`);
      // Beside the largest size, a fresh organization of the smallest: its updates measured in the same rounds.
      const reference = order.length > 1 && size === order.at(-1) ? await buildOrg(order[0]!, 'reference') : undefined;
      if (reference) cleanup.push(reference.dataDir);

      const [plainDir, durableDir] = await Promise.all([copyDataDir(org, 'plain'), copyDataDir(org, 'durable')]);
      cleanup.push(plainDir, durableDir);
      const servers: ServerProcess[] = [];
      let figures: Record<string, Figure>;
      let firstGetMs: number;
      let bytes: ReadFigures['bytes'];
      try {
        // Each server writes to a copy of its own, and the baselines to the original (but the floors
        // in a server's repository, which then catch the server up outside their timed loops): no
        // measured window starts by loading commits that another figure's window made.
        const plain = await serveProcess(plainDir, [], spawnOptions(options, `${size}`));
        servers.push(plain);
        firstGetMs = await firstGet(plain, org);
        log(`    first GET of a fresh server ${firstGetMs.toFixed(0)} ms`);
        const durable = await serveProcess(durableDir, ['--durable'], spawnOptions(options, `${size}-durable`));
        servers.push(durable);
        await settle(durable, org);
        const inServer = (dataDir: string, server: ServerProcess) => ({
          gitdir: join(dataDir, 'orgs', `${org.slug}.git`),
          catchUp: () => settle(server, org),
        });
        const baselineRuns = await baselineMeasurements(org, workDir, {
          plain: inServer(plainDir, plain),
          durable: inServer(durableDir, durable),
        });
        const referenceRuns: Measurement[] = [];
        if (reference) {
          const small = await serveProcess(reference.dataDir, [], spawnOptions(options, `${reference.components.length}-reference`));
          servers.push(small);
          await settle(small, reference);
          const [update1] = writeMeasurements(
            small,
            reference,
            `c4store at ${reference.components.length}, side by side`,
            0,
            options.updateDurationMs,
          );
          referenceRuns.push({ ...update1!, key: 'reference:update1' });
        }
        const buffer = await startBufferRoute(plain, org, workDir);
        servers.push(buffer.route);
        bytes = buffer.bytes;
        const [update1, update16, import100] = prefixed(
          'c4store:',
          writeMeasurements(plain, org, 'c4store', options.imports, options.updateDurationMs),
        );
        const [durable1, durable16, durableImport] = prefixed(
          'durable:',
          writeMeasurements(durable, org, 'c4store --durable', options.imports, options.updateDurationMs),
        );
        // Figures that are compared run next to each other in every round.
        figures = await interleave(
          [
            ...baselineRuns,
            update1!,
            durable1!,
            ...referenceRuns,
            update16!,
            durable16!,
            import100!,
            durableImport!,
            ...readMeasurements(plain, buffer.route, org, options.readDurationMs),
          ],
          timing,
        );
        if (size === options.startupSize) {
          log(`  memory after ${options.rssWrites} writes [${elapsed(began)}]`);
          memory = await memoryAfterWrites(plain, org, options.rssWrites);
        }
      } catch (error) {
        throw new Error(`${(error as Error).message}\nserver output:\n${servers.map((s) => s.tail()).join('\n')}`, { cause: error });
      } finally {
        for (const server of servers) await server.stop();
      }
      const f = (key: string) => figures[key]!;
      const baselines: BaselineFigures = {
        floor: f('floor'),
        floorLocked: f('floorLocked'),
        floorDurable: f('floorDurable'),
        floorInServer: f('floorInServer'),
        floorInServerDurable: f('floorInServerDurable'),
        gitCli: f('gitCli'),
        isomorphicGit: f('isomorphicGit'),
      };
      const reads: ReadFigures = {
        c4store: { component: f('c4store:component'), model: f('c4store:model') },
        buffer: { component: f('buffer:component'), model: f('buffer:model') },
        bytes,
      };
      const writes: WriteFigures = { update1: f('c4store:update1'), update16: f('c4store:update16'), import100: f('c4store:import100') };
      const durable: WriteFigures = { update1: f('durable:update1'), update16: f('durable:update16'), import100: f('durable:import100') };
      sizes.push({
        size,
        diagrams: org.diagrams,
        buildMs: org.buildMs,
        firstGetMs,
        baselines,
        reads,
        writes,
        durable,
        ...(reference ? { reference: { size: reference.components.length, update1: f('reference:update1') } } : {}),
      });

      if (sizes.length === 1) {
        const verdicts = [org.dataDir, plainDir, durableDir].map((dir) => fsck(join(dir, 'orgs', `${org.slug}.git`)));
        fsckResult = verdicts.find((verdict) => verdict !== 'clean') ?? 'clean';
      }
      if (size === options.startupSize) {
        log(`  start-up at ${size.toLocaleString('en-US')} components [${elapsed(began)}]`);
        startup = await measureStartup(org, options.startupRounds, spawnOptions(options, `${size}-startup`));
        choices = await measureChoices(org, options.choiceSamples);
      }
      // Each size's directories are removed at the end, with the rest (`cleanup`): removing them
      // here, before the next size, left ext4 without a journal (this project's machines)
      // skipping thousands of just-freed inodes at every file the next size's writes create.
    }
    if (!startup || !memory || !choices) {
      log(`\nstart-up and memory at ${options.startupSize.toLocaleString('en-US')} components`);
      const org = await buildOrg(options.startupSize);
      cleanup.push(org.dataDir);
      const server = await serveProcess(org.dataDir, [], spawnOptions(options, `${options.startupSize}-memory`));
      try {
        await firstGet(server, org);
        memory = await memoryAfterWrites(server, org, options.rssWrites);
      } finally {
        await server.stop();
      }
      startup = await measureStartup(org, options.startupRounds, spawnOptions(options, `${options.startupSize}-startup`));
      choices = await measureChoices(org, options.choiceSamples);
    }
  } finally {
    for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
  }
  log('\nmodel rules');
  const rules = await measureRules(options.rulesAttributes, options.rulesComponents, options.rulesSamples);
  const results: BenchResults = {
    options,
    machine: { ...before, loadAfter: loadavg()[0]! },
    sizes,
    startup,
    memory,
    choices,
    viewer: await measureViewer(Math.max(20, options.choiceSamples * 5)),
    rules,
    fsck: fsckResult,
    totalMs: performance.now() - began,
  };
  log('\ndrawing');
  const markdown = `${renderMarkdown(results)}\n${renderDrawing(await measureDrawing(options.drawingSizes ?? [50, 200, 1000]))}`;
  log(`\n${markdown}`);
  if (options.outDir) {
    const file = join(options.outDir, 'results.md');
    // The scale section (npm run bench -- --scale) is measured apart: keep it.
    const previous = await readFile(file, 'utf8').catch(() => '');
    const scale = scaleSectionOf(previous);
    const withScale = scale ? withScaleSection(markdown, scale.slice(SCALE_BEGIN.length, -SCALE_END.length)) : markdown;
    // So is the filters section (npm run bench -- --filters).
    const filters = filtersSectionOf(previous);
    await writeFile(file, filters ? withFiltersSection(withScale, filters) : withScale);
    await writeFile(join(options.outDir, 'latency.svg'), renderChart(results));
    log(`wrote ${join(options.outDir, 'results.md')} and ${join(options.outDir, 'latency.svg')}`);
  }
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--scale')) {
  scaleCli(process.argv.slice(2));
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--filters')) {
  filtersCli(process.argv.slice(2));
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string' },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      profile: { type: 'string' },
      out: { type: 'string' },
      'no-write': { type: 'boolean' },
    },
  });
  const options: Partial<BenchOptions> = { outDir: values['no-write'] ? undefined : (values.out ?? join(ROOT, 'bench')) };
  if (values.sizes) options.sizes = values.sizes.split(',').map(Number);
  if (values.sizes && !options.sizes!.includes(DEFAULTS.startupSize)) options.startupSize = Math.max(...options.sizes!);
  if (values.rounds) options.rounds = Number(values.rounds);
  if (values.duration) options.durationMs = Number(values.duration);
  if (values.profile) options.profileDir = values.profile;
  run(options).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
