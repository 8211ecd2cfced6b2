/**
 * Drafts over git (CONTRACT §8): draft branches fetched and pushed over smart HTTP, each push
 * checked by the pre-receive hook like an API write. Needs dist/cli.js (the hook runs it).
 */
import test from 'ava';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourcePath } from '../src/model/paths.js';
import { cli } from './support/process.js';
import { type Reply, run, sessionCookie, TestServer, withServer } from './support/server.js';

const API = '/api/external';
const IDENTITY = ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com'];
const ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0' };

function remote(s: TestServer, key: string): string {
  const url = new URL(`${s.url}/git/${s.slug}.git`);
  url.username = 'ci';
  url.password = key;
  return url.href;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await run('git', ['-C', cwd, ...IDENTITY, ...args], { env: ENV })).stdout;
}

async function gitFails(cwd: string, ...args: string[]): Promise<string> {
  try {
    await git(cwd, ...args);
  } catch (err) {
    return String((err as { stderr?: string }).stderr);
  }
  throw new Error(`git ${args.join(' ')} succeeded`);
}

async function withClone(s: TestServer, body: (dir: string) => Promise<void>): Promise<void> {
  const parent = await mkdtemp(join(tmpdir(), 'c4store-drafts-clone-'));
  const dir = join(parent, 'model');
  try {
    await run('git', ['clone', '-q', remote(s, s.key), dir], { env: ENV });
    await body(dir);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

test('a clone fetches draft branches; a push creating drafts/<name> opens a draft, checked like a write', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'ledger', name: 'Ledger' });
    await s.post(`${API}/drafts`, { name: 'from-api' });
    await s.post(`${API}/components?draft=from-api`, { id: 'fraud', name: 'Fraud Check' });
    const file = resourcePath('component', 'ledger');

    await withClone(s, async (dir) => {
      t.is((await git(dir, 'rev-parse', 'origin/drafts/from-api')).trim(), (await s.git('rev-parse', 'drafts/from-api')).trim());
      t.is((await git(dir, 'log', '--format=%s', 'origin/main..origin/drafts/from-api')).trim().split('\n').length, 1);

      // A new draft by push: a branch from main with one edited file.
      await git(dir, 'checkout', '-q', '-b', 'drafts/renamed', 'origin/main');
      const path = join(dir, file);
      await writeFile(path, (await readFile(path, 'utf8')).replace('name: Ledger', 'name: General Ledger'));
      await git(dir, 'commit', '-q', '-am', 'Rename the ledger');
      await git(dir, 'push', '-q', 'origin', 'drafts/renamed');
      const draft = (await s.get(`${API}/drafts/renamed`)).body;
      t.like(draft, { name: 'renamed', title: 'renamed', state: 'open', author: 'Ada', base: await s.head(), behind: 0 });
      t.deepEqual(
        draft.changes.changed.map((c: { id: string }) => c.id),
        ['ledger'],
      );
      t.is((await s.get(`${API}/components/ledger?draft=renamed`)).body.name, 'General Ledger');
      t.is((await s.get(`${API}/components/ledger`)).body.name, 'Ledger', 'main is untouched');
      t.true((await s.get(`${API}/drafts`)).body.some((d: { name: string }) => d.name === 'renamed'));

      // Then an API write on top, fetched back; then a push on top of that, read by the API at once.
      await s.request('PATCH', `${API}/components/ledger?draft=renamed`, { body: { desc: 'Double entry' } });
      await git(dir, 'pull', '-q', '--ff-only', 'origin', 'drafts/renamed');
      t.regex(await readFile(path, 'utf8'), /desc: Double entry/);
      await writeFile(path, (await readFile(path, 'utf8')).replace('desc: Double entry', 'desc: Double-entry bookkeeping'));
      await git(dir, 'commit', '-q', '-am', 'Say it better');
      await git(dir, 'push', '-q', 'origin', 'drafts/renamed');
      t.is((await s.get(`${API}/components/ledger?draft=renamed`)).body.desc, 'Double-entry bookkeeping');

      // An invalid model is refused by the hook, as an API write would be.
      await writeFile(path, (await readFile(path, 'utf8')).replace('typeId: null', 'typeId: no-such-type'));
      await git(dir, 'commit', '-q', '-am', 'Break it');
      const before = (await s.git('rev-parse', 'drafts/renamed')).trim();
      t.regex(
        await gitFails(dir, 'push', 'origin', 'drafts/renamed'),
        /drafts\/renamed: commit [0-9a-f]{12}: .*Type with id 'no-such-type' does not exist\./,
      );
      t.is((await s.git('rev-parse', 'drafts/renamed')).trim(), before);
      await git(dir, 'reset', '-q', '--hard', 'HEAD^');

      // Deleting a draft's branch is not how it closes; a bad name is no draft.
      t.regex(await gitFails(dir, 'push', 'origin', '--delete', 'drafts/renamed'), /DELETE \/api\/external\/drafts\/renamed closes it/);
      t.regex(await gitFails(dir, 'push', 'origin', 'HEAD:refs/heads/drafts/Bad_Name'), /a draft's name uses lowercase letters/);
      t.regex(
        await gitFails(dir, 'push', 'origin', 'HEAD:refs/heads/drafts/main'),
        /drafts\/main: a draft cannot be named 'main': it names the main branch\./,
      );

      // A branch with no history in common with main proposes nothing to it: refused, new or forced.
      await git(dir, 'checkout', '-q', '--orphan', 'unrelated');
      await git(dir, 'commit', '-q', '-m', 'The same model, from nowhere');
      const orphanRefusal = /drafts\/(orphan|renamed): a draft starts from a commit of main, and this branch shares no history with main/;
      t.regex(await gitFails(dir, 'push', 'origin', 'unrelated:refs/heads/drafts/orphan'), orphanRefusal);
      t.regex(await gitFails(dir, 'push', '--force', 'origin', 'unrelated:drafts/renamed'), orphanRefusal);
      t.is((await s.get(`${API}/drafts/orphan`)).status, 404);
      t.is((await s.git('rev-parse', 'drafts/renamed')).trim(), before);
      await git(dir, 'checkout', '-q', 'drafts/renamed');

      // A closed draft's name cannot be pushed to until it is reopened.
      t.is((await s.request('DELETE', `${API}/drafts/from-api`)).status, 200);
      t.regex(await gitFails(dir, 'push', 'origin', 'HEAD:refs/heads/drafts/from-api'), /Draft 'from-api' is closed; reopen it/);

      // main still only moves forward.
      await git(dir, 'checkout', '-q', '-b', 'rewrite', 'origin/main');
      await git(dir, 'commit', '-q', '--amend', '-m', 'Rewritten');
      t.regex(await gitFails(dir, 'push', '--force', 'origin', 'rewrite:main'), /main can only move forward/);
    });
    await s.git('fsck', '--strict');
  }));

