/**
 * A push is held to every check an API write is held to (issue 24.3 and 24.10): git's own object
 * checks, the shape of the tree as the store writes it, the size limits, and versions named and
 * placed as the API makes them. Each push is made of real git objects (`git mktree`,
 * `git hash-object`, a tree written byte by byte where git's own tools refuse to make it), sent
 * over smart HTTP; each refusal leaves main and every tag where they were.
 */
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { OBJECT_CHECK_SEVERITIES, OBJECT_CHECKS } from '../src/push/hook.js';
import { startServer } from '../src/server.js';
import { CLI } from './support/process.js';
import { GIT_ENV as ENV, gitIn as git, remoteOf as remote } from './support/git-clone.js';
import { run, TestServer } from './support/server.js';

async function pushRefused(cwd: string, ...refspecs: string[]): Promise<string> {
  try {
    await git(cwd, ['push', 'origin', ...refspecs]);
  } catch (err) {
    return String((err as { stderr?: string }).stderr);
  }
  throw new Error(`git push ${refspecs.join(' ')} succeeded`);
}

/**
 * A clone of `s`'s organization for test `t` (removed after it): the tree of its main as `git
 * ls-tree` lines, and main's head and the tags as they were before anything was pushed, for
 * `unchanged` to hold the server to.
 */
async function cloneForPush(t: ExecutionContext, s: TestServer): Promise<{ dir: string; tree: string[]; head: string; tags: string }> {
  const parent = await mkdtemp(join(tmpdir(), 'c4store-push-'));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  const dir = join(parent, 'model');
  await run('git', ['clone', '-q', remote(s), dir], { env: ENV });
  const tree = (await git(dir, ['ls-tree', 'HEAD'])).split('\n');
  return { dir, tree, head: await s.head(), tags: await s.git('tag', '--list') };
}

/** A commit on top of main with `tree`, as `git commit-tree` makes it. */
function commitOnMain(dir: string, tree: string, message = 'pushed'): Promise<string> {
  return git(dir, ['commit-tree', tree, '-p', 'HEAD', '-m', message]);
}

/** Writes a loose object as git would, for what git's own tools refuse to write (an unsorted tree). */
async function writeRawObject(dir: string, type: string, body: Buffer): Promise<string> {
  const object = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
  const oid = createHash('sha1').update(object).digest('hex');
  const path = join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, deflateSync(object));
  return oid;
}

async function unchanged(t: import('ava').ExecutionContext, s: TestServer, head: string, tags: string): Promise<void> {
  t.is(await s.head(), head, 'main did not move');
  t.is(await s.git('tag', '--list'), tags, 'no tag was made');
}

test('the pre-receive hook run by hand with what git never gives it refuses in words, not with a TypeError', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const head = await s.head();
  for (const input of ['garbage\n', 'a b\n', `${head} ${head}\n`, `${head} ${head} main\n`]) {
    const hook = spawnSync(process.execPath, [CLI, 'hook', 'pre-receive'], {
      input,
      env: { ...process.env, GIT_DIR: s.gitdir },
      encoding: 'utf8',
    });
    t.is(hook.status, 1, input);
    t.regex(hook.stderr, /is not a ref update git would give \('<old id> <new id> refs\/…'\)/, input);
    t.notRegex(hook.stderr, /Cannot read|TypeError|undefined/, input);
  }
  t.is(await s.head(), head);
});

test('every organization repository checks pushed objects with git fsck rules, old ones from the next start', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  for (const name of OBJECT_CHECKS) t.is((await s.git('config', '--bool', '--get', name)).trim(), 'true', name);
  // A repository from before: the settings removed, then a server started on the data directory again.
  for (const name of OBJECT_CHECKS) await s.git('config', '--unset', name);
  const again = await startServer({ dataDir: s.dataDir, port: 0, log: () => {} });
  t.teardown(() => again.close());
  for (const name of OBJECT_CHECKS) t.is((await s.git('config', '--bool', '--get', name)).trim(), 'true', `${name} after a start`);
  for (const [name, value] of OBJECT_CHECK_SEVERITIES) t.is((await s.git('config', '--get', name)).trim(), value, `${name} after a start`);
});

