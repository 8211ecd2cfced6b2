import test from 'ava';
import { pageAfter } from '../src/http/pages.js';
import { idFrom } from '../src/model/ids.js';
import { LayeredMap } from '../src/model/layered-map.js';
import { TestServer } from './support/server.js';

/** What paging did before it looked the cursor up: walk the list from its start, skip up to the cursor. */
function scanned<T extends { id: string }>(items: ReadonlyMap<string, T>, cursor: string | undefined, limit: number) {
  const page: T[] = [];
  let more = false;
  for (const item of items.values()) {
    if (cursor !== undefined && item.id <= cursor) continue;
    if (page.length === limit) {
      more = true;
      break;
    }
    page.push(item);
  }
  return { page, more };
}

test("a page found by its cursor's place (or, for a deleted cursor, by binary search) holds the items the scan found", (t) => {
  const ids = Array.from({ length: 300 }, (_, i) => idFrom(1_700_000_000_000 + i * 3, BigInt(i) * 7919n));
  const items = new Map(ids.map((id) => [id, { id }]));
  // A snapshot after writes: a LayeredMap with a new item at the end and one deleted.
  const layered = LayeredMap.over(items);
  layered.set(idFrom(1_800_000_000_000, 1n), { id: idFrom(1_800_000_000_000, 1n) });
  layered.delete(ids[150]!);
  const cursors = [undefined, ids[0], ids[149], ids[150], ids[299], '0'.repeat(26), 'z'.repeat(26), `${ids[10]!.slice(0, 25)}0`];
  for (const collection of [items, layered, new Map<string, { id: string }>()]) {
    for (const cursor of cursors) {
      for (const limit of [1, 2, 7, 100, 1000]) {
        t.deepEqual(pageAfter(collection, cursor, limit), scanned(collection, cursor, limit), `cursor ${cursor}, limit ${limit}`);
      }
    }
  }
});

test('a cursor walk over HTTP returns every item once, in the order of the full list', async (t) => {
  const s = await TestServer.start();
  try {
    const made = await s.post(
      '/api/external/tag',
      Array.from({ length: 23 }, (_, i) => ({ name: `tag ${i}`, color: 'red' })),
    );
    t.is(made.status, 200);
    const all = (await s.get('/api/external/tag')).body;
    const walked: unknown[] = [];
    let next: string | undefined = '/api/external/tag?limit=5';
    while (next) {
      const reply = await s.get(next);
      walked.push(...reply.body);
      next = /^<([^>]+)>; rel="next"$/.exec(reply.headers.get('link') ?? '')?.[1];
    }
    t.deepEqual(walked, all);
  } finally {
    await s.close();
  }
});
