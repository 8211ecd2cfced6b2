/**
 * Valid but heavy: requests that are all accepted, and that each pin something the server
 * shares (issues 15.4 and 16.6–8). The hostile part sends refused bodies; this one sends what
 * a busy or unlucky user would, and checks the bounds of docs/reliability.md §8 hold:
 *
 * - fairness: several organizations post large YAML bodies (valid: heavy to parse, cheap to
 *   commit) and one is flooded with JSON writes, while a quiet organization writes JSON and
 *   small YAML one after another; its latency is timed.
 * - identity: organizations removed and created again under their slug while the server runs;
 *   every old key must get 401 and no old `?at=` snapshot may be served.
 * - commit messages: names and apiContext full of control characters; none may reach `git log`
 *   raw, and the files and responses must keep the exact text.
 * - `?at=` cache: every commit of a growing model read back with `?at=`, in JSON and YAML; the
 *   cache must stay within its byte budget.
 * - blob-cache temp files: a built server stopped by SIGTERM right after cold loads; none may
 *   be left.
 *
 *   node --import=tsx torture/heavy.ts        (or: npm run torture -- heavy)
 *
 * Environment: TORTURE_HEAVY_SECONDS (length of the fairness run, default 20).
 */
import { readdir, rm } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { Orgs } from '../src/service/orgs.js';
import { BLOB_CACHE_FILE } from '../src/store/blob-cache.js';
import { KeyStore } from '../src/store/keys.js';
import { TestServer } from '../test/support/server.js';
import { createOrg, gitdirOf, percentile, Problems, round, scratchDir, sleep, startServerProcess } from './shared.js';

export interface HeavyOptions {
  /** Length of the fairness run. */
  seconds?: number;
  /** Organizations removed and created again. */
  recreations?: number;
  /** Writes with control characters. */
  controlWrites?: number;
  /** Commits read back with ?at=. */
  atCommits?: number;
  /** SIGTERM cycles of a built server. */
  sigtermCycles?: number;
  log?: (line: string) => void;
}

const AUTHOR = { name: 'torture', email: 'torture@test' };
const YAML_TYPE = { 'content-type': 'application/yaml' };

export async function run(options: HeavyOptions = {}): Promise<Record<string, number>> {
  const log = options.log ?? console.log;
  const problems = new Problems();
  const figures: Record<string, number> = {};
  const started = Date.now();
  Object.assign(figures, await fairness(options.seconds ?? Number(process.env.TORTURE_HEAVY_SECONDS ?? 20), problems, log));
  Object.assign(figures, await identity(options.recreations ?? 10, problems, log));
  Object.assign(figures, await controlCharacters(options.controlWrites ?? 100, problems, log));
  Object.assign(figures, await atCache(options.atCommits ?? 30, problems, log));
  Object.assign(figures, await blobCacheTemps(options.sigtermCycles ?? 8, problems, log));
  for (const line of problems.list) log(`  PROBLEM ${line.slice(0, 500)}`);
  figures['heavy: problems'] = problems.count;
  figures['heavy: seconds'] = Math.round((Date.now() - started) / 1000);
  return figures;
}

async function addOrg(s: TestServer, slug: string): Promise<string> {
  await new Orgs(s.dataDir).create(slug, { author: AUTHOR });
  return (await new KeyStore(s.dataDir).create(slug, { label: `${slug} pipeline` })).key;
}