test('a tree entry of a mode git never writes (100664, 40755) is refused by git; one already on main is read as git reads it', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  t.is((await s.post('/api/external/tag', [{ name: 'Kept', color: 'blue' }])).status, 200);
  const { dir, tree, head, tags } = await cloneForPush(t, s);
  // The root tree byte by byte (git mktree canonicalizes modes), one entry's mode replaced.
  const rootWith = (name: string, mode: string) =>
    writeRawObject(
      dir,
      'tree',
      Buffer.concat(
        tree.map((line) => {
          const [meta, entry] = line.split('\t');
          const [stored, , oid] = meta!.split(' ');
          return Buffer.concat([Buffer.from(`${entry === name ? mode : stored!.replace(/^0+/, '')} ${entry}\0`), Buffer.from(oid!, 'hex')]);
        }),
      ),
    );
  for (const [name, mode] of [
    ['organization.yaml', '100664'],
    ['organization.yaml', '100600'],
    ['tags', '40755'],
  ] as const) {
    const output = await pushRefused(dir, `${await commitOnMain(dir, await rootWith(name, mode))}:refs/heads/main`);
    t.regex(output, /badFilemode/, `${name} ${mode}`);
    await unchanged(t, s, head, tags);
  }
  // A tag object whose name no ref could have, or without a tagger: refused by git too.
  for (const [body, finding] of [
    [`object ${head}\ntype commit\ntag v1..bad\ntagger Ada <ada@example.com> 1700000000 +0000\n\nx\n`, /badTagName/],
    [`object ${head}\ntype commit\ntag v-no-tagger\n\nx\n`, /missingTaggerEntry/],
  ] as const) {
    const tag = await writeRawObject(dir, 'tag', Buffer.from(body));
    t.regex(await pushRefused(dir, `${tag}:refs/tags/v-odd`), finding);
    await unchanged(t, s, head, tags);
  }
  // Such a tree put on main past every check (by hand, in the repository) is read as git and every
  // clone read it: a file and a folder. The model is valid, and writes go on.
  const odd = await rootWith('tags', '40755');
  const commit = await commitOnMain(dir, await rootWith('organization.yaml', '100664'));
  const both = await git(dir, ['commit-tree', odd, '-p', commit, '-m', 'by hand']);
  const unchecked = ['-c', 'transfer.fsckObjects=false', '-c', 'fetch.fsckObjects=false'];
  await run('git', ['--git-dir', s.gitdir, ...unchecked, 'fetch', '-q', dir, `${both}:refs/heads/by-hand`], { env: ENV });
  await s.git('update-ref', 'refs/heads/main', both);
  const read = await s.get('/api/external/tag');
  t.is(read.headers.get('warning'), null, 'main is served as it stands');
  t.true((read.body as { name: string }[]).some((tag) => tag.name === 'Kept'));
  t.is((await s.post('/api/external/tag', [{ name: 'After', color: 'red' }])).status, 200);
});

test('a tree with unsorted entries is refused by git: acknowledged API writes survive a restart', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const written = await s.post('/api/external/component', [{ name: 'Acknowledged' }]);
  t.is(written.status, 200);
  const { dir, tree, head, tags } = await cloneForPush(t, s);
  // The root tree of main with two of its entries swapped: the same entries, out of git's order.
  const entries = tree.map((line) => {
    const [meta, name] = line.split('\t');
    const [mode, , oid] = meta!.split(' ');
    return Buffer.concat([Buffer.from(`${mode!.replace(/^0+/, '')} ${name}\0`), Buffer.from(oid!, 'hex')]);
  });
  [entries[0], entries[1]] = [entries[1]!, entries[0]!];
  const unsorted = await writeRawObject(dir, 'tree', Buffer.concat(entries));
  const output = await pushRefused(dir, `${await commitOnMain(dir, unsorted)}:refs/heads/main`);
  t.regex(output, /treeNotSorted|not properly sorted|unpacker error/);
  await unchanged(t, s, head, tags);
  const restarted = await startServer({ dataDir: s.dataDir, port: 0, log: () => {} });
  t.teardown(() => restarted.close());
  const list = (await (
    await fetch(`${restarted.url}/api/external/component`, { headers: { authorization: `Bearer ${s.key}` } })
  ).json()) as {
    name: string;
  }[];
  t.true(list.some((c) => c.name === 'Acknowledged'));
});

