/**
 * Moving an architecture repository with a long history into c4store is a push of all of it: over
 * real HTTP, a history of 2,000 commits on a model of 2,000 files is taken, each commit checked
 * (src/push/check.ts checks each from what it changed, so the push costs what the history changed,
 * not 2,000 times the model). A broken commit deep in such a history is refused in the words
 * checking every commit whole gave (test/support/reference-push-check.ts, asked of that commit).
 */
import test from 'ava';
import { join } from 'node:path';
import { resourcePath, serialize } from '../src/model/files.js';
import type { Component } from '../src/model/types.js';
import { cloneFor, gitIn as git } from './support/git-clone.js';
import { referenceCheckCommits } from './support/reference-push-check.js';
import { TestServer } from './support/server.js';

const FILES = 2_000;
const COMMITS = 2_000;
/** Where the broken history breaks: its 1,500th commit. */
const BROKEN_AT = 1_500;

function component(n: number, desc: string, typeId: string | null = null): Component {
  return {
    id: `c${n}`,
    ref: `ref-${n}`,
    name: `Component ${n}`,
    desc,
    state: 'ACTIVE',
    typeId,
    linksTo: n > 0 ? ['c0'] : [],
    attributes: [],
  };
}

/** A `git fast-import` commit on `branch` changing `files` (path → content). */
function commit(branch: string, mark: number, from: string, files: ReadonlyArray<readonly [string, string]>): string {
  const lines = [
    `commit refs/heads/${branch}`,
    `mark :${mark}`,
    `committer Ada <ada@example.com> ${1_700_000_000 + mark} +0000`,
    'data 8',
    'migrated',
    `from ${from}`,
  ];
  for (const [path, content] of files) lines.push(`M 100644 inline ${path}`, `data ${Buffer.byteLength(content)}`, content);
  return `${lines.join('\n')}\n`;
}

test('a push of a long history is taken, and one broken deep in it refused as checking each commit whole refused it', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const dir = await cloneFor(t, s, 'c4store-long-history-');
  const main = await git(dir, ['rev-parse', 'origin/main']);
  const present = Number(await git(dir, ['ls-tree', '-r', '--name-only', 'HEAD']).then((out) => out.split('\n').length));
  const count = FILES - present;
  const file = (c: Component) => [resourcePath('component', c.id), serialize('component', c)] as const;

  // `long`: one commit bringing the components, then one edit a commit. `broken`: the same up to
  // its 1,500th commit, which names a type that does not exist, and 500 more edits.
  const stream: string[] = [
    commit(
      'long',
      1,
      main,
      Array.from({ length: count }, (_, n) => file(component(n, 'First'))),
    ),
  ];
  const edit = (n: number) => file(component(n % count, `Edit ${n}`));
  for (let n = 2; n <= COMMITS; n++) stream.push(commit('long', n, `:${n - 1}`, [edit(n)]));
  stream.push(commit('broken', COMMITS + BROKEN_AT, `:${BROKEN_AT - 1}`, [file(component(7, 'Broken', 'nope'))]));
  for (let n = BROKEN_AT + 1; n <= COMMITS; n++) stream.push(commit('broken', COMMITS + n, `:${COMMITS + n - 1}`, [edit(n)]));
  await git(dir, ['fast-import', '--quiet'], stream.join(''));
  t.is(Number(await git(dir, ['rev-list', '--count', 'origin/main..long'])), COMMITS);
  t.is(Number(await git(dir, ['ls-tree', '-r', '--name-only', 'long']).then((out) => out.split('\n').length)), FILES);

  // The broken history, pushed as a draft: all its 2,000 commits are new, the 1,500th refused.
  const bad = await git(dir, ['rev-list', '--reverse', 'origin/main..broken']).then((out) => out.split('\n')[BROKEN_AT - 1]!);
  const [expected] = await referenceCheckCommits(
    join(dir, '.git'),
    [bad, `^${bad}^`],
    {},
    undefined,
    `${await git(dir, ['rev-parse', `${bad}^`])}`,
  );
  t.regex(expected!, /^commit [0-9a-f]{12}: components\/[0-9a-f]{2}\/c7\.yaml: Type with id 'nope' does not exist\.$/);
  const refused = await git(dir, ['push', 'origin', 'broken:refs/heads/drafts/migration']).then(
    () => t.fail('the broken history was taken'),
    (err: { stderr: string }) => err.stderr,
  );
  // git pads the lines it relays from the server with spaces.
  const lines = String(refused)
    .split('\n')
    .map((line) => line.trimEnd());
  t.true(lines.includes(`remote: c4store: drafts/migration: ${expected}`), String(refused));
  t.is((await s.git('for-each-ref', 'refs/heads/drafts')).trim(), '', 'no draft was opened');

  // The whole history, pushed to main: taken, and served.
  await git(dir, ['push', '-q', 'origin', 'long:main']);
  t.is(await s.head(), await git(dir, ['rev-parse', 'long']));
  const last = (await s.get(`/api/external/component/c${COMMITS % count}`)).body as Component;
  t.is(last.desc, `Edit ${COMMITS}`);
});
