/**
 * History and diff over HTTP (issue "Git-native review", points 1–3), checked against what
 * `git log` says on a clone of the same repository.
 */
import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cloneFor, gitIn } from './support/git-clone.js';
import { run, withServer, type TestServer } from './support/server.js';

const H = '/api/external/history';

/** Three writes: a tag, a component, then the component renamed and a diagram placing it. */
async function threeWrites(s: TestServer) {
  const [tag] = (await s.post('/api/external/tag', [{ name: 'PCI', color: 'red', apiContext: 'import #1' }])).body;
  const [component] = (await s.post('/api/external/component', [{ name: 'Ledger', typeSlug: 'container', apiContext: 'import #2' }])).body;
  const model = await s.post('/api/external/model', {
    components: [{ id: component.id, name: 'General ledger', typeSlug: 'container', apiContext: 'import #3' }],
    diagrams: [
      { name: 'Money', level: 'C2', apiContext: 'import #3', componentInstances: [{ component: component.id, position: { x: 1, y: 2 } }] },
    ],
  });
  t_ok(model.status);
  return { tag, component, diagram: model.body.diagrams[0] };
}

function t_ok(status: number) {
  if (status !== 200) throw new Error(`write answered ${status}`);
}

test('history lists commits of main newest first, as git log --first-parent on a clone does', (t) =>
  withServer(async (s) => {
    const { tag, component, diagram } = await threeWrites(s);
    const reply = await s.get(H);
    t.is(reply.status, 200);
    t.is(reply.headers.get('etag'), `"${await s.head()}"`);
    const clone = await mkdtemp(join(tmpdir(), 'c4store-clone-'));
    try {
      await run('git', ['clone', '-q', s.gitdir, clone]);
      const { stdout } = await run('git', ['-C', clone, 'log', '--first-parent', '--format=%H %P|%an|%ae|%aI|%s']);
      const lines = stdout.trim().split('\n');
      t.is(reply.body.length, lines.length);
      reply.body.forEach((entry: any, i: number) => {
        const [ids, name, email, time, summary] = lines[i].split('|');
        const [id, ...parents] = ids.split(' ').filter((part) => part !== '');
        t.like(entry, { id, parents, author: { name, email }, time, summary });
      });
    } finally {
      await rm(clone, { recursive: true, force: true });
    }
    const [last, second, first] = reply.body;
    t.is(last.apiContext, 'import #3');
    t.deepEqual(
      last.resources.map((r: any) => [r.kind, r.id, r.name, r.action]).sort(),
      [
        ['component', component.id, 'General ledger', 'update'],
        ['diagram', diagram.id, 'Money', 'create'],
      ].sort(),
    );
    t.deepEqual(
      second.resources.map((r: any) => [r.kind, r.id, r.name, r.action]),
      [['component', component.id, 'Ledger', 'create']],
    );
    t.deepEqual(
      first.resources.map((r: any) => [r.kind, r.id, r.name, r.action]),
      [['tag', tag.id, 'PCI', 'create']],
    );
    t.is(first.apiContext, 'import #1');
  }));

test('history of one resource, paging with before and Link, since and until', (t) =>
  withServer(async (s) => {
    const { component } = await threeWrites(s);
    const mine = await s.get(`${H}?resource=${component.id}`);
    t.deepEqual(
      mine.body.map((e: any) => e.resources.find((r: any) => r.id === component.id).action),
      ['update', 'create'],
    );
    const { stdout } = await run('git', ['--git-dir', s.gitdir, 'log', '--format=%H', '--', `*${component.id}.yaml`]);
    t.deepEqual(
      mine.body.map((e: any) => e.id),
      stdout.trim().split('\n'),
    );

    const all = (await s.get(H)).body.map((e: any) => e.id);
    const page1 = await s.get(`${H}?limit=2`);
    t.deepEqual(
      page1.body.map((e: any) => e.id),
      all.slice(0, 2),
    );
    const link = page1.headers.get('link')!;
    t.regex(link, /rel="next"/);
    const next = /<([^>]+)>/.exec(link)![1];
    t.true(next.includes(`before=${all[1]}`) && next.includes('limit=2'), next);
    const page2 = await s.get(next);
    t.deepEqual(
      page2.body.map((e: any) => e.id),
      all.slice(2, 4),
    );

    t.deepEqual((await s.get(`${H}?since=2999-01-01T00:00:00Z`)).body, []);
    t.is((await s.get(`${H}?until=2000-01-01`)).body.length, 0);
    t.is((await s.get(`${H}?since=2000-01-01`)).body.length, all.length);
    t.deepEqual((await s.get(`${H}?since=yesterday`)).body, {
      error: "Invalid since 'yesterday': use an ISO 8601 time such as 2026-11-24T10:00:00Z.",
    });
    t.is((await s.get(`${H}?limit=0`)).status, 400);
    t.is((await s.get(`${H}?resource=..%2F..%2Fetc`)).status, 400);
    t.is((await s.get(`${H}?before=ffffffffffffffffffffffffffffffffffffffff`)).status, 404);
    t.is((await s.get(H, { key: null })).status, 401);
  }));

