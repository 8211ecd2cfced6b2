/**
 * Orthogonal routing of relations around fixed boxes (issue 25.1).
 *
 * Boxes never move here: routing is a drawing step over the stored layout. libavoid-js was
 * measured first (issue 25 asks for it): it loads as WebAssembly asynchronously, which a pure,
 * synchronous drawing cannot wait for, and it took about 500 ms for 200 boxes and 300
 * connectors on this project's machines, above the 300 ms budget for the whole drawing. elkjs
 * routes only what it places itself. So routes are found here, by the usual method of
 * orthogonal connector routers:
 *
 * - The candidate lines are the sides of every box pushed out by MARGIN, and the centre lines
 *   of the boxes (where ports sit): a sparse grid over the region around the two ends.
 * - A* over that grid (state: point and heading) with cost = length + BEND per bend. (A charge
 *   for crossing or running along earlier routes was tried: the detours it causes cross more
 *   routes than they avoid — 6,955 crossings against 4,394 without it on the 200-instance bench
 *   diagram — and it took most of the time.) A step whose
 *   middle lies inside a box pushed out by MARGIN is forbidden, except for the boxes that are
 *   the relation's ends or contain one of them.
 * - The region starts as the two ends with some room around them and doubles until a route is
 *   found; when even the whole diagram has none (boxes placed on top of each other by hand), a
 *   step through a box is allowed at a very high cost, so every relation is drawn.
 * - Routes leave and enter the middle of a side; afterwards the routes that share a side are
 *   spread along it, ordered by where they head, so they neither overlap nor cross there.
 *
 * Coordinates are pixels. Cost per relation is that of a search over the boxes near its ends.
 */

export interface RouteBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface RouteNode extends RouteBox {
  id: string;
  /** Scratch for the bucket index. */
  seen?: number;
  /** Container this box is drawn in (it and its ancestors are never obstacles for its routes). */
  parent: string | null;
}

export interface RouteEdge {
  id: string;
  from: string;
  to: string;
}

export interface Point {
  x: number;
  y: number;
}

/** Distance routes keep from boxes that are not their ends. */
export const MARGIN = 10;
const BEND = 30;
const THROUGH = 100_000;

type Side = 'top' | 'bottom' | 'left' | 'right';

/**
 * Grid cells the searches of one drawing may build in all, and one search at most: past them a
 * relation is drawn as a direct elbow between its boxes (directRoute). The search grows with the
 * boxes near a relation, so without a bound a diagram of 1,000 instances took minutes of the event
 * loop; with it a drawing's time grows with its relations, whatever their layout.
 */
const ROUTING_CELLS = 1_500_000;
const SEARCH_CELLS = 250_000;

/** A bucket index of rectangles and segments, for "what lies near here". */
class Buckets<T extends { seen?: number }> {
  private readonly cells = new Map<number, T[]>();
  private stamp = 0;
  constructor(private readonly size: number) {}
  private key(i: number, j: number): number {
    return (i + 32768) * 65536 + (j + 32768);
  }
  add(r: RouteBox, item: T): void {
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
  /** Calls `visit` once for each item whose cells meet `r`. */
  each(r: RouteBox, visit: (item: T) => void): void {
    const s = this.size;
    const stamp = ++this.stamp;
    for (let i = Math.floor(r.x / s); i <= Math.floor((r.x + r.w) / s); i++) {
      for (let j = Math.floor(r.y / s); j <= Math.floor((r.y + r.h) / s); j++) {
        const list = this.cells.get(this.key(i, j));
        if (!list) continue;
        for (const item of list) {
          if (item.seen === stamp) continue;
          item.seen = stamp;
          visit(item);
        }
      }
    }
  }
}

/** A binary min-heap of state indexes by priority. */
class Heap {
  private readonly items: number[] = [];
  private readonly keys: number[] = [];
  get size(): number {
    return this.items.length;
  }
  push(item: number, key: number): void {
    const items = this.items;
    const keys = this.keys;
    let i = items.length;
    items.push(item);
    keys.push(key);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (keys[p]! <= key) break;
      items[i] = items[p]!;
      keys[i] = keys[p]!;
      i = p;
    }
    items[i] = item;
    keys[i] = key;
  }
  pop(): number {
    const items = this.items;
    const keys = this.keys;
    const top = items[0]!;
    const lastItem = items.pop()!;
    const lastKey = keys.pop()!;
    if (items.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= items.length) break;
        const r = l + 1;
        const c = r < items.length && keys[r]! < keys[l]! ? r : l;
        if (keys[c]! >= lastKey) break;
        items[i] = items[c]!;
        keys[i] = keys[c]!;
        i = c;
      }
      items[i] = lastItem;
      keys[i] = lastKey;
    }
    return top;
  }
}

