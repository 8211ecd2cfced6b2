/**
 * The change feed, live events and webhooks (CONTRACT.md §9, issue 27), against a real server
 * process. Writes bench/events-results.md.
 *
 *   feed      a page of 100 of GET /changes on a 20,000-commit history: target under 100 ms
 *   webhooks  write throughput with 10 subscriptions to a receiver answering in 2 s, against
 *             none (rounds interleaved): target within 10 %
 *   sse       1,000 SSE listeners on one organization: a write reaches every one within 1 s
 *
 *   npm run build && node --import=tsx bench/events.ts [--commits N] [--listeners N] [--out FILE]
 */
import { execFile } from 'node:child_process';
import { createServer, request } from 'node:http';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { resourcePath, serialize } from '../src/model/files.js';
import { Repo } from '../src/store/repo.js';
import { BENCH_AUTHOR, buildOrg, updateBody } from './fixture.js';
import { serveProcess } from './server.js';
import { median } from './stats.js';

const run = promisify(execFile);
const { values } = parseArgs({
  options: { commits: { type: 'string' }, listeners: { type: 'string' }, out: { type: 'string' }, rounds: { type: 'string' } },
});
const COMMITS = Number(values.commits ?? 20_000);
const LISTENERS = Number(values.listeners ?? 1000);
const ROUNDS = Number(values.rounds ?? 4);
const OUT = values.out ?? join(import.meta.dirname, 'events-results.md');
const lines: string[] = [];
const say = (line: string) => {
  console.log(line);
  lines.push(line);
};

async function timed(op: () => Promise<unknown>): Promise<number> {
  const began = performance.now();
  await op();
  return performance.now() - began;
}

