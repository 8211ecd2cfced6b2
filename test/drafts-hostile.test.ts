/**
 * Drafts, their merge, history, diff and revert pushed where they break: each test a case that
 * once went wrong, over real HTTP and real git (the push tests need dist/cli.js: the hook runs it).
 */
import test from 'ava';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourcePath } from '../src/model/paths.js';
import { run, TestServer, withServer } from './support/server.js';

const API = '/api/external';
const ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0' };

async function open(s: TestServer, name: string, extra: Record<string, unknown> = {}) {
  const reply = await s.post(`${API}/drafts`, { name, ...extra });
  if (reply.status !== 201) throw new Error(`open ${name}: ${reply.status} ${reply.text}`);
  return reply.body;
}

/** Every ref with its commit: what a refused request must leave as it was. */
async function refs(s: TestServer): Promise<string> {
  return s.git('for-each-ref', '--format=%(refname) %(objectname)');
}

async function withClone(s: TestServer, body: (dir: string, git: (...args: string[]) => Promise<string>) => Promise<void>): Promise<void> {
  const parent = await mkdtemp(join(tmpdir(), 'c4store-drafts-hostile-'));
  const dir = join(parent, 'model');
  const url = new URL(`${s.url}/git/${s.slug}.git`);
  url.username = 'ci';
  url.password = s.key;
  const git = async (...args: string[]) =>
    (await run('git', ['-C', dir, '-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', ...args], { env: ENV })).stdout;
  try {
    await run('git', ['clone', '-q', url.href, dir], { env: ENV });
    await body(dir, git);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

test('an instance ref is named once in its diagram: a merge bringing a second one from each side is refused, and so is a push', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'api', name: 'API' });
    await s.post(`${API}/components`, { id: 'db', name: 'DB' });
    t.is(
      (await s.post(`${API}/diagrams`, { id: 'c2', name: 'C2', level: 'C2', componentInstances: [{ ref: 'a', componentId: 'api' }] }))
        .status,
      201,
    );
    await open(s, 'both-b');
    // Each side adds an instance with ref 'b': each write alone is valid.
    const draftWrite = await s.request('PATCH', `${API}/diagrams/c2?draft=both-b`, {
      body: {
        componentInstances: [
          { ref: 'a', componentId: 'api' },
          { ref: 'b', componentId: 'db' },
        ],
      },
    });
    t.is(draftWrite.status, 200, draftWrite.text);
    const mainWrite = await s.request('PATCH', `${API}/diagrams/c2`, {
      body: {
        componentInstances: [
          { ref: 'a', componentId: 'api' },
          { ref: 'b', placeholder: { text: 'Bank' } },
        ],
      },
    });
    t.is(mainWrite.status, 200, mainWrite.text);

    // The merged diagram would hold two instances named 'b', which no write could then address
    // (every later write of the diagram was refused: Ref 'b' is used more than once.).
    const rule = `${resourcePath('diagram', 'c2')}: Ref 'b' is used more than once.`;
    t.is((await s.get(`${API}/drafts/both-b`)).body.problem, rule);
    const before = await refs(s);
    for (const way of ['merge', 'update']) {
      const refused = await s.post(`${API}/drafts/both-b/${way}`, {});
      t.is(refused.status, 409, way);
      t.deepEqual(refused.body, { error: rule }, way);
    }
    t.is(await refs(s), before, 'nothing moved');
    t.is((await s.request('PATCH', `${API}/diagrams/c2`, { body: { name: 'Payments' } })).status, 200, 'main is still writable');

    // A push bringing a second instance of one ref is refused as the merge is.
    await withClone(s, async (dir, git) => {
      await git('checkout', '-q', '-b', 'drafts/twice', 'origin/main');
      const path = join(dir, resourcePath('diagram', 'c2'));
      await writeFile(path, (await readFile(path, 'utf8')).replace('ref: b', 'ref: a'));
      await git('commit', '-q', '-am', 'Two instances named a');
      const pushed = await git('push', 'origin', 'drafts/twice').then(
        () => '',
        (err: { stderr?: string }) => String(err.stderr),
      );
      t.regex(pushed, /drafts\/twice: commit [0-9a-f]{12}: diagrams\/[0-9a-f]{2}\/c2\.yaml: Ref 'a' is used more than once\./);
    });
    t.is((await s.get(`${API}/drafts/twice`)).status, 404);
    t.is(await refs(s), before.replace(/refs\/heads\/main \S+/, `refs/heads/main ${await s.head()}`));
  }));

