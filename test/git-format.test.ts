import test from 'ava';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DIR_MODE,
  FILE_MODE,
  compareTreeNames,
  blobOid,
  hashObject,
  isDirMode,
  isoOfGitTime,
  canonicalMode,
  makeTreeEntry,
  parseCommit,
  parseTree,
  serializeCommit,
  unwrapObject,
  wrapObject,
  wrapTree,
} from '../src/store/git-format.js';

// git-format.ts is tested alone, against git itself: every object it frames, hashes or
// serializes is compared byte for byte with what `git` makes of the same input.

const sourceFile = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'store', 'git-format.ts');
const createdDirs: string[] = [];
test.after.always(async () => {
  await Promise.all(createdDirs.map((dir) => fsp.rm(dir, { recursive: true, force: true })));
});

async function bareRepo(): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'c4store-format-'));
  createdDirs.push(dir);
  execFileSync('git', ['init', '--quiet', '--bare', dir]);
  return dir;
}

function git(gitdir: string, args: string[], input?: Buffer | string, env: Record<string, string> = {}): Buffer {
  return execFileSync('git', ['--git-dir', gitdir, ...args], { input, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
}

const gitText = (gitdir: string, args: string[], input?: Buffer | string, env?: Record<string, string>) =>
  git(gitdir, args, input, env).toString('utf8').trim();

test('git-format.ts imports nothing that does I/O', async (t) => {
  const source = await fsp.readFile(sourceFile, 'utf8');
  const imports = [...source.matchAll(/^import .* from '([^']+)';$/gm)].map((match) => match[1]);
  t.deepEqual(imports, ['node:crypto']);
});

test('a blob is framed and hashed as git hash-object does it', async (t) => {
  const gitdir = await bareRepo();
  const contents = [
    Buffer.alloc(0),
    Buffer.from('id: a\nname: Ünïcode ✓\n', 'utf8'),
    Buffer.from([0, 1, 2, 255, 0x0a, 0]),
    Buffer.alloc(200_000, 'x'),
  ];
  for (const content of contents) {
    const wrapped = wrapObject('blob', content);
    const oid = gitText(gitdir, ['hash-object', '-w', '--stdin'], content);
    t.is(hashObject(wrapped), oid);
    t.is(blobOid(content), oid);
    t.deepEqual(git(gitdir, ['cat-file', 'blob', oid]), content);
    t.deepEqual(unwrapObject(wrapped, oid), { type: 'blob', content });
  }
});

test('unwrapObject refuses a frame whose length or type is wrong', (t) => {
  t.throws(() => unwrapObject(Buffer.from('blob 3\0ab'), 'x'), { message: 'Git object x is corrupt.' });
  t.throws(() => unwrapObject(Buffer.from('blub 2\0ab'), 'x'), { message: 'Git object x is corrupt.' });
  t.throws(() => unwrapObject(Buffer.from('blob 2ab'), 'x'), { message: 'Git object x is corrupt.' });
});

test('a tree in compareTreeNames order is the tree git mktree makes, byte for byte', async (t) => {
  const gitdir = await bareRepo();
  const blob = gitText(gitdir, ['hash-object', '-w', '--stdin'], 'content\n');
  const subtree = gitText(gitdir, ['mktree'], `${FILE_MODE} blob ${blob}\tinner.yaml\n`);
  // Names chosen around git's rule that a directory sorts as if its name ended in '/'.
  const files = ['a', 'a-b', 'a.b', 'a0', 'b.yaml', 'Ünïcode.yaml', 'z'];
  const dirs = ['a', 'ab', 'a.b.c', '00'];
  // 'a' is both a file and a directory: git allows that in a tree, and orders them apart.
  const entries = [
    ...files.map((name) => makeTreeEntry(FILE_MODE, name, blob)),
    ...dirs.map((name) => makeTreeEntry(DIR_MODE, name, subtree)),
  ];
  entries.sort((x, y) => compareTreeNames(x.nameBytes, isDirMode(x.mode), y.nameBytes, isDirMode(y.mode)));
  const listing = entries
    .map((e) => `${isDirMode(e.mode) ? '040000 tree' : `${FILE_MODE} blob`} ${e.oid}\t${e.name}\n`)
    .reverse()
    .join('');
  const oid = gitText(gitdir, ['mktree'], listing);
  const wrapped = wrapTree(entries);
  t.is(hashObject(wrapped), oid);
  const stored = git(gitdir, ['cat-file', 'tree', oid]);
  t.deepEqual(wrapped, wrapObject('tree', stored));
  const parsed = parseTree(stored);
  t.deepEqual(
    parsed.map((e) => [e.mode, e.name, e.oid]),
    entries.map((e) => [e.mode, e.name, e.oid]),
  );
  t.deepEqual(
    parsed.map((e) => e.raw),
    entries.map((e) => e.raw),
  );
  const lsTree = gitText(gitdir, ['ls-tree', '-z', oid])
    .split('\0')
    .filter(Boolean)
    .map((line) => line.split('\t')[1]);
  t.deepEqual(
    parsed.map((e) => e.name),
    lsTree,
  );
});

test('parseTree refuses a truncated tree', (t) => {
  const entry = makeTreeEntry(FILE_MODE, 'a', 'ab'.repeat(20));
  t.throws(() => parseTree(entry.raw.subarray(0, entry.raw.length - 1)), { message: 'Corrupt git tree object.' });
});

test('a commit is serialized as git commit-tree writes it, and parsed back', async (t) => {
  const gitdir = await bareRepo();
  const tree = gitText(gitdir, ['mktree'], '');
  const env = (name: string, email: string, time: number) => ({
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_AUTHOR_DATE: `${time} +0000`,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
    GIT_COMMITTER_DATE: `${time} +0000`,
  });
  const first = gitText(gitdir, ['commit-tree', tree, '-m', 'Create organization'], undefined, env('api', 'api@demo', 1_700_000_000));
  const ours = serializeCommit({
    tree,
    parents: [],
    author: { name: 'api', email: 'api@demo', timestamp: 1_700_000_000 },
    committer: { name: 'api', email: 'api@demo', timestamp: 1_700_000_000 },
    message: 'Create organization',
  });
  t.is(hashObject(wrapObject('commit', ours)), first);
  t.deepEqual(ours, git(gitdir, ['cat-file', 'commit', first]));

  const message = 'POST /api/external/component: create 1\n\ncreate components/ab/x.yaml (Zoë)\n\nApi-Context: 2024-01-01 00:00:00\n';
  const who = { name: 'Zoë Key', email: 'zoe-key@demo', timestamp: 1_700_000_123 };
  const second = gitText(gitdir, ['commit-tree', tree, '-p', first, '-F', '-'], message, env(who.name, who.email, who.timestamp));
  const serialized = serializeCommit({ tree, parents: [first], author: who, committer: who, message });
  t.is(hashObject(wrapObject('commit', serialized)), second);
  t.deepEqual(parseCommit(git(gitdir, ['cat-file', 'commit', second])), {
    tree,
    parents: [first],
    author: `Zoë Key <zoe-key@demo> ${who.timestamp} +0000`,
    message,
  });
  t.notThrows(() => git(gitdir, ['update-ref', 'refs/heads/main', second]));
  t.notThrows(() => git(gitdir, ['fsck', '--strict', '--no-dangling']));
});

test('signatures drop what would end an ident early, and refuse a bad timestamp', (t) => {
  const commit = (name: string, timestamp: number) =>
    serializeCommit({
      tree: '4b825dc642cb6eb9a060e54bf8d69288fbee4904',
      parents: [],
      author: { name, email: 'e<v>il@x', timestamp },
      committer: { name, email: 'x@y', timestamp },
      message: 'm\0',
    }).toString('utf8');
  const text = commit(' Mal<lory>\n ', 1);
  t.true(text.includes('author Mallory <evil@x> 1 +0000\n'));
  t.true(text.endsWith('\nm\n'));
  t.throws(() => commit('a', -1), { message: 'Invalid commit timestamp: -1.' });
  t.throws(() => commit('a', 1.5), { message: 'Invalid commit timestamp: 1.5.' });
});

test('isoOfGitTime writes a commit time as git log --format=%aI does, for every time git prints; where git fails it still reads one', async (t) => {
  const gitdir = await bareRepo();
  const tree = gitText(gitdir, ['mktree'], '');
  const times = [
    '1700000000 +0545',
    '1700000000 -0330',
    '951782400 +0000', // 2000-02-29
    '4107542400 +0000', // 2100-03-01, past a century without a leap day
    '253402300799 +0000', // 9999-12-31T23:59:59
    '253402300800 +0000', // 10000-01-01
    '99999999999999 +0130',
    '86399 -0000',
  ];
  for (const time of times) {
    const commit = gitText(gitdir, ['commit-tree', tree, '-m', 'x'], undefined, {
      GIT_AUTHOR_NAME: 'a',
      GIT_AUTHOR_EMAIL: 'a@b',
      GIT_COMMITTER_NAME: 'a',
      GIT_COMMITTER_EMAIL: 'a@b',
      GIT_AUTHOR_DATE: `@${time}`,
      GIT_COMMITTER_DATE: `@${time}`,
    });
    const raw = gitText(gitdir, ['log', '-1', '--date=raw', '--format=%ad', commit]);
    const [seconds, zone] = raw.split(' ') as [string, string];
    t.is(isoOfGitTime(seconds, zone), gitText(gitdir, ['log', '-1', '--format=%aI', commit]), time);
  }
  // git's %aI fails the whole log here; the time is still the one the commit carries.
  t.is(isoOfGitTime('0', '-1200'), '1969-12-31T12:00:00-12:00');
  t.is(isoOfGitTime('1000000000', '+9959'), '2001-09-09T01:46:40+00:00');
});

test("canonicalMode reads a tree entry's mode as git does: a file, an executable, a link, a folder, a submodule", (t) => {
  for (const [raw, canonical] of [
    ['100644', '100644'],
    ['100664', '100644'],
    ['100600', '100644'],
    ['100755', '100755'],
    ['100775', '100755'],
    ['120000', '120000'],
    ['120777', '120000'],
    ['40000', '40000'],
    ['40755', '40000'],
    ['160000', '160000'],
  ]) {
    t.is(canonicalMode(raw!), canonical, raw);
  }
});
