import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, lastLine, serveProcess } from './support/process.js';
import { run } from './support/server.js';

async function organization() {
  const data = await mkdtemp(join(tmpdir(), 'c4store-processes-'));
  const key = lastLine(await cli('org', 'create', 'acme', '--data', data));
  const git = async (...args: string[]) => (await run('git', ['--git-dir', join(data, 'orgs', 'acme.git'), ...args])).stdout;
  return { data, key, git };
}

function postTag(url: string, key: string, name: string) {
  return fetch(`${url}/api/external/tag`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ name, color: 'green' }]),
  });
}

test('two server processes on one data directory: 200 concurrent writes, 200 commits in a line', async (t) => {
  const { data, key, git } = await organization();
  const servers = await Promise.all([serveProcess(data), serveProcess(data)]);
  t.teardown(() => Promise.all(servers.map((s) => s.stop())));
  const before = Number(await git('rev-list', '--count', 'main'));
  const statuses = await Promise.all(
    Array.from({ length: 200 }, (_, i) => postTag(servers[i % 2].url, key, `tag-${i}`).then((r) => r.status)),
  );
  t.deepEqual([...new Set(statuses)], [200]);
  t.is(Number(await git('rev-list', '--count', 'main')), before + 200);
  t.is((await git('rev-list', '--merges', 'main')).trim(), '', 'history is linear');
  for (const server of servers) {
    const tags = (await (await fetch(`${server.url}/api/external/tag`, { headers: { 'x-api-key': key } })).json()) as Array<{
      name: string;
    }>;
    const names = tags.map((tag: { name: string }) => tag.name).sort();
    t.deepEqual(names, Array.from({ length: 200 }, (_, i) => `tag-${i}`).sort());
  }
  await git('fsck', '--full', '--strict');
});

test('the built server serves /mcp: the chunk of the MCP SDK, left out of start-up, loads with the first session', async (t) => {
  const { data, key } = await organization();
  const server = await serveProcess(data);
  t.teardown(() => server.stop());
  const client = new Client({ name: 'processes-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    t.true(names.includes('get_model'));
    const answer = await client.callTool({ name: 'get_model', arguments: {} });
    t.falsy(answer.isError);
    t.regex(JSON.stringify(answer.content), /components/);
  } finally {
    await client.close();
  }
});

test('SIGKILL in the middle of a stream of writes loses no acknowledged write', async (t) => {
  const { data, key, git } = await organization();
  const acknowledged: string[] = [];
  for (let cycle = 0; cycle < 3; cycle++) {
    const server = await serveProcess(data);
    let stopped = false;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stopped; i++) {
        const name = `c${cycle}-w${w}-${i}`;
        try {
          const response = await postTag(server.url, key, name);
          if (response.status === 200) acknowledged.push(name);
          else t.fail(`write answered ${response.status}: ${await response.text()}`);
        } catch {
          return; // the connection died with the server: this write was never acknowledged
        }
      }
    });
    // Killed once this cycle has some acknowledged writes (however slow a busy machine makes
    // them), at a random point after that.
    const before = acknowledged.length;
    while (acknowledged.length < before + 5) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 300));
    await server.stop('SIGKILL');
    stopped = true;
    await Promise.all(writers);
  }
  const server = await serveProcess(data);
  t.teardown(() => server.stop());
  // The dead process's lock is taken over (how soon: bench/timing.ts).
  t.is((await postTag(server.url, key, 'after-restart')).status, 200);
  const tags = (await (await fetch(`${server.url}/api/external/tag`, { headers: { 'x-api-key': key } })).json()) as Array<{ name: string }>;
  const present = new Set(tags.map((tag: { name: string }) => tag.name));
  t.true(acknowledged.length > 0);
  for (const name of acknowledged) t.true(present.has(name), `acknowledged write ${name} is present`);
  // Every commit holds exactly one write: acknowledged ones plus at most one unanswered per kill.
  const commits = Number(await git('rev-list', '--count', 'main'));
  t.true(commits - 1 >= acknowledged.length + 1);
  t.true(commits - 1 <= acknowledged.length + 1 + 3 * 8);
  await git('fsck', '--full', '--strict');
});