const inflate = (r: RouteBox, d: number): RouteBox => ({ x: r.x - d, y: r.y - d, w: r.w + 2 * d, h: r.h + 2 * d });
const union = (a: RouteBox, b: RouteBox): RouteBox => {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, w: Math.max(a.x + a.w, b.x + b.w) - x, h: Math.max(a.y + a.h, b.y + b.h) - y };
};

function sortedUnique(values: number[]): number[] {
  values.sort((a, b) => a - b);
  const out: number[] = [];
  for (const v of values) if (out.length === 0 || v - out[out.length - 1]! > 0.5) out.push(v);
  return out;
}

/** Drops points where the route goes on in the same direction. */
export function simplify(points: Point[]): Point[] {
  const out: Point[] = [];
  for (const p of points) {
    if (out.length > 0 && out[out.length - 1]!.x === p.x && out[out.length - 1]!.y === p.y) continue;
    if (out.length >= 2) {
      const a = out[out.length - 2]!;
      const b = out[out.length - 1]!;
      if ((a.x === b.x && b.x === p.x) || (a.y === b.y && b.y === p.y)) out.pop();
    }
    out.push(p);
  }
  return out;
}

/** The route of every relation whose ends are both among `nodes`, by relation id. */
export function routeEdges(nodes: readonly RouteNode[], edges: readonly RouteEdge[]): Map<string, Point[]> {
  const byId = new Map<string, RouteNode>();
  for (const n of nodes) if (!byId.has(n.id)) byId.set(n.id, n);
  const all = [...byId.values()];
  let extent: RouteBox | null = null;
  for (const n of all) {
    extent = extent ? union(extent, n) : { x: n.x, y: n.y, w: n.w, h: n.h };
  }
  const boxes = new Buckets<RouteNode>(160);
  for (const n of all) boxes.add(inflate(n, MARGIN), n);
  const routes = new Map<string, Point[]>();
  const sides = new Map<string, Array<PortUse>>();

  const ancestors = (n: RouteNode): Set<string> => {
    const out = new Set<string>();
    let p: RouteNode | undefined = n;
    for (let depth = 0; p && depth < 64 && !out.has(p.id); depth++) {
      out.add(p.id);
      p = p.parent === null ? undefined : byId.get(p.parent);
    }
    return out;
  };

  // Short relations first: they have the fewest ways round, long ones detour around them.
  const order = edges
    .map((e) => ({ e, a: byId.get(e.from), b: byId.get(e.to) }))
    .filter((x): x is { e: RouteEdge; a: RouteNode; b: RouteNode } => x.a !== undefined && x.b !== undefined && x.a !== x.b);
  const distance = (x: { a: RouteNode; b: RouteNode }) =>
    Math.abs(x.a.x + x.a.w / 2 - x.b.x - x.b.w / 2) + Math.abs(x.a.y + x.a.h / 2 - x.b.y - x.b.h / 2);
  order.sort((p, q) => distance(p) - distance(q));

  const budget = { cells: ROUTING_CELLS };
  for (const { e, a, b } of order) {
    const exempt = ancestors(a);
    for (const id of ancestors(b)) exempt.add(id);
    const ends = union(a, b);
    let room = 160;
    let found: { points: Point[]; from: Side; to: Side } | null = null;
    for (;;) {
      if (budget.cells <= 0) break;
      const region = inflate(ends, room);
      found = search(a, b, region, boxes, exempt, false, budget);
      if (
        found ||
        !extent ||
        (region.x <= extent.x &&
          region.y <= extent.y &&
          region.x + region.w >= extent.x + extent.w &&
          region.y + region.h >= extent.y + extent.h)
      )
        break;
      room *= 2;
    }
    if (budget.cells > 0) found ??= search(a, b, inflate(extent ? union(extent, ends) : ends, 2 * MARGIN), boxes, exempt, true, budget);
    found ??= directRoute(a, b);
    const points = simplify(found.points);
    routes.set(e.id, points);
    const at = (n: RouteNode, side: Side) => `${n.id}\u0000${side}`;
    for (const [n, side, end] of [
      [a, found.from, 'start'],
      [b, found.to, 'end'],
    ] as const) {
      const list = sides.get(at(n, side));
      const item = { edge: e.id, end, side, exempt };
      if (list) list.push(item);
      else sides.set(at(n, side), [item]);
    }
  }
  spreadPorts(sides, byId, routes, boxes);
  return routes;
}

