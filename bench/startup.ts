/** Start-up of a real `c4store serve` process (time to the first 200 of GET /component) and its resident memory. */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MODEL_CACHE_FILE } from '../src/service/model-cache.js';
import { BLOB_CACHE_FILE } from '../src/store/blob-cache.js';
import { BLOB_CACHE_MIN_BLOBS } from '../src/store/repo.js';
import { pick } from './baselines.js';
import { updateBody, type BenchOrg } from './fixture.js';
import { load } from './load.js';
import { serveProcess, type ServerProcess, type SpawnOptions } from './server.js';
import { log, median } from './stats.js';

export interface StartupFigures {
  components: number;
  /** Spawn to the first 200 of GET /api/external/component (ms), median over rounds: a restart, blob and model caches current. */
  firstAnswerMs: number;
  /** The same with neither cache (the first start after a bulk import, or the files deleted), median over rounds. */
  noCacheMs: number;
  /** Spawn to `listening on` (ms): the part that does not depend on the model. */
  listeningMs: number;
  /** VmRSS right after that first answer (MB), median over rounds. */
  rssLoadedMb: number;
}

export interface MemoryAfterWrites {
  /** Writes the server process has answered (all of the run's, then single-component updates up to the total). */
  writes: number;
  /** VmRSS after them (MB). */
  rssMb: number;
  /** Throughput of the top-up writes, 16 clients. */
  writesPerSecond: number;
}

export async function measureStartup(org: BenchOrg, rounds: number, spawn: SpawnOptions = {}): Promise<StartupFigures> {
  const answers: number[] = [];
  const listening: number[] = [];
  const rss: number[] = [];
  const start = async () => {
    const server = await serveProcess(org.dataDir, [], spawn);
    try {
      const listeningMs = performance.now() - server.spawnedAt;
      const response = await fetch(`${server.url}/api/external/component`, { headers: { authorization: `Bearer ${org.key}` } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`first GET: ${response.status}\n${server.tail()}`);
      const answerMs = performance.now() - server.spawnedAt;
      // The cache is rewritten in the background after a load that missed it; let that finish
      // (at 100,000 components it takes seconds: the next start must find it, or it is cold too).
      await new Promise((resolve) => setTimeout(resolve, 200));
      const cached = org.components.length + org.diagrams >= BLOB_CACHE_MIN_BLOBS;
      const cacheFiles = [BLOB_CACHE_FILE, MODEL_CACHE_FILE].map((name) => join(org.gitdir, name));
      for (let waited = 0; cached && !cacheFiles.every((file) => existsSync(file)) && waited < 60_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { listeningMs, answerMs, rssMb: server.rssMb() };
    } finally {
      await server.stop();
    }
  };
  // As many starts without the caches as restarts: one start alone was too much at the mercy of the machine.
  const noCache: number[] = [];
  for (let r = 0; r < rounds; r++) {
    await rm(join(org.gitdir, BLOB_CACHE_FILE), { force: true });
    await rm(join(org.gitdir, MODEL_CACHE_FILE), { force: true });
    noCache.push((await start()).answerMs);
  }
  for (let r = 0; r < rounds; r++) {
    const round = await start();
    listening.push(round.listeningMs);
    answers.push(round.answerMs);
    rss.push(round.rssMb);
  }
  const figures: StartupFigures = {
    components: org.components.length,
    noCacheMs: median(noCache),
    firstAnswerMs: median(answers),
    listeningMs: median(listening),
    rssLoadedMb: median(rss),
  };
  log(
    `    start-up ${figures.firstAnswerMs.toFixed(0)} ms to first answer (listening after ${figures.listeningMs.toFixed(0)} ms; ` +
      `without the caches ${figures.noCacheMs.toFixed(0)} ms), ` +
      `RSS ${figures.rssLoadedMb.toFixed(0)} MB`,
  );
  return figures;
}

let memoryEdits = 0;

/** Single-component updates (16 clients) until `server` has answered `total` writes, then its VmRSS. */
export async function memoryAfterWrites(server: ServerProcess, org: BenchOrg, total: number): Promise<MemoryAfterWrites> {
  const missing = Math.max(16, total - server.writes());
  const round = await load({
    url: server.url,
    connections: 16,
    amount: missing,
    method: 'POST',
    path: '/api/external/component',
    headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: () => {
      const i = memoryEdits++;
      return JSON.stringify([updateBody(pick(org.components, i), `memory edit ${i}`)]);
    },
  });
  await new Promise((resolve) => setTimeout(resolve, 200)); // the last log lines
  const figures = { writes: server.writes(), rssMb: server.rssMb(), writesPerSecond: (round.latencies.length * 1000) / round.elapsedMs };
  log(
    `    RSS after ${figures.writes} writes ${figures.rssMb.toFixed(0)} MB (the last ${missing} at ${figures.writesPerSecond.toFixed(0)} writes/s)`,
  );
  return figures;
}
