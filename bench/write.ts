/** The write path through HTTP: single-component updates with 1 and 16 clients, and a /model import. */
import { pick } from './baselines.js';
import { importBody, updateBody, type BenchOrg } from './fixture.js';
import { load } from './load.js';
import type { ServerProcess } from './server.js';
import type { Figure, Measurement, ServerTimes } from './stats.js';

export interface WriteFigures {
  update1: Figure;
  update16: Figure;
  /** POST /model of 100 components and 10 diagrams, every file changed. */
  import100: Figure;
}

let edits = 0;
let imports = 0;

function headers(org: BenchOrg): Record<string, string> {
  return { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' };
}

/**
 * Brings the server up to date before a round, untimed: another process (the baselines, the
 * other server) moved main since its last request, and its first request then loads the change.
 */
export async function settle(
  server: ServerProcess,
  org: BenchOrg,
  path = `/api/external/component/${org.components[0]!.id}`,
): Promise<void> {
  const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${org.key}` } });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}\n${server.tail()}`);
}

/**
 * `connections` clients each posting one component's update at a time, every request a new
 * `desc` (`<edit> <n>`), after the server has settled.
 */
export function updateMeasurement(
  server: ServerProcess,
  org: BenchOrg,
  connections: number,
  figure: { key: string; label: string; durationMs?: number; edit: string },
): Measurement {
  return {
    key: figure.key,
    label: figure.label,
    durationMs: figure.durationMs,
    async round(durationMs) {
      await settle(server, org);
      // One client's round also asks the server how its time went (two scrapes, outside the timing).
      const before = connections === 1 ? await scrapeWriteTimes(server) : undefined;
      const round = await load({
        url: server.url,
        connections,
        durationMs,
        method: 'POST',
        path: '/api/external/component',
        headers: headers(org),
        body: () => {
          const n = edits++;
          return JSON.stringify([updateBody(pick(org.components, n), `${figure.edit} ${n}`)]);
        },
      });
      if (before) round.server = meansBetween(before, await settledWriteTimes(server, before));
      return round;
    },
  };
}

/** Sums and counts of the server's histograms of update requests and of commits (its /metrics, open to loopback clients). */
interface WriteTimeSums {
  requestSeconds: number;
  requests: number;
  commitSeconds: number;
  commits: number;
}

async function scrapeWriteTimes(server: ServerProcess): Promise<WriteTimeSums> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const sums: WriteTimeSums = { requestSeconds: 0, requests: 0, commitSeconds: 0, commits: 0 };
  for (const line of text.split('\n')) {
    const [series, value] = line.split(' ');
    if (value === undefined) continue;
    const update = series!.includes('method="POST"') && series!.includes('route="/api/external/component"');
    if (update && series!.startsWith('c4store_http_request_duration_seconds_sum{')) sums.requestSeconds += Number(value);
    if (update && series!.startsWith('c4store_http_request_duration_seconds_count{')) sums.requests += Number(value);
    if (series === 'c4store_write_commit_seconds_sum') sums.commitSeconds += Number(value);
    if (series === 'c4store_write_commit_seconds_count') sums.commits += Number(value);
  }
  return sums;
}

/**
 * The sums once every commit counted since `before` has its request counted too: a round's last
 * request may still be in flight when the load ends (its commit done, its answer not), and a
 * mean over one more commit than requests is no mean of the same updates (on a slow machine, a
 * round of a few requests showed the server's time outside its commit below zero).
 */
async function settledWriteTimes(server: ServerProcess, before: WriteTimeSums): Promise<WriteTimeSums> {
  for (let tries = 0; ; tries++) {
    const after = await scrapeWriteTimes(server);
    if (after.commits - before.commits <= after.requests - before.requests || tries === 50) return after;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function meansBetween(before: WriteTimeSums, after: WriteTimeSums): ServerTimes {
  return {
    requestMs: ((after.requestSeconds - before.requestSeconds) / (after.requests - before.requests)) * 1000,
    commitMs: ((after.commitSeconds - before.commitSeconds) / (after.commits - before.commits)) * 1000,
  };
}

/**
 * `prefix` names the figures (`${prefix}update1`, …). Updates: `connections` clients each
 * posting one component's update at a time, every request a new `desc`. Import: one client
 * posting 100 components by ref and 10 laid-out diagrams, all changed, `imports` times a round
 * (twice in a warm-up round: the first import creates the components).
 */
/** `oneClientRoundMs`: the length of the 1-client update rounds, when not the run's. */
export function writeMeasurements(
  server: ServerProcess,
  org: BenchOrg,
  name: string,
  imports100: number,
  oneClientRoundMs?: number,
): Measurement[] {
  const update = (connections: number): Measurement =>
    updateMeasurement(server, org, connections, {
      key: `update${connections}`,
      label: `${name} update, ${connections} client${connections > 1 ? 's' : ''}`,
      durationMs: connections === 1 ? oneClientRoundMs : undefined,
      edit: 'http edit',
    });
  let warm = false;
  const importOnce: Measurement = {
    key: 'import100',
    label: `${name} /model import of 100`,
    async round() {
      await settle(server, org);
      const amount = warm ? imports100 : 2;
      warm = true;
      return load({
        url: server.url,
        connections: 1,
        amount,
        method: 'POST',
        path: '/api/external/model',
        headers: headers(org),
        body: () => JSON.stringify(importBody(imports++)),
      });
    },
  };
  return [update(1), update(16), importOnce];
}
