/**
 * A quick smoke run of the benchmark code (bench/run.ts) at a tiny size, so that it cannot rot:
 * every figure it reports must be a positive, finite number, and the report and chart render.
 */
import test from 'ava';
import { run } from '../bench/run.js';
import { checks, renderChart, renderMarkdown } from '../bench/report.js';
import { isPositiveFinite } from '../bench/stats.js';

/** Every number under `value`, with its path. */
function numbers(value: unknown, path: string, out: Array<[string, number]> = []): Array<[string, number]> {
  if (typeof value === 'number') out.push([path, value]);
  else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) numbers(child, `${path}.${key}`, out);
  }
  return out;
}

test('the benchmark runs end to end at a tiny size and reports only positive, finite figures', async (t) => {
  t.timeout(300_000); // every section of the benchmark at a tiny size, on a machine that may be busy
  const results = await run({
    sizes: [20],
    rounds: 1,
    durationMs: 200,
    readDurationMs: 200,
    updateDurationMs: 200,
    warmupMs: 0,
    pauseMs: 20,
    imports: 1,
    startupSize: 20,
    startupRounds: 1,
    rssWrites: 40,
    choiceSamples: 3,
    rulesAttributes: [50, 500],
    rulesComponents: 100,
    rulesSamples: 2,
    drawingSizes: [20],
    quiet: true,
  });
  t.is(results.sizes.length, 1);
  // One client's updates carry the server's own split of their time (its /metrics); numbers() below checks the values.
  for (const update of [results.sizes[0]!.writes.update1, results.sizes[0]!.durable.update1]) {
    t.deepEqual(Object.keys(update.server ?? {}).sort(), ['commitMs', 'requestMs']);
  }
  const figures = [
    ...numbers(results.sizes, 'sizes'),
    ...numbers(results.startup, 'startup'),
    ...numbers(results.memory, 'memory'),
    ...numbers(results.choices, 'choices'),
    ...numbers(results.viewer, 'viewer'),
    ...numbers(results.rules, 'rules'),
  ];
  t.true(figures.length > 90, `${figures.length} figures`);
  for (const [path, value] of figures) t.true(isPositiveFinite(value), `${path} = ${value}`);

  t.is(checks(results).length, 8);
  for (const check of checks(results)) t.true(Number.isFinite(check.value), check.target);
  const markdown = renderMarkdown(results);
  t.false(markdown.includes('NaN'), 'no NaN in results.md');
  t.regex(markdown, /## Targets/);
  t.regex(markdown, /\| update, the server’s own time outside its commit[^|]*\| [\d.]+ ms · [\d.]+ ms \|/);
  t.regex(markdown, /## Model rules at many attributes\n[\s\S]*\| 500 \| /);
  const svg = renderChart(results);
  t.true(svg.startsWith('<svg') && svg.trimEnd().endsWith('</svg>'));
  t.false(svg.includes('NaN'), 'no NaN in the chart');
  t.is(results.fsck, 'clean');
});

// Serial: not beside the other smoke run, which it would slow past its timeout on a busy machine.
test.serial('the scale section runs end to end at a tiny size and keeps its place in results.md', async (t) => {
  t.timeout(120_000);
  const { runScale, SCALE_BEGIN, scaleSectionOf, withScaleSection } = await import('../bench/scale.js');
  const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const outDir = await mkdtemp(join(tmpdir(), 'c4store-scale-smoke-'));
  try {
    await writeFile(join(outDir, 'results.md'), '# c4store benchmark\n\nthe main run\n');
    const results = await runScale({ sizes: [20], rounds: 1, updateMs: 150, warmupMs: 0, reads: 1, outDir, quiet: true });
    t.is(results.length, 1);
    for (const [path, value] of numbers(results, 'scale')) t.true(isPositiveFinite(value), `${path} = ${value}`);
    const written = await readFile(join(outDir, 'results.md'), 'utf8');
    t.true(written.startsWith('# c4store benchmark\n\nthe main run\n'), 'the main run is kept');
    const section = scaleSectionOf(written);
    t.regex(section, /## Scale \(issue 19\)[\s\S]*### Targets[\s\S]*### Before/);
    t.false(section.includes('NaN'));
    t.is(scaleSectionOf(withScaleSection(written, 'new figures')).includes('new figures'), true, 'a new run replaces the section');
    t.is(withScaleSection(written, 'x').split(SCALE_BEGIN).length, 2, 'one section, never two');
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
});

test.serial('the filters section runs end to end at a tiny size and keeps its place in results.md', async (t) => {
  t.timeout(120_000);
  const { runFilters, FILTERS_BEGIN, filtersSectionOf, withFiltersSection } = await import('../bench/filters.js');
  const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const outDir = await mkdtemp(join(tmpdir(), 'c4store-filters-smoke-'));
  try {
    await writeFile(join(outDir, 'results.md'), '# c4store benchmark\n\nthe main run\n');
    const figures = await runFilters({ size: 20, rounds: 1, perRound: 1, searches: 1, outDir, quiet: true });
    for (const [path, value] of numbers(figures, 'filters')) t.true(isPositiveFinite(value), `${path} = ${value}`);
    t.is(figures.filteredAll.bytes, figures.wholeList.bytes, 'every fixture component is ACTIVE: the same list');
    const written = await readFile(join(outDir, 'results.md'), 'utf8');
    t.true(written.startsWith('# c4store benchmark\n\nthe main run\n'), 'the main run is kept');
    const section = filtersSectionOf(written);
    t.regex(section, /## Filtered lists \(issue 30, point 3\)[\s\S]*within 1\.5× of the cached whole list/);
    t.false(section.includes('NaN'));
    t.is(withFiltersSection(written, 'x').split(FILTERS_BEGIN).length, 2, 'one section, never two');
    t.is(withFiltersSection(written, section), written, 'a whole block puts back what it was');
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
});