test('a .GIT path, a plain file where a shard folder belongs, a symlink resource: refused, nothing moves', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  await s.post('/api/external/component', [{ name: 'First' }]);
  const { dir, tree, head, tags } = await cloneForPush(t, s);
  const blob = await git(dir, ['hash-object', '-w', '--stdin'], 'hello\n');
  const withEntry = (entry: string) => git(dir, ['mktree'], `${[...tree, entry].join('\n')}\n`);

  const dotGit = await pushRefused(dir, `${await commitOnMain(dir, await withEntry(`100644 blob ${blob}\t.GIT`))}:refs/heads/main`);
  t.regex(dotGit, /hasDotgit|\.git|unpacker error/i);
  await unchanged(t, s, head, tags);

  // components/36 as a plain file: every later API create in shard 36 would fail.
  const components = tree.find((line) => line.endsWith('\tcomponents'))!.split(/\s/)[2]!;
  const componentsTree = (await git(dir, ['ls-tree', components])).split('\n');
  const withFile = await git(
    dir,
    ['mktree'],
    `${[...componentsTree.filter((l) => !l.endsWith('\t36')), `100644 blob ${blob}\t36`].join('\n')}\n`,
  );
  const root = await git(
    dir,
    ['mktree'],
    `${tree.map((line) => (line.endsWith('\tcomponents') ? `040000 tree ${withFile}\tcomponents` : line)).join('\n')}\n`,
  );
  const shard = await pushRefused(dir, `${await commitOnMain(dir, root)}:refs/heads/main`);
  t.regex(shard, /components\/36: c4store keeps a folder here/);
  await unchanged(t, s, head, tags);

  // organization.yaml as a symbolic link.
  const organization = tree.find((line) => line.endsWith('\torganization.yaml'))!;
  const link = await git(dir, ['hash-object', '-w', '--stdin'], 'types/x.yaml');
  const linked = await git(
    dir,
    ['mktree'],
    `${tree.map((line) => (line === organization ? `120000 blob ${link}\torganization.yaml` : line)).join('\n')}\n`,
  );
  const symlink = await pushRefused(dir, `${await commitOnMain(dir, linked)}:refs/heads/main`);
  t.regex(symlink, /organization\.yaml: must be a plain file \(mode 100644\)/);
  await unchanged(t, s, head, tags);

  // The API still creates components in every shard.
  t.is(
    (
      await s.post(
        '/api/external/component',
        Array.from({ length: 40 }, (_, i) => ({ name: `C${i}` })),
      )
    ).status,
    200,
  );
  const { stdout } = await run('git', ['--git-dir', s.gitdir, 'fsck', '--strict']);
  t.is(stdout, '');
});

test("a path differing only in case from c4store's own (Organization.yaml, Types/) is refused: a macOS or Windows clone makes one file of the two", async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const { dir, tree, head, tags } = await cloneForPush(t, s);
  const blob = await git(dir, ['hash-object', '-w', '--stdin'], 'name: Elsewhere\nslug: elsewhere\n');
  const withEntries = (...entries: string[]) => git(dir, ['mktree'], `${[...tree, ...entries].join('\n')}\n`);
  const types = tree.find((line) => line.endsWith('\ttypes'))!.split(/\s/)[2]!;
  for (const [entry, path] of [
    [`100644 blob ${blob}\tOrganization.yaml`, 'Organization.yaml'],
    [`040000 tree ${types}\tTypes`, 'Types'],
    [`100644 blob ${blob}\tTYPES`, 'TYPES'],
  ] as const) {
    const output = await pushRefused(dir, `${await commitOnMain(dir, await withEntries(entry))}:refs/heads/main`);
    t.true(output.includes(`${path}: differs only in case from c4store's ${path.toLowerCase()}`), output);
    await unchanged(t, s, head, tags);
  }
  // Files that are not c4store's, in any case, are taken as ever.
  const taken = await commitOnMain(dir, await withEntries(`100644 blob ${blob}\tREADME.md`, `100644 blob ${blob}\tOrganization.txt`));
  await git(dir, ['push', 'origin', `${taken}:refs/heads/main`]);
  t.is(await s.head(), taken);
});

test('a pushed diagram beyond the write bounds is refused with the API write limit text', async (t) => {
  const s = await TestServer.start({ limits: { diagramInstances: 3 } as never });
  t.teardown(() => s.close());
  const made = await s.post('/api/external/diagram', [{ name: 'Small', level: 'C1', componentInstances: [{}, {}] }]);
  t.is(made.status, 200);
  const { dir, head, tags } = await cloneForPush(t, s);
  const file = (await git(dir, ['ls-files', 'diagrams'])).split('\n')[0]!;
  const text = await readFile(join(dir, file), 'utf8');
  // Two more copies of the first instance, with new ids: four instances, over the limit of three.
  const first = /^( *)- id: (\S+)\n(?:\1 {2}.*\n)+/m.exec(text);
  t.truthy(first, text);
  const copies = ['x', 'y'].map((last) => first![0].replace(first![2]!, `${first![2]!.slice(0, -1)}${last}`)).join('');
  const more = text.replace(first![0], first![0] + copies);
  await writeFile(join(dir, file), more);
  await git(dir, ['commit', '-qam', 'four instances']);
  const output = await pushRefused(dir, 'HEAD:refs/heads/main');
  t.regex(output, /Diagram 'Small' has 4 component instances; the limit is 3 component instances per diagram/);
  await unchanged(t, s, head, tags);
});

