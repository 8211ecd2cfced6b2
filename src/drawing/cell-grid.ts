/**
 * Rectangles filed in square cells, for "what lies near this box" without looking at every one:
 * the routes' obstacles (route.ts) and the labels' boxes and lines (labels.ts).
 */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** An item in the grid: `seen` is the grids' scratch, so that a query meets each item once. */
export interface Filed {
  seen?: number;
}

// One count for every grid: an item filed in two grids (or in a grid made again from the same
// items, as routing the same boxes twice does) must never carry a mark that a query of another
// grid would take for its own.
let lastStamp = 0;

/**
 * Cells one rectangle is filed under (or one query looks through) at most. Positions reach
 * ±1,000,000 grid units (14 million px), so a route between far-apart boxes spans hundreds of
 * thousands of cells: filed cell by cell, a few such routes held the event loop for seconds. A
 * wider item goes on a list every query reads; a wider query reads every item.
 */
const MAX_CELLS = 1024;

export class CellGrid<T extends Filed> {
  private readonly cells = new Map<number, T[]>();
  /** Items too wide to file cell by cell: met by every query. */
  private readonly wide: T[] = [];
  /** Every item once, for a query too wide to look cell by cell. */
  private readonly all: T[] = [];

  constructor(private readonly size: number) {}

  private cellCount(r: Rect): number {
    const s = this.size;
    return (Math.floor((r.x + r.w) / s) - Math.floor(r.x / s) + 1) * (Math.floor((r.y + r.h) / s) - Math.floor(r.y / s) + 1);
  }

  // Distinct for cell coordinates within ±32,768 cells; farther cells (boxes may lie 14 million
  // px out) share keys with others, which only hands a query more items to test (callers test the
  // actual overlap).
  private key(i: number, j: number): number {
    return (i + 32768) * 65536 + (j + 32768);
  }

  /** Files `item` under every cell that `r` meets. */
  add(r: Rect, item: T): void {
    this.all.push(item);
    if (this.cellCount(r) > MAX_CELLS) {
      this.wide.push(item);
      return;
    }
    const s = this.size;
    for (let i = Math.floor(r.x / s); i <= Math.floor((r.x + r.w) / s); i++) {
      for (let j = Math.floor(r.y / s); j <= Math.floor((r.y + r.h) / s); j++) {
        const k = this.key(i, j);
        const list = this.cells.get(k);
        if (list) list.push(item);
        else this.cells.set(k, [item]);
      }
    }
  }

  /**
   * Calls `visit` once for each item filed under a cell that `r` meets (the caller tests the
   * actual overlap); stops at the first call that returns true, and then returns true.
   */
  some(r: Rect, visit: (item: T) => boolean | undefined): boolean {
    const stamp = ++lastStamp;
    const wideQuery = this.cellCount(r) > MAX_CELLS;
    for (const item of wideQuery ? this.all : this.wide) {
      if (item.seen === stamp) continue;
      item.seen = stamp;
      if (visit(item)) return true;
    }
    if (wideQuery) return false;
    const s = this.size;
    for (let i = Math.floor(r.x / s); i <= Math.floor((r.x + r.w) / s); i++) {
      for (let j = Math.floor(r.y / s); j <= Math.floor((r.y + r.h) / s); j++) {
        const list = this.cells.get(this.key(i, j));
        if (!list) continue;
        for (const item of list) {
          if (item.seen === stamp) continue;
          item.seen = stamp;
          if (visit(item)) return true;
        }
      }
    }
    return false;
  }
}