test('a draft merged over the API shows in git log --graph of a fresh clone', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'api', name: 'API' });
    await s.post(`${API}/drafts`, { name: 'payments-v2', title: 'Payments v2' });
    await s.post(`${API}/components?draft=payments-v2`, { id: 'pay', name: 'Payments' });
    await s.request('PATCH', `${API}/components/api`, { body: { desc: 'Public' } });
    t.is((await s.post(`${API}/drafts/payments-v2/merge`, {})).status, 200);
    await withClone(s, async (dir) => {
      const graph = await git(dir, 'log', '--graph', '--format=%s', 'origin/main');
      t.regex(graph, /^\* {3}Merged draft 'payments-v2': create 1$/m);
      t.regex(graph, /^\|\\ {2}$/m);
      t.regex(graph, /^\| \* POST \/api\/external\/components: create 1$/m);
      // A merged draft's branch is no longer among the clone's branches.
      t.is((await git(dir, 'branch', '-r', '--list', 'origin/drafts/*')).trim(), '');
    });
  }));

test('a push to a draft landing while its merge commits: main keeps the merge of the head it read, the draft stays open with the pushed commit, a next merge brings it', async (t) => {
  // Pushes take no lock of the organization: one can land after the merge read the draft's head
  // and before the draft is marked merged. The test pause makes it land there every time.
  let whileMerging: (() => Promise<void>) | undefined;
  let pushedMidMerge = false;
  const s = await TestServer.start({ testPauses: { afterMergeCommit: async () => whileMerging?.() } });
  try {
    await s.post(`${API}/components`, { id: 'ledger', name: 'Ledger' });
    await s.post(`${API}/drafts`, { name: 'race', title: 'Race' });
    await s.post(`${API}/components?draft=race`, { id: 'fraud', name: 'Fraud Check' });
    const read = (await s.git('rev-parse', 'drafts/race')).trim();
    let merged: Reply | undefined;
    await withClone(s, async (dir) => {
      await git(dir, 'checkout', '-q', 'drafts/race');
      const path = join(dir, resourcePath('component', 'ledger'));
      await writeFile(path, (await readFile(path, 'utf8')).replace('name: Ledger', 'name: General Ledger'));
      await git(dir, 'commit', '-q', '-am', 'Rename the ledger');
      whileMerging = async () => {
        whileMerging = undefined;
        await git(dir, 'push', '-q', 'origin', 'drafts/race');
        pushedMidMerge = true;
      };
      merged = await s.post(`${API}/drafts/race/merge`, {});
    });
    t.true(pushedMidMerge);
    t.is(merged?.status, 200, merged?.text);
    const pushed = (await s.git('rev-parse', 'refs/heads/drafts/race')).trim();
    t.is((await s.git('rev-parse', `${pushed}^`)).trim(), read);
    const mergeCommit = await s.head();
    // The answer tells the merge that landed: up to the head it read, the draft still open at the pushed one.
    t.like(merged?.body, { state: 'open', head: pushed, mergedHead: read, commit: mergeCommit, committed: true });
    t.is((await s.git('rev-parse', `${mergeCommit}^2`)).trim(), read, 'main merged the head the merge read');
    t.is((await s.get(`${API}/components/fraud`)).body.name, 'Fraud Check');
    t.is((await s.get(`${API}/components/ledger`)).body.name, 'Ledger', 'the pushed commit is not in main');
    t.is((await s.git('for-each-ref', 'refs/drafts-merged/')).trim(), '', 'not marked merged');

    // The draft is open with what main lacks: the pushed commit alone, against the merge.
    const draft = (await s.get(`${API}/drafts/race`)).body;
    t.like(draft, { state: 'open', head: pushed, base: read });
    t.false('mergedAt' in draft || 'mergeCommit' in draft);
    t.deepEqual(
      draft.changes.changed.map((c: { id: string }) => c.id),
      ['ledger'],
    );
    t.deepEqual(draft.changes.added, []);

    const again = await s.post(`${API}/drafts/race/merge`, {});
    t.is(again.status, 200, again.text);
    t.like(again.body, { state: 'merged', head: pushed, mergedHead: pushed, committed: true });
    t.is((await s.get(`${API}/components/ledger`)).body.name, 'General Ledger');
    await s.git('fsck', '--strict');
  } finally {
    await s.close();
  }
});