test('a pushed model file larger than a request body may be is refused: no write could make it, nor write it back', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const made = await s.post('/api/external/tag', [{ name: 'Big', color: 'red' }]);
  t.is(made.status, 200);
  const { dir, head, tags } = await cloneForPush(t, s);
  const file = (await git(dir, ['ls-files', 'tags'])).split('\n')[0]!;
  const text = await readFile(join(dir, file), 'utf8');
  await writeFile(join(dir, file), text.replace(/^desc: .*$/m, `desc: ${'x'.repeat(11 * 2 ** 20)}`));
  await git(dir, ['commit', '-qam', 'a long desc']);
  const output = await pushRefused(dir, 'HEAD:refs/heads/main');
  t.regex(output, new RegExp(`${file}: 11\\.0 MB, larger than one write may carry \\(10\\.0 MB\\)\\.`), output);
  await unchanged(t, s, head, tags);
});

test('a pushed model file of hundreds of megabytes (a few hundred kilobytes in the pack) is refused by its size, not read', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const made = await s.post('/api/external/tag', [{ name: 'Huge', color: 'red' }]);
  t.is(made.status, 200);
  const { dir, head, tags } = await cloneForPush(t, s);
  const file = (await git(dir, ['ls-files', 'tags'])).split('\n')[0]!;
  // One repeated byte: git packs 200 MB in about 200 kB. Read in full, the check's reader joined
  // it piece by piece and held a core for longer than git's timeout.
  await writeFile(join(dir, file), Buffer.concat([Buffer.from('name: Huge\n#'), Buffer.alloc(200 * 2 ** 20, ' '), Buffer.from('\n')]));
  await git(dir, ['commit', '-qam', 'a huge comment']);
  const output = await pushRefused(dir, 'HEAD:refs/heads/main');
  t.regex(output, new RegExp(`${file}: 200\\.0 MB, larger than one write may carry \\(10\\.0 MB\\)\\.`), output);
  await unchanged(t, s, head, tags);
  t.is((await s.get('/api/external/tag')).body[0].name, 'Huge');
});

test('version tags: main, HEAD and names no revision can name are refused, as are tags on commits that are not on main', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const { dir, tree, head, tags } = await cloneForPush(t, s);
  for (const name of ['main', 'HEAD', 'v+1', 'a@b', 'vé', 'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'AUTO_MERGE']) {
    await git(dir, ['tag', '-f', name, 'HEAD']);
    const output = await pushRefused(dir, `refs/tags/${name}:refs/tags/${name}`);
    t.regex(output, /Invalid version name/, name);
    await unchanged(t, s, head, tags);
  }
  // A commit that never was on main (and so was never checked).
  const aside = await commitOnMain(dir, await git(dir, ['mktree'], `${tree.join('\n')}\n`), 'aside');
  await git(dir, ['tag', 'aside', aside]);
  const output = await pushRefused(dir, 'refs/tags/aside:refs/tags/aside');
  t.regex(output, /a version must name a commit of main/);
  await unchanged(t, s, head, tags);
  // A good version on main goes through.
  await git(dir, ['tag', '-a', '-m', 'first', 'v1.0', 'HEAD']);
  await git(dir, ['push', '-q', 'origin', 'refs/tags/v1.0:refs/tags/v1.0']);
  t.is((await s.git('tag', '--list')).trim(), 'v1.0');
  t.is((await s.get('/api/external/component?at=v1.0')).status, 200);
  // A version in a folder of another's, beside the existing one or another of the same push: the
  // API's 409 text, where git refused one of them with its own words and made the other.
  const afterV1 = await s.head();
  const v1Tags = await s.git('tag', '--list');
  // Not tagged in the clone: it cannot hold both either.
  const commit = await git(dir, ['rev-parse', 'refs/heads/main']);
  t.regex(
    await pushRefused(dir, `${commit}:refs/tags/v1.0/rc`),
    /refs\/tags\/v1\.0\/rc: Version 'v1\.0\/rc' cannot be made beside version 'v1\.0': one version's name cannot be a folder of another's\./,
  );
  const both = await pushRefused(dir, `${commit}:refs/tags/v2`, `${commit}:refs/tags/v2/rc`);
  t.regex(both, /Version 'v2' cannot be made beside version 'v2\/rc'/);
  // Names differing only in case are one file on a macOS or Windows clone: refused as the API refuses them.
  t.regex(
    await pushRefused(dir, `${commit}:refs/tags/V1.0`),
    /refs\/tags\/V1\.0: Version 'V1\.0' cannot be made beside version 'v1\.0': names that differ only in case/,
  );
  await unchanged(t, s, afterV1, v1Tags);
});