test('one commit with its diff, and a diff between two commits by abbreviated ids', (t) =>
  withServer(async (s) => {
    const { component, diagram } = await threeWrites(s);
    const head = await s.head();
    const one = await s.get(`${H}/${head.slice(0, 7)}`);
    t.is(one.status, 200);
    t.is(one.body.id, head);
    t.deepEqual(one.body.diff.added, [{ kind: 'diagram', id: diagram.id, name: 'Money' }]);
    t.deepEqual(one.body.diff.removed, []);
    const changed = one.body.diff.changed;
    t.is(changed.length, 1);
    t.like(changed[0], { kind: 'component', id: component.id, name: 'General ledger' });
    t.deepEqual(
      changed[0].fields.find((f: any) => f.field === 'name'),
      { field: 'name', old: 'Ledger', new: 'General ledger' },
    );
    t.deepEqual(
      changed[0].fields.find((f: any) => f.field === 'apiContext'),
      { field: 'apiContext', old: 'import #2', new: 'import #3' },
    );

    const first = (await s.git('rev-list', '--max-parents=0', 'main')).trim();
    const diff = await s.get(`/api/external/diff?from=${first.slice(0, 8)}`);
    t.is(diff.status, 200);
    t.is(diff.body.from, first);
    t.is(diff.body.to, head);
    t.deepEqual(diff.body.added.map((r: any) => r.kind).sort(), ['component', 'diagram', 'tag']);
    const { stdout } = await run('git', ['--git-dir', s.gitdir, 'diff', '--name-status', first, head]);
    t.is(stdout.trim().split('\n').length, diff.body.added.length);

    // Nested diagram elements are compared by their ids.
    const moved = await s.post('/api/external/diagram', [
      {
        id: diagram.id,
        name: 'Money',
        level: 'C2',
        apiContext: 'import #3',
        componentInstances: [{ id: diagram.componentInstances[0].id, component: component.id, position: { x: 5, y: 2 } }],
      },
    ]);
    t.is(moved.status, 200);
    const step = await s.get(`/api/external/diff?from=${head}&to=main`);
    const instance = diagram.componentInstances[0].id;
    t.deepEqual(step.body.changed[0].fields, [{ field: `componentInstances.${instance}.position.x`, old: 1, new: 5 }]);

    t.deepEqual((await s.get('/api/external/diff')).body, {
      error: "Query parameter 'from' is required: the commit or version to compare from.",
    });
    t.deepEqual((await s.get('/api/external/diff?from=abcdef0')).body, { error: "Commit 'abcdef0' does not exist." });
    t.is((await s.get('/api/external/diff?from=main~1')).status, 404);
    t.is((await s.get(`${H}/nothing-here`)).status, 404);
  }));