test('a merge is held to the bounds of a write: a diagram or an organization past its limit only by the two sides together is refused, 413, nothing moves', async (t) => {
  const s = await TestServer.start({ limits: { diagramInstances: 2, orgComponents: 4 } });
  try {
    for (const id of ['a', 'b']) await s.post(`${API}/components`, { id, name: id.toUpperCase() });
    const diagram = { id: 'c2', name: 'C2', level: 'C2', componentInstances: [{ ref: 'a', componentId: 'a' }] };
    t.is((await s.post(`${API}/diagrams`, diagram)).status, 201);
    await open(s, 'grow');
    // Each side adds one instance to the diagram (2 of 2 each).
    const two = (ref: string) => ({
      componentInstances: [
        { ref: 'a', componentId: 'a' },
        { ref, componentId: 'b' },
      ],
    });
    t.is((await s.request('PATCH', `${API}/diagrams/c2?draft=grow`, { body: two('x') })).status, 200);
    t.is((await s.request('PATCH', `${API}/diagrams/c2`, { body: two('y') })).status, 200);
    const before = await refs(s);
    const tooLarge =
      "Diagram 'C2' has 3 component instances; the limit is 2 component instances per diagram (raise it with: c4store serve --max-diagram-instances N).";
    t.is((await s.get(`${API}/drafts/grow`)).body.problem, tooLarge, 'the draft foresees it');
    for (const way of ['merge', 'update']) {
      const refused = await s.post(`${API}/drafts/grow/${way}`, {});
      t.is(refused.status, 413, way);
      t.deepEqual(refused.body, { error: tooLarge }, way);
    }
    t.is(await refs(s), before, 'nothing moved');

    // The draft takes its instance back; then each side adds components (3 and 4 of 4, 5 together).
    const one = { componentInstances: [{ ref: 'a', componentId: 'a' }] };
    t.is((await s.request('PATCH', `${API}/diagrams/c2?draft=grow`, { body: one })).status, 200);
    t.is((await s.post(`${API}/components?draft=grow`, { id: 'c', name: 'C' })).status, 201);
    t.is((await s.post(`${API}/components`, { id: 'd', name: 'D' })).status, 201);
    t.is((await s.post(`${API}/components`, { id: 'e', name: 'E' })).status, 201);
    const full = await refs(s);
    const tooMany =
      'The organization would have 5 components; the limit is 4 components per organization (raise it with: c4store serve --max-org-components N).';
    t.is((await s.get(`${API}/drafts/grow`)).body.problem, tooMany, 'the draft foresees it');
    const refused = await s.post(`${API}/drafts/grow/merge`, {});
    t.is(refused.status, 413, refused.text);
    t.deepEqual(refused.body, { error: tooMany });
    t.is(await refs(s), full, 'nothing moved');
    t.is((await s.request('DELETE', `${API}/components/e`)).status, 200);
    t.false('problem' in (await s.get(`${API}/drafts/grow`)).body, 'within the bounds again');
    const merged = await s.post(`${API}/drafts/grow/merge`, {});
    t.is(merged.status, 200, merged.text);
  } finally {
    await s.close();
  }
});