/** Several organizations post large valid YAML bodies, one is flooded with JSON writes; a quiet one is timed. */
async function fairness(seconds: number, problems: Problems, log: (line: string) => void): Promise<Record<string, number>> {
  const s = await TestServer.start();
  try {
    const quietKey = await addOrg(s, 'quiet');
    const yamlOrgs = await Promise.all(
      ['yaml-a', 'yaml-b', 'yaml-c'].map(async (slug) => {
        const key = await addOrg(s, slug);
        const created = await s.post(
          '/api/external/tag',
          Array.from({ length: 1500 }, (_, n) => ({ name: `${slug} ${n}`, color: 'red' })),
          { key },
        );
        const resend = (created.body as Array<{ id: string; name: string }>)
          .map((tag) => `- { id: ${tag.id}, name: "${tag.name}", color: red }`)
          .join('\n');
        return { slug, key, body: `${resend}\n` };
      }),
    );
    let stop = false;
    const statuses = new Map<string, number>();
    const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
    const floodLatencies: number[] = [];
    const jsonFlooder = async (client: number) => {
      for (let n = 0; !stop; n++) {
        const components = Array.from({ length: 40 }, (_, i) => ({
          ref: `f-${client}-${n}-${i}`,
          name: `F ${client}.${n}.${i}`,
          typeSlug: 'container',
        }));
        const t0 = performance.now();
        count(`json ${(await s.post('/api/external/component', components)).status}`);
        floodLatencies.push(performance.now() - t0);
      }
    };
    const yamlFlooder = async (org: { key: string; body: string }) => {
      while (!stop)
        count(`yaml ${(await s.request('POST', '/api/external/tag', { key: org.key, raw: org.body, headers: YAML_TYPE })).status}`);
    };
    const flood = [
      ...Array.from({ length: 8 }, (_, client) => jsonFlooder(client)),
      ...yamlOrgs.flatMap((org) => [yamlFlooder(org), yamlFlooder(org)]),
    ];
    const quietYaml = (n: number) =>
      s.request('POST', '/api/external/component', {
        key: quietKey,
        headers: YAML_TYPE,
        raw: `- ref: quiet-${n}\n  name: Quiet ${n}\n  typeSlug: container\n  desc: ${'quiet '.repeat(4000)}\n`,
      });
    await sleep(500);
    await quietYaml(-1); // starts the small bodies' worker: once, not a matter of turns
    const latencies: number[] = [];
    const ends = Date.now() + seconds * 1000;
    for (let n = 0; Date.now() < ends; n++) {
      const t0 = performance.now();
      const reply =
        n % 2 === 0 ? await s.post('/api/external/tag', [{ name: `quiet ${n}`, color: 'blue' }], { key: quietKey }) : await quietYaml(n);
      latencies.push(performance.now() - t0);
      if (reply.status !== 200)
        problems.add(`fairness: the quiet organization's write ${n} answered ${reply.status} ${reply.text.slice(0, 200)}`);
    }
    stop = true;
    await Promise.all(flood);
    for (const [what, n] of statuses) if (!what.endsWith(' 200')) problems.add(`fairness: ${n} flood writes answered ${what}`);
    const p99 = percentile(latencies, 99);
    const floodedP50 = percentile(floodLatencies, 50);
    if (p99 >= Math.max(2500, floodedP50))
      problems.add(`fairness: quiet p99 ${round(p99)} ms, the flooded organization's p50 ${round(floodedP50)} ms`);
    log(`heavy: fairness: quiet ${latencies.length} writes, p99 ${round(p99)} ms; flood ${JSON.stringify([...statuses])}`);
    return {
      'heavy: fairness: quiet writes': latencies.length,
      'heavy: fairness: quiet p50 (ms)': round(percentile(latencies, 50)),
      'heavy: fairness: quiet p99 (ms)': round(p99),
      'heavy: fairness: quiet slowest (ms)': round(Math.max(...latencies)),
      'heavy: fairness: flooded JSON writes': statuses.get('json 200') ?? 0,
      'heavy: fairness: flooded JSON p50 (ms)': round(floodedP50),
      'heavy: fairness: large YAML bodies from 3 organizations': statuses.get('yaml 200') ?? 0,
    };
  } finally {
    await s.close();
  }
}

/** Organizations removed and created again under their slug while the server runs. */
async function identity(recreations: number, problems: Problems, log: (line: string) => void): Promise<Record<string, number>> {
  const s = await TestServer.start();
  let refused = 0;
  try {
    let keys = [s.key, s.readerKey];
    const old: Array<{ key: string; commit: string }> = [];
    for (let cycle = 0; cycle < recreations; cycle++) {
      const wrote = await s.post('/api/external/tag', [{ name: `cycle ${cycle}`, color: 'red' }], { key: keys[0] });
      if (wrote.status !== 200) problems.add(`identity: cycle ${cycle}: the current key's write answered ${wrote.status}`);
      const commit = await s.head();
      await s.post('/api/external/tag', [{ name: `cycle ${cycle} again`, color: 'red' }], { key: keys[0] });
      await s.get(`/api/external/tag?at=${commit}`, { key: keys[0] }); // kept by the running server
      old.push(...keys.map((key) => ({ key, commit })));
      await rm(s.gitdir, { recursive: true, force: true });
      await new Orgs(s.dataDir).create(s.slug, { author: AUTHOR });
      const store = new KeyStore(s.dataDir);
      keys = [
        (await store.create(s.slug, { label: `cycle ${cycle}` })).key,
        (await store.create(s.slug, { label: 'reader', role: 'reader' })).key,
      ];
      for (const { key, commit: at } of old) {
        for (const path of ['/api/external/tag', `/api/external/tag?at=${at}`, '/api/external/model']) {
          const reply = await s.get(path, { key });
          if (reply.status === 401) refused++;
          else problems.add(`identity: an old key answered ${reply.status} on ${path}`);
        }
      }
      for (const { commit: at } of old) {
        const reply = await s.get(`/api/external/tag?at=${at}`, { key: keys[0] });
        if (reply.status !== 404) problems.add(`identity: the new organization was served ?at=${at} of an old one (${reply.status})`);
      }
    }
    log(`heavy: identity: ${recreations} re-creations, ${refused} old-key requests refused`);
    return { 'heavy: identity: re-creations': recreations, 'heavy: identity: old-key requests refused': refused };
  } finally {
    await s.close();
  }
}

const CONTROLS = ['\u001b[2J', '\u001b]0;title\u0007', '\u0007', '\u0000', '\u009b31m', '\u202e', '\u0008', '\u007f', '\u001b[?1049h'];

function controlText(n: number): string {
  let text = `name ${n} `;
  for (let i = 0; i < 4; i++) text += CONTROLS[(n * 7 + i * 3) % CONTROLS.length] + `part${i}`;
  return text;
}

