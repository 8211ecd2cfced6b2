/**
 * Version names (issue 24): a version is made only under a name that a revision can name back
 * (`?at=`, diff, history, revert), and no name answers 500.
 */
import test from 'ava';
import { cloneFor, gitIn } from './support/git-clone.js';
import { withServer } from './support/server.js';

const V = '/api/external/versions';

test('names no revision could name are refused with 400, as are names too long for a ref file', (t) =>
  withServer(async (s) => {
    for (const bad of ['vé', '@', 'v+1', 'v@{1}', 'x'.repeat(201), 'x'.repeat(251), '_v', '.v', 'v.lock', 'a//b']) {
      const reply = await s.post(V, { name: bad });
      t.is(reply.status, 400, `${bad}: ${reply.text}`);
      t.true(reply.body.error.startsWith(`Invalid version name '${bad}'`), reply.body.error);
    }
    t.deepEqual((await s.get(V)).body, [], 'no tag made');
    t.is((await s.git('tag', '-l')).trim(), '');
  }));

test('every name a version is made under names its revision', (t) =>
  withServer(async (s) => {
    const head = await s.head();
    for (const name of ['v1', 'release/2026.11', 'A_b-c.9', 'y'.repeat(200)]) {
      const made = await s.post(V, { name });
      t.is(made.status, 201, `${name}: ${made.text}`);
      const at = await s.get(`/api/external/model?at=${encodeURIComponent(name)}`);
      t.is(at.status, 200, name);
      t.is(at.headers.get('etag'), `"${head}"`, name);
      t.is((await s.get(`/api/external/diff?from=${encodeURIComponent(name)}`)).status, 200, name);
    }
  }));

test('hex digits in capitals read as a commit id, as git and ?at= read them, so they are refused as a name like lower-case ones', (t) =>
  withServer(async (s) => {
    const first = await s.head();
    await s.post('/api/external/tags', { id: 'pci', name: 'PCI', color: 'red' });
    // Named so, the version of main's tip would read back as the first commit.
    const name = first.slice(0, 8).toUpperCase();
    t.is((await s.get(`/api/external/model?at=${name}`)).headers.get('etag'), `"${first}"`);
    const reply = await s.post(V, { name });
    t.is(reply.status, 400, reply.text);
    t.true(
      reply.body.error.startsWith(`Invalid version name '${name}': it must not start with '-', look like a commit id`),
      reply.body.error,
    );
    t.is((await s.git('tag', '-l')).trim(), '');
  }));

test('names git reads in its own namespaces first (refs/…, tags/…, heads/…, remotes/…) are refused: on a clone they would name another ref', (t) =>
  withServer(async (s) => {
    const first = await s.head();
    t.is((await s.post(V, { name: 'v1.0' })).status, 201);
    await s.post('/api/external/tags', { id: 'pci', name: 'PCI', color: 'red' });
    // What git makes of such a name where the version and the ref it shadows both exist.
    t.is((await s.git('rev-parse', 'heads/main')).trim(), await s.head());
    t.is((await s.git('rev-parse', 'tags/v1.0^{commit}')).trim(), first);
    // A pipeline handing on its CI's ref (GITHUB_REF) would make refs/tags/refs/tags/v2.0.
    for (const name of ['refs/tags/v2.0', 'refs/heads/main', 'tags/v1.0', 'heads/main', 'remotes/origin/main']) {
      const reply = await s.post(V, { name });
      t.is(reply.status, 400, `${name}: ${reply.text}`);
      t.deepEqual(reply.body, {
        error: `Invalid version name '${name}': git reads a name starting with refs/, tags/, heads/ or remotes/ as a ref of its own before a tag.`,
      });
    }
    t.deepEqual(
      (await s.get(V)).body.map((v: { name: string }) => v.name),
      ['v1.0'],
    );
    for (const name of ['tags', 'refs', 'release/tags/x', 'tagsx/y']) t.is((await s.post(V, { name })).status, 201, name);
  }));

test("a name differing from a version's only in case is refused, also as a folder: a macOS or Windows clone keeps them as one file", (t) =>
  withServer(async (s) => {
    t.is((await s.post(V, { name: 'v1.0' })).status, 201);
    t.is((await s.post(V, { name: 'Release' })).status, 201);
    for (const [name, other] of [
      ['V1.0', 'v1.0'],
      ['release', 'Release'],
      ['RELEASE/rc', 'Release'],
    ] as const) {
      const reply = await s.post(V, { name });
      t.is(reply.status, 409, `${name}: ${reply.text}`);
      t.true(reply.body.error.startsWith(`Version '${name}' cannot be made beside version '${other}'`), reply.body.error);
    }
    t.deepEqual((await s.git('tag', '-l')).trim().split('\n'), ['Release', 'v1.0']);
  }));

test('names a clone reads as branches of its own (origin, origin/…, drafts/…) are refused, over the API and in a push: the tag would stand in for the branch', (t) =>
  withServer(async (s) => {
    const clone = await cloneFor(t, s, 'c4store-version-names-');
    // What such a tag does on a clone: `origin/main` is the old commit the tag names, not the server's main.
    const first = await gitIn(clone, ['rev-parse', 'HEAD']);
    await s.post('/api/external/tags', { id: 'pci', name: 'PCI', color: 'red' });
    await gitIn(clone, ['fetch', '-q', 'origin']);
    await gitIn(clone, ['tag', 'origin/main', first]);
    t.is(await gitIn(clone, ['rev-parse', 'origin/main']), first);
    t.not(first, await s.head());
    for (const name of ['origin/main', 'origin', 'origin/drafts/x', 'drafts/review', 'Origin/main', 'DRAFTS/review']) {
      const reply = await s.post(V, { name });
      t.is(reply.status, 400, `${name}: ${reply.text}`);
      t.deepEqual(reply.body, {
        error: `Invalid version name '${name}': a clone reads origin, origin/… and drafts/… as its branches (the server's main, a draft's branch) before a tag.`,
      });
    }
    for (const name of ['origin/main', 'drafts/review']) {
      if (name !== 'origin/main') await gitIn(clone, ['tag', name, first]);
      const pushed = await gitIn(clone, ['push', 'origin', `refs/tags/${name}`]).catch((err: { stderr: string }) => err.stderr);
      t.true(pushed.includes(`refs/tags/${name}: Invalid version name '${name}': a clone reads origin`), pushed);
    }
    t.is((await s.git('tag', '-l')).trim(), '');
    for (const name of ['originals/v1', 'release/origin/x', 'drafts', 'draftsx/y']) t.is((await s.post(V, { name })).status, 201, name);
  }));