test('versions: an annotated tag on main, listed, usable as a revision; names checked by git', (t) =>
  withServer(async (s) => {
    const V = '/api/external/version';
    const first = await s.head();
    const made = await s.post(V, { name: 'v1.0', desc: 'Before the import' });
    t.is(made.status, 201);
    t.like(made.body, {
      name: 'v1.0',
      commit: first,
      desc: 'Before the import',
      tagger: { name: 'test pipeline', email: 'test-pipeline@acme' },
    });
    t.is((await s.git('cat-file', '-t', 'refs/tags/v1.0')).trim(), 'tag');
    t.is((await s.git('rev-parse', 'v1.0^{commit}')).trim(), first);
    t.is((await s.git('tag', '-l', '--format=%(contents)', 'v1.0')).trim(), 'Before the import');

    await threeWrites(s);
    t.deepEqual(
      (await s.get(V)).body.map((v: any) => [v.name, v.commit]),
      [['v1.0', first]],
    );
    const then = await s.get('/api/external/component?at=v1.0');
    t.is(then.status, 200);
    t.deepEqual(then.body, [], '?at= takes a version name');
    t.is(then.headers.get('etag'), `"${first}"`);
    t.is((await s.get('/api/external/component?at=main')).body.length, 1);
    const diff = await s.get('/api/external/diff?from=v1.0');
    t.is(diff.body.from, first);
    t.is(diff.body.added.length, 3);

    t.deepEqual((await s.post(V, { name: 'v1.0' })).body, { error: "Version 'v1.0' already exists." });
    t.is((await s.post(V, { name: 'v1.0' })).status, 409);
    for (const bad of [
      'has space',
      'a..b',
      'x~1',
      'end.lock',
      '-rf',
      'abcdef12',
      'main',
      'HEAD',
      'REVERT_HEAD',
      'AUTO_MERGE',
      '',
      'vé',
      '@',
      'v+1',
      'v'.repeat(251),
    ]) {
      const reply = await s.post(V, { name: bad });
      t.is(reply.status, 400, bad);
      t.true(reply.body.error.startsWith(`Invalid version name '${bad}'`), reply.body.error);
    }
    t.deepEqual((await s.post(V, { desc: 'x' })).body, { error: 'Invalid JSON: name: Required' });
    t.is((await s.post(V, { name: 'v2' }, { key: s.readerKey })).status, 403);
    t.is((await s.post(V, { name: 'v2' }, { headers: { 'if-match': `"${first}"` } })).status, 412);
    t.deepEqual(
      (await s.get(V)).body.map((v: any) => v.name),
      ['v1.0'],
      'refused versions made no tag',
    );
    t.regex((await s.post(V, { name: '' })).body.error, /^Invalid version name '': use 1 to 200 ASCII letters/);
    const count = await s.commitCount();
    t.is((await s.post(V, { name: 'release/2026-11' })).status, 201);
    t.is(await s.commitCount(), count, 'a version is not a commit');

    // refs/tags/v1.0 and refs/tags/v1.0/rc cannot both be: git refused the second with an error of its own (500 before).
    for (const [name, clash] of [
      ['v1.0/rc', 'v1.0'],
      ['release', 'release/2026-11'],
    ]) {
      const reply = await s.post(V, { name });
      t.is(reply.status, 409, name);
      t.deepEqual(reply.body, {
        error: `Version '${name}' cannot be made beside version '${clash}': one version's name cannot be a folder of another's.`,
      });
    }
    t.deepEqual((await s.get(V)).body.map((v: any) => v.name).sort(), ['release/2026-11', 'v1.0']);
  }));

