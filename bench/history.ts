/**
 * History, diff and clone on a long history (issue "Git-native review", points 1, 2, 8):
 * an organization of `--components` (default 10,000) components, then `--commits` (default
 * 20,000) single-component updates made through the store (Repo.commit, no HTTP: the point
 * is reading a long history, not writing it), measured against a real server process
 * before and after packing. Writes bench/history-results.md.
 *
 *   npm run build && node --import=tsx bench/history.ts [--components N] [--commits N]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { resourcePath, serialize } from '../src/model/files.js';
import { Repo } from '../src/store/repo.js';
import { Maintenance } from '../src/store/maintenance.js';
import { BENCH_AUTHOR, buildOrg } from './fixture.js';
import { serveProcess } from './server.js';
import { median } from './stats.js';

const run = promisify(execFile);
const { values } = parseArgs({ options: { components: { type: 'string' }, commits: { type: 'string' }, out: { type: 'string' } } });
const components = Number(values.components ?? 10_000);
const commits = Number(values.commits ?? 20_000);

async function timeIt(op: () => Promise<unknown>, times = 5): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const began = performance.now();
    await op();
    samples.push(performance.now() - began);
  }
  return median(samples);
}

const org = await buildOrg(components);
const repo = new Repo(org.gitdir);
const began = performance.now();
// One component is touched only by the first update: its history needs the whole walk. Another
// is touched by every 10th update (2,000 of 20,000 commits): a resource that really changes often.
const rare = org.components[0]!;
const hot = org.components[1]!;
const HOT_EVERY = 10;
let head = (await repo.readHead())!;
const firstUpdate = head;
for (let n = 0; n < commits; n++) {
  const component = n === 0 ? rare : n % HOT_EVERY === 5 ? hot : org.components[2 + (n % (components - 2))]!;
  const next = { ...component, desc: `Update ${n}` };
  head = await repo.commit({
    parent: head,
    changes: [{ path: resourcePath('component', component.id), content: serialize('component', next) }],
    author: BENCH_AUTHOR,
    message: `Bench update ${n}\n\nupdate ${resourcePath('component', component.id)} (${component.name})\n\nApi-Context: bench\n`,
  });
  if (n % 5000 === 4999) console.log(`${n + 1} commits`);
}
const writeMs = performance.now() - began;
// The 20th newest commit touching the hot resource: where its second page starts.
const hotTwentieth = (
  await run('git', ['--git-dir', org.gitdir, 'log', '--format=%H', '-20', 'refs/heads/main', '--', resourcePath('component', hot.id)])
).stdout
  .trim()
  .split('\n')
  .at(-1)!;

/**
 * One round against a fresh server process. `short`: three samples of the slow resource and no
 * clone, so the round ends before the server's own start-up upkeep (30 s after start) writes
 * the commit graph the round is meant to be without.
 */
async function measure(label: string, short = false) {
  // No packing by the server itself: the loose round must stay loose.
  const server = await serveProcess(org.dataDir, ['--pack-every', '0']);
  const get = async (path: string) => {
    const reply = await fetch(`${server.url}/api/external${path}`, { headers: { authorization: `Bearer ${org.key}` } });
    if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${await reply.text()}`);
    await reply.arrayBuffer();
  };
  const clone = await mkdtemp(join(tmpdir(), 'c4store-bench-clone-'));
  try {
    const figures = {
      label,
      firstPage: await timeIt(() => get('/history')),
      rareResource: await timeIt(() => get(`/history?resource=${rare.id}`), short ? 3 : 5),
      hotResource: await timeIt(() => get(`/history?resource=${hot.id}&limit=20`)),
      hotPage2: await timeIt(() => get(`/history?resource=${hot.id}&limit=20&before=${hotTwentieth}`)),
      oneCommit: await timeIt(() => get(`/history/${head}`)),
      diffAll: await timeIt(() => get(`/diff?from=${firstUpdate}&to=${head}`), 3),
      clone: short
        ? Number.NaN
        : await timeIt(async () => {
            await rm(join(clone, 'm'), { recursive: true, force: true });
            await run('git', [
              'clone',
              '-q',
              `http://x:${org.key}@${server.url.slice('http://'.length)}/git/${org.slug}.git`,
              join(clone, 'm'),
            ]);
          }, 1),
    };
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    await server.stop();
    await rm(clone, { recursive: true, force: true });
  }
}

const { loadavg } = await import('node:os');
const loadAtLoose = loadavg()[0]!.toFixed(2);
const loose = await measure('loose, no commit graph', true);
// What the server does every 100 commits, packing or not (store/maintenance.ts), here at once
// for all of them (anything the round's server may have written is taken away first).
await rm(join(org.gitdir, 'objects', 'info', 'commit-graph'), { force: true });
await rm(join(org.gitdir, 'objects', 'info', 'commit-graphs'), { recursive: true, force: true });
const graphBegan = performance.now();
await new Maintenance(0, console.log).updateGraph(org.gitdir);
const graphMs = performance.now() - graphBegan;
const loadAtGraph = loadavg()[0]!.toFixed(2);
const looseWithGraph = await measure('loose, commit graph');
const packBegan = performance.now();
await new Maintenance(1, console.log).pack(org.gitdir);
const packMs = performance.now() - packBegan;
const loadAtPacked = loadavg()[0]!.toFixed(2);
const packed = await measure('packed');

const row = (f: typeof loose) =>
  `| ${f.label} | ${f.firstPage.toFixed(1)} | ${f.rareResource.toFixed(1)} | ${f.hotResource.toFixed(1)} | ${f.hotPage2.toFixed(1)} | ${f.oneCommit.toFixed(1)} | ${f.diffAll.toFixed(0)} | ${Number.isNaN(f.clone) ? '—' : f.clone.toFixed(0)} |`;
const report = `# History benchmark

${components.toLocaleString('en')} components, then ${commits.toLocaleString('en')} single-component updates
(made through the store in ${(writeMs / 1000).toFixed(1)} s); medians of 5 requests (diff: 3; clone: 1; the slow resource without a graph: 3) in ms,
against a real server process. Loose: as written, then with the commit graph the server keeps
every 100 commits whether or not it packs (here written at once for all 20,000: ${(graphMs / 1000).toFixed(1)} s).
Packing (git repack + gc --auto + commit graph) took ${(packMs / 1000).toFixed(1)} s.
Load average (1 min) at the start of each round: ${loadAtLoose}, ${loadAtGraph}, ${loadAtPacked}.
One resource's history runs one single-path \`git log\` per path it can have had (src/history/log.ts):
git reads the commit graph's changed-path Bloom filters only for a one-item pathspec.

| repository | GET /history | ?resource= (touched once, 1st update) | ?resource= (hot: every 10th commit, limit 20) | its 2nd page | /history/<head> | /diff first→last | git clone over HTTP |
|---|---:|---:|---:|---:|---:|---:|---:|
${row(loose)}
${row(looseWithGraph)}
${row(packed)}
`;
await writeFile(values.out ?? join(import.meta.dirname, 'history-results.md'), report);
console.log(report);
await rm(org.dataDir, { recursive: true, force: true });
