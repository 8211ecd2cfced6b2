import test from 'ava';
import { LayeredMap } from '../src/model/layered-map.js';

/** A small deterministic random source, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

const sorted = <V>(entries: Array<[string, V]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function sameAs<V>(t: import('ava').ExecutionContext, actual: ReadonlyMap<string, V>, expected: ReadonlyMap<string, V>, ordered = true) {
  t.is(actual.size, expected.size);
  const entries = [...actual.entries()];
  if (ordered) t.deepEqual(entries, [...expected.entries()]);
  else t.deepEqual(sorted(entries), sorted([...expected.entries()]));
  t.deepEqual(
    [...actual.keys()],
    entries.map(([key]) => key),
  );
  t.deepEqual(
    [...actual.values()],
    entries.map(([, value]) => value),
  );
  t.deepEqual([...actual], entries);
  const visited: Array<[string, V]> = [];
  actual.forEach((value, key, map) => {
    t.is(map, actual);
    visited.push([key, value]);
  });
  t.deepEqual(visited, entries);
  for (const [key, value] of expected) {
    t.true(actual.has(key));
    t.is(actual.get(key), value);
  }
}

test('generations of sets iterate, size and look up exactly like a Map, and leave earlier generations as they were', (t) => {
  const next = random(7);
  const start = new Map(Array.from({ length: 200 }, (_, n) => [`k${String(n).padStart(4, '0')}`, n]));
  let generation: ReadonlyMap<string, number> = start;
  let expected = new Map(start);
  const history: Array<{ map: ReadonlyMap<string, number>; entries: Array<[string, number]> }> = [];
  let added = 200;
  for (let g = 0; g < 400; g++) {
    const layered = LayeredMap.over(generation);
    const changes = 1 + Math.floor(next() * 5);
    for (let c = 0; c < changes; c++) {
      // Mostly updates of existing keys, sometimes a new key (as ids of new resources are).
      const key = next() < 0.8 ? [...expected.keys()][Math.floor(next() * expected.size)]! : `k${String(added++).padStart(4, '0')}`;
      const value = Math.floor(next() * 1e6);
      layered.set(key, value);
      expected.set(key, value);
    }
    sameAs(t, layered, expected);
    history.push({ map: layered, entries: [...expected.entries()] });
    generation = layered;
    expected = new Map(expected);
  }
  for (const { map, entries } of history) t.deepEqual([...map.entries()], entries);
  t.deepEqual([...start.keys()].length, 200, 'the first base is untouched');
});

test('deletes: gone from lookups, size and iteration, in this generation only', (t) => {
  const next = random(11);
  let generation: ReadonlyMap<string, string> = new Map([
    ['a', '1'],
    ['b', '2'],
    ['c', '3'],
  ]);
  let expected = new Map(generation);
  const history: Array<{ map: ReadonlyMap<string, string>; entries: Map<string, string> }> = [];
  for (let g = 0; g < 300; g++) {
    const layered = LayeredMap.over(generation);
    for (let c = 0; c < 3; c++) {
      const key = `r${Math.floor(next() * 40)}`;
      if (next() < 0.4) {
        t.is(layered.delete(key), expected.delete(key));
      } else {
        const value = String(Math.floor(next() * 1000));
        layered.set(key, value);
        expected.set(key, value);
      }
    }
    sameAs(t, layered, new Map(sorted([...expected])));
    t.false(layered.has('never'));
    t.is(layered.get('never'), undefined);
    history.push({ map: layered, entries: new Map(expected) });
    generation = layered;
    expected = new Map(expected);
  }
  for (const { map, entries } of history) t.deepEqual([...map], sorted([...entries]));
});

test('new keys are merged in where they sort, whatever order they come in, through every generation', (t) => {
  const next = random(5);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const word = () => Array.from({ length: 1 + Math.floor(next() * 3) }, () => letters[Math.floor(next() * 26)]).join('');
  let generation: ReadonlyMap<string, number> = new Map([
    ['m', 0],
    ['t', 1],
  ]);
  const expected = new Map(generation);
  for (let g = 0; g < 300; g++) {
    const layered = LayeredMap.over(generation);
    for (let c = 0; c < 1 + Math.floor(next() * 4); c++) {
      const key = word();
      layered.set(key, g);
      expected.set(key, g);
    }
    // Iterated in between (the sorted new keys are kept) and after more sets (they are not).
    t.deepEqual(
      [...layered.keys()],
      sorted([...expected]).map(([key]) => key),
    );
    layered.set('zz', g);
    expected.set('zz', g);
    sameAs(t, layered, new Map(sorted([...expected])));
    generation = layered;
  }
});

test('an entry whose value is undefined is still an entry', (t) => {
  const layered = LayeredMap.over(new Map<string, string | undefined>([['a', 'x']]));
  layered.set('a', undefined);
  layered.set('b', undefined);
  t.true(layered.has('a'));
  t.true(layered.has('b'));
  t.is(layered.size, 2);
  t.deepEqual(
    [...layered],
    [
      ['a', undefined],
      ['b', undefined],
    ],
  );
});

test('generations of updates and deletions alone, merged many times over, keep every key in its place', (t) => {
  const next = random(13);
  const start = new Map(Array.from({ length: 50 }, (_, n) => [`k${String(n).padStart(3, '0')}`, n]));
  let generation: ReadonlyMap<string, number> = start;
  let expected = new Map(start);
  const history: Array<{ map: ReadonlyMap<string, number>; entries: Array<[string, number]> }> = [];
  for (let g = 0; g < 300; g++) {
    const layered = LayeredMap.over(generation);
    // An update of an existing key, and now and then the deletion of one (never a new key).
    const keys = [...expected.keys()];
    const key = keys[Math.floor(next() * keys.length)]!;
    if (next() < 0.1 && expected.size > 10) {
      t.true(layered.delete(key));
      expected.delete(key);
    } else {
      layered.set(key, g);
      expected.set(key, g);
    }
    sameAs(t, layered, expected);
    history.push({ map: layered, entries: [...expected.entries()] });
    generation = layered;
    expected = new Map(expected);
  }
  for (const { map, entries } of history) t.deepEqual([...map.entries()], entries);
  t.is(start.size, 50, 'the first base is untouched');
});