/** An elbow from the side of `a` that faces `b` to the facing side of `b`: what a relation gets past the routing budget. */
function directRoute(a: RouteNode, b: RouteNode): { points: Point[]; from: Side; to: Side } {
  const dx = b.x + b.w / 2 - (a.x + a.w / 2);
  const dy = b.y + b.h / 2 - (a.y + a.h / 2);
  const [from, to]: [Side, Side] =
    Math.abs(dx) >= Math.abs(dy) ? (dx >= 0 ? ['right', 'left'] : ['left', 'right']) : dy >= 0 ? ['bottom', 'top'] : ['top', 'bottom'];
  const p = portOf(a, from).on;
  const q = portOf(b, to).on;
  const points =
    from === 'left' || from === 'right'
      ? [p, { x: (p.x + q.x) / 2, y: p.y }, { x: (p.x + q.x) / 2, y: q.y }, q]
      : [p, { x: p.x, y: (p.y + q.y) / 2 }, { x: q.x, y: (p.y + q.y) / 2 }, q];
  return { points, from, to };
}

function segBox(p: Point, q: Point): RouteBox {
  return { x: Math.min(p.x, q.x), y: Math.min(p.y, q.y), w: Math.abs(p.x - q.x), h: Math.abs(p.y - q.y) };
}

const PORT_SIDES: Side[] = ['top', 'bottom', 'left', 'right'];

function portOf(n: RouteBox, side: Side): { on: Point; out: Point; dir: number } {
  const cx = n.x + n.w / 2;
  const cy = n.y + n.h / 2;
  switch (side) {
    case 'top':
      return { on: { x: cx, y: n.y }, out: { x: cx, y: n.y - MARGIN }, dir: 0 };
    case 'bottom':
      return { on: { x: cx, y: n.y + n.h }, out: { x: cx, y: n.y + n.h + MARGIN }, dir: 2 };
    case 'left':
      return { on: { x: n.x, y: cy }, out: { x: n.x - MARGIN, y: cy }, dir: 3 };
    case 'right':
      return { on: { x: n.x + n.w, y: cy }, out: { x: n.x + n.w + MARGIN, y: cy }, dir: 1 };
  }
}

// Headings: 0 up, 1 right, 2 down, 3 left.
const DX = [0, 1, 0, -1];
const DY = [-1, 0, 1, 0];

/** Index of the value in sorted `list` nearest to `v`, or -1 when none is within half a pixel. */
function nearest(list: readonly number[], v: number): number {
  const i = lowerIndex(list, v);
  return i < list.length && Math.abs(list[i]! - v) <= 0.5 ? i : -1;
}

