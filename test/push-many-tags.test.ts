/**
 * A push of many version tags (a migration bringing its history of releases): held to every
 * version rule as a push of one is, refused whole for one bad tag among hundreds, naming it, and
 * checked with a number of git processes that does not grow with the number of tags (it used to
 * be three per tag: 2,000 tags took over a minute, about 17,000 passed git's 10-minute timeout).
 * Over real HTTP, real git; the processes the hook starts are counted by a module its node loads
 * first (NODE_OPTIONS), which writes a line for each and starts it. Serial: the environment is
 * this process's, which the server gives git and git the hook.
 */
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VersionNames, versionClash } from '../src/history/versions.js';
import { cloneFor, gitIn as git } from './support/git-clone.js';
import { TestServer } from './support/server.js';

const TAGS = 500;
const V = '/api/external/versions';

const names = Array.from({ length: TAGS }, (_, i) => `v${String(i).padStart(4, '0')}`);

/** A server whose organization's main has a few commits, and a clone of it. */
async function setUp(t: ExecutionContext): Promise<{ s: TestServer; dir: string; commits: string[] }> {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  for (let i = 0; i < 4; i++) {
    const made = await s.post('/api/external/tags', { id: `t${i}`, name: `Tag ${i}`, color: 'red' });
    t.is(made.status, 201, made.text);
  }
  const dir = await cloneFor(t, s, 'c4store-push-many-tags-');
  const commits = (await git(dir, ['rev-list', 'HEAD'])).split('\n');
  t.true(commits.length >= 5);
  return { s, dir, commits };
}

/**
 * The `TAGS` tags in the clone, on main's commits in turn: every third one annotated (by one
 * `git fast-import`), the others lightweight (by one `git update-ref --stdin`).
 */
async function makeTags(dir: string, commits: readonly string[]): Promise<void> {
  const annotated: string[] = [];
  const lightweight: string[] = [];
  names.forEach((name, i) => {
    const commit = commits[i % commits.length]!;
    if (i % 3 === 0) {
      const message = `Release ${name}\n`;
      annotated.push(
        `tag ${name}\nfrom ${commit}\ntagger Ada <ada@example.com> ${1_700_000_000 + i} +0000\ndata ${Buffer.byteLength(message)}\n${message}\n`,
      );
    } else lightweight.push(`create refs/tags/${name} ${commit}\n`);
  });
  await git(dir, ['fast-import', '--quiet'], annotated.join(''));
  await git(dir, ['update-ref', '--stdin'], lightweight.join(''));
}

/** The `c4store:` lines of a refused push's output. */
async function pushRefused(dir: string, ...refspecs: string[]): Promise<string[]> {
  try {
    await git(dir, ['push', '-q', 'origin', '--tags', ...refspecs]);
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr);
    return stderr
      .split('\n')
      .map((line) => line.replace(/^remote:\s*/, '').trim())
      .filter((line) => line.startsWith('c4store: '));
  }
  throw new Error(`git push --tags ${refspecs.join(' ')} succeeded`);
}

async function unchanged(t: ExecutionContext, s: TestServer, head: string, what: string): Promise<void> {
  t.is(await s.head(), head, `${what}: main did not move`);
  t.is((await s.git('tag', '--list')).trim(), '', `${what}: no tag was made`);
}

test.serial(
  `a push of ${TAGS} tags with one bad tag among them is refused whole, naming only it; without it, every tag is a version`,
  async (t) => {
    const { s, dir, commits } = await setUp(t);
    const head = await s.head();
    await makeTags(dir, commits);
    const aside = await git(dir, ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'never on main']);
    // Each pushed beside the clone's tags by a refspec: the clone cannot hold v0400 and v0400/rc.
    const bad: Array<{ what: string; refspec: string; expected: string[] }> = [
      {
        what: 'a tag on a commit that is not on main',
        refspec: `${aside}:refs/tags/v0250x`,
        expected: [`c4store: refs/tags/v0250x: a version must name a commit of main; ${aside.slice(0, 12)} is not on it.`],
      },
      {
        what: 'a name no revision can name',
        refspec: `${commits[0]}:refs/tags/v+1`,
        expected: [`c4store: refs/tags/v+1: Invalid version name 'v+1': `],
      },
      {
        what: 'a name differing only in case from another tag of the push',
        refspec: `${commits[1]}:refs/tags/V0123`,
        expected: [
          "c4store: refs/tags/V0123: Version 'V0123' cannot be made beside version 'v0123': names that differ only in case are one file on macOS and Windows clones.",
          "c4store: refs/tags/v0123: Version 'v0123' cannot be made beside version 'V0123': names that differ only in case are one file on macOS and Windows clones.",
        ],
      },
      {
        what: "a name in a folder of another tag's of the push",
        refspec: `${commits[2]}:refs/tags/v0400/rc`,
        expected: [
          "c4store: refs/tags/v0400: Version 'v0400' cannot be made beside version 'v0400/rc': one version's name cannot be a folder of another's.",
          "c4store: refs/tags/v0400/rc: Version 'v0400/rc' cannot be made beside version 'v0400': one version's name cannot be a folder of another's.",
        ],
      },
    ];
    for (const { what, refspec, expected } of bad) {
      const refused = (await pushRefused(dir, refspec)).sort();
      t.is(refused.length, expected.length, `${what}: ${refused.join('\n')}`);
      for (const [i, line] of expected.sort().entries()) {
        t.true(refused[i]?.startsWith(line), `${what}: ${refused[i]} should start with ${line}`);
      }
      await unchanged(t, s, head, what);
    }

    await git(dir, ['push', '-q', 'origin', '--tags']);
    t.is(await s.head(), head, 'main did not move');
    const listed = await s.get(V);
    t.is(listed.status, 200);
    const versions = listed.body as Array<{ name: string; commit: string; desc: string | null }>;
    t.deepEqual(versions.map((v) => v.name).sort(), names);
    for (const version of versions) {
      const i = names.indexOf(version.name);
      t.is(version.commit, commits[i % commits.length], version.name);
      t.is(version.desc, i % 3 === 0 ? `Release ${version.name}` : null, version.name);
    }
  },
);