test('revert: one new commit restores the model as it was, checked like any write; history stays', (t) =>
  withServer(async (s) => {
    const first = await s.head();
    const before = (await s.get('/api/external/model')).body;
    await s.post('/api/external/version', { name: 'clean' });
    const { component } = await threeWrites(s);
    const deleted = await s.request('DELETE', `/api/external/components/${component.id}?cascade=true`);
    t.is(deleted.status, 200, deleted.text);
    const count = await s.commitCount();

    const reply = await s.post('/api/external/revert', { commit: 'clean' });
    t.is(reply.status, 200, reply.text);
    t.is(reply.body.restored, first);
    t.is(reply.body.commit, await s.head());
    t.is(await s.commitCount(), count + 1, 'one new commit; nothing rewritten');
    t.is((await s.git('rev-parse', 'HEAD~1')).trim() !== first, true);
    t.deepEqual((await s.get('/api/external/model')).body, before);
    t.is((await s.git('diff', '--stat', first, 'main')).trim(), '', 'the tree is the one of the restored commit');
    t.deepEqual(reply.body.changes.added, []);
    t.deepEqual(reply.body.changes.removed.map((r: any) => r.kind).sort(), ['diagram', 'tag']);
    const message = await s.git('log', '-1', '--format=%B');
    // What it restored, as people say it, and one Api-Context trailer: this request's (the
    // restored files keep the apiContext they had then).
    t.true(message.startsWith(`Restored the model of clean, ${first.slice(0, 7)} (Create organization acme)\n\n`), message);
    t.is(message.match(/^Api-Context: /gm)?.length, 1, message);

    // Back again: the component comes back with its id, as it was before the delete.
    const again = await s.post('/api/external/revert', { commit: deleted.headers.get('etag')!.replace(/"/g, '').slice(0, 10) });
    t.is(again.status, 200, again.text);
    t.is((await s.get(`/api/external/component/${component.id}`)).status, 404, 'deleted at that commit');
    const undo = await s.post('/api/external/revert', { commit: reply.body.commit.slice(0, 8) });
    t.is(undo.status, 200);

    const same = await s.commitCount();
    t.is((await s.post('/api/external/revert', { commit: 'main' })).status, 200);
    t.is(await s.commitCount(), same, 'a revert to main changes nothing and makes no commit');
    t.is((await s.post('/api/external/revert', { commit: 'nope' })).status, 404);
    t.is((await s.post('/api/external/revert', {})).status, 400);
    t.is((await s.post('/api/external/revert', { commit: first }, { key: s.readerKey })).status, 403);
    t.is(await s.commitCount(), same);

    // A draft's head is not a state of main (merging is how it gets there); on the draft it is.
    t.is((await s.post('/api/external/drafts', { name: 'aside' })).status, 201);
    t.is((await s.post('/api/external/components?draft=aside', { id: 'aside-only', name: 'Aside' })).status, 201);
    const aside = (await s.git('rev-parse', 'drafts/aside')).trim();
    const refused = await s.post('/api/external/revert', { commit: aside });
    t.is(refused.status, 404);
    t.deepEqual(refused.body, { error: `Commit '${aside}' is not a commit of main.` });
    t.is(await s.commitCount(), same);
    t.is((await s.post('/api/external/revert?draft=aside', { commit: first })).status, 200, "main's past is the draft's too");
    // Merged, the draft's own commits are still none of main's states: its merge commit is.
    t.is((await s.post('/api/external/drafts/aside/merge', {})).status, 200);
    const inner = await s.post('/api/external/revert', { commit: aside });
    t.is(inner.status, 404);
    t.deepEqual(inner.body, { error: `Commit '${aside}' is not a commit of main.` });
  }));

test("history is main's first-parent chain: a merge is one commit with what it brought, a resource's history keeps main's side, paging loses nothing", (t) =>
  withServer(async (s) => {
    const api = '/api/external';
    const ok = (reply: { status: number; text: string }) => t.true(reply.status < 300, reply.text);
    ok(await s.post(`${api}/components`, { id: 'tc', name: 'Tax Calculator' }));
    ok(await s.post(`${api}/drafts`, { name: 'x' }));
    ok(await s.request('PATCH', `${api}/components/tc?draft=x`, { body: { desc: 'Computes VAT' } }));
    ok(await s.post(`${api}/components?draft=x`, { id: 'fx', name: 'FX Rates' }));
    const deleted = await s.request('DELETE', `${api}/components/tc`);
    ok(deleted);
    ok(await s.post(`${api}/tags`, { id: 'eu', name: 'EU', color: 'blue' }));
    const merged = await s.post(`${api}/drafts/x/merge`, { resolutions: [{ kind: 'component', id: 'tc', field: '*', take: 'draft' }] });
    ok(merged);
    const mainLine = (await s.git('rev-list', '--first-parent', 'main')).trim().split('\n');

    // The whole history: main's own commits, the merge one of them with what it brought into main.
    const all = (await s.get(`${H}?limit=100`)).body as Array<{
      id: string;
      summary: string;
      resources: Array<{ id: string; action: string }>;
    }>;
    t.deepEqual(
      all.map((entry) => entry.id),
      mainLine,
    );
    const merge = all[0]!;
    t.regex(merge.summary, /^Merged draft 'x'/);
    t.deepEqual(merge.resources.map((r) => [r.id, r.action]).sort(), [
      ['fx', 'create'],
      ['tc', 'create'],
    ]);
    t.deepEqual((await s.get(`${H}/${merge.id}`)).body.resources, merge.resources);

    // One resource: created, deleted on main, brought back by the merge; the draft's own edit is the merge's.
    const tc = (await s.get(`${H}?resource=tc`)).body as Array<{ id: string; resources: Array<{ action: string }> }>;
    t.deepEqual(
      tc.map((entry) => [entry.id, entry.resources[0]!.action]),
      [
        [merge.id, 'create'],
        [mainLine[2]!, 'delete'],
        [mainLine[3]!, 'create'],
      ],
    );

    // Page by page, one commit a page: every commit of main once, in order.
    const paged: string[] = [];
    let next: string | undefined = `${H}?limit=1`;
    while (next !== undefined) {
      const page = await s.get(next);
      paged.push(...page.body.map((entry: { id: string }) => entry.id));
      next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    }
    t.deepEqual(paged, mainLine);

    // A page begins after a commit of the chain: a merged draft's own commit begins none, as in the feed.
    const draftOwn = (await s.git('rev-parse', `${merge.id}^2`)).trim();
    const notOnMain = await s.get(`${H}?before=${draftOwn}`);
    t.is(notOnMain.status, 404);
    t.deepEqual(notOnMain.body, { error: `Commit '${draftOwn}' is not a commit of main.` });
    t.deepEqual(
      (await s.get(`${H}?before=${mainLine[1]}`)).body.map((entry: { id: string }) => entry.id),
      mainLine.slice(2),
    );
    t.deepEqual(
      (await s.get(`${H}?before=main&limit=1`)).body.map((entry: { id: string }) => entry.id),
      [mainLine[1]],
    );
  }));

test('a commit dated before the epoch in its own zone, or in a zone no ISO time names, is listed: history, one commit, versions, the feed', (t) =>
  withServer(async (s) => {
    // As a push can bring it: git accepts such a time, and its own %aI then fails the whole log.
    const commitDated = async (parent: string, date: string, message: string) =>
      (
        await run('git', ['--git-dir', s.gitdir, 'commit-tree', `${parent}^{tree}`, '-p', parent, '-m', message], {
          env: {
            ...process.env,
            GIT_AUTHOR_DATE: date,
            GIT_COMMITTER_DATE: date,
            GIT_AUTHOR_NAME: 'Ada',
            GIT_AUTHOR_EMAIL: 'ada@example.com',
            GIT_COMMITTER_NAME: 'Ada',
            GIT_COMMITTER_EMAIL: 'ada@example.com',
          },
        })
      ).stdout.trim();
    const early = await commitDated(await s.head(), '@0 -1200', 'Dated before the epoch in its zone');
    await s.git('update-ref', 'refs/heads/main', early);
    await s.git('tag', 'v-early', early);

    const history = await s.get(`${H}?limit=5`);
    t.is(history.status, 200, history.text);
    t.is(history.body[0].id, early);
    t.is(history.body[0].time, '1969-12-31T12:00:00-12:00');
    const one = await s.get(`${H}/${early}`);
    t.is(one.status, 200, one.text);
    t.is(one.body.time, '1969-12-31T12:00:00-12:00');
    const versions = await s.get('/api/external/version');
    t.is(versions.status, 200, versions.text);
    t.is(versions.body.find((v: { name: string }) => v.name === 'v-early').time, '1969-12-31T12:00:00-12:00');
    const changes = await s.get('/api/external/changes?limit=5');
    t.is(changes.status, 200, changes.text);

    // A zone of 99 hours (git's parser refuses it; a commit written byte by byte carries it): given as UTC.
    const tree = (await s.git('rev-parse', `${early}^{tree}`)).trim();
    const object = `tree ${tree}\nparent ${early}\nauthor Ada <ada@example.com> 1000000000 +9959\ncommitter Ada <ada@example.com> 1000000000 +9959\n\nFar zone\n`;
    const scratch = await mkdtemp(join(tmpdir(), 'c4store-far-'));
    t.teardown(() => rm(scratch, { recursive: true, force: true }));
    await writeFile(join(scratch, 'commit'), object);
    const far = (
      await run('git', ['--git-dir', s.gitdir, 'hash-object', '--literally', '-t', 'commit', '-w', join(scratch, 'commit')])
    ).stdout.trim();
    await s.git('update-ref', 'refs/heads/main', far);
    const farHistory = await s.get(`${H}?limit=1`);
    t.is(farHistory.status, 200, farHistory.text);
    t.is(farHistory.body[0].time, '2001-09-09T01:46:40+00:00');
    const farChanges = await s.get(`/api/external/changes?after=${early}`);
    t.regex(farChanges.text, /2001-09-09T01:46:40\+00:00/);

    // A message in the encoding its commit names (git's i18n.commitEncoding): shown as git shows it, in UTF-8.
    await writeFile(join(scratch, 'message'), Buffer.from('Café au lait\n', 'latin1'));
    const latin = (
      await run(
        'git',
        [
          '--git-dir',
          s.gitdir,
          '-c',
          'i18n.commitEncoding=ISO-8859-1',
          'commit-tree',
          `${far}^{tree}`,
          '-p',
          far,
          '-F',
          join(scratch, 'message'),
        ],
        {
          env: {
            ...process.env,
            GIT_AUTHOR_NAME: 'Ada',
            GIT_AUTHOR_EMAIL: 'ada@example.com',
            GIT_COMMITTER_NAME: 'Ada',
            GIT_COMMITTER_EMAIL: 'ada@example.com',
          },
        },
      )
    ).stdout.trim();
    await s.git('update-ref', 'refs/heads/main', latin);
    t.is((await s.get(`/api/external/changes?after=${far}`)).body.changes[0].title, 'Café au lait');
    t.is((await s.get(`${H}?limit=1`)).body[0].summary, 'Café au lait');
  }));

test('history with ?at= is the history as of that commit: its first-parent chain up to it, as git log <commit> says, pages within it', (t) =>
  withServer(async (s) => {
    await threeWrites(s);
    const mainLine = (await s.git('rev-list', '--first-parent', 'main')).trim().split('\n');
    const at = mainLine[1]!;
    const asOf = await s.get(`${H}?at=${at.slice(0, 7)}`);
    t.is(asOf.status, 200, asOf.text);
    t.is(asOf.headers.get('etag'), `"${at}"`);
    t.deepEqual(
      asOf.body.map((entry: { id: string }) => entry.id),
      (await s.git('rev-list', '--first-parent', at)).trim().split('\n'),
    );
    const page = await s.get(`${H}?at=${at.slice(0, 7)}&limit=1`);
    t.deepEqual(
      page.body.map((entry: { id: string }) => entry.id),
      [at],
    );
    const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')![1]!;
    // The next page names the commit whole: an abbreviation may name two commits as the history grows.
    t.is(new URL(next, s.url).searchParams.get('at'), at);
    t.deepEqual(
      (await s.get(next)).body.map((entry: { id: string }) => entry.id),
      [mainLine[2]],
    );
    // A commit newer than `at` begins no page of the history as of `at`.
    t.deepEqual((await s.get(`${H}?at=${at}&before=${mainLine[0]}`)).body, {
      error: `Commit '${mainLine[0]}' is not a commit of main.`,
    });
  }));

test('since and until at or before the epoch: since lists every commit, until one before it none', (t) =>
  withServer(async (s) => {
    await threeWrites(s);
    const all = (await s.get(H)).body.map((entry: { id: string }) => entry.id);
    t.is(all.length, 4);
    for (const since of ['1970-01-01', '1970-01-01T00:00:00Z', '1969-12-31', '0001-01-01']) {
      t.deepEqual(
        (await s.get(`${H}?since=${since}`)).body.map((entry: { id: string }) => entry.id),
        all,
        since,
      );
    }
    for (const until of ['1969-12-31', '1970-01-01T00:00:00Z', '0001-01-01'])
      t.deepEqual((await s.get(`${H}?until=${until}`)).body, [], until);
  }));

test("the versions' list never answers 304: a version is made beside main, which does not move", (t) =>
  withServer(async (s) => {
    const V = '/api/external/versions';
    const before = await s.get(V);
    t.deepEqual(before.body, []);
    const etag = before.headers.get('etag')!;
    t.is(etag, `"${await s.head()}"`);
    t.is((await s.post(V, { name: 'v1' })).status, 201);
    for (const path of [V, `${V}?at=main`]) {
      const again = await s.get(path, { headers: { 'if-none-match': etag } });
      t.is(again.status, 200, path);
      t.is(again.headers.get('etag'), etag, 'the ETag still names the commit read');
      t.deepEqual(
        again.body.map((version: { name: string }) => version.name),
        ['v1'],
        path,
      );
    }
  }));

test('a version tagging another tag names the commit under both, as git rev-parse <tag>^{commit} does', (t) =>
  withServer(async (s) => {
    const head = await s.head();
    await s.git('tag', '-a', '-m', 'inner', 'inner', head);
    await s.git('-c', 'advice.nestedTag=false', 'tag', '-a', '-m', 'outer', 'outer', 'inner');
    const versions = (await s.get('/api/external/versions')).body as Array<{ name: string; commit: string; desc: string }>;
    t.like(
      versions.find((v) => v.name === 'outer'),
      { commit: head, desc: 'outer' },
    );
    t.like(
      versions.find((v) => v.name === 'inner'),
      { commit: head, desc: 'inner' },
    );
  }));

test('since and until name days the calendar has: February 30th is refused as a malformed time is, not read as March 2nd', (t) =>
  withServer(async (s) => {
    for (const time of ['2026-02-30', '2026-02-29T10:00:00Z', '2026-04-31', '2026-06-31 08:00']) {
      t.deepEqual((await s.get(`${H}?since=${encodeURIComponent(time)}`)).body, {
        error: `Invalid since '${time}': use an ISO 8601 time such as 2026-11-24T10:00:00Z.`,
      });
      t.is((await s.get(`${H}?until=${encodeURIComponent(time)}`)).status, 400, time);
    }
    for (const time of ['2024-02-29', '2026-01-31T23:59:59Z', '2026-12-31']) t.is((await s.get(`${H}?since=${time}`)).status, 200, time);
  }));

test("a pushed merge that puts main's tip second (git pull's merge of a stale clone) is refused: main's first-parent history keeps every commit it had", (t) =>
  withServer(async (s) => {
    const dir = await cloneFor(t, s, 'c4store-foxtrot-');
    // Meanwhile, a write over the API; the clone commits on the main it had, then pulls with a merge.
    t.is((await s.post('/api/external/tags', { id: 'pci', name: 'PCI', color: 'red' })).status, 201);
    const written = await s.head();
    await writeFile(join(dir, 'NOTES.md'), 'local notes\n');
    await gitIn(dir, ['add', 'NOTES.md']);
    await gitIn(dir, ['commit', '-q', '-m', 'Notes']);
    await gitIn(dir, ['pull', '-q', '--no-rebase', '--no-edit', 'origin', 'main']);
    t.is(await gitIn(dir, ['rev-parse', 'HEAD^2']), written, "the API commit is the merge's second parent");
    const refused = await gitIn(dir, ['push', 'origin', 'main']).then(
      () => 'pushed',
      (err: { stderr: string }) => err.stderr,
    );
    t.regex(refused, /main's history keeps its commits first: .*git pull --rebase/s, refused);
    t.is(await s.head(), written);
    t.is((await s.get(`${H}?limit=1`)).body[0].id, written);
    t.is((await s.get(`/api/external/changes?after=${written}`)).status, 200);

    // Merged the other way, main's tip first, the same work is taken.
    const notes = await gitIn(dir, ['rev-parse', 'HEAD^1']);
    await gitIn(dir, ['reset', '-q', '--hard', 'origin/main']);
    await gitIn(dir, ['merge', '-q', '--no-ff', '--no-edit', notes]);
    await gitIn(dir, ['push', '-q', 'origin', 'main']);
    t.is(await gitIn(dir, ['rev-parse', 'HEAD^1']), written);
    t.deepEqual(
      (await s.get(`${H}?limit=2`)).body.map((entry: { id: string }) => entry.id),
      [await s.head(), written],
    );
  }));