/** First index whose value is ≥ v − 0.5 (clamped to the list). */
function lowerIndex(list: readonly number[], v: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < v - 0.5) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Last index whose value is ≤ v + 0.5, clamped to the list. */
function upperIndex(list: readonly number[], v: number): number {
  return Math.max(0, lowerIndex(list, v + 1) - 1);
}

/** True when `outer` is a container `inner` is drawn in (directly or further up). */
function ancestorOf(outer: RouteNode, inner: RouteNode): boolean {
  return outer !== inner && inner.parent !== null && outer.id === inner.parent;
}

/**
 * The cheapest route from a side of `a` to a side of `b` over the grid of the boxes in
 * `region`, or null. With `soft`, boxes may be crossed at a very high cost.
 */
function search(
  a: RouteNode,
  b: RouteNode,
  region: RouteBox,
  boxes: Buckets<RouteNode>,
  exempt: Set<string>,
  soft: boolean,
  budget: { cells: number },
): { points: Point[]; from: Side; to: Side } | null {
  const obstacles: RouteBox[] = [];
  const xs: number[] = [];
  const ys: number[] = [];
  boxes.each(region, (n) => {
    const r = inflate(n, MARGIN);
    if (!exempt.has(n.id)) obstacles.push(r);
    // An end is no obstacle to its own routes, but they go round it, not through it.
    else if ((n === a || n === b) && !(ancestorOf(n, a) || ancestorOf(n, b)))
      obstacles.push({ x: n.x + 1, y: n.y + 1, w: n.w - 2, h: n.h - 2 });
    xs.push(r.x, r.x + r.w, n.x + n.w / 2);
    ys.push(r.y, r.y + r.h, n.y + n.h / 2);
    if (n === a || n === b) {
      xs.push(n.x + 1, n.x + n.w - 1);
      ys.push(n.y + 1, n.y + n.h - 1);
    }
  });
  xs.push(region.x, region.x + region.w);
  ys.push(region.y, region.y + region.h);
  const X = sortedUnique(xs).filter((v) => v >= region.x && v <= region.x + region.w);
  const Y = sortedUnique(ys).filter((v) => v >= region.y && v <= region.y + region.h);
  const nx = X.length;
  const ny = Y.length;
  if (nx * ny > SEARCH_CELLS) return null;
  budget.cells -= nx * ny;
  const ix = (v: number) => nearest(X, v);
  const iy = (v: number) => nearest(Y, v);

  // Which grid steps run through an obstacle: counts over index rectangles, summed up once.
  // A horizontal step i→i+1 on row j is blocked when a0 ≤ i < a1 and b0 < j < b1 (a vertical
  // one likewise), a0…b1 being the obstacle's edges as grid indexes (clamped to the region).
  const H = new Int32Array((nx + 1) * (ny + 1));
  const V = new Int32Array((nx + 1) * (ny + 1));
  const mark = (grid: Int32Array, i0: number, i1: number, j0: number, j1: number) => {
    i0 = Math.max(0, i0);
    j0 = Math.max(0, j0);
    i1 = Math.min(nx - 1, i1);
    j1 = Math.min(ny - 1, j1);
    if (i1 < i0 || j1 < j0) return;
    grid[i0 * (ny + 1) + j0]! += 1;
    grid[(i1 + 1) * (ny + 1) + j0]! -= 1;
    grid[i0 * (ny + 1) + j1 + 1]! -= 1;
    grid[(i1 + 1) * (ny + 1) + j1 + 1]! += 1;
  };
  for (const o of obstacles) {
    // An obstacle reaching past the region counts as going on beyond its edge lines.
    const a0 = o.x < X[0]! - 0.5 ? -1 : lowerIndex(X, o.x);
    const a1 = o.x + o.w > X[nx - 1]! + 0.5 ? nx : upperIndex(X, o.x + o.w);
    const b0 = o.y < Y[0]! - 0.5 ? -1 : lowerIndex(Y, o.y);
    const b1 = o.y + o.h > Y[ny - 1]! + 0.5 ? ny : upperIndex(Y, o.y + o.h);
    mark(H, a0, a1 - 1, b0 + 1, b1 - 1);
    mark(V, a0 + 1, a1 - 1, b0, b1 - 1);
  }
  for (const grid of [H, V]) {
    for (let i = 0; i <= nx; i++) {
      for (let j = 0; j <= ny; j++) {
        const k = i * (ny + 1) + j;
        grid[k]! += (i > 0 ? grid[k - (ny + 1)]! : 0) + (j > 0 ? grid[k - 1]! : 0) - (i > 0 && j > 0 ? grid[k - (ny + 1) - 1]! : 0);
      }
    }
  }
  const blockedStep = (i: number, j: number, d: number): boolean => {
    // d: 0 up, 1 right, 2 down, 3 left; the step from (i, j).
    if (d === 1) return H[i * (ny + 1) + j]! > 0;
    if (d === 3) return H[(i - 1) * (ny + 1) + j]! > 0;
    if (d === 2) return V[i * (ny + 1) + j]! > 0;
    return V[i * (ny + 1) + j - 1]! > 0;
  };
  const goals = new Map<number, Side>();
  const targetCentre = { x: b.x + b.w / 2, y: b.y + b.h / 2 };
  for (const side of PORT_SIDES) {
    const port = portOf(b, side);
    const i = ix(port.out.x);
    const j = iy(port.out.y);
    if (i >= 0 && j >= 0) goals.set(i * ny + j, side);
  }
  // Distance to the target, plus a bend when not in line with it; weighted a little above the
  // true cost (found routes are within a few percent of the cheapest, and the search is short).
  const h = (i: number, j: number) => {
    const dx = Math.abs(X[i]! - targetCentre.x);
    const dy = Math.abs(Y[j]! - targetCentre.y);
    return 1.2 * (dx + dy) + (dx > b.w / 2 && dy > b.h / 2 ? BEND : 0);
  };
  const states = nx * ny * 4;
  const cost = new Float64Array(states).fill(Infinity);
  const came = new Int32Array(states).fill(-1);
  const done = new Uint8Array(states);
  const heap = new Heap();
  const startSide = new Map<number, Side>();
  for (const side of PORT_SIDES) {
    const port = portOf(a, side);
    const i = ix(port.out.x);
    const j = iy(port.out.y);
    if (i < 0 || j < 0) continue;
    const state = (i * ny + j) * 4 + port.dir;
    // Leaving by a side that turns away from the target costs two bends: routes then leave
    // towards where they go, and the ones sharing a side fan out without crossing.
    const away = DX[port.dir]! * (targetCentre.x - port.on.x) + DY[port.dir]! * (targetCentre.y - port.on.y) <= 0;
    cost[state] = away ? 2 * BEND : 0;
    startSide.set(state, side);
    heap.push(state, cost[state]! + h(i, j));
  }
  let reached = -1;
  let steps = 200_000;
  while (heap.size > 0 && steps-- > 0) {
    const state = heap.pop();
    if (done[state] === 1) continue;
    done[state] = 1;
    const node = state >> 2;
    const dir = state & 3;
    const i = Math.floor(node / ny);
    const j = node % ny;
    const g = cost[state]!;
    const goal = goals.get(node);
    // At one of the target's ports, not heading away from it: the last step turns into it.
    if (goal !== undefined && portOf(b, goal).dir !== dir) {
      reached = state;
      break;
    }
    for (let d = 0; d < 4; d++) {
      if (d === (dir + 2) % 4) continue;
      const ni = i + DX[d]!;
      const nj = j + DY[d]!;
      if (ni < 0 || nj < 0 || ni >= nx || nj >= ny) continue;
      const p = { x: X[i]!, y: Y[j]! };
      const q = { x: X[ni]!, y: Y[nj]! };
      let step = Math.abs(q.x - p.x) + Math.abs(q.y - p.y);
      if (blockedStep(i, j, d)) {
        if (!soft) continue;
        step += THROUGH;
      }
      step += d === dir ? 0 : BEND;
      const next = (ni * ny + nj) * 4 + d;
      const ng = g + step;
      if (ng < cost[next]!) {
        cost[next] = ng;
        came[next] = state;
        heap.push(next, ng + h(ni, nj));
      }
    }
  }
  if (reached < 0) return null;
  const points: Point[] = [];
  let s = reached;
  let first = reached;
  for (;;) {
    const node = s >> 2;
    points.push({ x: X[Math.floor(node / ny)]!, y: Y[node % ny]! });
    const prev = came[s]!;
    if (prev < 0) {
      first = s;
      break;
    }
    s = prev;
  }
  points.reverse();
  const from = startSide.get(first)!;
  const to = goals.get(reached >> 2)!;
  return { points: [portOf(a, from).on, ...points, portOf(b, to).on], from, to };
}