test.serial(
  `a push of ${TAGS} tags, half of them beside the other half made before, is checked by a few git processes, not some per tag`,
  async (t) => {
    const { s, dir, commits } = await setUp(t);
    await makeTags(dir, commits);
    // Half of them there already, made by an earlier push: the other half is checked beside them.
    await git(dir, ['push', '-q', 'origin', ...names.slice(0, TAGS / 2).map((name) => `refs/tags/${name}`)]);
    // The hook is node (src/push/hook.ts), started by receive-pack in the server's environment: a
    // module it loads first (NODE_OPTIONS) writes a line for each process it starts, and starts it.
    const folder = await mkdtemp(join(tmpdir(), 'c4store-git-count-'));
    t.teardown(() => rm(folder, { recursive: true, force: true }));
    const log = join(folder, 'started');
    const counter = join(folder, 'count.cjs');
    await writeFile(
      counter,
      `const childProcess = require('node:child_process');
const { appendFileSync } = require('node:fs');
const spawn = childProcess.spawn;
childProcess.spawn = function (command, args, ...rest) {
  appendFileSync(${JSON.stringify(log)}, [command, ...(Array.isArray(args) ? args : [])].join(' ').slice(0, 200) + '\\n');
  return spawn.call(this, command, args, ...rest);
};
require('node:module').syncBuiltinESMExports();
`,
    );
    await writeFile(log, '');
    const before = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = `${before ?? ''} --require=${counter}`.trim();
    try {
      await git(dir, ['push', '-q', 'origin', '--tags']);
    } finally {
      if (before === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = before;
    }
    const started = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    t.true(
      started.some((line) => line.includes(' for-each-ref ')),
      `the hook's processes were counted:\n${started.join('\n')}`,
    );
    t.true(started.length < 20, `${started.length} processes for ${TAGS / 2} new tags:\n${started.slice(0, 20).join('\n')}`);
    t.deepEqual(((await s.get(V)).body as Array<{ name: string }>).map((v) => v.name).sort(), names);
  },
);

/** versionClash as it was, each name compared with every other: what VersionNames must answer, word for word. */
function clashAsItWas(name: string, existing: readonly string[]): string | null {
  if (existing.includes(name)) return `Version '${name}' already exists.`;
  const folded = name.toLowerCase();
  const sameButCase = existing.find((other) => other.toLowerCase() === folded);
  if (sameButCase !== undefined) {
    return `Version '${name}' cannot be made beside version '${sameButCase}': names that differ only in case are one file on macOS and Windows clones.`;
  }
  const clash = existing.find((other) => {
    const otherFolded = other.toLowerCase();
    return otherFolded.startsWith(`${folded}/`) || folded.startsWith(`${otherFolded}/`);
  });
  if (clash === undefined) return null;
  return `Version '${name}' cannot be made beside version '${clash}': one version's name cannot be a folder of another's.`;
}

test('the names of a push are judged beside each other as one at a time beside all the others was: the same refusal, naming the same version', (t) => {
  // Names of few letters, cases and folders, so that clashes of every kind are frequent.
  const name = fc.array(fc.constantFrom('a', 'A', 'b', 'B', '/', 'é', 'É'), { minLength: 1, maxLength: 6 }).map((chars) => chars.join(''));
  fc.assert(
    fc.property(fc.array(name, { maxLength: 40 }), fc.array(name, { maxLength: 40 }), (before, pushed) => {
      const index = new VersionNames([...before, ...pushed]);
      pushed.forEach((each, i) => {
        const beside = [...before, ...pushed.filter((_, j) => j !== i)];
        t.is(index.clash(each, before.length + i), clashAsItWas(each, beside), `${each} beside ${JSON.stringify(beside)}`);
      });
      for (const each of [...before, 'a', 'A/b']) t.is(versionClash(each, before), clashAsItWas(each, before));
    }),
    { numRuns: 2000 },
  );
});
