/**
 * Rectangle helpers for the diagram layout (./layout.ts).
 * All values are editor grid units; x grows to the right, y grows downwards.
 */

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** True when the interiors of a and b intersect; boxes that only touch along an edge do not overlap. */
export function rectsOverlap(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** True when `inner` lies completely inside `outer` (edges may coincide). */
export function rectContains(outer: Rect, inner: Rect): boolean {
  return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.w <= outer.x + outer.w && inner.y + inner.h <= outer.y + outer.h;
}

export function inflate(r: Rect, d: number): Rect {
  return { x: r.x - d, y: r.y - d, w: r.w + 2 * d, h: r.h + 2 * d };
}

export function translate<T extends Rect>(r: T, dx: number, dy: number): T {
  return { ...r, x: r.x + dx, y: r.y + dy };
}

/** Bounding box of the rectangles, or null for none. */
export function unionAll(rects: readonly Rect[]): Rect | null {
  if (rects.length === 0) return null;
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const r of rects) {
    x0 = Math.min(x0, r.x);
    y0 = Math.min(y0, r.y);
    x1 = Math.max(x1, r.x + r.w);
    y1 = Math.max(y1, r.y + r.h);
  }
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/**
 * The first spot (smallest y, then smallest x) for a w×h box inside `region` that keeps at least
 * `gap` units away from every obstacle. Candidate corners are the region's top-left corner and
 * the right/bottom edges of the obstacles (plus gap), so the search is exact for that candidate
 * set and deterministic. `region.h` may be Infinity. Returns whole numbers when the region and
 * obstacles are whole numbers.
 */
export function findSpot(region: Rect, obstacles: readonly Rect[], w: number, h: number, gap: number): { x: number; y: number } | null {
  const x0 = Math.ceil(region.x);
  const y0 = Math.ceil(region.y);
  const xMax = region.x + region.w - w;
  const yMax = region.y + region.h - h;
  const xs = new Set<number>([x0]);
  const ys = new Set<number>([y0]);
  for (const o of obstacles) {
    xs.add(Math.ceil(o.x + o.w + gap));
    ys.add(Math.ceil(o.y + o.h + gap));
  }
  const xList = [...xs].filter((x) => x >= x0 && x <= xMax).sort((a, b) => a - b);
  const yList = [...ys].filter((y) => y >= y0 && y <= yMax).sort((a, b) => a - b);
  if (xList.length === 0 || yList.length === 0) return null;
  // Only obstacles that can touch a candidate box matter.
  const reach: Rect = { x: x0, y: y0, w: xMax + w - x0, h: yMax + h - y0 };
  const blocked = obstacles.map((o) => inflate(o, gap)).filter((b) => rectsOverlap(b, reach));
  blocked.sort((a, b) => a.y - b.y);
  // For each candidate row, the x-intervals the obstacles in that row's band rule out, then one
  // sweep over the sorted x candidates: O(rows × (obstacles + columns)) instead of testing every
  // corner against every obstacle.
  const lows: number[] = [];
  const highs: number[] = [];
  const byLow: number[] = [];
  for (const y of yList) {
    lows.length = 0;
    highs.length = 0;
    for (const b of blocked) {
      if (b.y >= y + h) break;
      if (b.y + b.h <= y) continue;
      // A box at x overlaps b when b.x - w < x < b.x + b.w (open interval).
      lows.push(b.x - w);
      highs.push(b.x + b.w);
    }
    if (lows.length === 0) return { x: xList[0]!, y };
    byLow.length = 0;
    for (let i = 0; i < lows.length; i++) byLow.push(i);
    byLow.sort((a, b) => lows[a]! - lows[b]!);
    let next = 0;
    let reachHigh = -Infinity;
    for (const x of xList) {
      while (next < byLow.length && lows[byLow[next]!]! < x) reachHigh = Math.max(reachHigh, highs[byLow[next++]!]!);
      if (!(reachHigh > x)) return { x, y };
    }
  }
  return null;
}

/**
 * Shelf packing: boxes in the given order, left to right in rows at most `maxWidth` wide
 * (a box wider than maxWidth gets a row of its own), rows top to bottom, `gap` between boxes.
 * Returns the top-left corner of each box, relative to (0, 0).
 */
export function shelfPack(sizes: ReadonlyArray<{ w: number; h: number }>, maxWidth: number, gap: number): Array<{ x: number; y: number }> {
  const out: Array<{ x: number; y: number }> = [];
  let x = 0;
  let y = 0;
  let rowH = 0;
  for (const s of sizes) {
    if (x > 0 && x + s.w > maxWidth) {
      x = 0;
      y += rowH + gap;
      rowH = 0;
    }
    out.push({ x, y });
    x += s.w + gap;
    rowH = Math.max(rowH, s.h);
  }
  return out;
}