// ── feed ────────────────────────────────────────────────────────────────────
async function feed(): Promise<void> {
  const org = await buildOrg(100);
  const repo = new Repo(org.gitdir);
  let head = (await repo.readHead())!;
  const began = performance.now();
  for (let n = 0; n < COMMITS; n++) {
    const component = org.components[n % org.components.length]!;
    head = await repo.commit({
      parent: head,
      changes: [{ path: resourcePath('component', component.id), content: serialize('component', { ...component, desc: `Update ${n}` }) }],
      author: BENCH_AUTHOR,
      message: `Bench update ${n}\n\nupdate ${resourcePath('component', component.id)} (${component.name})\n\nApi-Context: bench\n`,
    });
  }
  const buildMs = performance.now() - began;
  // The cursors come from git itself, so that the server has described nothing before it is timed.
  const { stdout } = await run('git', ['--git-dir', org.gitdir, 'rev-list', '--first-parent', '--reverse', 'main'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const all = stdout.trim().split('\n');
  say('## Change feed');
  say('');
  say(`${all.length.toLocaleString('en')} commits on main (made through the store in ${(buildMs / 1000).toFixed(1)} s).`);
  say('A page is `GET /changes?limit=100&after=<cursor>`, against a real server process, ms. Distinct pages: nine');
  say('pages in a row from each place, each asked once (medians), so none was described before; again: one of');
  say('them asked a second time (a commit is described once per process). Target: a page of 100 under 100 ms.');
  say('');
  say('| repository | first request (lists the chain) | pages at the start | in the middle | at the end | a page again |');
  say('|---|---:|---:|---:|---:|---:|');
  for (const label of ['loose', 'packed']) {
    if (label === 'packed') {
      const packing = await timed(() => run('git', ['--git-dir', org.gitdir, 'gc', '--quiet']));
      await run('git', ['--git-dir', org.gitdir, 'commit-graph', 'write', '--reachable']);
      say(`<!-- git gc took ${(packing / 1000).toFixed(1)} s -->`);
    }
    const server = await serveProcess(org.dataDir, ['--pack-every', '0']);
    const get = async (path: string) => {
      const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${org.key}` } });
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as { changes: Array<{ id: string }>; next: string | null };
    };
    try {
      const first = await timed(() => get(`/api/external/changes?limit=1&after=${all[all.length - 2]}`));
      const pages = async (from: number) => {
        const times: number[] = [];
        for (let i = 0; i < 9; i++) {
          const after = all[from + i * 100]!;
          times.push(
            await timed(async () => {
              const page = await get(`/api/external/changes?limit=100&after=${after}`);
              if (page.changes.length !== 100) throw new Error(`a page of ${page.changes.length}`);
            }),
          );
        }
        return median(times);
      };
      const start = await pages(0);
      const middle = await pages(Math.floor(all.length / 2));
      const end = await pages(all.length - 1001);
      const again = await timed(() => get(`/api/external/changes?limit=100&after=${all[Math.floor(all.length / 2)]}`));
      say(`| ${label} | ${first.toFixed(0)} | ${start.toFixed(1)} | ${middle.toFixed(1)} | ${end.toFixed(1)} | ${again.toFixed(1)} |`);
    } finally {
      await server.stop();
    }
  }
  say('');
}

// ── webhooks ────────────────────────────────────────────────────────────────
async function webhooks(): Promise<void> {
  const org = await buildOrg(100);
  const receiver = createServer((req, res) => {
    req.resume();
    setTimeout(() => res.writeHead(204).end(), 2000);
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const server = await serveProcess(org.dataDir, ['--pack-every', '0', '--webhook-allow-private']);
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
  /** Writes a second by 4 clients updating components for `ms`. */
  const throughput = async (ms: number) => {
    let done = 0;
    const until = performance.now() + ms;
    await Promise.all(
      Array.from({ length: 4 }, async (_, client) => {
        for (let i = 0; performance.now() < until; i++) {
          const component = org.components[(client * 25 + i) % org.components.length]!;
          await call('POST', '/api/external/component', [updateBody(component, `w${client}-${i}-${Math.random()}`)]);
          done++;
        }
      }),
    );
    return (done * 1000) / ms;
  };
  try {
    await throughput(1000);
    const none: number[] = [];
    const withHooks: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      none.push(await throughput(3000));
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await call('POST', '/api/external/webhooks', { url: target })).id);
      withHooks.push(await throughput(3000));
      for (const id of ids) await call('DELETE', `/api/external/webhooks/${id}`);
    }
    const [a, b] = [median(none), median(withHooks)];
    say('## Writes with webhooks');
    say('');
    say(`Component updates by 4 clients, ${ROUNDS} interleaved rounds of 3 s each; 10 subscriptions to one receiver`);
    say('that answers every delivery after 2 s. Target: within 10 % of no subscription.');
    say('');
    say('| no subscription (writes/s) | 10 slow subscriptions (writes/s) | ratio |');
    say('|---:|---:|---:|');
    say(`| ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(3)} |`);
    say('');
  } finally {
    await server.stop();
    receiver.close();
  }
}

// ── SSE ─────────────────────────────────────────────────────────────────────
async function sse(): Promise<void> {
  const org = await buildOrg(100);
  const server = await serveProcess(org.dataDir, [
    '--pack-every',
    '0',
    '--max-connections',
    String(LISTENERS + 100),
    '--max-connections-per-address',
    String(LISTENERS + 100),
  ]);
  const url = new URL('/api/external/events', server.url);
  const arrivals = new Map<string, number[]>();
  const sockets: Array<{ destroy(): void }> = [];
  await Promise.all(
    Array.from(
      { length: LISTENERS },
      () =>
        new Promise<void>((resolve, reject) => {
          const req = request(url, { headers: { authorization: `Bearer ${org.key}` }, agent: false }, (res) => {
            if (res.statusCode !== 200) return reject(new Error(`SSE answered ${res.statusCode}`));
            let buffered = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              buffered += chunk;
              let end = buffered.indexOf('\n\n');
              while (end !== -1) {
                const id = /^id: (\w+)$/m.exec(buffered.slice(0, end))?.[1];
                if (id) {
                  const list = arrivals.get(id) ?? [];
                  list.push(performance.now());
                  arrivals.set(id, list);
                }
                buffered = buffered.slice(end + 2);
                end = buffered.indexOf('\n\n');
              }
            });
            resolve();
          });
          req.on('error', reject);
          req.end();
          sockets.push(req);
        }),
    ),
  );
  try {
    const spreads: number[] = [];
    for (let i = 0; i < 5; i++) {
      const sent = performance.now();
      const response = await fetch(`${server.url}/api/external/component`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
        body: JSON.stringify([updateBody(org.components[i]!, `sse ${i}`)]),
      });
      const commit = response.headers.get('etag')!.replaceAll('"', '');
      await response.text();
      const deadline = performance.now() + 10_000;
      while ((arrivals.get(commit)?.length ?? 0) < LISTENERS && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const times = arrivals.get(commit) ?? [];
      if (times.length < LISTENERS) throw new Error(`only ${times.length} of ${LISTENERS} listeners got ${commit}`);
      spreads.push(Math.max(...times) - sent);
    }
    say('## Live events');
    say('');
    say(`${LISTENERS.toLocaleString('en')} SSE listeners on one organization; 5 writes, each timed from sending the write to`);
    say('its event having reached the last listener (ms). Target: under 1 s.');
    say('');
    say('| median | worst |');
    say('|---:|---:|');
    say(`| ${median(spreads).toFixed(0)} | ${Math.max(...spreads).toFixed(0)} |`);
    say('');
  } finally {
    for (const socket of sockets) socket.destroy();
    await server.stop();
  }
}

say('# Events benchmark');
say('');
const load = () => loadavg()[0]!.toFixed(2);
say(`Run ${new Date().toISOString().slice(0, 16)} UTC; the load generator and the server share the machine's cores.`);
say(`1-minute load average at the start: ${load()}.`);
say('');
await feed();
await webhooks();
await sse();
say('');
say(`1-minute load average at the end: ${load()}.`);
await writeFile(OUT, `${lines.join('\n')}\n`);
