/**
 * Heavy work off the event loop (issue 15.1): a large diagram laid out, a write of many
 * components, and the whole answers of a large organization do not hold another organization's
 * reads; a layout or a write that takes too long is cancelled with a clear error and changes
 * nothing. Serial: in one process, the tests would measure each other.
 */
import test, { type ExecutionContext } from 'ava';
import { rm } from 'node:fs/promises';
import { buildOrg } from '../bench/fixture.js';
import { heavyDiagram, LARGE_READS, largeRead, lightOrg, lightRead, manyComponents, scheduledReads } from '../bench/heavy.js';
import { type RunningServer, startServer } from '../src/server.js';
import { machineNoise } from './support/machine-noise.js';
import { accepted, refused } from './support/models.js';
import { TestServer } from './support/server.js';

const D = '/api/external/diagram';

/**
 * Runs `heavy` while another organization's reads are due every 10 ms, and requires the worst
 * of them (counted from when each was due) under `limitMs` plus twice what the machine adds to
 * every read: the worst of idle reads measured just before, or, if larger, the worst lateness of
 * a process doing nothing else during the round (machineNoise: other test suites on the same
 * two cores; a round of seconds can stall everything on the machine for as long). The machine
 * running the tests is shared, and a process that gets no CPU for a moment shows it as latency;
 * so the best of up to three rounds counts. Holding the event loop for the whole heavy request
 * fails every round. `heavy` makes its own checks and says what it did, for the log.
 */
async function lightReadsHold(
  t: ExecutionContext,
  read: () => Promise<void>,
  limitMs: number,
  heavy: (round: number) => Promise<string>,
): Promise<void> {
  await read();
  // What the machine itself costs a read now, with nothing heavy running: on a busy machine
  // (another process on the cores) every read waits for CPU, and that is not this server's doing.
  const idle = scheduledReads(read);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const idleNoise = (await idle.stop()).worst;
  const rounds: Array<{ worst: number; allowed: number }> = [];
  for (let round = 0; round < 3 && !rounds.some((r) => r.worst < r.allowed); round++) {
    const noise = machineNoise();
    const reads = scheduledReads(read);
    const start = performance.now();
    const what = await heavy(round);
    const heavyMs = performance.now() - start;
    const light = await reads.stop();
    const machine = await noise.stop();
    t.true(light.lightReads >= 3, 'reads kept going during the heavy request');
    rounds.push({ worst: light.worst, allowed: limitMs + 2 * Math.max(idleNoise, machine) });
    t.log(
      `round ${round}: ${light.lightReads} reads of another organization during ${heavyMs.toFixed(0)} ms of ${what}; ` +
        `worst ${light.worst.toFixed(0)} ms from when due, longest stall ${light.stall.toFixed(0)} ms; ` +
        `the machine: idle reads' worst ${idleNoise.toFixed(0)} ms, another process's timers up to ${machine.toFixed(0)} ms late`,
    );
  }
  const best = rounds.reduce((a, b) => (b.worst - b.allowed < a.worst - a.allowed ? b : a));
  t.true(
    best.worst < best.allowed,
    `worst read latency ${best.worst.toFixed(0)} ms in the best round (allowed ${best.allowed.toFixed(0)}: ${limitMs} + twice what the machine added)`,
  );
}

/** Light reads of a second organization, made in `dataDir` (bench/heavy.ts). */
async function quietReader(dataDir: string, server: RunningServer): Promise<() => Promise<void>> {
  return lightRead(server, await lightOrg(dataDir));
}

test.serial("a large diagram posted to one organization does not hold another organization's reads (worst under 500 ms)", async (t) => {
  const s = await TestServer.start();
  try {
    // Before issue 15.1 the layout ran on the request's thread: seconds.
    await lightReadsHold(t, await quietReader(s.dataDir, s.server), 500, async (round) => {
      const reply = await s.post(D, heavyDiagram(`Heavy ${round}`, 1000, 3000));
      t.is(reply.status, 200, reply.text.slice(0, 200));
      t.is(reply.body[0].componentInstances.length, 1000);
      return 'a diagram of 1,000 instances and 3,000 relations';
    });
  } finally {
    await s.close();
  }
});

test.serial("a write of 20,000 components to one organization does not hold another organization's reads", async (t) => {
  t.timeout(180_000);
  const s = await TestServer.start();
  try {
    // Before the write step and the commit took turns inside their phases, this write held
    // the event loop ~0.8 s (its blobs were hashed, compressed and written in one go).
    await lightReadsHold(t, await quietReader(s.dataDir, s.server), 300, async (round) => {
      const reply = await s.post('/api/external/component', manyComponents(20_000, `r${round}`));
      t.is(reply.status, 200, reply.text.slice(0, 200));
      t.is(reply.body.length, 20_000);
      return 'a write of 20,000 new components';
    });
  } finally {
    await s.close();
  }
});

test.serial("whole reads of a large organization (lists, model, exports) do not hold another organization's reads", async (t) => {
  t.timeout(180_000);
  // 20,000 components, one diagram per 10: before the answers were built in slices, the model
  // as YAML held the event loop ~0.5 s and each export 0.3-0.5 s at this size.
  const org = await buildOrg(20_000);
  const server = await startServer({ dataDir: org.dataDir, port: 0, log: () => {} });
  try {
    const get = (path: string, accept: string) => largeRead(`${server.url}${path}`, org.key, accept);
    t.is((await get('/api/external/tag', 'application/json')).status, 200); // loaded
    await lightReadsHold(t, await quietReader(org.dataDir, server), 300, async (round) => {
      // A new commit: every answer below is built afresh.
      const tag = await fetch(`${server.url}/api/external/tag`, {
        method: 'POST',
        headers: { 'x-api-key': org.key, 'content-type': 'application/json' },
        body: JSON.stringify([{ name: `Round ${round}`, color: 'red' }]),
      });
      t.is(tag.status, 200);
      let bytes = 0;
      for (const { path, accept } of LARGE_READS) {
        const reply = await get(path, accept);
        t.is(reply.status, 200);
        bytes += reply.bytes;
      }
      return `${(bytes / 1e6).toFixed(0)} MB of whole reads`;
    });
  } finally {
    await server.close();
    await rm(org.dataDir, { recursive: true, force: true });
  }
});

test.serial('a layout that takes longer than the layout timeout is cancelled with 503 and changes nothing', async (t) => {
  const s = await TestServer.start({ layoutTimeout: 1 });
  try {
    await refused(
      t,
      s,
      'POST',
      D,
      heavyDiagram('Slow', 300, 600),
      503,
      'Automatic layout took longer than 0.001 s and was cancelled; nothing was changed. ' +
        'Give the elements of large diagrams positions, or add them in several requests.',
    );
    // Nothing to lay out: no layout runs, the write goes through.
    await accepted(t, s, 'POST', D, [
      {
        name: 'Placed',
        level: 'C1',
        componentInstances: [{ placeholder: 'A', position: { x: 0, y: 0 }, width: 16, height: 8 }],
      },
    ]);
  } finally {
    await s.close();
  }
});

test.serial('a large write still running after the write timeout is cancelled with 503 and changes nothing', async (t) => {
  const s = await TestServer.start({ writeTimeout: 1 });
  try {
    await refused(
      t,
      s,
      'POST',
      D,
      heavyDiagram('Large', 600, 600),
      503,
      'This write took longer than 0.001 s and was cancelled; nothing was changed.',
    );
    // Small writes do not stop to look at the clock.
    await accepted(t, s, 'POST', D, heavyDiagram('Small', 20, 20));
  } finally {
    await s.close();
  }
});
