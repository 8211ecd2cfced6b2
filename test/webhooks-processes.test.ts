import test from 'ava';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listen, Receiver, type Received } from './support/events.js';
import { cli, lastLine, serveProcess } from './support/process.js';
import { run } from './support/server.js';

async function organization() {
  const data = await mkdtemp(join(tmpdir(), 'c4store-webhooks-'));
  const key = lastLine(await cli('org', 'create', 'acme', '--data', data));
  const git = async (...args: string[]) => (await run('git', ['--git-dir', join(data, 'orgs', 'acme.git'), ...args])).stdout;
  return { data, key, git };
}

async function postTag(url: string, key: string, name: string): Promise<void> {
  const response = await fetch(`${url}/api/external/tag`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ name, color: 'green' }]),
  });
  if (response.status !== 200) throw new Error(`${response.status} ${await response.text()}`);
}

const commitOf = (r: Received) => JSON.parse(r.body).data.id as string;

/** Commits delivered with 2xx, a repeat of the one just before dropped (sent again after a kill, same webhook-id). */
function deliveredInOrder(receiver: Receiver): string[] {
  const commits = receiver.delivered.map(commitOf);
  return commits.filter((commit, i) => i === 0 || commits[i - 1] !== commit);
}

test('kill -9 with undelivered events, restart: every event arrives, in order', async (t) => {
  const { data, key, git } = await organization();
  const receiver = await Receiver.start(() => new Promise((resolve) => setTimeout(() => resolve(204), 150)));
  t.teardown(() => receiver.close());
  const refused = await t.throwsAsync(cli('webhook', 'add', 'acme', receiver.url, '--data', data));
  t.regex(String((refused as { stderr?: string }).stderr), /private or loopback address \(127\.0\.0\.1\).*--webhook-allow-private/);
  const added = await cli('webhook', 'add', 'acme', receiver.url, '--webhook-allow-private', '--data', data);
  t.regex(lastLine(added), /^whsec_/);
  const start = (await git('rev-parse', 'main')).trim();

  let server = await serveProcess(data, '--webhook-allow-private');
  t.teardown(() => server.stop('SIGKILL'));
  for (let i = 0; i < 20; i++) await postTag(server.url, key, `tag-${i}`);
  await receiver.until(() => receiver.delivered.length >= 2);
  await server.stop('SIGKILL');
  const atKill = receiver.delivered.length;
  t.true(atKill < 20, `events were still undelivered at the kill (${atKill} of 20 delivered)`);

  server = await serveProcess(data, '--webhook-allow-private');
  const expected = (await git('rev-list', '--first-parent', '--reverse', `${start}..main`)).trim().split('\n');
  t.is(expected.length, 20);
  await receiver.until(() => deliveredInOrder(receiver).length >= 20, 60_000);
  t.deepEqual(deliveredInOrder(receiver), expected, 'nothing lost, nothing reordered');
  await server.stop();
  const listed = await cli('webhook', 'list', 'acme', '--data', data);
  t.true(listed.includes(`delivered up to ${expected.at(-1)!.slice(0, 12)}`), listed);
});

test('two processes on one data directory: each event delivered once; SSE on one sees writes through the other', async (t) => {
  const { data, key, git } = await organization();
  const receiver = await Receiver.start();
  t.teardown(() => receiver.close());
  await cli('webhook', 'add', 'acme', receiver.url, '--webhook-allow-private', '--data', data);
  const start = (await git('rev-parse', 'main')).trim();
  const servers = await Promise.all([serveProcess(data, '--webhook-allow-private'), serveProcess(data, '--webhook-allow-private')]);
  t.teardown(() => Promise.all(servers.map((s) => s.stop())));

  const onFirst = listen(servers[0].url, key);
  t.teardown(() => onFirst.close());
  await onFirst.opened;
  for (let i = 0; i < 12; i++) await postTag(servers[1].url, key, `b-${i}`);
  for (let i = 0; i < 4; i++) await postTag(servers[i % 2].url, key, `ab-${i}`);
  const expected = (await git('rev-list', '--first-parent', '--reverse', `${start}..main`)).trim().split('\n');
  t.is(expected.length, 16);

  const streamed = await onFirst.until(16);
  t.deepEqual(
    streamed.map((e) => e.id),
    expected,
    'writes through the other process reach this one, in order',
  );
  await receiver.until(() => receiver.received.length >= 16);
  // Time for a second delivery of anything, were there one.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  t.deepEqual(receiver.received.map(commitOf), expected, 'each event once, in commit order');
  t.is(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 16);

  const removed = await cli(
    'webhook',
    'remove',
    'acme',
    lastLine((await cli('webhook', 'list', 'acme', '--data', data)).split('\t')[0]),
    '--data',
    data,
  );
  t.regex(removed, /^removed webhook wh_/);
  t.is((await cli('webhook', 'list', 'acme', '--data', data)).trim(), '');
});
