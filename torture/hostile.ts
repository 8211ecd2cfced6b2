/**
 * Hostile input, the long version of test/hostile-input.test.ts: thousands of generated invalid
 * bodies on every write endpoint (each refused 400 with its exact text, never a commit),
 * hundreds of generated valid ones (accepted, read back equal), then the classic attacks (deep
 * nesting, alias bombs, 100,000-element arrays, oversized and non-UTF-8 bodies, ids and paths
 * that try to escape) sent by several clients at once, round after round. Meanwhile another
 * client's simple GETs are timed. Afterwards: nothing new in the data directory outside the
 * organization's repository, `git fsck --full` clean.
 *
 *   node --import=tsx torture/hostile.ts        (or: npm run torture -- hostile)
 *
 * Environment: TORTURE_HOSTILE_RUNS (generated invalid bodies per endpoint, default 500),
 * TORTURE_HOSTILE_SEED.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import {
  classicAttacks,
  createFixture,
  HOSTILE_SERVER_OPTIONS,
  newFigures,
  runInvalid,
  runValid,
  tryAttack,
  watchLatency,
} from '../test/support/hostile.js';
import { isErrorLine, TestServer } from '../test/support/server.js';

export interface HostileOptions {
  /** Generated invalid bodies per write endpoint (9 endpoints). */
  runs?: number;
  /** Generated valid bodies per write endpoint. */
  validRuns?: number;
  /** Rounds of the classic attacks, each sent by `attackers` clients at once. */
  rounds?: number;
  attackers?: number;
  seed?: number;
  log?: (line: string) => void;
}

async function filesOutside(dataDir: string, repo: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dataDir, { recursive: true, withFileTypes: true })) {
    const path = relative(dataDir, join(entry.parentPath, entry.name));
    if (path === repo || path.startsWith(`${repo}/`) || !entry.isFile()) continue;
    files.set(
      path,
      createHash('sha256')
        .update(await readFile(join(dataDir, path)))
        .digest('hex'),
    );
  }
  return files;
}

export async function run(options: HostileOptions = {}): Promise<Record<string, number>> {
  const log = options.log ?? console.log;
  const runs = options.runs ?? Number(process.env.TORTURE_HOSTILE_RUNS ?? 500);
  const validRuns = options.validRuns ?? Math.max(10, Math.round(runs / 8));
  const rounds = options.rounds ?? 10;
  const attackers = options.attackers ?? 4;
  const seed = options.seed ?? Number(process.env.TORTURE_HOSTILE_SEED ?? Date.now() % 1_000_000);
  const s = await TestServer.start(HOSTILE_SERVER_OPTIONS);
  try {
    const fx = await createFixture(s);
    const outside = await filesOutside(s.dataDir, 'orgs/acme.git');
    const startCount = await s.commitCount();
    const figures = newFigures();
    const watcher = watchLatency(s.url, s.readerKey);
    const started = Date.now();
    // The server runs in this process: its memory is this process's (with the clients').
    const rssAtStart = process.memoryUsage().rss;
    let rssPeak = rssAtStart;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 100);

    log(`hostile: seed ${seed}; ${runs} generated invalid bodies per write endpoint`);
    await runInvalid(s, fx, figures, { runs, seed });
    log(`hostile: ${figures.badInputsTried} invalid bodies, ${figures.fiveHundreds} answered 5xx, ${figures.violations.length} problems`);
    await runValid(s, fx, figures, { runs: validRuns, seed });
    log(`hostile: ${figures.validAccepted} valid bodies accepted`);

    const attacks = classicAttacks(fx);
    for (let round = 0; round < rounds; round++) {
      await Promise.all(
        Array.from({ length: attackers }, async (_, client) => {
          for (let i = 0; i < attacks.length; i++) await tryAttack(s, attacks[(i + client * 5) % attacks.length]!, figures);
        }),
      );
    }
    log(`hostile: ${rounds} rounds of ${attacks.length} classic attacks by ${attackers} clients at once`);

    const latency = await watcher.stop();
    clearInterval(sampler);
    const { stdout, stderr } = await promisify(execFile)('git', ['--git-dir', s.gitdir, 'fsck', '--full', '--strict']);
    const fsckProblems = `${stdout}${stderr}`.split('\n').filter((line) => line !== '' && !/^(dangling|Checking)/.test(line));
    const after = await filesOutside(s.dataDir, 'orgs/acme.git');
    const changedOutside = [...new Set([...outside.keys(), ...after.keys()])].filter((path) => outside.get(path) !== after.get(path));
    const commits = (await s.commitCount()) - startCount;
    const unexpectedLogs = s.logs.filter((line) => isErrorLine(line));
    for (const line of [
      ...figures.violations,
      ...fsckProblems,
      ...changedOutside.map((p) => `changed outside the repository: ${p}`),
      ...unexpectedLogs,
      ...latency.failures,
    ]) {
      log(`  PROBLEM ${line.slice(0, 500)}`);
    }
    return {
      'hostile: seed': seed,
      'hostile: bad inputs tried': figures.badInputsTried,
      'hostile: 5xx answers': figures.fiveHundreds,
      'hostile: wrong answers or commits (problems)': figures.violations.length,
      'hostile: valid bodies accepted and read back': figures.validAccepted,
      'hostile: commits made (valid bodies only)': figures.commitsMade,
      'hostile: commits on main that no valid body made (problems)': commits - figures.commitsMade,
      'hostile: files changed outside the repository (problems)': changedOutside.length,
      'hostile: git fsck problems': fsckProblems.length,
      'hostile: unexpected errors logged (problems)': unexpectedLogs.length,
      "hostile: other client's GETs": latency.count,
      "hostile: other client's failures": latency.failures.length,
      "hostile: other client's p50 (ms)": Math.round(latency.p50Ms * 10) / 10,
      "hostile: other client's slowest GET (ms)": Math.round(latency.maxMs),
      "hostile: other client's GETs over 2 s (problems)": latency.maxMs >= 2000 ? 1 : 0,
      'hostile: process RSS at start (MB)': Math.round(rssAtStart / 2 ** 20),
      'hostile: process RSS peak (MB)': Math.round(rssPeak / 2 ** 20),
      'hostile: seconds': Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await s.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await run();
  for (const [name, value] of Object.entries(figures)) console.log(`${name}: ${value}`);
}
