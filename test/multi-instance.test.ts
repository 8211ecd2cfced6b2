/**
 * Three `c4store serve` processes on one data directory behind a real HAProxy, run with the
 * configuration the documentation gives (docs/haproxy.cfg). Writers of three organizations go
 * through the balancer while instances are restarted with SIGTERM (no request may get a 5xx
 * then), and killed with SIGKILL and started again. Afterwards: every acknowledged write is
 * there, `git fsck --strict` is clean, and a viewer session made through one instance opens the
 * pages of every other one, restarted ones included.
 */
import test from 'ava';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Balancer, freePort, haproxy, startBalancer, until } from './support/haproxy.js';
import { cli, lastLine, type ServerProcess, serveProcess } from './support/process.js';
import { run, sessionCookie } from './support/server.js';

const ORGS = ['north', 'south', 'west'];
const WRITERS_PER_ORG = 2;
/** Longer than the configuration's `inter 1s` × `fall 2`. */
const DRAIN_DELAY_S = 3;

interface Outcome {
  org: string;
  name: string;
  status: number;
  startedAt: number;
  answeredAt: number;
}

(haproxy.path ? test : test.skip)(
  'three instances behind HAProxy: SIGTERM restarts answer no 5xx, SIGKILL loses no acknowledged write, sessions work on every instance',
  async (t) => {
    t.timeout(240_000);
    const dataDir = await mkdtemp(join(tmpdir(), 'c4store-multi-'));
    const instances: Array<ServerProcess | undefined> = [];
    let balancer: Balancer | undefined;
    try {
      const keys: Record<string, string> = {};
      for (const org of ORGS) {
        await cli('org', 'create', org, '--data', dataDir);
        keys[org] = lastLine(await cli('key', 'create', org, '--data', dataDir));
      }
      const ports = [await freePort(), await freePort(), await freePort()];
      const start = async (i: number) => {
        instances[i] = await serveProcess(
          dataDir,
          '--port',
          String(ports[i]),
          '--drain-delay',
          String(DRAIN_DELAY_S),
          '--pack-every',
          '50',
        );
      };
      await Promise.all([0, 1, 2].map(start));
      balancer = await startBalancer(
        ports.map((port) => `127.0.0.1:${port}`),
        dataDir,
      );
      for (const name of ['c1', 'c2', 'c3']) await balancer.until(name, 'UP');
      const url = balancer.url;

      // Metrics are per instance: the balancer denies them at every path an instance serves them at.
      for (const path of ['/metrics', '/metrics/', '/metrics?x=1']) {
        t.is((await fetch(`http://127.0.0.1:${ports[0]}${path}`)).status, 200, `an instance serves ${path}`);
        t.is((await fetch(url + path)).status, 404, `the balancer denies ${path}`);
      }

      // A viewer session made through one instance.
      const cookie = await sessionCookie(`http://127.0.0.1:${ports[0]}`, keys.north!);
      const pageStatus = async (base: string) => (await fetch(`${base}/`, { redirect: 'manual', headers: { cookie } })).status;
      for (const port of ports) t.is(await pageStatus(`http://127.0.0.1:${port}`), 200, `the session opens pages on :${port}`);

      // Writers through the balancer until told to stop.
      const outcomes: Outcome[] = [];
      let writing = true;
      const writer = async (org: string, w: number) => {
        for (let n = 0; writing; n++) {
          const name = `${org}-${w}-${n}`;
          const startedAt = Date.now();
          let status = 0;
          try {
            const answer = await fetch(`${url}/api/external/tag`, {
              method: 'POST',
              headers: { authorization: `Bearer ${keys[org]}`, 'content-type': 'application/json' },
              body: JSON.stringify([{ name, color: 'green' }]),
            });
            status = answer.status;
            await answer.arrayBuffer();
          } catch {
            status = 0; // the connection to the balancer itself failed
          }
          outcomes.push({ org, name, status, startedAt, answeredAt: Date.now() });
        }
      };
      const writers = ORGS.flatMap((org) => Array.from({ length: WRITERS_PER_ORG }, (_, w) => writer(org, w)));
      await new Promise((resolve) => setTimeout(resolve, 1500));

      // Phase 1: graceful restarts, one instance at a time. No answer may be a 5xx.
      const drainingLogs: string[] = [];
      let sigterms = 0;
      for (const i of [0, 1]) {
        const instance = instances[i]!;
        const exited = once(instance.child, 'exit');
        const from = instance.output.length;
        instance.child.kill('SIGTERM');
        const [code] = await exited;
        t.is(code, 0, `instance ${i + 1} exits 0 after SIGTERM`);
        drainingLogs.push(...instance.output.slice(from));
        sigterms++;
        await start(i);
        await balancer.until(`c${i + 1}`, 'UP');
      }
      const gracefulEnd = Date.now();
      const fiveHundreds = outcomes.filter((o) => o.answeredAt <= gracefulEnd && (o.status >= 500 || o.status === 0));
      t.deepEqual(fiveHundreds, [], 'no request answered 5xx (or cut) while instances drained and restarted');
      // Their own lines: requests served while draining (the health checks answered 503 on purpose).
      const served = drainingLogs
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { route?: string; status?: number });
      t.true(
        served.some((entry) => entry.route === '/healthz' && entry.status === 503),
        'HAProxy saw /healthz answer 503',
      );
      const drainingErrors = served.filter((entry) => entry.route !== '/healthz' && entry.status! >= 500);
      t.deepEqual(drainingErrors, [], 'no instance answered 5xx while draining');
      const servedWhileDraining = served.filter((entry) => entry.route === '/api/external/tag').length;

      // Phase 2: kills. Answers cut by a kill are not acknowledged; acknowledged ones must stay.
      let kills = 0;
      for (const i of [2, 0]) {
        const instance = instances[i]!;
        const exited = once(instance.child, 'exit');
        instance.child.kill('SIGKILL');
        await exited;
        kills++;
        await new Promise((resolve) => setTimeout(resolve, 500));
        await start(i);
        await balancer.until(`c${i + 1}`, 'UP');
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      writing = false;
      await Promise.all(writers);

      // Every acknowledged write is there, each organization's repository is sound.
      const acknowledged = outcomes.filter((o) => o.status === 200);
      let lost = 0;
      for (const org of ORGS) {
        const answer = await fetch(`${url}/api/external/tag`, { headers: { authorization: `Bearer ${keys[org]}` } });
        const names = new Set(((await answer.json()) as Array<{ name: string }>).map((tag) => tag.name));
        lost += acknowledged.filter((o) => o.org === org && !names.has(o.name)).length;
      }
      t.is(lost, 0, 'every acknowledged write is present');
      t.true(acknowledged.length > 50, `${acknowledged.length} writes acknowledged`);

      // The session still works, on every instance (all three restarted) and through the balancer.
      for (const port of ports) t.is(await pageStatus(`http://127.0.0.1:${port}`), 200, `the session still opens pages on :${port}`);
      for (let i = 0; i < 6; i++) t.is(await pageStatus(url), 200, 'through the balancer');

      // Each repository is sound, checked once nothing writes to it: the instances stopped (each
      // waits for its packing) and no git process left running (a repack started by an instance
      // killed with -9 goes on, and its removal of the loose objects it packed, under a running
      // fsck, reads as missing objects).
      for (const instance of instances) await instance?.stop('SIGTERM');
      await until('no git process left on the data directory', async () => {
        const listed = await run('pgrep', ['-f', dataDir]).catch(() => ({ stdout: '' }));
        return listed.stdout.trim() === '';
      });
      for (const org of ORGS) {
        const { stdout, stderr: fsckErr } = await run('git', ['--git-dir', join(dataDir, 'orgs', `${org}.git`), 'fsck', '--strict']);
        t.is(`${stdout}${fsckErr}`.replace(/^(dangling|Checking).*\n?/gm, ''), '', `git fsck --strict of ${org}`);
      }

      const byStatus: Record<string, number> = {};
      for (const o of outcomes) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
      t.log(
        `writes sent ${outcomes.length}, acknowledged ${acknowledged.length}, lost ${lost}; ` +
          `SIGTERM restarts ${sigterms} (writes served while draining: ${servedWhileDraining}), SIGKILL restarts ${kills}; ` +
          `answers by status ${JSON.stringify(byStatus)}`,
      );
    } finally {
      await balancer?.stop();
      for (const instance of instances) await instance?.stop('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  },
);
