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