test("a draft opened by a push keeps who opened it and when once merged; one with no commit of its own is its head's", (t) =>
  withServer(async (s) => {
    await withClone(s, async (dir) => {
      await git(dir, 'checkout', '-q', '-b', 'drafts/pushed', 'origin/main');
      await git(dir, 'commit', '-q', '--allow-empty', '-m', 'An empty proposal');
      await writeFile(join(dir, 'tags.txt'), 'not a model file');
      await git(dir, 'add', 'tags.txt');
      await git(dir, 'commit', '-q', '-m', 'A note');
      await git(dir, 'push', '-q', 'origin', 'drafts/pushed');
      await git(dir, 'push', '-q', 'origin', 'origin/main:refs/heads/drafts/empty');
    });
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
    const open = (await s.get(`${API}/drafts/pushed`)).body;
    t.is(open.author, 'Ada');
    t.regex(open.created, iso);
    const merged = await s.post(`${API}/drafts/pushed/merge`, {});
    t.is(merged.status, 200, merged.text);
    for (const seen of [merged.body, (await s.get(`${API}/drafts/pushed`)).body]) {
      t.is(seen.state, 'merged');
      t.is(seen.author, 'Ada');
      t.is(seen.created, open.created);
    }
    const empty = (await s.get(`${API}/drafts/empty`)).body;
    t.is(empty.author, (await s.git('log', '-1', '--format=%an', 'drafts/empty')).trim());
    t.regex(empty.created, iso);
    // Caught up with main, it is still who opened it and when: the update's merge commit is not its first.
    t.is((await s.post(`${API}/tags`, { id: 'later', name: 'Later', color: 'red' })).status, 201);
    const updated = await s.post(`${API}/drafts/empty/update`, {});
    t.is(updated.status, 200, updated.text);
    t.like(updated.body, { author: empty.author, created: empty.created });
    t.like((await s.get(`${API}/drafts/empty`)).body, { author: empty.author, created: empty.created });
  }));

test('a draft pushed with a commit dated past the year 9999 is listed, its time as git writes it', (t) =>
  withServer(async (s) => {
    await withClone(s, async (dir) => {
      await git(dir, 'checkout', '-q', '-b', 'drafts/far', 'origin/main');
      await run(
        'git',
        ['-C', dir, '-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', 'commit', '-q', '--allow-empty', '-m', 'Far'],
        {
          env: { ...process.env, GIT_AUTHOR_DATE: '@253402300800 +0000', GIT_COMMITTER_DATE: '@253402300800 +0000' },
        },
      );
      await git(dir, 'push', '-q', 'origin', 'drafts/far');
    });
    const listed = await s.get(`${API}/drafts`);
    t.is(listed.status, 200, listed.text);
    t.is(listed.body.find((d: { name: string }) => d.name === 'far').created, '10000-01-01T00:00:00Z');
  }));

