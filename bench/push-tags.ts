/**
 * `npm run bench:push-tags`: what a push of many version tags costs (a migration from another
 * tool bringing its history of releases), through the real pre-receive hook: `git push --tags`
 * of `--tags` tags (default 2,000; every third annotated, on main's 10 commits in turn) to an
 * organization's repository made as the service makes it (Orgs.create: its hook, git's object
 * checks), timed whole, in seconds per 1,000 tags.
 *
 * Three hooks, run in turn round by round (so that the machine's load falls on all alike): the
 * check as it was before it was batched (src/ of `--before`, default 8fa8e6d, bundled as
 * scripts/build.mjs bundles the service: three git processes per tag, main resolved for each,
 * names compared each with every other), the current one (dist/cli.js, from `npm run build`),
 * and none (a hook that exits 0: what git itself spends on the push; `--hooks` picks some).
 * Each push goes to a fresh copy of the same repository. Writes bench/push-tags-results.md
 * (unless --no-write).
 *
 *   npm run bench:push-tags [-- --tags N --rounds N --before REV --hooks before,now,none --no-write]
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from '../scripts/bundle-options.mjs';
import { Orgs } from '../src/service/orgs.js';
import { machine, machineLines } from './report.js';
import { CLI, ROOT } from './server.js';
import { median } from './stats.js';

const { values } = parseArgs({
  options: {
    tags: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '2' },
    before: { type: 'string', default: '8fa8e6d' },
    hooks: { type: 'string', default: 'before,now,none' },
    'no-write': { type: 'boolean', default: false },
  },
});
const tagCount = Number(values.tags);
const rounds = Number(values.rounds);
const exec = promisify(execFile);
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };
const git = async (cwd: string, args: string[], input?: string) => {
  const run = exec('git', ['-C', cwd, '-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], {
    env: GIT_ENV,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (input !== undefined) run.child.stdin!.end(input);
  return (await run).stdout.trim();
};

const m = machine();
const work = await mkdtemp(join(tmpdir(), 'c4store-bench-push-tags-'));
try {
  // The check as it was: src/ of --before, bundled beside the current node_modules.
  const beforeDir = join(work, 'before');
  await exec('sh', ['-c', `mkdir -p '${beforeDir}' && git -C '${ROOT}' archive ${values.before} src | tar -x -C '${beforeDir}'`]);
  await symlink(join(ROOT, 'node_modules'), join(beforeDir, 'node_modules'));
  await build({
    entryPoints: { cli: join(beforeDir, 'src', 'cli.ts') },
    outdir: join(beforeDir, 'dist'),
    ...BUNDLE_OPTIONS,
    splitting: true,
  });
  // `none`: a hook that lets everything through, for what git itself spends on such a push.
  const hooks = { before: join(beforeDir, 'dist', 'cli.js'), now: CLI, none: null };
  type Hook = keyof typeof hooks;
  const chosen = values.hooks.split(',') as Hook[];
  for (const hook of chosen) if (!(hook in hooks)) throw new Error(`--hooks: '${hook}' is none of ${Object.keys(hooks).join(', ')}`);

  // The organization, main with 10 commits, and a clone holding the tags.
  const data = join(work, 'data');
  await new Orgs(data).create('acme', { name: 'Acme', members: [], author: { name: 'bench', email: 'bench@example.com' } });
  const pristine = join(data, 'orgs', 'acme.git');
  const clone = join(work, 'clone');
  await exec('git', ['clone', '-q', pristine, clone], { env: GIT_ENV });
  const commits = [await git(clone, ['rev-parse', 'HEAD'])];
  for (let i = 1; i < 10; i++)
    commits.push(await git(clone, ['commit', '-q', '--allow-empty', '-m', `Commit ${i}`]).then(() => git(clone, ['rev-parse', 'HEAD'])));
  await git(clone, ['push', '-q', 'origin', 'main']);
  const annotated: string[] = [];
  const lightweight: string[] = [];
  for (let i = 0; i < tagCount; i++) {
    const name = `release/${String(i).padStart(5, '0')}`;
    const commit = commits[i % commits.length]!;
    if (i % 3 === 0)
      annotated.push(`tag ${name}\nfrom ${commit}\ntagger Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata 8\nRelease\n\n`);
    else lightweight.push(`create refs/tags/${name} ${commit}\n`);
  }
  await git(clone, ['fast-import', '--quiet'], annotated.join(''));
  await git(clone, ['update-ref', '--stdin'], lightweight.join(''));

  let run = 0;
  const pushTags = async (cli: string | null): Promise<number> => {
    const target = join(work, `target-${run++}.git`);
    await cp(pristine, target, { recursive: true });
    const script = cli === null ? 'exit 0' : `exec '${process.execPath}' '${cli}' hook pre-receive`;
    await writeFile(join(target, 'hooks', 'pre-receive'), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
    const start = performance.now();
    await git(clone, ['push', '-q', target, '--tags']);
    const ms = performance.now() - start;
    const made = (
      await exec('git', ['--git-dir', target, 'for-each-ref', '--format=x', 'refs/tags'], { maxBuffer: 64 * 1024 * 1024 })
    ).stdout
      .split('\n')
      .filter(Boolean);
    if (made.length !== tagCount) throw new Error(`${made.length} tags made of ${tagCount}`);
    await rm(target, { recursive: true, force: true });
    return ms;
  };

  const samples: Record<Hook, number[]> = { before: [], now: [], none: [] };
  for (let round = 0; round < rounds; round++) {
    // In turn, the order reversed every other round.
    for (const which of round % 2 === 0 ? chosen : [...chosen].reverse()) samples[which].push(await pushTags(hooks[which]));
    // ms per tag is s per 1,000 tags.
    const perThousand = (which: Hook) => `${which} ${(samples[which].at(-1)! / tagCount).toFixed(2)} s`;
    console.log(`round ${round + 1}, per 1,000 tags: ${chosen.map(perThousand).join(', ')} (load ${loadavg()[0]!.toFixed(1)})`);
  }

  m.loadAfter = loadavg()[0];
  const row = (label: string, ms: number[]) =>
    `| ${label} | ${(median(ms) / 1000).toFixed(2)} s | ${(median(ms) / tagCount).toFixed(2)} s |`;
  const lines = [
    '# A push of many version tags: seconds per 1,000 tags',
    '',
    `\`git push --tags\` of ${tagCount.toLocaleString('en')} new tags (every third annotated) to an organization's repository, through its pre-receive hook, timed whole (the pack and git's own work included); median of ${rounds} rounds, the hooks run in turn (\`npm run bench:push-tags\`).`,
    '',
    `| check | whole push | per 1,000 tags |`,
    '| --- | ---: | ---: |',
    ...chosen.map((hook) =>
      row(
        {
          before: `before: src/push/check.ts at ${values.before} (three git processes per tag, names compared each with every other)`,
          now: 'now: src/push/check.ts (one for-each-ref, one cat-file --batch-check, one rev-list for all the tags; names indexed once)',
          none: "no check (a hook that exits 0): git's own work, the floor",
        }[hook],
        samples[hook],
      ),
    ),
    '',
    machineLines(m),
    '',
  ];
  console.log(lines.join('\n'));
  if (!values['no-write']) await writeFile(join(ROOT, 'bench', 'push-tags-results.md'), lines.join('\n'));
} finally {
  await rm(work, { recursive: true, force: true });
}
