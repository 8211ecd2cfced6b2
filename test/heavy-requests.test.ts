/**
 * Heavy work off the event loop (issue 15.1): a large diagram laid out for one organization
 * does not hold another organization's reads, and a layout that takes too long is cancelled
 * with a clear error and changes nothing.
 */
import test from 'ava';
import { rm } from 'node:fs/promises';
import { buildOrg } from '../bench/fixture.js';
import { heavyDiagram, LARGE_READS, largeRead, lightRead, scheduledReads } from '../bench/heavy.js';
import { startServer } from '../src/server.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { accepted, refused } from './support/models.js';
import { MEMBERS, TestServer } from './support/server.js';

const D = '/api/external/diagram';

test.serial("a large diagram posted to one organization does not hold another organization's reads (worst under 500 ms)", async (t) => {
  const s = await TestServer.start();
  try {
    await new Orgs(s.dataDir).create('quiet', { name: 'Quiet', members: MEMBERS, author: { name: 'test', email: 'test@test' } });
    const quietKey = (await new KeyStore(s.dataDir).create('quiet', { label: 'reader' })).key;
    const read = lightRead(s.server, quietKey);
    await read();
    // The machine running the tests is shared, and a process that gets no CPU for a moment
    // shows it as latency; so the best of three rounds counts. Blocking the event loop for the
    // whole layout (seconds, before issue 15.1) fails every round.
    const worstOfRound: number[] = [];
    for (let round = 0; round < 3 && !worstOfRound.some((ms) => ms < 500); round++) {
      const reads = scheduledReads(read);
      const start = performance.now();
      const reply = await s.post(D, heavyDiagram(`Heavy ${round}`, 1000, 3000));
      const heavyMs = performance.now() - start;
      const light = await reads.stop();
      t.is(reply.status, 200, reply.text.slice(0, 200));
      t.is(reply.body[0].componentInstances.length, 1000);
      t.true(light.lightReads >= 3, 'reads kept going during the heavy write');
      worstOfRound.push(light.worst);
      t.log(
        `round ${round}: ${light.lightReads} reads of another organization during ${heavyMs.toFixed(0)} ms of a heavy write; ` +
          `worst ${light.worst.toFixed(0)} ms from when due, longest stall ${light.stall.toFixed(0)} ms`,
      );
    }
    const worst = Math.min(...worstOfRound);
    t.true(worst < 500, `worst read latency ${worst.toFixed(0)} ms in the best round`);
  } finally {
    await s.close();
  }
});

test.serial("a write of 20,000 components to one organization does not hold another organization's reads", async (t) => {
  t.timeout(180_000);
  const s = await TestServer.start();
  try {
    await new Orgs(s.dataDir).create('quiet', { name: 'Quiet', members: MEMBERS, author: { name: 'test', email: 'test@test' } });
    const read = lightRead(s.server, (await new KeyStore(s.dataDir).create('quiet', { label: 'reader' })).key);
    await read();
    // Before the write step and the commit took turns inside their phases, this write held
    // the event loop ~0.8 s (its blobs were hashed, compressed and written in one go).
    const worstOfRound: number[] = [];
    for (let round = 0; round < 3 && !worstOfRound.some((ms) => ms < 300); round++) {
      const body = Array.from({ length: 20_000 }, (_, i) => ({ ref: `r${round}-${i}`, name: `Service ${i}`, desc: `Part ${i}.` }));
      const reads = scheduledReads(read);
      const start = performance.now();
      const reply = await s.post('/api/external/component', body);
      const heavyMs = performance.now() - start;
      const light = await reads.stop();
      t.is(reply.status, 200, reply.text.slice(0, 200));
      t.is(reply.body.length, 20_000);
      worstOfRound.push(light.worst);
      t.log(
        `round ${round}: ${light.lightReads} reads of another organization during ${heavyMs.toFixed(0)} ms of the write; ` +
          `worst ${light.worst.toFixed(0)} ms from when due, longest stall ${light.stall.toFixed(0)} ms`,
      );
    }
    const worst = Math.min(...worstOfRound);
    t.true(worst < 300, `worst read latency ${worst.toFixed(0)} ms in the best round`);
  } finally {
    await s.close();
  }
});

test.serial("whole reads of a large organization (lists, model, exports) do not hold another organization's reads", async (t) => {
  t.timeout(180_000);
  // 20,000 components, one diagram per 10: before the answers were built in slices, the model
  // as YAML held the event loop ~0.5 s and each export 0.3-0.5 s at this size.
  const org = await buildOrg(20_000);
  await new Orgs(org.dataDir).create('quiet', { name: 'Quiet', members: MEMBERS, author: { name: 'test', email: 'test@test' } });
  const quietKey = (await new KeyStore(org.dataDir).create('quiet', { label: 'reader' })).key;
  const server = await startServer({ dataDir: org.dataDir, port: 0, log: () => {} });
  try {
    const read = lightRead(server, quietKey);
    await read();
    const get = (path: string, accept: string) => largeRead(`${server.url}${path}`, org.key, accept);
    t.is((await get('/api/external/tag', 'application/json')).status, 200); // loaded
    const worstOfRound: number[] = [];
    for (let round = 0; round < 3 && !worstOfRound.some((ms) => ms < 300); round++) {
      // A new commit: every answer below is built afresh.
      const tag = await fetch(`${server.url}/api/external/tag`, {
        method: 'POST',
        headers: { 'x-api-key': org.key, 'content-type': 'application/json' },
        body: JSON.stringify([{ name: `Round ${round}`, color: 'red' }]),
      });
      t.is(tag.status, 200);
      const reads = scheduledReads(read);
      let bytes = 0;
      for (const { path, accept } of LARGE_READS) {
        const reply = await get(path, accept);
        t.is(reply.status, 200);
        bytes += reply.bytes;
      }
      const light = await reads.stop();
      worstOfRound.push(light.worst);
      t.log(
        `round ${round}: ${(bytes / 1e6).toFixed(0)} MB of whole reads; ${light.lightReads} reads of another organization, ` +
          `worst ${light.worst.toFixed(0)} ms from when due, longest stall ${light.stall.toFixed(0)} ms`,
      );
    }
    const worst = Math.min(...worstOfRound);
    t.true(worst < 300, `worst read latency ${worst.toFixed(0)} ms in the best round`);
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