/**
 * Routes that share a side of a box get their own places along it, in the order they head off
 * (so they do not cross right there), evenly spread.
 */
interface PortUse {
  edge: string;
  end: 'start' | 'end';
  side: Side;
  /** The boxes its route may cross (its ends and their containers). */
  exempt: Set<string>;
}

/** True when the segment p→q runs through a box (pushed out by MARGIN − 1) not in `exempt`. */
function segmentBlocked(p: Point, q: Point, boxes: Buckets<RouteNode>, exempt: Set<string>): boolean {
  let hit = false;
  const s = segBox(p, q);
  boxes.each(s, (n) => {
    if (hit || exempt.has(n.id)) return;
    const r = inflate(n, MARGIN - 1);
    if (s.x + s.w > r.x && s.x < r.x + r.w && s.y + s.h > r.y && s.y < r.y + r.h) hit = true;
  });
  return hit;
}

function spreadPorts(
  sides: Map<string, Array<PortUse>>,
  byId: Map<string, RouteNode>,
  routes: Map<string, Point[]>,
  boxes: Buckets<RouteNode>,
): void {
  for (const [key, list] of sides) {
    if (list.length < 2) continue;
    const node = byId.get(key.slice(0, key.indexOf('\u0000')))!;
    const horizontalSide = list[0]!.side === 'top' || list[0]!.side === 'bottom';
    // Where each route goes after leaving the side: the along-side coordinate of its next bend.
    const heading = (item: { edge: string; end: 'start' | 'end' }): number => {
      const pts = routes.get(item.edge)!;
      const seq = item.end === 'start' ? pts : [...pts].reverse();
      const far = seq[Math.min(2, seq.length - 1)]!;
      return horizontalSide ? far.x : far.y;
    };
    const sorted = list.map((item) => ({ item, key: heading(item) })).sort((p, q) => p.key - q.key);
    const lo = horizontalSide ? node.x : node.y;
    const length = horizontalSide ? node.w : node.h;
    sorted.forEach(({ item }, n) => {
      const pts = routes.get(item.edge)!;
      // A straight route moves its other end too; only when that stays on the other box's side.
      if (pts.length === 2) return;
      const at = lo + ((n + 1) * length) / (sorted.length + 1);
      const [p0, p1, p2] = item.end === 'start' ? [0, 1, 2] : [pts.length - 1, pts.length - 2, pts.length - 3];
      const moved = (p: Point): Point => (horizontalSide ? { x: at, y: p.y } : { x: p.x, y: at });
      const a = moved(pts[p0]!);
      const b = moved(pts[p1]!);
      // Only where the moved first leg and the stretched second one still pass nothing.
      if (segmentBlocked(a, b, boxes, item.exempt) || segmentBlocked(b, pts[p2]!, boxes, item.exempt)) return;
      pts[p0] = a;
      pts[p1] = b;
    });
  }
}
