/**
 * Issue 16 point 8: the `?at=` snapshot cache kept 8 full models with their serialized
 * responses per organization, whatever their size. It is now bounded by bytes, server-wide.
 */
import test from 'ava';
import { estimateModelBytes, ResponseCache, SnapshotCache } from '../src/service/snapshot-cache.js';
import { TestServer } from './support/server.js';

const BUDGET = 2 * 1024 * 1024;

test('?at= snapshots of large models stay within the byte budget, and are still served right', async (t) => {
  const s = await TestServer.start({ snapshotCacheBytes: BUDGET });
  try {
    const commits: string[] = [];
    // Each commit adds 20 components of ~5 KB: by the last, a model of ~0.6 MB of JSON.
    for (let round = 0; round < 6; round++) {
      const components = Array.from({ length: 20 }, (_, n) => ({
        ref: `c-${round}-${n}`,
        name: `Service ${round}.${n}`,
        typeSlug: 'container',
        desc: `${round}-${n} `.repeat(800),
      }));
      t.is((await s.post('/api/external/component', components)).status, 200);
      commits.push(await s.head());
    }
    const cache = s.server.orgs.snapshots;
    let largest = 0;
    for (let pass = 0; pass < 2; pass++) {
      for (const [round, commit] of commits.slice(0, -1).entries()) {
        const model = await s.get(`/api/external/model?at=${commit}`);
        t.is(model.status, 200);
        t.is(model.body.components.length, 20 * (round + 1));
        const list = await s.get(`/api/external/component?at=${commit}`, { yaml: true });
        t.is(list.body.length, 20 * (round + 1));
        t.true(cache.bytes <= BUDGET, `${cache.bytes} bytes kept`);
        largest = Math.max(largest, cache.bytes);
      }
    }
    // Kept what fits: the cache is used, not merely emptied.
    t.true(cache.size >= 1);
    t.true(largest > BUDGET / 4, `${largest}`);
  } finally {
    await s.close();
  }
});

test('the cache evicts least recently used first, counts responses as they are added, and keeps nothing larger than itself', (t) => {
  const cache = new SnapshotCache<string>(1000);
  const kept = (modelBytes: number) => ({ snapshot: `m${modelBytes}`, modelBytes, responses: new ResponseCache() });
  cache.put('org', 'a', kept(300));
  cache.put('org', 'b', kept(300));
  t.is(cache.get('org', 'a'), 'm300'); // a is now the most recently used
  const c = kept(300);
  cache.put('org', 'c', c);
  t.is(cache.bytes, 900);
  c.responses.set('model:json', Buffer.alloc(250));
  // 1150 > 1000: b (least recently used) goes.
  t.is(cache.get('org', 'b'), undefined);
  t.is(cache.get('org', 'a'), 'm300');
  t.is(cache.bytes, 850);
  cache.put('org', 'huge', kept(1001));
  t.is(cache.get('org', 'huge'), undefined);
  cache.put('other', 'a', kept(100));
  cache.dropOwner('org');
  t.is(cache.bytes, 100);
  t.is(cache.get('other', 'a'), 'm100');
});

test('the model estimate grows with the model', (t) => {
  const empty = {
    organization: { name: 'x', slug: 'x', members: [] },
    types: new Map(),
    tags: new Map(),
    attributes: new Map(),
    components: new Map(),
    diagrams: new Map(),
  };
  const small = estimateModelBytes(empty as never);
  const components = new Map(Array.from({ length: 100 }, (_, n) => [String(n), { id: String(n), name: 'n'.repeat(1000) }]));
  t.true(estimateModelBytes({ ...empty, components } as never) > small + 100_000);
});