test('a merge goes through while main keeps being written: it is worked out again on the main it finds under the lock, not refused 503', (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'pay', name: 'Payments' });
    await open(s, 'busy');
    t.is((await s.request('PATCH', `${API}/components/pay?draft=busy`, { body: { desc: 'All money' } })).status, 200);
    t.is((await s.post(`${API}/components?draft=busy`, { id: 'fraud', name: 'Fraud Check' })).status, 201);
    // Four writers keep main moving (each write waits its turn behind the others) all through the merge.
    let merging = true;
    let written = 0;
    const writer = async (w: number) => {
      for (let i = 0; merging; i++) {
        const reply = await s.post(`${API}/components`, { id: `w${w}-${i}`, name: `Writer ${w} #${i}` });
        if (reply.status !== 201) throw new Error(`${reply.status} ${reply.text}`);
        written++;
      }
    };
    const writers = [1, 2, 3, 4].map(writer);
    while (written < 8) await new Promise((resolve) => setTimeout(resolve, 5));
    const merged = await s.post(`${API}/drafts/busy/merge`, {});
    merging = false;
    await Promise.all(writers);
    t.is(merged.status, 200, merged.text);
    const commit = merged.body.mergeCommit as string;
    t.is((await s.git('rev-parse', `${commit}^2`)).trim(), (await s.git('rev-parse', 'refs/drafts-merged/busy')).trim());
    t.is((await s.git('rev-list', '--count', '--merges', 'main')).trim(), '1', 'one merge commit');
    // Every write landed, before or after the merge, and the merge brought the draft's work.
    const components = (await s.get(`${API}/components`)).body as Array<{ id: string; desc: string | null }>;
    t.is(components.length, written + 2);
    t.is(components.find((c) => c.id === 'pay')?.desc, 'All money');
    t.true(components.some((c) => c.id === 'fraud'));
  }));

test("a resource's history is in the order of main's chain, page after page, when a pushed commit's clock ran ahead (with a commit graph)", (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'api', name: 'API' });
    await s.request('PATCH', `${API}/components/api`, { body: { desc: 'first' } });
    // A commit made on a machine whose clock runs two hours ahead, pushed to main.
    await withClone(s, async (dir, git) => {
      const path = join(dir, resourcePath('component', 'api'));
      await writeFile(path, (await readFile(path, 'utf8')).replace('desc: first', 'desc: pushed'));
      const ahead = new Date(Date.now() + 2 * 3600_000).toISOString();
      await run(
        'git',
        ['-C', dir, '-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', 'commit', '-q', '-am', 'From a clock ahead'],
        {
          env: { ...ENV, GIT_COMMITTER_DATE: ahead, GIT_AUTHOR_DATE: ahead },
        },
      );
      await git('push', '-q', 'origin', 'main');
    });
    await s.request('PATCH', `${API}/components/api`, { body: { desc: 'last' } });
    // The commit graph the server writes after packing: git then reads one path at a time.
    await s.git('commit-graph', 'write', '--reachable', '--changed-paths');
    const chain = (await s.git('log', '--first-parent', '--format=%H', 'main', '--', resourcePath('component', 'api'))).trim().split('\n');
    t.is(chain.length, 4);

    const whole = await s.get(`${API}/history?resource=api`);
    t.deepEqual(
      whole.body.map((c: { id: string }) => c.id),
      chain,
      'newest first along the chain, as git log --first-parent',
    );
    // Page by page, by the Link each page gives: every commit once, in order.
    const paged: string[] = [];
    let next: string | undefined = `${API}/history?resource=api&limit=2`;
    while (next !== undefined) {
      const page = await s.get(next);
      t.is(page.status, 200, page.text);
      paged.push(...page.body.map((c: { id: string }) => c.id));
      next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    }
    t.deepEqual(paged, chain);
  }));

test("a draft starts from a state main has had: a merged draft's own commit is no 'from'", (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'pay', name: 'Payments' });
    await open(s, 'first');
    t.is((await s.request('PATCH', `${API}/components/pay?draft=first`, { body: { desc: 'Draft only' } })).status, 200);
    const own = (await s.git('rev-parse', 'drafts/first')).trim();
    t.is((await s.request('PATCH', `${API}/components/pay`, { body: { name: 'Payment Service' } })).status, 200);
    t.is((await s.post(`${API}/drafts/first/merge`, {})).status, 200);
    // The draft's commit is an ancestor of main now (the merge's second parent), yet main never
    // held its model (name 'Payments' with desc 'Draft only'): a draft opened there would be
    // reviewed against, and show as its base, a state main never had.
    const before = await refs(s);
    const refused = await s.post(`${API}/drafts`, { name: 'second', from: own });
    t.is(refused.status, 400, refused.text);
    t.deepEqual(refused.body, { error: `'from' must name a revision of main; ${own} is not one.` });
    t.is(await refs(s), before);
    // A commit main had (its first-parent chain) is taken.
    const mainBefore = (await s.git('rev-parse', 'main^1')).trim();
    t.like((await s.post(`${API}/drafts`, { name: 'second', from: mainBefore })).body, { base: mainBefore, head: mainBefore });
  }));