test('a draft branch is mirrored like main', async (t) => {
  const s = await TestServer.start();
  const dir = await mkdtemp(join(tmpdir(), 'c4store-drafts-mirror-'));
  const mirror = join(dir, 'remote.git');
  try {
    await run('git', ['init', '-q', '--bare', '--initial-branch=main', mirror]);
    await cli('mirror', 'add', s.slug, mirror, '--interval', '0', '--data', s.dataDir);
    await s.post(`${API}/drafts`, { name: 'mirrored' });
    await s.post(`${API}/components?draft=mirrored`, { id: 'queue', name: 'Queue' });
    const head = (await s.git('rev-parse', 'drafts/mirrored')).trim();
    const deadline = Date.now() + 15_000;
    let there = '';
    while (there !== head && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      there = (
        await run('git', ['--git-dir', mirror, 'rev-parse', '--verify', '-q', 'refs/heads/drafts/mirrored']).catch(() => ({ stdout: '' }))
      ).stdout.trim();
    }
    t.is(there, head);
    t.is((await run('git', ['--git-dir', mirror, 'rev-parse', 'main'])).stdout.trim(), await s.head());
  } finally {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  }
});

/** A viewer session of the server's editor key: the cookie to send. */
const sessionOf = (s: TestServer) => sessionCookie(s.url, s.key);

test('a draft that changes the organization (organization.yaml pushed into its branch) says so in its REST diff and on its page, open and merged', (t) =>
  withServer(async (s) => {
    await withClone(s, async (dir) => {
      await git(dir, 'checkout', '-q', '-b', 'drafts/people', 'origin/main');
      const file = join(dir, 'organization.yaml');
      const yaml = await readFile(file, 'utf8');
      t.regex(yaml, /name: Acme\n/);
      await writeFile(file, yaml.replace('name: Acme', 'name: Acme Corp').replace('  - linus@example.com', '  - grace@example.com'));
      await git(dir, 'commit', '-q', '-am', 'Rename the organization; Grace for Linus');
      await git(dir, 'push', '-q', 'origin', 'drafts/people');
    });
    const organization = {
      name: 'Acme Corp',
      fields: [
        { field: 'name', old: 'Acme', new: 'Acme Corp' },
        { field: 'members', old: ['ada@example.com', 'linus@example.com'], new: ['ada@example.com', 'grace@example.com'] },
      ],
    };
    const said = [
      'renamed the organization &#39;<bdi>Acme</bdi>&#39; to &#39;<bdi>Acme Corp</bdi>&#39;',
      'added member <bdi>grace@example.com</bdi>',
      'removed member <bdi>linus@example.com</bdi>',
    ];
    const cookie = await sessionOf(s);
    /** The draft's REST answers and page agree: the organization's change, and no resource changed. */
    const check = async (state: string) => {
      const draft = await s.get(`${API}/drafts/people`);
      t.is(draft.status, 200, draft.text);
      t.is(draft.body.state, state);
      const { from, to, ...changes } = draft.body.changes;
      t.deepEqual(changes, { added: [], removed: [], changed: [], organization }, state);
      const diff = await s.get(`${API}/drafts/people/diff`);
      t.is(diff.status, 200, diff.text);
      t.deepEqual(diff.body, draft.body.changes, `${state}: /diff is the draft's changes`);
      const page = await fetch(`${s.url}/orgs/${s.slug}/drafts/people`, { headers: { cookie } });
      t.is(page.status, 200);
      const html = await page.text();
      t.true(html.includes(`<ul class="changes">${said.map((line) => `<li>${line}</li>`).join('')}</ul>`), state);
      t.notRegex(html, /No changes yet|Nothing: main already held its head/);
    };
    await check('open');

    const beforeMerge = await s.head();
    t.is((await s.post(`${API}/drafts/people/merge`, {})).status, 200);
    t.regex(await s.git('show', 'main:organization.yaml'), /name: Acme Corp\n/);
    await check('merged');
    // Every diff of main says so too: between two commits, one commit's, and a revert's.
    const merge = await s.head();
    t.deepEqual((await s.get(`${API}/diff?from=${beforeMerge}&to=${merge}`)).body.organization, organization);
    t.deepEqual((await s.get(`${API}/history/${merge}`)).body.diff.organization, organization);
    const reverted = await s.post(`${API}/revert`, { commit: beforeMerge });
    t.is(reverted.status, 200, reverted.text);
    t.deepEqual(reverted.body.changes.organization, {
      name: 'Acme',
      fields: organization.fields.map(({ field, old, new: now }) => ({ field, old: now, new: old })),
    });
    t.deepEqual((await s.get(`${API}/diff?from=${merge}&to=${beforeMerge}`)).body.organization, reverted.body.changes.organization);

    // A draft that leaves the organization alone carries no organization in its changes.
    t.is((await s.post(`${API}/drafts`, { name: 'plain' })).status, 201);
    t.is((await s.post(`${API}/components?draft=plain`, { id: 'queue', name: 'Queue' })).status, 201);
    const plain = (await s.get(`${API}/drafts/plain`)).body;
    t.false('organization' in plain.changes);
    t.false('organization' in (await s.get(`${API}/drafts/plain/diff`)).body);
  }));