test('a push giving one id to two kinds of thing is refused, and check says so of the clone', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  t.is((await s.post('/api/external/components', { id: 'cb', name: 'Cart Backend' })).status, 201);
  const { dir, head, tags } = await cloneForPush(t, s);
  await mkdir(join(dir, 'tags'), { recursive: true });
  await writeFile(join(dir, 'tags', 'cb.yaml'), 'id: cb\nname: Cart\ndesc: null\ncolor: red\n');
  await git(dir, ['add', 'tags/cb.yaml']);
  await git(dir, ['commit', '-qm', 'a tag with the id of a component']);
  const clash = /Id 'cb' is held by the (component|tag) 'cb' as well: ids are unique across the organization\./;
  t.regex(await pushRefused(dir, 'HEAD:refs/heads/main'), clash);
  await unchanged(t, s, head, tags);
  const checked = await run(process.execPath, [CLI, 'check', dir]).then(
    () => ({ stdout: 'check passed' }),
    (err: { stdout?: string }) => err,
  );
  t.regex(String(checked.stdout), clash);
});

test('main or a draft pushed to name a blob, a tree or a tag object is refused in words, not with a stack trace', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const { dir, head, tags } = await cloneForPush(t, s);
  await git(dir, ['tag', '-a', '-m', 'annotated', 'annotated', 'HEAD']);
  const objects = {
    blob: await git(dir, ['rev-parse', 'HEAD:organization.yaml']),
    tree: await git(dir, ['rev-parse', 'HEAD^{tree}']),
    tag: await git(dir, ['rev-parse', 'refs/tags/annotated']),
  };
  for (const [type, oid] of Object.entries(objects)) {
    for (const ref of ['refs/heads/drafts/odd', 'refs/heads/main']) {
      const output = await pushRefused(dir, '--force', `${oid}:${ref}`);
      t.regex(output, new RegExp(`remote: c4store: ${ref}: a branch names a commit, and ${oid.slice(0, 12)} is a ${type}\\.`), output);
      t.notRegex(output, /TypeError|at file:/, output);
      await unchanged(t, s, head, tags);
    }
  }
  t.is(await s.git('for-each-ref', '--format=%(refname)', 'refs/heads'), 'refs/heads/main\n');
});

test("organization.yaml's slug stays the organization's: a push changing it, to main or a draft, is refused; its name and members may change", async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const { dir, head, tags } = await cloneForPush(t, s);
  const file = join(dir, 'organization.yaml');
  const original = await readFile(file, 'utf8');
  const slug = /^slug: (.+)$/m.exec(original)![1]!;
  await writeFile(file, original.replace(/^slug: .+$/m, 'slug: elsewhere'));
  await git(dir, ['commit', '-qam', 'another slug']);
  const refusal = new RegExp(
    `organization\\.yaml: The slug stays '${slug}': it is the organization's name in every address of it, not 'elsewhere'\\.`,
  );
  t.regex(await pushRefused(dir, 'HEAD:refs/heads/main'), refusal);
  t.regex(await pushRefused(dir, 'HEAD:refs/heads/drafts/renamed'), refusal);
  await unchanged(t, s, head, tags);
  t.is(await s.git('for-each-ref', '--format=%(refname)', 'refs/heads/drafts'), '');

  // Every commit is held to it (one putting it back later does not make the push whole); the name changes freely.
  await writeFile(file, original);
  await git(dir, ['commit', '-qam', 'the slug back']);
  t.regex(await pushRefused(dir, 'HEAD:refs/heads/main'), refusal);
  await git(dir, ['reset', '-q', '--hard', 'HEAD~2']);
  await writeFile(file, original.replace(/^name: .+$/m, 'name: Acme Renamed'));
  await git(dir, ['commit', '-qam', 'another name']);
  await git(dir, ['push', '-q', 'origin', 'HEAD:refs/heads/main']);
  t.is((await s.get('/api/external/diagram')).status, 200);
  t.regex(await s.git('show', 'main:organization.yaml'), new RegExp(`^slug: ${slug}$`, 'm'));
});