/** Names and apiContext full of control characters: never raw in `git log`, exact in files and responses. */
async function controlCharacters(writes: number, problems: Problems, log: (line: string) => void): Promise<Record<string, number>> {
  const s = await TestServer.start();
  try {
    for (let n = 0; n < writes; n++) {
      const name = controlText(n);
      const apiContext = controlText(n + 1000);
      const reply = await s.post('/api/external/component', [{ ref: `c${n}`, name, typeSlug: 'container', apiContext }]);
      if (reply.status !== 200) {
        problems.add(`commit messages: write ${n} answered ${reply.status} ${reply.text.slice(0, 200)}`);
        continue;
      }
      const back = await s.get(`/api/external/component/${reply.body[0].id}`);
      if (back.body.name !== name || back.body.apiContext !== apiContext)
        problems.add(`commit messages: write ${n} did not keep the exact text`);
    }
    const log_ = await s.git('log', '--format=%an%n%B', 'main');
    const raw = log_.match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g) ?? [];
    if (raw.length > 0) problems.add(`commit messages: ${raw.length} raw control characters in git log`);
    log(`heavy: commit messages: ${writes} writes, ${raw.length} raw control characters in git log`);
    return {
      'heavy: commit messages: writes with control characters': writes,
      'heavy: commit messages: raw control characters in git log (problems)': raw.length,
    };
  } finally {
    await s.close();
  }
}

/** Every commit of a growing model read back with ?at=, in JSON and YAML, within a small byte budget. */
async function atCache(commits: number, problems: Problems, log: (line: string) => void): Promise<Record<string, number>> {
  const budget = 4 * 1024 * 1024;
  const s = await TestServer.start({ snapshotCacheBytes: budget });
  try {
    const heads: string[] = [];
    for (let round_ = 0; round_ < commits; round_++) {
      const components = Array.from({ length: 20 }, (_, n) => ({
        ref: `c-${round_}-${n}`,
        name: `C ${round_}.${n}`,
        typeSlug: 'container',
        desc: `${round_} `.repeat(1500),
      }));
      await s.post('/api/external/component', components);
      heads.push(await s.head());
    }
    const cache = s.server.orgs.snapshots;
    let most = 0;
    let reads = 0;
    for (let pass = 0; pass < 2; pass++) {
      for (const [i, commit] of heads.entries()) {
        for (const yaml of [false, true]) {
          const model = await s.get(`/api/external/model?at=${commit}`, { yaml });
          reads++;
          if (model.status !== 200 || model.body.components.length !== 20 * (i + 1))
            problems.add(`?at= cache: ${commit} read wrong (${model.status})`);
          most = Math.max(most, cache.bytes);
        }
      }
    }
    if (most > budget) problems.add(`?at= cache: held ${most} bytes, over its budget of ${budget}`);
    log(`heavy: ?at= cache: ${reads} reads of ${commits} commits, at most ${round(most / 2 ** 20, 1)} MB kept of ${budget / 2 ** 20} MB`);
    return {
      'heavy: ?at= cache: reads': reads,
      'heavy: ?at= cache: most bytes kept (MB)': round(most / 2 ** 20, 1),
      'heavy: ?at= cache: budget (MB)': budget / 2 ** 20,
    };
  } finally {
    await s.close();
  }
}

/** A built server stopped by SIGTERM right after cold loads leaves no c4store-blob-cache.tmp-* file. */
async function blobCacheTemps(cycles: number, problems: Problems, log: (line: string) => void): Promise<Record<string, number>> {
  const dataDir = await scratchDir('heavy');
  try {
    const key = await createOrg(dataDir, 'big');
    const setup = await startServerProcess(dataDir);
    const components = Array.from({ length: 600 }, (_, n) => ({
      ref: `c${n}`,
      name: `C ${n}`,
      typeSlug: 'container',
      desc: 'x'.repeat(8000),
    }));
    await fetch(`${setup.url}/api/external/component`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(components),
    });
    await setup.stop();
    const gitdir = gitdirOf(dataDir, 'big');
    let left = 0;
    for (let cycle = 0; cycle < cycles; cycle++) {
      await rm(`${gitdir}/${BLOB_CACHE_FILE}`, { force: true });
      const server = await startServerProcess(dataDir);
      const reply = fetch(`${server.url}/api/external/tag`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined);
      await sleep(50 * (cycle + 1));
      await server.stop('SIGTERM');
      await reply;
      left += (await readdir(gitdir)).filter((name) => name.startsWith(`${BLOB_CACHE_FILE}.tmp-`)).length;
    }
    if (left > 0) problems.add(`blob cache: ${left} temporary files left by SIGTERM`);
    log(`heavy: blob cache: ${cycles} SIGTERMs after cold loads, ${left} temporary files left`);
    return { 'heavy: blob cache: SIGTERM cycles': cycles, 'heavy: blob cache: temporary files left (problems)': left };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await run();
  for (const [name, value] of Object.entries(figures)) console.log(`${name}: ${value}`);
}
