/**
 * `npm run bench:push-check`: what the pre-receive check of a pushed history costs per commit
 * (src/push/check.ts checkCommits), on a model of `--components` components (default 4,500: with
 * their 450 diagrams, the types and organization.yaml, about 5,000 files) and a history of
 * `--commits` commits (default 3,000) on top of it: mostly one component's description changed,
 * now and then a component added, one of those removed again, or a diagram added.
 *
 * The check runs in this process, as the hook runs it, twice per round: the reference (the
 * implementation from before it became incremental, test/support/reference-push-check.ts: a full
 * `git ls-tree` and a walk over every file per commit) and the current one; both must give the
 * same verdict. `--profile FILE` writes a CPU profile of one round of the current check
 * (summarize it with bench/profile.ts). Writes bench/push-check-results.md (unless --no-write).
 *
 *   npm run bench:push-check [-- --components N --commits N --rounds N --profile FILE --no-write]
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resourcePath, serialize } from '../src/model/files.js';
import { newId } from '../src/model/ids.js';
import type { Component } from '../src/model/types.js';
import { checkCommits, treeFiles } from '../src/push/check.js';
import { Repo } from '../src/store/repo.js';
import { referenceCheckCommits } from '../test/support/reference-push-check.js';
import { API_CONTEXT, BENCH_AUTHOR, buildOrg, makeDiagram } from './fixture.js';
import { machine, machineLines } from './report.js';
import { ROOT } from './server.js';
import { median } from './stats.js';

const { values } = parseArgs({
  options: {
    components: { type: 'string', default: '4500' },
    commits: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    profile: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
});
const componentCount = Number(values.components);
const commitCount = Number(values.commits);
const rounds = Number(values.rounds);

const m = machine();
const org = await buildOrg(componentCount);
const repo = new Repo(org.gitdir);
const base = (await repo.readHead())!;
const fileCount = (await treeFiles(org.gitdir, base)).size;

// The history, on main (Repo.commit writes main): as a migration would bring it.
const began = performance.now();
let head = base;
const added: Component[] = [];
let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
for (let n = 0; n < commitCount; n++) {
  const roll = random();
  let change: { path: string; content: string | null };
  if (roll < 0.05) {
    const component: Component = {
      id: newId(),
      name: `Added ${n}`,
      desc: '',
      state: 'ACTIVE',
      typeId: org.typeIds[0]!,
      apiContext: API_CONTEXT,
      linksTo: [org.components[0]!.id],
      attributes: [],
    };
    added.push(component);
    change = { path: resourcePath('component', component.id), content: serialize('component', component) };
  } else if (roll < 0.08 && added.length > 0) {
    const [gone] = added.splice(Math.floor(random() * added.length), 1);
    change = { path: resourcePath('component', gone!.id), content: null };
  } else if (roll < 0.1) {
    const d = Math.floor(random() * org.diagrams);
    const diagram = makeDiagram(org.diagrams + n, org.components.slice(d * 10, d * 10 + 10));
    change = { path: resourcePath('diagram', diagram.id), content: serialize('diagram', diagram) };
  } else {
    const component = org.components[Math.floor(random() * org.components.length)]!;
    change = { path: resourcePath('component', component.id), content: serialize('component', { ...component, desc: `Update ${n}` }) };
  }
  head = await repo.commit({ parent: head, changes: [change], author: BENCH_AUTHOR, message: `Bench ${n}\n` });
}
const historyMs = performance.now() - began;
console.log(`${fileCount} files, ${commitCount} commits made in ${(historyMs / 1000).toFixed(1)} s`);

const range = [head, `^${base}`];
async function timed(check: typeof checkCommits): Promise<number> {
  const start = performance.now();
  const problems = await check(org.gitdir, range, {}, undefined, base);
  const ms = performance.now() - start;
  if (problems.length !== 0) throw new Error(`the history was refused: ${problems.join('\n')}`);
  return ms;
}

const reference: number[] = [];
const current: number[] = [];
for (let round = 0; round < rounds; round++) {
  reference.push(await timed(referenceCheckCommits));
  current.push(await timed(checkCommits));
  console.log(
    `round ${round + 1}: reference ${(reference.at(-1)! / commitCount).toFixed(2)} ms/commit, current ${(current.at(-1)! / commitCount).toFixed(2)} ms/commit`,
  );
}
if (values.profile) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  await timed(checkCommits);
  const { profile } = await session.post('Profiler.stop');
  await writeFile(values.profile, JSON.stringify(profile));
  session.disconnect();
  console.log(`profile of the current check: ${values.profile}`);
}

m.loadAfter = loadavg()[0];
const perCommit = (samples: number[]) => median(samples) / commitCount;
const lines = [
  '# Push check: ms per pushed commit',
  '',
  `A history of ${commitCount.toLocaleString('en')} commits on a model of ${fileCount.toLocaleString('en')} files, checked as the pre-receive hook checks it (\`checkCommits\`, in process), median of ${rounds} rounds (\`npm run bench:push-check\`).`,
  '',
  '| check | whole history | per commit |',
  '| --- | ---: | ---: |',
  `| before: the check as it was, a \`git ls-tree\` and a walk of every file per commit (test/support/reference-push-check.ts) | ${(median(reference) / 1000).toFixed(1)} s | ${perCommit(reference).toFixed(2)} ms |`,
  `| now: src/push/check.ts | ${(median(current) / 1000).toFixed(1)} s | ${perCommit(current).toFixed(2)} ms |`,
  '',
  machineLines(m),
  '',
];
console.log(lines.join('\n'));
if (!values['no-write']) await writeFile(join(ROOT, 'bench', 'push-check-results.md'), lines.join('\n'));
