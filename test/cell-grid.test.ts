import test from 'ava';
import { CellGrid } from '../src/drawing/cell-grid.js';

test('an item filed in two grids is met by every query of each, whatever the other asked before', (t) => {
  const item: { seen?: number } = {};
  const here = { x: 0, y: 0, w: 10, h: 10 };
  const elsewhere = { x: 1000, y: 1000, w: 10, h: 10 };
  const first = new CellGrid<typeof item>(64);
  first.add(here, item);
  for (let k = 0; k < 5; k++) t.true(first.some(here, (found) => found === item));
  // A second grid of the same items, as routing the same boxes again makes: its first queries
  // look elsewhere, then one meets the item (with per-grid counts, its fifth took the mark the
  // first grid's fifth left for its own and skipped the item).
  const second = new CellGrid<typeof item>(64);
  second.add(here, item);
  for (let k = 0; k < 4; k++) t.false(second.some(elsewhere, () => true));
  t.true(second.some(here, (found) => found === item));
  let visits = 0;
  second.some({ x: 0, y: 0, w: 200, h: 200 }, () => {
    visits++;
    return false;
  });
  t.is(visits, 1, 'met once though filed under several cells');
});

test('a rectangle spanning 28 million px (boxes at opposite ends of the positions a diagram holds) is met along it, filed under few cells', (t) => {
  const grid = new CellGrid<{ seen?: number; name: string }>(64);
  const long = { name: 'route' };
  const box = { name: 'box' };
  grid.add({ x: -14_000_000, y: 0, w: 28_000_000, h: 0 }, long);
  grid.add({ x: 500, y: -20, w: 100, h: 40 }, box);
  const met = (r: { x: number; y: number; w: number; h: number }) => {
    const found: string[] = [];
    grid.some(r, (item) => {
      found.push(item.name);
      return false;
    });
    return found.sort();
  };
  t.deepEqual(met({ x: 13_000_000, y: -5, w: 10, h: 10 }), ['route']);
  t.deepEqual(met({ x: 520, y: -5, w: 10, h: 10 }), ['box', 'route']);
  // A query as wide meets every item, each once.
  t.deepEqual(met({ x: -14_000_000, y: -100, w: 28_000_000, h: 200 }), ['box', 'route']);
  // The box's six cells only: one entry per 64-px cell was 437,500 for the route, filed and searched on the event loop.
  t.is((grid as unknown as { cells: Map<number, unknown> }).cells.size, 6);
});
