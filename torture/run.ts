/**
 * `npm run torture`: the long versions of the reliability tests (docs/reliability.md), each
 * printing its figures. Exits non-zero when any of them found a problem.
 *
 *   npm run torture                        everything (about 20 minutes on 2 cores)
 *   npm run torture -- crash processes     only these parts (crash, processes, hostile, access, heavy)
 *
 * Environment: TORTURE_CYCLES (crash cycles, default 20), TORTURE_DURABLE_CYCLES (default 20),
 * TORTURE_SECONDS (several-process run, default 30), TORTURE_HEAVY_SECONDS (fairness run of the
 * valid-but-heavy part, default 20), TORTURE_JSON=<file> (also write the
 * figures there as JSON).
 *
 * Each part is a module exporting `run(options): Promise<Record<string, number>>`. A part
 * fails when it throws, or when one of its figures that counts trouble (a name containing
 * `problems`, `failures`, `5xx`, `lost` or `half-present`) is not 0.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

type Part = (options: Record<string, unknown>) => Promise<Record<string, number>>;

interface PartSpec {
  name: string;
  file: string;
  options: Record<string, unknown>;
}

const log = (line: string) => console.log(line);
const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);

const PARTS: PartSpec[] = [
  {
    name: 'crash',
    file: 'crash.ts',
    options: { cycles: env('TORTURE_CYCLES', 20), durableCycles: env('TORTURE_DURABLE_CYCLES', 20), clients: 50, log },
  },
  { name: 'processes', file: 'processes.ts', options: { durationMs: env('TORTURE_SECONDS', 30) * 1000, log } },
  { name: 'hostile', file: 'hostile.ts', options: { log } },
  { name: 'access', file: 'access.ts', options: { log } },
  { name: 'heavy', file: 'heavy.ts', options: { seconds: env('TORTURE_HEAVY_SECONDS', 20), log } },
];

const TROUBLE = /problems|failures?|5xx|lost|half-present/i;

async function main(): Promise<number> {
  const only = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
  const all: Record<string, number | string> = {};
  const failed: string[] = [];
  const started = Date.now();
  for (const part of PARTS) {
    if (only.length && !only.includes(part.name)) continue;
    const url = new URL(`./${part.file}`, import.meta.url);
    log(`\n=== ${part.name} (torture/${part.file})`);
    if (!existsSync(url)) {
      log(`skipped: torture/${part.file} does not exist yet`);
      all[`${part.name}: skipped`] = 'torture/' + part.file + ' does not exist';
      continue;
    }
    const partStarted = Date.now();
    let figures: Record<string, number>;
    try {
      const module = (await import(pathToFileURL(url.pathname).href)) as { run?: Part };
      if (typeof module.run !== 'function') throw new Error(`torture/${part.file} exports no run()`);
      figures = await module.run(part.options);
    } catch (error) {
      log(`FAILED: ${(error as Error).stack ?? String(error)}`);
      failed.push(`${part.name} threw: ${(error as Error).message}`);
      continue;
    }
    log(`--- ${part.name}: ${Math.round((Date.now() - partStarted) / 1000)} s`);
    for (const [name, value] of Object.entries(figures)) {
      const trouble = TROUBLE.test(name) && value !== 0;
      if (trouble) failed.push(`${name} = ${value}`);
      log(`${trouble ? '!!' : '  '} ${name}: ${value}`);
      all[name] = value;
    }
  }
  log(`\n=== all figures (${Math.round((Date.now() - started) / 1000)} s, ${new Date().toISOString()})`);
  const width = Math.max(...Object.keys(all).map((name) => name.length));
  for (const [name, value] of Object.entries(all)) log(`${name.padEnd(width)}  ${value}`);
  if (process.env.TORTURE_JSON) await writeFile(process.env.TORTURE_JSON, JSON.stringify(all, null, 2));
  if (failed.length) {
    log(`\nTORTURE FAILED:\n  ${failed.join('\n  ')}`);
    return 1;
  }
  log('\ntorture passed');
  return 0;
}

process.exitCode = await main();