test('a type slug names one type: a push bringing a second type of a slug is refused, and so is a merge whose two sides each brought one', (t) =>
  withServer(async (s) => {
    await open(s, 'queues');
    const typeFile = (id: string, name: string) =>
      `# yaml-language-server: $schema=../.c4store/schemas/type.json\nid: ${id}\nslug: event-queue\nname: ${name}\n`;
    await withClone(s, async (dir, git) => {
      const fails = (...args: string[]) =>
        git(...args).then(
          () => '',
          (err: { stderr?: string }) => String(err.stderr),
        );
      // Two types of one slug in one push: refused.
      await git('checkout', '-q', '-b', 'twice', 'origin/main');
      await writeFile(join(dir, 'types', '01m8gh00000000000000000q01.yaml'), typeFile('01m8gh00000000000000000q01', 'Queue'));
      await writeFile(join(dir, 'types', '01m8gh00000000000000000q02.yaml'), typeFile('01m8gh00000000000000000q02', 'Event queue'));
      await git('add', 'types');
      await git('commit', '-q', '-m', 'Two queues');
      t.regex(
        await fails('push', 'origin', 'twice:refs/heads/drafts/twice'),
        /drafts\/twice: commit [0-9a-f]{12}: types\/01m8gh00000000000000000q0[12]\.yaml: Slug 'event-queue' is used more than once\./,
      );
      t.regex(await fails('push', 'origin', 'twice:main'), /Slug 'event-queue' is used more than once\./);
      // One on main, one in the draft: each push alone is taken.
      await git('checkout', '-q', '-b', 'one', 'origin/main');
      await writeFile(join(dir, 'types', '01m8gh00000000000000000q01.yaml'), typeFile('01m8gh00000000000000000q01', 'Queue'));
      await git('add', 'types');
      await git('commit', '-q', '-m', 'A queue on main');
      await git('push', '-q', 'origin', 'one:main');
      await git('checkout', '-q', '-b', 'other', 'origin/drafts/queues');
      await writeFile(join(dir, 'types', '01m8gh00000000000000000q02.yaml'), typeFile('01m8gh00000000000000000q02', 'Event queue'));
      await git('add', 'types');
      await git('commit', '-q', '-m', 'A queue in the draft');
      await git('push', '-q', 'origin', 'other:drafts/queues');
    });
    t.is((await s.get(`${API}/drafts/twice`)).status, 404);
    // Each side brought one of the two: the rule names the first by id.
    const rule = "types/01m8gh00000000000000000q01.yaml: Slug 'event-queue' is used more than once.";
    t.is((await s.get(`${API}/drafts/queues`)).body.problem, rule);
    const before = await refs(s);
    const refused = await s.post(`${API}/drafts/queues/merge`, {});
    t.is(refused.status, 409, refused.text);
    t.deepEqual(refused.body, { error: rule });
    t.is(await refs(s), before);
    t.is((await s.get(`${API}/type`)).body.filter((type: { slug: string }) => type.slug === 'event-queue').length, 1);
  }));

