import test from 'ava';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { withServer, type TestServer } from './support/server.js';

const API = '/api/external';

/** Writes a commit object with the given content into the repository, as `git hash-object -w` does. */
async function writeCommitObject(s: TestServer, content: string): Promise<string> {
  const child = spawn('git', ['--git-dir', s.gitdir, 'hash-object', '-w', '-t', 'commit', '--stdin']);
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  child.stdin.end(content);
  await once(child, 'close');
  return out.trim();
}

/** A commit object (parentless, on no branch) whose id starts with `prefix` but not with `prefix` + `next`. */
async function commitAbbreviatedLike(s: TestServer, head: string): Promise<string> {
  const tree = (await s.git('rev-parse', `${head}^{tree}`)).trim();
  for (let n = 0; ; n++) {
    const content = `tree ${tree}\nauthor a <a@a> 1700000000 +0000\ncommitter a <a@a> 1700000000 +0000\n\nnear ${n}\n`;
    const oid = createHash('sha1')
      .update(`commit ${Buffer.byteLength(content)}\0${content}`)
      .digest('hex');
    if (oid.startsWith(head.slice(0, 4)) && oid[4] !== head[4]) {
      const written = await writeCommitObject(s, content);
      if (written !== oid) throw new Error(`git wrote ${written}, expected ${oid}`);
      return oid;
    }
  }
}

test('?at= takes a commit id abbreviated as git log --oneline prints it, loose or packed; an ambiguous one is 400', async (t) => {
  await withServer(async (s) => {
    const first = (await s.post(`${API}/tag`, [{ name: 'first', color: 'red' }])).body;
    const atFirst = await s.head();
    await s.post(`${API}/tag`, [{ name: 'second', color: 'blue' }]);
    const oneline = (await s.git('log', '--oneline', '-3', 'main'))
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[0]);
    t.is(oneline.length, 3);
    t.true(atFirst.startsWith(oneline[1]));

    const byShortId = await s.get(`${API}/tag?at=${oneline[1]}`);
    t.is(byShortId.status, 200, byShortId.text);
    t.deepEqual(
      byShortId.body.map((tag: { name: string }) => tag.name),
      first.map((tag: { name: string }) => tag.name),
    );
    t.is(byShortId.headers.get('etag'), `"${atFirst}"`);
    t.is((await s.get(`${API}/model?at=${atFirst.slice(0, 4)}`)).headers.get('etag'), `"${atFirst}"`);
    t.is((await s.get(`${API}/tag?at=${atFirst.slice(0, 10).toUpperCase()}`)).headers.get('etag'), `"${atFirst}"`);

    // Packed by git gc: found in the pack index as well.
    await s.git('gc', '--quiet');
    t.is((await s.get(`${API}/component?at=${oneline[1]}`)).headers.get('etag'), `"${atFirst}"`);

    // Two commits starting with the same four digits: those four are ambiguous, five are not.
    const twin = await commitAbbreviatedLike(s, atFirst);
    const ambiguous = await s.get(`${API}/tag?at=${atFirst.slice(0, 4)}`);
    t.is(ambiguous.status, 400, ambiguous.text);
    t.deepEqual(ambiguous.body, { error: `Commit '${atFirst.slice(0, 4)}' is ambiguous: it abbreviates 2 commits; give more digits.` });
    t.is((await s.get(`${API}/tag?at=${atFirst.slice(0, 5)}`)).headers.get('etag'), `"${atFirst}"`);
    t.is((await s.get(`${API}/tag?at=${twin.slice(0, 5)}`)).headers.get('etag'), `"${twin}"`);

    // Fewer than four digits, or digits no commit starts with, name no commit.
    for (const name of [atFirst.slice(0, 3), 'g123', `${atFirst.slice(0, 6)}x`]) {
      t.deepEqual((await s.get(`${API}/tag?at=${name}`)).body, { error: `Commit '${name}' does not exist.` });
    }
  });
});
