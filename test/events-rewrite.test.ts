/**
 * Live streams across a branch rewritten under them: a draft may be force-pushed (docs/api.md
 * §17.5), which takes commits off its first-parent chain and puts others in their place. A
 * client of the draft's stream must then get the new commits, not go silent until the chain
 * grows past where it was.
 */
import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cloneFor, gitIn } from './support/git-clone.js';
import { listen } from './support/events.js';
import { TestServer } from './support/server.js';

const API = '/api/external';
const FAST = { webhooks: { retryDelaysMs: [50, 50, 50], scanMs: 100 }, pollMs: 100 };

async function ok(reply: Promise<{ status: number; text: string; body: any }>, status = 200) {
  const answer = await reply;
  if (answer.status !== status) throw new Error(`${answer.status} ${answer.text}`);
  return answer.body;
}

test('a draft stream goes on after a force-push rewrites the draft: the pushed commit and later writes arrive, none skipped', async (t) => {
  const server = await TestServer.start({ events: FAST });
  t.teardown(() => server.close());
  await ok(server.post(`${API}/drafts`, { name: 'forced' }), 201);
  const stream = listen(server.url, server.key, `${API}/events?draft=forced`);
  t.teardown(() => stream.close());
  await stream.opened;
  for (const name of ['a', 'b', 'c']) await ok(server.post(`${API}/tag?draft=forced`, [{ name, color: 'green' }]));
  await stream.until(3);

  // The draft taken back two commits and one other commit put on it, by a forced push.
  const dir = await cloneFor(t, server, 'c4store-rewrite-');
  await gitIn(dir, ['checkout', '-q', '-b', 'work', 'origin/drafts/forced']);
  await gitIn(dir, ['reset', '-q', '--hard', 'HEAD~2']);
  await writeFile(join(dir, 'NOTES.md'), 'pushed by hand\n');
  await gitIn(dir, ['add', 'NOTES.md']);
  await gitIn(dir, ['commit', '-q', '-m', 'Notes by hand']);
  await gitIn(dir, ['push', '-q', '-f', 'origin', 'work:drafts/forced']);
  const pushed = (await server.git('rev-parse', 'drafts/forced')).trim();
  // A write after it, through the API.
  await ok(server.post(`${API}/tag?draft=forced`, [{ name: 'after the push', color: 'green' }]));
  const written = (await server.git('rev-parse', 'drafts/forced')).trim();

  const events = await stream.until(5);
  t.deepEqual(
    events.slice(3).map((event) => event.id),
    [pushed, written],
    'the pushed commit, then the write, each with its id',
  );
  t.is(events[3]!.change.title, 'Notes by hand');
  // What the stream says is what the feed says.
  const feed = await ok(server.get(`${API}/changes?draft=forced&limit=1000`));
  t.deepEqual(
    feed.changes.slice(-2).map((change: { id: string }) => change.id),
    [pushed, written],
  );
});