test("a merge brings the draft's files that are no model file (a README pushed into it), or refuses when main changed them too", (t) =>
  withServer(async (s) => {
    await s.post(`${API}/components`, { id: 'pay', name: 'Payments' });
    await withClone(s, async (dir, git) => {
      await writeFile(join(dir, 'README.md'), '# Acme architecture\n');
      await git('add', 'README.md');
      await git('commit', '-q', '-m', 'A README');
      await git('push', '-q', 'origin', 'main');
      // A draft by push: the README reworded and a component renamed.
      await git('checkout', '-q', '-b', 'drafts/docs');
      await writeFile(join(dir, 'README.md'), '# Acme architecture\n\nHow payments flow.\n');
      await writeFile(join(dir, 'NOTES.md'), 'Reviewed by Ada.\n');
      const path = join(dir, resourcePath('component', 'pay'));
      await writeFile(path, (await readFile(path, 'utf8')).replace('name: Payments', 'name: Payment Service'));
      await git('add', '-A');
      await git('commit', '-q', '-m', 'Document payments');
      await git('push', '-q', 'origin', 'drafts/docs');
    });
    // main moves on meanwhile (a model write), so the merge is a real one.
    t.is((await s.post(`${API}/components`, { id: 'db', name: 'DB' })).status, 201);
    const merged = await s.post(`${API}/drafts/docs/merge`, {});
    t.is(merged.status, 200, merged.text);
    t.is((await s.get(`${API}/components/pay`)).body.name, 'Payment Service');
    // git records the draft as merged (its head is a parent of main), so what it changed is on main.
    t.is(await s.git('show', 'main:README.md'), '# Acme architecture\n\nHow payments flow.\n');
    t.is(await s.git('show', 'main:NOTES.md'), 'Reviewed by Ada.\n');
    t.is((await s.git('diff', '--name-only', 'refs/drafts-merged/docs', 'main', '--', 'README.md', 'NOTES.md')).trim(), '');

    // The README changed on both sides, each its own way: no field settles it, so the merge and
    // the update are refused (a merge leaving one side out would lose it for good) and nothing moves.
    await withClone(s, async (dir, git) => {
      await git('checkout', '-q', '-b', 'drafts/reword');
      await writeFile(join(dir, 'README.md'), '# Acme\n');
      await git('commit', '-q', '-am', 'Shorter');
      await git('push', '-q', 'origin', 'drafts/reword');
      await git('checkout', '-q', 'main');
      await writeFile(join(dir, 'README.md'), '# Acme architecture, 2027\n');
      await git('commit', '-q', '-am', 'Dated');
      await git('push', '-q', 'origin', 'main');
    });
    const before = await refs(s);
    for (const way of ['merge', 'update']) {
      const refused = await s.post(`${API}/drafts/reword/${way}`, {});
      t.is(refused.status, 409, way);
      t.deepEqual(refused.body, {
        error:
          "Draft 'reword' and main both changed 'README.md', which is no model file: merge it with git (main into the draft's branch) and push the draft.",
      });
    }
    t.is(await refs(s), before);
  }));

test("a merge carries the mode of the draft's files that are no model file: a script added executable, one made executable, a symbolic link", (t) =>
  withServer(async (s) => {
    await withClone(s, async (dir, git) => {
      await mkdir(join(dir, 'bin'));
      await writeFile(join(dir, 'bin', 'run.sh'), '#!/bin/sh\necho run\n');
      await git('add', 'bin/run.sh');
      await git('commit', '-q', '-m', 'A script, not yet executable');
      await git('push', '-q', 'origin', 'main');
      await git('checkout', '-q', '-b', 'drafts/scripts');
      await chmod(join(dir, 'bin', 'run.sh'), 0o755);
      await mkdir(join(dir, 'tools'));
      await writeFile(join(dir, 'tools', 'check.sh'), '#!/bin/sh\necho check\n', { mode: 0o755 });
      await symlink('../bin/run.sh', join(dir, 'tools', 'run'));
      await git('add', '-A');
      await git('commit', '-q', '-m', 'Scripts, executable');
      await git('push', '-q', 'origin', 'drafts/scripts');
    });
    // main moves on meanwhile (a model write), so the merge is a real one.
    t.is((await s.post(`${API}/components`, { id: 'db', name: 'DB' })).status, 201);
    const merged = await s.post(`${API}/drafts/scripts/merge`, {});
    t.is(merged.status, 200, merged.text);
    await withClone(s, async (_dir, git) => {
      const listed = await git('ls-tree', '-r', 'HEAD', '--', 'bin', 'tools');
      t.regex(listed, /^100755 blob [0-9a-f]{40}\tbin\/run\.sh$/m);
      t.regex(listed, /^100755 blob [0-9a-f]{40}\ttools\/check\.sh$/m);
      t.regex(listed, /^120000 blob [0-9a-f]{40}\ttools\/run$/m);
    });
    await s.git('fsck', '--strict');
  }));

test('a file outside the model that is a file on one side and a folder on the other: a change of one side alone merges, both sides together are refused, 409', (t) =>
  withServer(async (s) => {
    await withClone(s, async (dir, git) => {
      await mkdir(join(dir, 'notes'));
      await writeFile(join(dir, 'notes', 'a.md'), 'A\n');
      await writeFile(join(dir, 'notes', 'b.md'), 'B\n');
      await writeFile(join(dir, 'guide'), 'One page\n');
      await git('add', '-A');
      await git('commit', '-q', '-m', 'Notes and a guide');
      await git('push', '-q', 'origin', 'main');
      // The draft alone makes the folder notes one file, and the file guide a folder.
      await git('checkout', '-q', '-b', 'drafts/reshape');
      await git('rm', '-q', '-r', 'notes', 'guide');
      await writeFile(join(dir, 'notes'), 'A and B\n');
      await mkdir(join(dir, 'guide'));
      await writeFile(join(dir, 'guide', 'index.md'), 'Many pages\n');
      await git('add', '-A');
      await git('commit', '-q', '-m', 'Reshaped');
      await git('push', '-q', 'origin', 'drafts/reshape');
    });
    // main moves on meanwhile (a model write), so the merge is a real one.
    t.is((await s.post(`${API}/components`, { id: 'db', name: 'DB' })).status, 201);
    const merged = await s.post(`${API}/drafts/reshape/merge`, {});
    t.is(merged.status, 200, merged.text);
    t.is(await s.git('show', 'main:notes'), 'A and B\n');
    t.is(await s.git('show', 'main:guide/index.md'), 'Many pages\n');
    t.is((await s.git('ls-tree', '-r', '--name-only', 'main', '--', 'notes', 'guide')).trim(), 'guide/index.md\nnotes');
    await s.git('fsck', '--strict');

    // Each side makes one name something else: a file on one, a folder on the other (or files
    // added to the folder the other side makes a file). No field settles it, so the merge and the
    // update are refused and nothing moves.
    type Way = (dir: string, git: (...args: string[]) => Promise<string>) => Promise<void>;
    const cases: Array<{ draft: string; path: string; inDraft: Way; onMain: Way }> = [
      {
        draft: 'docs',
        path: 'docs',
        inDraft: (dir) => writeFile(join(dir, 'docs'), 'a file\n'),
        onMain: async (dir) => {
          await mkdir(join(dir, 'docs'));
          await writeFile(join(dir, 'docs', 'x.md'), 'in a folder\n');
        },
      },
      {
        draft: 'site',
        path: 'site',
        inDraft: async (dir) => {
          await mkdir(join(dir, 'site'));
          await writeFile(join(dir, 'site', 'index.md'), 'in a folder\n');
        },
        onMain: (dir) => writeFile(join(dir, 'site'), 'a file\n'),
      },
      {
        // The draft makes the folder a file again while main adds a file to it.
        draft: 'guide-folder',
        path: 'guide',
        inDraft: async (dir, git) => {
          await git('rm', '-q', '-r', 'guide');
          await writeFile(join(dir, 'guide'), 'One page again\n');
        },
        onMain: (dir) => writeFile(join(dir, 'guide', 'faq.md'), 'Questions\n'),
      },
    ];
    for (const { draft, path, inDraft, onMain } of cases) {
      await withClone(s, async (dir, git) => {
        await git('checkout', '-q', '-b', `drafts/${draft}`);
        await inDraft(dir, git);
        await git('add', '-A');
        await git('commit', '-q', '-m', 'The draft’s way');
        await git('push', '-q', 'origin', `drafts/${draft}`);
        await git('checkout', '-q', 'main');
        await onMain(dir, git);
        await git('add', '-A');
        await git('commit', '-q', '-m', 'main’s way');
        await git('push', '-q', 'origin', 'main');
      });
      const before = await refs(s);
      for (const way of ['merge', 'update']) {
        const refused = await s.post(`${API}/drafts/${draft}/${way}`, {});
        t.is(refused.status, 409, `${draft} ${way}: ${refused.text}`);
        t.deepEqual(refused.body, {
          error: `Draft '${draft}' and main disagree on '${path}', which is no model file: a file on one side, a folder on the other. Merge it with git (main into the draft's branch) and push the draft.`,
        });
      }
      t.is(await refs(s), before, `${draft}: nothing moved`);
    }
  }));
