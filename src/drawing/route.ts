/**
 * Orthogonal routing of relations around fixed boxes (issue 25).
 *
 * Boxes never move here: routing is a drawing step over the stored layout. libavoid-js was
 * measured first: it loads as WebAssembly asynchronously, which a pure, synchronous drawing
 * cannot wait for, and it took about 500 ms for 200 boxes and 300 connectors, above the 300 ms
 * budget for the whole drawing. elkjs routes only what it places itself. So routes are found
 * here, the way orthogonal connector routers do it (Wybrow, Marriott and Stuckey, "Orthogonal
 * connector routing", 2009: a sparse orthogonal graph, a shortest-path search with a penalty per
 * bend, then nudging apart the routes that share a channel):
 *
 * - **One graph per drawing.** The candidate lines are the sides of every box pushed out by
 *   MARGIN, the centre lines of the boxes (where ports sit) and a frame round the diagram. Each
 *   line runs from the box that gives it until it meets a box that holds no other (the
 *   orthogonal visibility graph); nodes are where lines cross. Containers do not stop lines:
 *   how many containers each step runs through is counted once with 2-D prefix sums, and a step
 *   is blocked for a relation when that count, less the containers it may cross (those of its
 *   ends), is above zero. Building it costs the grid of lines once; each relation then costs
 *   only its search, over a small fraction of the grid's points.
 * - **A\* per relation** over (node, axis of the last step), cost = length + BEND per bend,
 *   towards the nearest port of the target, with a lower bound of the cost left as heuristic
 *   (weighted a hair above it to break ties) and a bucket queue. Routes are the cheapest there
 *   are: a search weighted further above the bound (1.2 to 2) was several times faster but
 *   found routes with 30–60 % more bends, weaving between boxes, which cutting corners
 *   afterwards did not undo. An end's own box is an obstacle to its routes (they go round it, not through it);
 *   its margin is not.
 * - **Full channels cost more** (Crowding). Relations are routed one after another; a step
 *   through a channel (the free space across a line, between the boxes beside it) that already
 *   holds as many earlier routes as fit SPACING apart costs CROWDED more per pixel (a narrow
 *   one, of at most NARROW routes, CROWDED for each time over: see NARROW), so a later
 *   route takes a parallel channel where one is about as short, instead of the one line every
 *   cheapest route takes (the bench's 200-instance diagram: 45 routes along one 42 px gap
 *   between rows of boxes, which nudging can only draw a pixel apart; with the charge, no two
 *   routes under a pixel apart at 200 instances (27 pairs were), and 404 pairs instead of 1,327
 *   at 1,000). Routes spread over more channels cross fewer routes in small diagrams (195 → 169
 *   crossings at 50 instances, 5,774 → 5,700 at 200) and more in the largest (126,887 → 144,545
 *   at 1,000, against dot's 182,501). Charged before, and not kept: every crossing of
 *   or run along an earlier route (the detours cross more routes than they avoid), and a second
 *   search of the routes of full channels (negotiated congestion: twice the search for a third
 *   fewer pairs under a pixel apart). The charge widens the search (a route dearer than the
 *   cheapest is taken only once every cheaper one was looked at), so it is made only within
 *   CROWDING_STEPS.
 * - When the sparse graph has no route (boxes closer than twice the margin, placed by hand),
 *   the relation is searched on the whole grid; when even that has none (boxes on top of each
 *   other), a step through a box is allowed at a very high cost, so every relation is drawn.
 *   Only past a budget of search steps (ROUTING_STEPS) does a relation become a direct elbow
 *   (directRoute), so a hostile layout cannot hold the event loop for long.
 * - A relation between an element and a boundary that holds it is a straight line inside the
 *   boundary, from the element to the nearest inner side of its wall (inwardRoutes), not
 *   searched: the search ends at the wall's outer side, and went out and pointed back at it.
 *   Each such line is then an obstacle to the other routes (lineObstacle), as a box is.
 * - **End legs.** A route turns onto its box on the box's margin line, MARGIN out, shorter than
 *   the arrowhead (ARROW_PX), and nudging may move that turn nearer still: nudging keeps the
 *   segment before a last leg LAST_LEG from its box, and the one after a first leg FIRST_LEG
 *   (keepEndLegs), except where that would leave routes on top of each other; a route whose last
 *   leg is still short (its channel too full) is searched again with such a leg charged, so it
 *   comes in by another side or way (see routeEdges). The bench's diagrams: 36 of 61 last legs
 *   shorter than the arrowhead at 50 instances, about half at 200, none after; 99 crossings at
 *   50 instances before, 104 after, 4,336 at 200 before, 4,328 after.
 * - Routes leave and enter the middle of a side; afterwards the routes that share a side are
 *   spread along it (spreadPorts) in the order in which they part: two routes that leave a side
 *   together are walked along until one turns off the other's way, and the one that turns left
 *   goes on the left: the walk that orders them in shared channels, so that the order at the box
 *   is the order along the way, not one that makes them cross just outside it (the bench's
 *   50-instance diagram: 26 crossings of routes that share a box before, 12 after).
 * - **Nudging** (nudge): routes that run along the same line, or lines too close to tell apart,
 *   over a common stretch are moved apart across it, within the free space around it (never
 *   nearer than CLEARANCE to a box, never out of a container they run in), in an order that
 *   follows where the routes come from and go to, so that parallel routes stay parallel through
 *   their bends instead of crossing there. Where a chain of routes has no room for SPACING,
 *   the gaps of that chain narrow, and only those (a group of routes chained to each other
 *   spans the diagram; one gap for all of it squeezed every route of the group for one narrow
 *   spot: on the bench's 1,000-instance diagram, 404 pairs under a pixel apart before this, 150 after).
 *   Where that order leaves routes under a pixel apart (routes whose room ends at a box
 *   part-way along, ordered beyond it) and the order of their room leaves fewer, they are
 *   ordered by their room instead, crossing where they must: two crossing routes can be
 *   followed, two drawn under a pixel apart cannot. Where it does not, they keep the order
 *   that does not cross them, however close. A route that leaves (or enters) a container along
 *   a line stays inside it up to the wall; where a neighbouring box's wall lies just outside that
 *   wall, routes passing by are squeezed between the two (the bench's 1,000-instance diagram:
 *   stacked boundaries whose side walls end a grid unit apart, 47 pairs under a pixel apart,
 *   all there). Where a group of routes is left under a pixel apart, those of its segments that
 *   pass through a container's wall may take the room beyond its nearer side instead (the route
 *   leaves through the side), and are placed again so if that leaves fewer (47 pairs to none).
 *   Relations that join the same two boxes (a bundle) keep PARALLEL_SPACING, more for their
 *   labels, instead of SPACING: their lines run side by side all the way, and 7 px apart their
 *   labels lay across each other's lines; where the room is short, a bundle's distance narrows
 *   first, down to SPACING, before any other route's.
 *
 * The figures above are each step's own; all together (bench/drawing-results.md): no two
 * routes under a pixel apart at 50, 200 and 1,000 instances (1,327 pairs at 1,000 before any),
 * and 151 crossings at 50 instances (195), 5,482 at 200 (5,774), 142,480 at 1,000 (126,887; dot
 * 182,501), the 1,000-instance routing taking about twice as long. On the layout with shortened
 * container rows (../layout/sugiyama.ts), 99 at 50, 4,336 at 200 and 142,473 at 1,000;
 * with bundles kept apart (PARALLEL_SPACING), 142,439 at 1,000; with end legs as long as the
 * arrowhead, 104 at 50 and 4,328 at 200; with gaps narrowed to a pixel before any goes below it,
 * 104, 4,307 and 141,580 (bench/drawing-results.md).
 *
 * Coordinates are pixels.
 */

import { unionAll } from '../layout/geometry.js';
import { CellGrid } from './cell-grid.js';

export interface RouteBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface RouteNode extends RouteBox {
  id: string;
  /** Scratch for the grid of obstacles (cell-grid.ts). */
  seen?: number;
  /** Container this box is drawn in (it and its ancestors are never obstacles for its routes). */
  parent: string | null;
  /**
   * Where the shape drawn in the box starts to fill its left and right sides, when below its top
   * (a person: the body under the head). Its loops leave a side below it.
   */
  sidesFrom?: number;
  /**
   * What a boundary draws inside its wall (its title, its API marker): a relation drawn inside
   * it to its wall (see inwardRoutes) does not cross them.
   */
  inner?: readonly RouteBox[];
}

export interface RouteEdge {
  id: string;
  from: string;
  to: string;
  /** The size of the relation's label, when it has one: relations between the same two boxes are drawn far enough apart for it (see PARALLEL_SPACING). */
  label?: { w: number; h: number };
}

export interface Point {
  x: number;
  y: number;
}

/** Distance routes keep from boxes that are not their ends. */
export const MARGIN = 10;
const BEND = 30;
const THROUGH = 100_000;
/** Weight of the A* heuristic over its lower bound: a hair above 1 breaks ties towards the target (see the module comment). */
const GREED = 1.001;
/** Nudged routes keep at least this far from every box (a box's own routes included). */
const CLEARANCE = 4;
/** Distance between routes nudged apart, where the channel has room (less only where a chain of routes has not). */
const SPACING = 7;
/**
 * Distance between relations that join the same two boxes (either way), where the room allows:
 * each of them, not SPACING, and at least as far as half the widest of their labels across the
 * line (its height along a horizontal line, its width along a vertical one) and LABEL_CLEARANCE
 * more, so that a label centred on its own line covers no other line of the bundle. Such
 * bundles run side by side the whole way (their ends face each other): at SPACING their lines
 * were drawn 7 px apart and every label lay across its neighbours' lines. Graphviz spreads
 * multi-edges by their labels' widths the same way (a label is a node of the rank it passes);
 * yFiles routes them parallel to a leading edge at a set distance; libavoid's nudging keeps
 * one ideal distance for all segments.
 */
const PARALLEL_SPACING = 20;
/** Room between a label's edge and the next line of its bundle (the label placer keeps 2 px round a label). */
const LABEL_CLEARANCE = 4;
/** The most a bundle's distance grows for its labels (a label is at most 170 px wide). */
const PARALLEL_MAX = 90;
/**
 * A channel holds as many routes as fit SPACING apart across it (and one); a step of a route
 * through a channel already that full costs CROWDED more per pixel (see Crowding).
 */
const CROWDED = 0.5;
/**
 * A channel that holds at most this many routes SPACING apart (a gap of about 30 px between two
 * children of a boundary) costs CROWDED more per pixel for each time it is full over: its
 * stretches are short (a row's height), and one charge did not pay for the detour to the next
 * gap, so every route of the rows below took the same gap (the bench's 200-instance diagrams
 * of seeds 2 and 3 with shortened rows: 24 and 8 pairs of routes under a pixel apart there;
 * none with this). Wider channels keep the one charge: charged more, long routes went round
 * over the top of the 1,000-instance diagram, 100 pairs under a pixel apart.
 */
const NARROW = 4;
/** How much narrower, each time, a gap that a chain of routes has no room for is tried (see nudgeAcross). */
const NARROWING = 1.1;
/**
 * How much narrower, each time, a bundle's wider distance is tried where its routes have no room
 * for it (see separations): coarser than NARROWING, since every try is a pass over the group's
 * constraints (1,000 relations between two boxes: 7.5 s with NARROWING, against 5 s before
 * bundles kept a distance of their own).
 */
const WIDE_NARROWING = 1.25;
/** The arrowhead's length along its line (svg.ts: 8 stroke widths of 1.4 px). */
export const ARROW_PX = 11.2;
/**
 * The shortest a route's last leg is drawn: the arrowhead's length, so that the arrowhead sits on
 * the straight last leg, not on the turn before it (svg.ts rounds that turn only as far as the
 * leg leaves room beside the arrowhead).
 */
export const LAST_LEG = Math.ceil(ARROW_PX);
/** What a route searched again (see routeEdges) pays for a last leg shorter than LAST_LEG (a turn on its target's margin line): two bends. */
const SHORT_LEG = 2 * BEND;
/** How many more crossings a route searched again for its short last leg may have than before, the first time (see routeEdges). */
const RESEARCH_CROSSINGS = 4;
/** The shortest a route's first leg is drawn where its room allows: a turn's full rounding (8 px in svg.ts), off the box. */
const FIRST_LEG = 8;
/**
 * The narrowest gap nudging narrows routes to while every chain of them fits with its gaps so
 * (see separations in nudgeAcross): a pixel, under which routes are drawn on top of each other, and
 * a little more, so that places summed from gaps stay a pixel apart.
 */
const APART = 1.001;
/**
 * Below APART (a chain that does not fit otherwise), a gap narrows by what its chain must lose
 * and at least by FINE_NARROWING, for FINE_PASSES passes, then by NARROWING at least again.
 */
const FINE_NARROWING = 1.001;
const FINE_PASSES = 20;
/** How far nudging moves a route across its line at most. */
const MAX_SHIFT = 80;
const EPS = 1e-6;

/**
 * Search steps (states taken off the queue) one drawing may spend in all: past them a relation
 * is drawn as a direct elbow between its boxes. The bench's 1,000-instance diagram needs about
 * 14 million (7.5 million without the charge for full channels); this bounds a hostile layout
 * to a few seconds.
 */
const ROUTING_STEPS = 20_000_000;
/**
 * Steps past which a drawing's searches no longer charge for crowded channels. A charge makes a
 * search wider (every route of the cheapest cost without it must be looked at before a dearer
 * one is taken): the bench's 1,000-instance diagram needs about 14 million steps with it, against
 * 7.5 million; 4,000 relations over a regular grid of 2,000 boxes, whose channels are all full,
 * would spend the whole budget and leave relations as elbows, where the plain search needs half
 * a million.
 */
const CROWDING_STEPS = 15_000_000;
/**
 * Bounds on memory, which grows with the nodes of the sparse graph (about 115 bytes each; the
 * bench's 1,000-instance diagram has 64,000) and with the points of the whole grid: past the
 * first, every relation is drawn as an elbow; past the second, the whole-grid search is not made.
 */
const SPARSE_NODES = 3_000_000;
const FULL_GRID_POINTS = 1_000_000;

type Side = 'top' | 'bottom' | 'left' | 'right';

/** Buckets a queue holds at once (a key this many pixels past the current one waits aside). */
const BUCKET_WINDOW = 1 << 20;

/**
 * A priority queue of state indexes for A* (exported for its tests): one bucket per unit of cost (a pixel), each a stack.
 * Keys taken off only grow (the heuristic is consistent, weighted a hair above it), so taking
 * one off is a step along the buckets and putting one on is O(1); within a bucket the newest
 * goes first, which drives the search deeper along equally good routes. A key below the
 * current bucket (by the hair of weight) goes into the current one.
 *
 * Keys more than BUCKET_WINDOW past the first bucket wait in a list aside, and the buckets move
 * on to them once every nearer key is taken: boxes may lie up to 28 million px apart (positions
 * of ±1,000,000 grid units), and a bucket per pixel up to such a key was an array of that many
 * entries, filled and cleared for every relation while the event loop waited.
 */
export class BucketQueue {
  private heads = new Int32Array(4096).fill(-1);
  private items = new Int32Array(4096);
  private links = new Int32Array(4096);
  private entries = 0;
  private base = 0;
  private at = 0;
  private top = 0;
  /** Items whose keys lie past the window, with their keys. */
  private farItems: number[] = [];
  private farKeys: number[] = [];
  size = 0;

  /** Empties the queue; keys from now on are at least `base`. */
  clear(base: number): void {
    this.heads.fill(-1, 0, this.top + 1);
    this.base = Math.floor(base);
    this.at = 0;
    this.top = 0;
    this.entries = 0;
    this.size = 0;
    this.farItems = [];
    this.farKeys = [];
  }

  push(item: number, key: number): void {
    let b = Math.floor(key) - this.base;
    if (b < this.at) b = this.at;
    this.size++;
    if (b >= BUCKET_WINDOW) {
      this.farItems.push(item);
      this.farKeys.push(key);
      return;
    }
    if (b >= this.heads.length) {
      const heads = new Int32Array(Math.max(b + 1, this.heads.length * 2)).fill(-1);
      heads.set(this.heads);
      this.heads = heads;
    }
    if (this.entries === this.items.length) {
      const items = new Int32Array(this.entries * 2);
      items.set(this.items);
      this.items = items;
      const links = new Int32Array(this.entries * 2);
      links.set(this.links);
      this.links = links;
    }
    const e = this.entries++;
    this.items[e] = item;
    this.links[e] = this.heads[b]!;
    this.heads[b] = e;
    if (b > this.top) this.top = b;
  }

  pop(): number {
    const heads = this.heads;
    while (this.at <= this.top && heads[this.at] === -1) this.at++;
    if (this.at > this.top) {
      this.moveOn();
      return this.pop();
    }
    const e = heads[this.at]!;
    heads[this.at] = this.links[e]!;
    this.size--;
    return this.items[e]!;
  }

  /** Every bucket is empty: the window moves to the smallest key waiting aside, and takes those it now holds. */
  private moveOn(): void {
    const items = this.farItems;
    const keys = this.farKeys;
    let least = keys[0]!;
    for (const key of keys) if (key < least) least = key;
    this.clear(least);
    this.size = 0;
    for (let i = 0; i < items.length; i++) this.push(items[i]!, keys[i]!);
  }
}

const inflate = (r: RouteBox, d: number): RouteBox => ({ x: r.x - d, y: r.y - d, w: r.w + 2 * d, h: r.h + 2 * d });

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

// ---------------------------------------------------------------------------------------------
// The grid

/** Last index whose value is ≤ v, or -1. */
function lastAtMost(list: Float64Array, v: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! <= v + EPS) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** First index whose value is ≥ v, or the list's length. */
function firstAtLeast(list: Float64Array, v: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < v - EPS) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function sortedLines(values: number[]): Float64Array {
  values.sort((a, b) => a - b);
  const out: number[] = [];
  for (const v of values) if (out.length === 0 || v - out[out.length - 1]! > EPS) out.push(v);
  return Float64Array.from(out);
}

/**
 * The grid steps whose inside meets the open rectangle r, as index ranges (inclusive):
 * horizontal steps (i, j)→(i+1, j) for i in [0]…[1], j in [2]…[3]; vertical steps
 * (i, j)→(i, j+1) for i in [4]…[5], j in [6]…[7]. Edges need not lie on grid lines.
 */
type StepRect = [number, number, number, number, number, number, number, number];

/** The candidate lines: every box's sides pushed out by MARGIN, its centre lines, and a frame round the diagram. */
class Lines {
  readonly X: Float64Array;
  readonly Y: Float64Array;
  readonly nx: number;
  readonly ny: number;

  constructor(
    boxes: readonly RouteBox[],
    readonly frame: RouteBox,
  ) {
    const xs: number[] = [frame.x, frame.x + frame.w];
    const ys: number[] = [frame.y, frame.y + frame.h];
    for (const n of boxes) {
      xs.push(n.x - MARGIN, n.x + n.w + MARGIN, n.x + n.w / 2);
      ys.push(n.y - MARGIN, n.y + n.h + MARGIN, n.y + n.h / 2);
    }
    this.X = sortedLines(xs);
    this.Y = sortedLines(ys);
    this.nx = this.X.length;
    this.ny = this.Y.length;
  }

  stepRect(r: RouteBox): StepRect {
    const { X, Y, nx, ny } = this;
    // A step between lines i and i+1 meets (left, right) when X[i] < right and X[i+1] > left.
    const left = lastAtMost(X, r.x);
    const right = firstAtLeast(X, r.x + r.w);
    const top = lastAtMost(Y, r.y);
    const bottom = firstAtLeast(Y, r.y + r.h);
    return [
      Math.max(0, left),
      Math.min(nx - 2, right - 1),
      Math.max(0, top + 1),
      Math.min(ny - 1, bottom - 1),
      Math.max(0, left + 1),
      Math.min(nx - 1, right - 1),
      Math.max(0, top),
      Math.min(ny - 2, bottom - 1),
    ];
  }

  /**
   * How many of `boxes` (pushed out by MARGIN) each unit step runs through: horizontal steps
   * (i, j)→(i+1, j) and vertical ones (i, j)→(i, j+1) at i * ny + j. 2-D prefix sums: the cost
   * is the number of grid points, whatever the boxes.
   */
  counts(boxes: readonly RouteBox[]): { h: Int32Array; v: Int32Array } {
    const { nx, ny } = this;
    const stride = ny + 1;
    const h = new Int32Array((nx + 1) * stride);
    const v = new Int32Array((nx + 1) * stride);
    const mark = (grid: Int32Array, i0: number, i1: number, j0: number, j1: number) => {
      if (i1 < i0 || j1 < j0) return;
      grid[i0 * stride + j0]! += 1;
      grid[(i1 + 1) * stride + j0]! -= 1;
      grid[i0 * stride + j1 + 1]! -= 1;
      grid[(i1 + 1) * stride + j1 + 1]! += 1;
    };
    for (const n of boxes) {
      const r = this.stepRect(inflate(n, MARGIN));
      mark(h, r[0], r[1], r[2], r[3]);
      mark(v, r[4], r[5], r[6], r[7]);
    }
    const out = { h: new Int32Array(nx * ny), v: new Int32Array(nx * ny) };
    for (const [grid, sums] of [
      [h, out.h],
      [v, out.v],
    ] as const) {
      for (let i = 0; i < nx; i++) {
        for (let j = 0; j < ny; j++) {
          const k = i * stride + j;
          grid[k]! += (i > 0 ? grid[k - stride]! : 0) + (j > 0 ? grid[k - 1]! : 0) - (i > 0 && j > 0 ? grid[k - stride - 1]! : 0);
          sums[i * ny + j] = grid[k]!;
        }
      }
    }
    return out;
  }

  /** Index of the line at exactly v, or -1. */
  static line(list: Float64Array, v: number): number {
    const i = firstAtLeast(list, v);
    return i < list.length && Math.abs(list[i]! - v) <= EPS ? i : -1;
  }
}

/**
 * What A* walks: points of the grid (nodes), each joined to the next node along its lines, and
 * for each unit step of the grid how many of the boxes this graph does not leave out it runs
 * through (a step between two nodes is blocked for a relation when that count, less the boxes
 * the relation may cross, plus its own obstacles, is above zero).
 */
interface Graph {
  lines: Lines;
  /** The node at grid point (i, j), or -1. */
  node(i: number, j: number): number;
  nodeI: Int32Array;
  nodeJ: Int32Array;
  /** The neighbour of node n heading d (0 up, 1 right, 2 down, 3 left) at 4n + d, or -1. */
  next: Int32Array;
  /** The count of the unit step next to node n heading d (the one a step from n is judged by), at 4n + d. */
  stepCount: Int32Array;
  /** True when `n` is counted in stepCount (a relation that may cross it subtracts it). */
  counts(n: RouteNode): boolean;
}

/**
 * Every point of the grid, joined to its four neighbours, every box counted: slower, for when the
 * sparse graph has no route; null past FULL_GRID_POINTS (its memory grows with the grid).
 */
function fullGraph(lines: Lines, boxes: readonly RouteNode[]): Graph | null {
  const { nx, ny } = lines;
  const size = nx * ny;
  if (size > FULL_GRID_POINTS) return null;
  const nodeI = new Int32Array(size);
  const nodeJ = new Int32Array(size);
  const next = new Int32Array(4 * size);
  for (let i = 0; i < nx; i++) {
    for (let j = 0; j < ny; j++) {
      const n = i * ny + j;
      nodeI[n] = i;
      nodeJ[n] = j;
      next[4 * n] = j > 0 ? n - 1 : -1;
      next[4 * n + 1] = i < nx - 1 ? n + ny : -1;
      next[4 * n + 2] = j < ny - 1 ? n + 1 : -1;
      next[4 * n + 3] = i > 0 ? n - ny : -1;
    }
  }
  const { h, v } = lines.counts(boxes);
  const stepCount = new Int32Array(4 * size);
  for (let n = 0; n < size; n++) {
    const i = nodeI[n]!;
    const j = nodeJ[n]!;
    stepCount[4 * n] = j > 0 ? v[i * ny + j - 1]! : 0;
    stepCount[4 * n + 1] = i < nx - 1 ? h[i * ny + j]! : 0;
    stepCount[4 * n + 2] = j < ny - 1 ? v[i * ny + j]! : 0;
    stepCount[4 * n + 3] = i > 0 ? h[(i - 1) * ny + j]! : 0;
  }
  return {
    lines,
    node: (i, j) => (i < 0 || j < 0 || i >= nx || j >= ny ? -1 : i * ny + j),
    nodeI,
    nodeJ,
    next,
    stepCount,
    counts: () => true,
  };
}

/**
 * The orthogonal visibility graph: each line runs from the box that gives it (its side, or out
 * of the middle of a side) until it meets a box that holds no other (pushed out by MARGIN); nodes
 * are where such lines cross. Containers do not stop lines (routes run into the containers of
 * their ends), so they are counted per step instead; since a container's own side lines run all
 * along it, a step between two nodes is either wholly inside a container or wholly outside.
 * In a diagram of rows of boxes most lines end at the next box, so the graph has a small
 * fraction of the grid's points and a search visits few of them.
 */
function visibilityGraph(lines: Lines, boxes: readonly RouteNode[], containers: ReadonlySet<RouteNode>): Graph {
  const { X, Y, nx, ny, frame } = lines;
  const solid = boxes.filter((n) => !containers.has(n)).map((n) => inflate(n, MARGIN));
  // What gives each line its stretches: [from, to] along it (a point for the middle of a side).
  const vGiven: Array<Array<[number, number]>> = Array.from({ length: nx }, () => []);
  const hGiven: Array<Array<[number, number]>> = Array.from({ length: ny }, () => []);
  const give = (list: Array<Array<[number, number]>>, axis: Float64Array, at: number, from: number, to: number) => {
    const k = Lines.line(axis, at);
    if (k >= 0) list[k]!.push([from, to]);
  };
  for (const n of boxes) {
    const top = n.y - MARGIN;
    const bottom = n.y + n.h + MARGIN;
    const left = n.x - MARGIN;
    const right = n.x + n.w + MARGIN;
    give(vGiven, X, left, top, bottom);
    give(vGiven, X, right, top, bottom);
    give(vGiven, X, n.x + n.w / 2, top, top);
    give(vGiven, X, n.x + n.w / 2, bottom, bottom);
    give(hGiven, Y, top, left, right);
    give(hGiven, Y, bottom, left, right);
    give(hGiven, Y, n.y + n.h / 2, left, left);
    give(hGiven, Y, n.y + n.h / 2, right, right);
  }
  give(vGiven, X, frame.x, frame.y, frame.y + frame.h);
  give(vGiven, X, frame.x + frame.w, frame.y, frame.y + frame.h);
  give(hGiven, Y, frame.y, frame.x, frame.x + frame.w);
  give(hGiven, Y, frame.y + frame.h, frame.x, frame.x + frame.w);

  /**
   * The stretches of each line (index ranges along it) free of solid boxes that meet what gives
   * it: a sweep across the lines, keeping the boxes the current line runs through.
   */
  const sweep = (vertical: boolean, given: Array<Array<[number, number]>>): Array<Array<[number, number]>> => {
    const [across, along] = vertical ? [X, Y] : [Y, X];
    const boxes = solid
      .map((r): [number, number, number, number] => (vertical ? [r.x, r.x + r.w, r.y, r.y + r.h] : [r.y, r.y + r.h, r.x, r.x + r.w]))
      .sort((p, q) => p[0] - q[0]);
    let next = 0;
    let active: Array<[number, number, number, number]> = [];
    const start = vertical ? frame.y : frame.x;
    const end = vertical ? frame.y + frame.h : frame.x + frame.w;
    return Array.from(across, (c, k) => {
      while (next < boxes.length && boxes[next]![0] < c - EPS) active.push(boxes[next++]!);
      active = active.filter((r) => r[1] > c + EPS);
      const wanted = given[k]!;
      if (wanted.length === 0) return [];
      const blocked = active.map((r) => [r[2], r[3]] as const).sort((p, q) => p[0] - q[0]);
      const out: Array<[number, number]> = [];
      const take = (from: number, to: number) => {
        if (to - from <= EPS) return;
        if (!wanted.some(([g0, g1]) => g0 <= to + EPS && g1 >= from - EPS)) return;
        const lo = Lines.line(along, from);
        const hi = Lines.line(along, to);
        if (lo >= 0 && hi > lo) out.push([lo, hi]);
      };
      let at = start;
      for (const [b0, b1] of blocked) {
        if (b0 > at) take(at, Math.min(b0, end));
        at = Math.max(at, b1);
        if (at >= end) break;
      }
      if (at < end) take(at, end);
      return out;
    });
  };
  const vSegs = sweep(true, vGiven);
  const hSegs = sweep(false, hGiven);

  const covers = (segs: ReadonlyArray<[number, number]>, k: number): boolean => {
    let lo = 0;
    let hi = segs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (segs[mid]![1] < k) lo = mid + 1;
      else hi = mid;
    }
    return lo < segs.length && segs[lo]![0] <= k;
  };
  // Nodes column by column (so each column's are consecutive, by row), joined down their
  // columns' stretches as they are made; then along the rows' stretches. Memory grows with the
  // nodes, not with the grid.
  const nodeI: number[] = [];
  const nodeJ: number[] = [];
  const down: number[] = [];
  const colStart = new Int32Array(nx + 1);
  vSegs.forEach((segs, i) => {
    colStart[i] = nodeI.length;
    for (const [j0, j1] of segs) {
      let prev = -1;
      for (let j = j0; j <= j1; j++) {
        if (!covers(hSegs[j]!, i)) continue;
        const n = nodeI.length;
        if (n >= SPARSE_NODES) throw new TooLarge();
        nodeI.push(i);
        nodeJ.push(j);
        down.push(-1);
        if (prev >= 0) down[prev] = n;
        prev = n;
      }
    }
  });
  colStart[nx] = nodeI.length;
  const count = nodeI.length;
  const next = new Int32Array(4 * count).fill(-1);
  const rows: number[][] = Array.from({ length: ny }, () => []);
  for (let n = 0; n < count; n++) {
    rows[nodeJ[n]!]!.push(n);
    const m = down[n]!;
    if (m >= 0) {
      next[4 * n + 2] = m;
      next[4 * m] = n;
    }
  }
  hSegs.forEach((segs, j) => {
    const row = rows[j]!;
    let at = 0;
    for (const [i0, i1] of segs) {
      while (at < row.length && nodeI[row[at]!]! < i0) at++;
      for (let prev = -1; at < row.length && nodeI[row[at]!]! <= i1; at++) {
        const n = row[at]!;
        if (prev >= 0) {
          next[4 * prev + 1] = n;
          next[4 * n + 3] = prev;
        }
        prev = n;
      }
    }
  });
  const is = Int32Array.from(nodeI);
  const js = Int32Array.from(nodeJ);
  /** The first node of column i at row j or below it (the column's end when there is none). */
  const firstInColumn = (i: number, j: number): number => {
    let lo = colStart[i]!;
    let hi = colStart[i + 1]!;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (js[mid]! < j) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const node = (i: number, j: number): number => {
    if (i < 0 || i >= nx) return -1;
    const n = firstInColumn(i, j);
    return n < colStart[i + 1]! && js[n] === j ? n : -1;
  };
  // How many containers the unit step next to each node runs through, heading each way: each
  // container's step rectangle, over the nodes of the columns it spans.
  const stepCount = new Int32Array(4 * count);
  for (const c of containers) {
    const r = lines.stepRect(inflate(c, MARGIN));
    const j0 = Math.min(r[2], r[6]);
    const j1 = Math.max(r[3], r[7] + 1);
    for (let i = Math.min(r[0], r[4]); i <= Math.max(r[1] + 1, r[5]) && i < nx; i++) {
      for (let n = firstInColumn(i, j0); n < colStart[i + 1]! && js[n]! <= j1; n++) {
        const j = js[n]!;
        if (j >= r[2] && j <= r[3]) {
          if (i >= r[0] && i <= r[1]) stepCount[4 * n + 1]!++;
          if (i - 1 >= r[0] && i - 1 <= r[1]) stepCount[4 * n + 3]!++;
        }
        if (i >= r[4] && i <= r[5]) {
          if (j >= r[6] && j <= r[7]) stepCount[4 * n + 2]!++;
          if (j - 1 >= r[6] && j - 1 <= r[7]) stepCount[4 * n]!++;
        }
      }
    }
  }
  return { lines, node, nodeI: is, nodeJ: js, next, stepCount, counts: (n) => containers.has(n) };
}

/** Thrown when a diagram's sparse graph would pass SPARSE_NODES: its relations are drawn as elbows. */
class TooLarge extends Error {}

// Headings: 0 up, 1 right, 2 down, 3 left.
const DX = [0, 1, 0, -1];
const DY = [-1, 0, 1, 0];
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

interface Found {
  points: Point[];
  from: Side;
  to: Side;
}

/** Search steps left in a drawing, shared by its searches. */
interface Budget {
  steps: number;
}

/**
 * How many routes already run through the channel of each step of the sparse graph (the free
 * space across the step's line, between the boxes beside it: what nudging may spread them over),
 * against how many it holds SPACING apart. A step whose channel is full costs CROWDED more per
 * pixel, so a later route takes a parallel channel with room where one is about as short: routes
 * take the same cheapest lines, and without this a channel between two rows of boxes that many
 * routes cross the diagram along held more than nudging can draw apart (the bench's
 * 200-instance diagram: 45 routes in one 42 px gap, 27 pairs under a pixel apart).
 */
class Crowding {
  /** Routes whose channel covers the step from node n rightwards (at 2n) or downwards (2n + 1). */
  private readonly load: Uint16Array;
  /** How many routes that step's channel holds SPACING apart; 0 until asked. */
  private readonly capacity: Uint16Array;
  /** Nodes row by row (by column within a row), and column by column (by row). */
  private readonly rowStart: Int32Array;
  private readonly rowNodes: Int32Array;
  private readonly colStart: Int32Array;
  private readonly colNodes: Int32Array;

  constructor(
    private readonly graph: Graph,
    private readonly boxes: CellGrid<RouteNode>,
  ) {
    const count = graph.nodeI.length;
    this.load = new Uint16Array(2 * count);
    this.capacity = new Uint16Array(2 * count);
    [this.rowStart, this.rowNodes] = Crowding.byLine(graph.nodeJ, graph.lines.ny);
    [this.colStart, this.colNodes] = Crowding.byLine(graph.nodeI, graph.lines.nx);
  }

  /**
   * Nodes grouped by `line` (a stable counting sort): nodes are numbered column by column, each
   * column from the top, so each group comes out ordered along its line.
   */
  private static byLine(line: Int32Array, lines: number): [Int32Array, Int32Array] {
    const start = new Int32Array(lines + 1);
    for (const k of line) start[k + 1]!++;
    for (let k = 0; k < lines; k++) start[k + 1]! += start[k]!;
    const fill = start.slice(0, lines);
    const nodes = new Int32Array(line.length);
    for (let n = 0; n < line.length; n++) nodes[fill[line[n]!]!++] = n;
    return [start, nodes];
  }

  /** The step from node n heading d to node m, at 2n or 2n + 1 (rightwards or downwards) of the one of them it starts from. */
  private static step(n: number, d: number, m: number): number {
    return d === 1 ? 2 * n : d === 2 ? 2 * n + 1 : d === 3 ? 2 * m : 2 * m + 1;
  }

  /**
   * The charge factor of the step from node n heading d to node m: 0 when its channel is not
   * full, 1 when it is, and for a narrow channel (NARROW) how many times over it is.
   */
  over(n: number, d: number, m: number): number {
    const step = Crowding.step(n, d, m);
    const load = this.load[step]!;
    if (load === 0) return 0;
    let capacity = this.capacity[step]!;
    if (capacity === 0) capacity = this.capacity[step] = this.capacityOf(step);
    return load < capacity ? 0 : capacity <= NARROW ? Math.floor(load / capacity) : 1;
  }

  private capacityOf(step: number): number {
    const { lines, nodeI, nodeJ, next } = this.graph;
    const a = step >> 1;
    const horizontal = (step & 1) === 0;
    const b = next[4 * a + (horizontal ? 1 : 2)]!;
    const [down, up] = horizontal
      ? across(true, lines.Y[nodeJ[a]!]!, lines.X[nodeI[a]!]!, lines.X[nodeI[b]!]!, this.boxes)
      : across(false, lines.X[nodeI[a]!]!, lines.Y[nodeJ[a]!]!, lines.Y[nodeJ[b]!]!, this.boxes);
    return Math.min(0xffff, 1 + Math.floor((down + up) / SPACING));
  }

  /** A route found: every step of the channel each of its segments runs in carries one more. */
  add(points: readonly Point[]): void {
    const { lines, nodeI, nodeJ, next } = this.graph;
    const { X, Y } = lines;
    for (let k = 0; k + 1 < points.length; k++) {
      const p = points[k]!;
      const q = points[k + 1]!;
      const horizontal = p.y === q.y;
      const [c, lo, hi] = horizontal ? [p.y, Math.min(p.x, q.x), Math.max(p.x, q.x)] : [p.x, Math.min(p.y, q.y), Math.max(p.y, q.y)];
      if (hi - lo <= EPS) continue;
      const [down, up] = across(horizontal, c, lo, hi, this.boxes);
      const [acrossLines, alongLines, start, nodes, alongOf, d, bit] = horizontal
        ? [Y, X, this.rowStart, this.rowNodes, nodeI, 1, 0]
        : [X, Y, this.colStart, this.colNodes, nodeJ, 2, 1];
      for (let line = firstAtLeast(acrossLines, c - down); line <= lastAtMost(acrossLines, c + up); line++) {
        // The line's steps that overlap lo…hi: from the last node at or before lo.
        let from = start[line]!;
        let to = start[line + 1]!;
        while (from < to) {
          const mid = (from + to) >> 1;
          if (alongLines[alongOf[nodes[mid]!]!]! <= lo + EPS) from = mid + 1;
          else to = mid;
        }
        for (let at = Math.max(start[line]!, from - 1); at < start[line + 1]!; at++) {
          const n = nodes[at]!;
          if (alongLines[alongOf[n]!]! >= hi - EPS) break;
          if (next[4 * n + d]! >= 0 && this.load[2 * n + bit]! < 0xffff) this.load[2 * n + bit]!++;
        }
      }
    }
  }
}

/**
 * The A* search over one graph, its state arrays kept between relations (a stamp tells them
 * apart). A state is a node and the axis of the step that reached it (turning costs BEND; going
 * on either way along the axis does not): half the states of node × heading, for the same routes.
 */
class Router {
  private readonly cost: Float64Array;
  private readonly came: Int32Array;
  /** 2 × stamp: reached in this search; 2 × stamp + 1: done. */
  private readonly mark: Uint32Array;
  private stamp = 0;
  private readonly heap = new BucketQueue();

  constructor(
    readonly graph: Graph,
    private readonly budget: Budget,
  ) {
    const states = graph.nodeI.length * 2;
    this.cost = new Float64Array(states);
    this.came = new Int32Array(states);
    this.mark = new Uint32Array(states);
  }

  /**
   * The cheapest route from a side of `a` to a side of `b`, or null when there is none (or the
   * budget ran out). `minus`: the step rectangles of counted boxes this relation may cross;
   * `plus`: obstacles of this relation only (its ends' own boxes). With `soft`, blocked steps
   * cost THROUGH instead of being impossible.
   */
  route(
    a: RouteBox,
    b: RouteBox,
    minus: readonly StepRect[],
    plus: readonly StepRect[],
    soft: boolean,
    crowding: Crowding | null = null,
    shortLeg = 0,
  ): Found | null {
    const { lines, node: nodeAtPoint, nodeI, nodeJ, next, stepCount } = this.graph;
    const { X, Y } = lines;
    const { cost, came, mark, heap, budget } = this;
    if (this.stamp >= 0x7ffffffe) {
      mark.fill(0);
      this.stamp = 0;
    }
    const open = 2 * ++this.stamp;
    const done = open + 1;
    const minusCount = minus.length;
    const plusCount = plus.length;

    // The step along row or column `k` over unit steps from..to (inclusive), counted at unit
    // (ui, uj) as `c`: less the boxes this relation may cross, plus its own obstacles.
    const blocked = (horizontal: boolean, c: number, ui: number, uj: number, k: number, from: number, to: number): boolean => {
      const o = horizontal ? 0 : 4;
      for (let m = 0; m < minusCount; m++) {
        const r = minus[m]!;
        if (ui >= r[o] && ui <= r[o + 1]! && uj >= r[o + 2]! && uj <= r[o + 3]!) c--;
      }
      for (let m = 0; m < plusCount; m++) {
        const r = plus[m]!;
        if (horizontal ? k >= r[2] && k <= r[3] && from <= r[1] && to >= r[0] : k >= r[4] && k <= r[5] && from <= r[7] && to >= r[6]) c++;
      }
      return c > 0;
    };

    const nodeOf = (p: Point): number => {
      const i = Lines.line(X, p.x);
      const j = Lines.line(Y, p.y);
      return i < 0 || j < 0 ? -1 : nodeAtPoint(i, j);
    };
    const goalNode = new Int32Array(4);
    const goalDir = new Int32Array(4);
    const goalSide: Side[] = [];
    const gx = new Float64Array(4);
    const gy = new Float64Array(4);
    let goals = 0;
    for (const side of PORT_SIDES) {
      const port = portOf(b, side);
      const n = nodeOf(port.out);
      if (n < 0) continue;
      goalNode[goals] = n;
      goalDir[goals] = port.dir;
      goalSide.push(side);
      gx[goals] = port.out.x;
      gy[goals] = port.out.y;
      goals++;
    }
    if (goals === 0) return null;
    // A lower bound of the cost left: distance to the nearest port of the target, plus a bend
    // unless it lies straight along the axis. A hair over it breaks ties towards the target.
    const h = (x: number, y: number, horizontal: boolean): number => {
      let best = Infinity;
      for (let k = 0; k < goals; k++) {
        const dx = Math.abs(gx[k]! - x);
        const dy = Math.abs(gy[k]! - y);
        const d = dx + dy + ((horizontal ? dy > EPS : dx > EPS) ? BEND : 0);
        if (d < best) best = d;
      }
      return best * GREED;
    };

    const startSide = new Map<number, Side>();
    const startDir = new Map<number, number>();
    const centre = { x: b.x + b.w / 2, y: b.y + b.h / 2 };
    const starts: Array<[number, number]> = [];
    for (const side of PORT_SIDES) {
      const port = portOf(a, side);
      const n = nodeOf(port.out);
      if (n < 0) continue;
      const state = n * 2 + (port.dir & 1);
      // Leaving by a side that turns away from the target costs two bends: routes then leave
      // towards where they go, and the ones sharing a side fan out without crossing.
      const away = DX[port.dir]! * (centre.x - port.on.x) + DY[port.dir]! * (centre.y - port.on.y) <= 0;
      cost[state] = away ? 2 * BEND : 0;
      came[state] = -1;
      mark[state] = open;
      startSide.set(state, side);
      startDir.set(state, port.dir);
      starts.push([state, cost[state]! + h(port.out.x, port.out.y, (port.dir & 1) === 1)]);
    }
    heap.clear(Math.min(...starts.map(([, key]) => key)));
    for (const [state, key] of starts) heap.push(state, key);

    // Whether ending at goal k by a step along `along` from `state` leaves the last leg (from the
    // last turn into the box) shorter than LAST_LEG.
    const legShort = (k: number, state: number, along: number, mi: number, mj: number): boolean => {
      if ((goalDir[k]! & 1) !== along) return true;
      let s = state;
      while (came[s]! >= 0 && (came[s]! & 1) === along) s = came[s]!;
      const from = came[s]! >= 0 ? came[s]! >> 1 : s >> 1;
      const run = along === 1 ? Math.abs(X[mi]! - X[nodeI[from]!]!) : Math.abs(Y[mj]! - Y[nodeJ[from]!]!);
      return run + MARGIN < LAST_LEG;
    };
    let reached = -1;
    let goal = -1;
    let steps = budget.steps;
    while (heap.size > 0) {
      if (steps-- <= 0) {
        budget.steps = 0;
        return null;
      }
      const state = heap.pop();
      if (mark[state] === done) continue;
      mark[state] = done;
      const node = state >> 1;
      const axis = state & 1;
      const i = nodeI[node]!;
      const j = nodeJ[node]!;
      const prev = came[state]!;
      for (let k = 0; k < goals; k++) {
        if (goalNode[k] !== node) continue;
        // At one of the target's ports, not coming out of the target: the last step turns into it.
        const dir = goalDir[k]!;
        if ((dir & 1) !== axis || prev < 0) goal = k;
        else {
          const p = prev >> 1;
          const away = (dir & 1) === 1 ? Math.sign(i - nodeI[p]!) === DX[dir] : Math.sign(j - nodeJ[p]!) === DY[dir];
          if (!away) goal = k;
        }
      }
      if (goal >= 0) {
        reached = state;
        break;
      }
      const g = cost[state]!;
      // A route leaves its start away from the box, never back into it.
      const back = prev < 0 ? (startDir.get(state)! + 2) & 3 : -1;
      for (let d = 0; d < 4; d++) {
        if (d === back) continue;
        const m = next[4 * node + d]!;
        if (m < 0) continue;
        // A state already taken off the queue has its cheapest cost: nothing about the step to it is worth working out.
        const along = d & 1;
        const nextState = m * 2 + along;
        const seen = mark[nextState]!;
        if (seen === done) continue;
        const mi = nodeI[m]!;
        const mj = nodeJ[m]!;
        const c = stepCount[4 * node + d]!;
        const stop =
          (c !== 0 || plusCount !== 0) &&
          (d === 1
            ? blocked(true, c, i, j, j, i, mi - 1)
            : d === 3
              ? blocked(true, c, i - 1, j, j, mi, i - 1)
              : d === 2
                ? blocked(false, c, i, j, i, j, mj - 1)
                : blocked(false, c, i, j - 1, i, mj, j - 1));
        let step = Math.abs(X[mi]! - X[i]!) + Math.abs(Y[mj]! - Y[j]!);
        if (crowding) step *= 1 + CROWDED * crowding.over(node, d, m);
        if (stop) {
          if (!soft) continue;
          step += THROUGH;
        }
        if (along !== axis) step += BEND;
        let ng = g + step;
        if (shortLeg > 0) {
          for (let k = 0; k < goals; k++) {
            if (goalNode[k] !== m) continue;
            if (legShort(k, state, along, mi, mj)) ng += shortLeg;
            break;
          }
        }
        if (seen !== open || ng < cost[nextState]!) {
          cost[nextState] = ng;
          came[nextState] = state;
          mark[nextState] = open;
          heap.push(nextState, ng + h(X[mi]!, Y[mj]!, along === 1));
        }
      }
    }
    budget.steps = Math.max(0, steps);
    if (reached < 0) return null;
    const points: Point[] = [];
    let s = reached;
    let first = reached;
    for (;;) {
      const node = s >> 1;
      points.push({ x: X[nodeI[node]!]!, y: Y[nodeJ[node]!]! });
      const prev = came[s]!;
      if (prev < 0) {
        first = s;
        break;
      }
      s = prev;
    }
    points.reverse();
    const from = startSide.get(first)!;
    const to = goalSide[goal]!;
    return { points: [portOf(a, from).on, ...points, portOf(b, to).on], from, to };
  }
}

// ---------------------------------------------------------------------------------------------
// Routing a diagram

/** What routing a diagram took (bench and tests). */
export interface RouteStats {
  /** Search steps (states taken off A*'s queue), in all. */
  steps: number;
  /** Points of the grid of candidate lines, and nodes of the sparse graph over it. */
  gridPoints: number;
  nodes: number;
  /** Relations the sparse graph had no route for, searched on the whole grid. */
  fullGrid: number;
  /** Relations drawn as direct elbows (past the budget of search steps). */
  direct: number;
  /** Passes of nudging over a group's constraints, narrowing the gaps of chains too long for their room (see nudgeAcross). */
  narrowings: number;
}

/** The route of every relation whose ends are both among `nodes`, by relation id. */
export function routeEdges(nodes: readonly RouteNode[], edges: readonly RouteEdge[], stats?: RouteStats): Map<string, Point[]> {
  const byId = new Map<string, RouteNode>();
  for (const n of nodes) if (!byId.has(n.id)) byId.set(n.id, n);
  const all = [...byId.values()];
  const boxes = new CellGrid<RouteNode>(160);
  for (const n of all) boxes.add(inflate(n, MARGIN), n);
  const ends = edges.map((e) => ({ e, a: byId.get(e.from), b: byId.get(e.to) }));
  let order = ends.filter((x): x is { e: RouteEdge; a: RouteNode; b: RouteNode } => x.a !== undefined && x.b !== undefined && x.a !== x.b);
  const loops = ends.filter((x): x is { e: RouteEdge; a: RouteNode; b: RouteNode } => x.a !== undefined && x.a === x.b);
  const inward = inwardRoutes(order, boxes, byId);
  if (inward.size > 0) order = order.filter((x) => !inward.has(x.e.id));
  // Those lines are drawn where the search does not look (no route ends there): each is an
  // obstacle to every other route, as a box is, so that none runs along it (a route out of the
  // same side of the element took the very same line) or across it.
  for (const [id, line] of inward) {
    const obstacle = lineObstacle(id, line[0]!, line[1]!);
    all.push(obstacle);
    boxes.add(inflate(obstacle, MARGIN), obstacle);
  }
  if (order.length === 0) return withLoops(inward, loops, boxes, byId);

  const extent = unionAll(all)!;
  const room = 3 * MARGIN;
  const lines = new Lines(all, { x: extent.x - room, y: extent.y - room, w: extent.w + 2 * room, h: extent.h + 2 * room });
  const containers = new Set<RouteNode>();
  for (const n of all) {
    const p = n.parent === null ? undefined : byId.get(n.parent);
    if (p && p !== n) containers.add(p);
  }
  const budget: Budget = { steps: ROUTING_STEPS };
  let graph: Graph | null;
  try {
    graph = visibilityGraph(lines, all, containers);
  } catch (err) {
    if (!(err instanceof TooLarge)) throw err;
    graph = null;
  }
  const crowding = graph ? new Crowding(graph, boxes) : null;
  const sparse = graph ? new Router(graph, budget) : null;
  let full: Router | null | undefined;
  const stepRects = new Map<RouteNode, StepRect>();
  const stepRect = (n: RouteNode): StepRect => {
    let r = stepRects.get(n);
    if (!r) stepRects.set(n, (r = lines.stepRect(inflate(n, MARGIN))));
    return r;
  };

  const ancestors = (n: RouteNode): RouteNode[] => ancestorsOf(n, byId);

  // Each relation searched: its route as found, before it is spread along its sides and nudged.
  const search = (a: RouteNode, b: RouteNode, shortLeg: number): Found => {
    const up = [...new Set([...ancestors(a), ...ancestors(b)])];
    // An end is no obstacle to its own routes, but they go round it, not through it (unless it
    // holds the other end). The sparse graph has no steps inside a box that holds no other.
    const own: RouteNode[] = [];
    if (!ancestors(b).includes(a)) own.push(a);
    if (!ancestors(a).includes(b)) own.push(b);
    const plus = own.map((n) => lines.stepRect({ x: n.x + 1, y: n.y + 1, w: n.w - 2, h: n.h - 2 }));
    const crowded = ROUTING_STEPS - budget.steps < CROWDING_STEPS ? crowding : null;
    let found =
      sparse?.route(
        a,
        b,
        up.filter((n) => containers.has(n)).map(stepRect),
        plus.filter((_, k) => containers.has(own[k]!)),
        false,
        crowded,
        shortLeg,
      ) ?? null;
    if (!found && sparse && budget.steps > 0) {
      if (full === undefined) {
        const whole = fullGraph(lines, all);
        full = whole ? new Router(whole, budget) : null;
      }
      if (full) {
        const minus = up.map(stepRect);
        found = full.route(a, b, minus, plus, false) ?? (budget.steps > 0 ? full.route(a, b, minus, plus, true) : null);
        if (stats) stats.fullGrid++;
      }
    }
    if (!found && stats) stats.direct++;
    found ??= directRoute(a, b);
    found.points = simplify(found.points);
    crowded?.add(found.points);
    return found;
  };
  const searched = new Map<string, Found>();
  for (const { e, a, b } of order) searched.set(e.id, search(a, b, 0));

  // The routes as drawn: each spread along the sides it shares with others, then all nudged apart.
  const kin = bundles(order.map((x) => x.e));
  // Nudging's passes, and the rooms it found (see room): the same across every laying of the routes.
  const work: NudgeWork = { narrowings: 0, rooms: { horizontal: new Map(), vertical: new Map() } };
  const laid = (): Map<string, Point[]> => {
    const routes = new Map<string, Point[]>();
    const sides = new Map<string, Array<PortUse>>();
    for (const { e, a, b } of order) {
      const found = searched.get(e.id)!;
      routes.set(e.id, [...found.points]);
      const exempt = new Set([...ancestors(a), ...ancestors(b)].map((n) => n.id));
      const at = (n: RouteNode, side: Side) => `${n.id}\u0000${side}`;
      for (const [n, side, end, other] of [
        [a, found.from, 'start', b],
        [b, found.to, 'end', a],
      ] as const) {
        const list = sides.get(at(n, side));
        // The other end is no obstacle where the route reaches it, but its first leg must not run through it.
        const item = { edge: e.id, end, side, exempt, through: ancestors(n).includes(other) ? null : other };
        if (list) list.push(item);
        else sides.set(at(n, side), [item]);
      }
    }
    spreadPorts(sides, byId, routes, boxes);
    nudge([...routes.values()], boxes, containers, kin, work);
    return routes;
  };
  let routes = laid();
  // A route whose last leg nudging could not keep LAST_LEG long (the channel before its box was
  // too full: keeping it would have put routes on top of each other) is searched again, a turn
  // onto its box that close charged (SHORT_LEG), so that it takes another side or another way in;
  // then all are laid again (not a relation between the same two boxes as others: it would leave
  // their bundle, drawn side by side). Twice: the first time a route found so that crosses more than
  // RESEARCH_CROSSINGS more of the others is put back (the bench's 50-instance diagram: 116
  // crossings when all were kept, 104 so, 99 with the short legs); the second time, once the
  // others found their new ways, it is kept.
  for (const keep of [false, true]) {
    const again = order.filter((x, k) => kin.of[k]! < 0 && shortLastLeg(routes.get(x.e.id)!));
    if (again.length === 0 || !sparse || budget.steps <= 0) break;
    // (The second time they are kept: their crossings before are not asked for.)
    const before = new Map(again.map((x) => [x.e.id, { found: searched.get(x.e.id)!, crossings: keep ? 0 : crossingsOf(x.e.id, routes) }]));
    for (const { e, a, b } of again) searched.set(e.id, search(a, b, SHORT_LEG));
    const first = routes;
    routes = laid();
    if (keep) break;
    const back = [...before].filter(([id, was]) => crossingsOf(id, routes) > was.crossings + RESEARCH_CROSSINGS);
    for (const [id, was] of back) searched.set(id, was.found);
    if (back.length === again.length) routes = first;
    else if (back.length > 0) routes = laid();
  }
  for (const [id, points] of inward) routes.set(id, points);
  if (stats) {
    stats.steps = ROUTING_STEPS - budget.steps;
    stats.gridPoints = lines.nx * lines.ny;
    stats.nodes = sparse?.graph.nodeI.length ?? 0;
    stats.narrowings = work.narrowings;
  }
  return withLoops(routes, loops, boxes, byId);
}

/** The box and the boundaries that hold it, innermost first (at most 64: a cycle of parents ends there). */
function ancestorsOf(n: RouteNode, byId: ReadonlyMap<string, RouteNode>): RouteNode[] {
  const out: RouteNode[] = [];
  let p: RouteNode | undefined = n;
  for (let depth = 0; p && depth < 64 && !out.includes(p); depth++) {
    out.push(p);
    p = p.parent === null ? undefined : byId.get(p.parent);
  }
  return out;
}

/** The shortest a line from an element to the wall of a boundary holding it is wished to be (px): an arrowhead and a little more. */
const INWARD_MIN = 16;
/** How far apart two relations of one element and its boundary are drawn along the element's side at least (px). */
const INWARD_APART = 16;

/**
 * Relations between an element and a boundary that holds it (at any depth), either way: a
 * straight line inside the boundary, from the element's side to the nearest inner side of the
 * boundary's wall (element → boundary), or from there to the element (boundary → element). The
 * general search went out of the boundary (its wall is where routes to it end) and pointed back
 * at the wall from outside. The side tried first is the nearest at least INWARD_MIN away (an
 * arrowhead needs the room), then the others by distance; along it, the k-th of n relations of
 * the pair at the k-th of n even places, else the middle and places either side of it; a place
 * is taken when the line passes no other box (with MARGIN − 1 round it), nor the title or marker
 * of a boundary it runs in, nor lies within INWARD_APART of another line of the pair. A relation
 * with no such line (an element on its wall, crowded round) is routed as any other.
 */
function inwardRoutes(
  order: ReadonlyArray<{ e: RouteEdge; a: RouteNode; b: RouteNode }>,
  boxes: CellGrid<RouteNode>,
  byId: ReadonlyMap<string, RouteNode>,
): Map<string, Point[]> {
  const found = new Map<string, Point[]>();
  const pairs = new Map<string, { n: number; used: Array<{ side: Side; at: number }> }>();
  const held: Array<{ e: RouteEdge; child: RouteNode; outer: RouteNode; key: string; k: number; up: RouteNode[] }> = [];
  for (const { e, a, b } of order) {
    const upA = ancestorsOf(a, byId);
    const upB = ancestorsOf(b, byId);
    const [child, outer, up] = upB.includes(a) ? [b, a, upB] : upA.includes(b) ? [a, b, upA] : [null, null, null];
    if (!child || !outer) continue;
    const key = `${child.id}\u0000${outer.id}`;
    const pair = pairs.get(key) ?? { n: 0, used: [] };
    pairs.set(key, pair);
    held.push({ e, child, outer, key, k: pair.n++, up: up.slice(0, up.indexOf(outer) + 1) });
  }
  for (const { e, child: c, outer: o, key, k, up } of held) {
    const pair = pairs.get(key)!;
    const room: Record<Side, number> = {
      left: c.x - o.x,
      right: o.x + o.w - (c.x + c.w),
      top: c.y - o.y,
      bottom: o.y + o.h - (c.y + c.h),
    };
    if (Math.min(...Object.values(room)) < 0) continue;
    const sides = (Object.keys(room) as Side[])
      .filter((side) => room[side] >= 2)
      .sort((p, q) => {
        const [rp, rq] = [room[p], room[q]];
        return (rq >= INWARD_MIN ? 1 : 0) - (rp >= INWARD_MIN ? 1 : 0) || (rp >= INWARD_MIN ? rp - rq : rq - rp);
      });
    const exempt = new Set(up.map((n) => n.id));
    const marks = up.flatMap((n) => n.inner ?? []);
    const line = (side: Side, at: number): [Point, Point] => {
      switch (side) {
        case 'top':
          return [
            { x: at, y: c.y },
            { x: at, y: o.y },
          ];
        case 'bottom':
          return [
            { x: at, y: c.y + c.h },
            { x: at, y: o.y + o.h },
          ];
        case 'left':
          return [
            { x: c.x, y: at },
            { x: o.x, y: at },
          ];
        case 'right':
          return [
            { x: c.x + c.w, y: at },
            { x: o.x + o.w, y: at },
          ];
      }
    };
    let points: [Point, Point] | null = null;
    for (const side of sides) {
      const horizontal = side === 'top' || side === 'bottom';
      const lo = horizontal ? c.x : Math.max(c.y, c.sidesFrom ?? c.y);
      const hi = horizontal ? c.x + c.w : c.y + c.h;
      const places = [(k + 1) / (pair.n + 1), 0.5, 0.35, 0.65, 0.2, 0.8].map((f) => lo + f * (hi - lo));
      for (const at of places) {
        if (pair.used.some((u) => u.side === side && Math.abs(u.at - at) < INWARD_APART)) continue;
        const [p, q] = line(side, at);
        if (segmentBlocked(p, q, boxes, exempt)) continue;
        const s = segBox(p, q);
        if (marks.some((m) => s.x < m.x + m.w + 2 && s.x + s.w > m.x - 2 && s.y < m.y + m.h + 2 && s.y + s.h > m.y - 2)) continue;
        pair.used.push({ side, at });
        points = [p, q];
        break;
      }
      if (points) break;
    }
    if (!points) continue;
    found.set(e.id, e.from === c.id ? points : [points[1], points[0]]);
  }
  return found;
}

/**
 * A line drawn inside a boundary to its wall (inwardRoutes) as an obstacle of no width, short of
 * its ends by MARGIN (down to its middle), so that with the margin every obstacle keeps, it
 * reaches the element and the wall and no further: not out across the boundary's outer margin,
 * where routes round the boundary run. Its id holds a space, as no instance's does.
 */
function lineObstacle(id: string, p: Point, q: Point): RouteNode {
  const [x0, x1, y0, y1] = [Math.min(p.x, q.x), Math.max(p.x, q.x), Math.min(p.y, q.y), Math.max(p.y, q.y)];
  const inset = (lo: number, hi: number): [number, number] =>
    hi - lo > 2 * MARGIN ? [lo + MARGIN, hi - MARGIN] : [(lo + hi) / 2, (lo + hi) / 2];
  const [xa, xb] = inset(x0, x1);
  const [ya, yb] = inset(y0, y1);
  return { id: `inward ${id}`, parent: null, x: xa, y: ya, w: xb - xa, h: yb - ya };
}

/** How far out a box's n-th relation to itself goes, beyond the one before it, and how far along its sides (px): more than an arrowhead is wide. */
const LOOP_STEP = 14;

/** The corners a loop may go round, in the order tried: x and y of the way out (1 right / down). */
const LOOP_CORNERS: ReadonlyArray<readonly [number, number]> = [
  [1, -1],
  [-1, -1],
  [1, 1],
  [-1, 1],
];

/**
 * Relations from a box to itself, each a loop round one of the box's corners: out of a side and
 * back into the side next to it, the arrow pointing into the box, a box's further ones each a
 * step wider, so every one is seen (and carries its label). The corner is the first (top-right,
 * top-left, bottom-right, bottom-left) round which the loop passes no other box; else top-right.
 */
function withLoops(
  routes: Map<string, Point[]>,
  loops: ReadonlyArray<{ e: RouteEdge; a: RouteNode }>,
  boxes: CellGrid<RouteNode>,
  byId: ReadonlyMap<string, RouteNode>,
): Map<string, Point[]> {
  const seen = new Map<RouteNode, number>();
  for (const { e, a } of loops) {
    const n = seen.get(a) ?? 0;
    seen.set(a, n + 1);
    // The box and its containers are no obstacle: the loop goes round the box, inside them.
    const exempt = new Set<string>();
    for (let p: RouteNode | undefined = a; p && !exempt.has(p.id); p = p.parent === null ? undefined : byId.get(p.parent)) exempt.add(p.id);
    const loopAt = ([sx, sy]: readonly [number, number]): Point[] => {
      const reach = MARGIN + 8 + n * LOOP_STEP;
      // Where the loop leaves and comes back: near the corner, inside the box's sides however small it is.
      const along = (length: number) => Math.min(length / 2, 12 + n * LOOP_STEP);
      const side = sx > 0 ? a.x + a.w : a.x;
      const edge = sy < 0 ? a.y : a.y + a.h;
      // Out of the side below the top of a shape that leaves its upper part empty (a person's head), within the box.
      const outY = sy < 0 ? Math.min((a.sidesFrom ?? a.y) + along(a.h), a.y + a.h - 2) : a.y + a.h - along(a.h);
      const inX = sx > 0 ? a.x + a.w - along(a.w) : a.x + along(a.w);
      return [
        { x: side, y: outY },
        { x: side + sx * reach, y: outY },
        { x: side + sx * reach, y: edge + sy * reach },
        { x: inX, y: edge + sy * reach },
        { x: inX, y: edge },
      ];
    };
    const free = (points: Point[]) => points.every((p, k) => k === 0 || !segmentBlocked(points[k - 1]!, p, boxes, exempt));
    const corner = LOOP_CORNERS.find((c) => free(loopAt(c))) ?? LOOP_CORNERS[0]!;
    routes.set(e.id, loopAt(corner));
  }
  return routes;
}

/** An elbow from the side of `a` that faces `b` to the facing side of `b`: what a relation gets past the routing budget. */
function directRoute(a: RouteNode, b: RouteNode): Found {
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

// ---------------------------------------------------------------------------------------------
// Ports spread along sides

/**
 * Routes that share a side of a box get their own places along it, in the order they part
 * (so they do not cross right there), evenly spread.
 */
interface PortUse {
  edge: string;
  end: 'start' | 'end';
  side: Side;
  /** The boxes its route may cross (its ends and their containers). */
  exempt: Set<string>;
  /** The route's other end, when it does not hold this one: a moved first leg may touch it, not run through it. */
  through: RouteNode | null;
}

/** True when the segment p→q passes through the inside of `n` (touching its sides is not passing through). */
function crossesInside(p: Point, q: Point, n: RouteNode): boolean {
  const s = segBox(p, q);
  return s.x + s.w > n.x + 1 && s.x < n.x + n.w - 1 && s.y + s.h > n.y + 1 && s.y < n.y + n.h - 1;
}

/** True when the segment p→q runs through a box (pushed out by MARGIN − 1) not in `exempt`. */
function segmentBlocked(p: Point, q: Point, boxes: CellGrid<RouteNode>, exempt: Set<string>): boolean {
  const s = segBox(p, q);
  return boxes.some(s, (n) => {
    if (exempt.has(n.id)) return false;
    const r = inflate(n, MARGIN - 1);
    return s.x + s.w > r.x && s.x < r.x + r.w && s.y + s.h > r.y && s.y < r.y + r.h;
  });
}

function spreadPorts(
  sides: Map<string, Array<PortUse>>,
  byId: Map<string, RouteNode>,
  routes: Map<string, Point[]>,
  boxes: CellGrid<RouteNode>,
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
    // Where each route turns after its first leg: toward lower (−1) or higher (+1) along-side
    // coordinates, or not at all (0), and how far out from the side. Along the side, from low to
    // high: routes turning low, the nearest turn first; those that do not turn; routes turning
    // high, the nearest turn last. So no route's turn crosses another's first leg (a tie of the
    // far ends used to leave that to the order of routing).
    const turn = (item: { edge: string; end: 'start' | 'end' }): { way: number; out: number } => {
      const pts = routes.get(item.edge)!;
      const seq = item.end === 'start' ? pts : [...pts].reverse();
      if (seq.length < 3) return { way: 0, out: 0 };
      const [p0, p1, p2] = [seq[0]!, seq[1]!, seq[2]!];
      const along = (p: Point) => (horizontalSide ? p.x : p.y);
      const across = (p: Point) => (horizontalSide ? p.y : p.x);
      return { way: Math.sign(along(p2) - along(p1)), out: Math.abs(across(p1) - across(p0)) };
    };
    // First by where the routes part (sideAhead walks two routes that leave the side together
    // until one turns off the other's way): the one that turns left of the way out goes on the
    // left, as nudging orders them in the channels they share, so the order at the box is the
    // one along the way. Left of the way out is further along a left side (heading left, left
    // is down) and a bottom side (heading down, left is right), less far along the others.
    // Routes that do not part (they end together): by their turns and headings, as above.
    const outward = (item: { edge: string; end: 'start' | 'end' }): Point[] => {
      const pts = routes.get(item.edge)!;
      return item.end === 'start' ? pts : [...pts].reverse();
    };
    const side = list[0]!.side;
    const leftIsHigh = side === 'left' || side === 'bottom';
    const sorted = list
      .map((item) => ({ item, key: heading(item), ...turn(item), seq: outward(item) }))
      .sort((p, q) => {
        const w = sideAhead(p.seq, 0, q.seq, 0);
        if (w !== 0) return leftIsHigh ? w : -w;
        return p.way - q.way || (p.way < 0 ? p.out - q.out : p.way > 0 ? q.out - p.out : 0) || p.key - q.key;
      });
    const lo = horizontalSide ? node.x : node.y;
    const length = horizontalSide ? node.w : node.h;
    sorted.forEach(({ item }, n) => {
      const pts = routes.get(item.edge)!;
      // A straight route would move its other end too: nudging slides it along both sides.
      if (pts.length === 2) return;
      const at = lo + ((n + 1) * length) / (sorted.length + 1);
      const [p0, p1, p2] = item.end === 'start' ? [0, 1, 2] : [pts.length - 1, pts.length - 2, pts.length - 3];
      const moved = (p: Point): Point => (horizontalSide ? { x: at, y: p.y } : { x: p.x, y: at });
      const a = moved(pts[p0]!);
      const b = moved(pts[p1]!);
      // Only where the moved first leg and the stretched second one still pass nothing, the
      // route's other end included (a leg moved into it hid the arrowhead under its box).
      if (segmentBlocked(a, b, boxes, item.exempt) || segmentBlocked(b, pts[p2]!, boxes, item.exempt)) return;
      // Nor where the second leg is the route's other end leg and would come out too short (on a
      // route of one turn, moving one leg along its side is moving the other's turn).
      if (pts.length === 3 && Math.abs(b.x - pts[p2]!.x) + Math.abs(b.y - pts[p2]!.y) < (item.end === 'start' ? LAST_LEG : FIRST_LEG))
        return;
      if (item.through && (crossesInside(a, b, item.through) || crossesInside(b, pts[p2]!, item.through))) return;
      pts[p0] = a;
      pts[p1] = b;
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Nudging routes apart where they share a line

interface Segment {
  route: number;
  /** The segment from points[k] to points[k + 1]. */
  k: number;
  /** Its line: y of a horizontal segment, x of a vertical one. */
  c: number;
  lo: number;
  hi: number;
  /** Where it may go across its line: boxes (with CLEARANCE) and MAX_SHIFT. */
  min: number;
  max: number;
  /**
   * For a segment that passes through a container's wall along its line (it leaves or enters
   * the container there): its room beyond the container's nearer side wall, where its route
   * leaves or enters through that side instead (see nudgeAcross); null when there is none.
   */
  beyond: { min: number; max: number } | null;
  /** Its room before keepEndLegs kept it off the box of an end leg; null when that did not narrow it. */
  free: { min: number; max: number } | null;
}

/** +1 when v turns left of u (screen coordinates, y down), -1 right, 0 straight or back. */
function turn(u: Point, v: Point): number {
  const z = u.x * v.y - u.y * v.x;
  return z < 0 ? 1 : z > 0 ? -1 : 0;
}

function direction(p: Point, q: Point): Point {
  return { x: Math.sign(q.x - p.x), y: Math.sign(q.y - p.y) };
}

/**
 * Walking on from segments ka of `a` and kb of `b` (on one line, same direction): +1 when `a`
 * runs left of `b` (looking where they go), -1 right, 0 when they reach an end together first.
 * Routes that bend together keep their sides through the bend, so the walk follows them to
 * where they part.
 */
function sideAhead(a: readonly Point[], ka: number, b: readonly Point[], kb: number): number {
  let u = direction(a[ka]!, a[ka + 1]!);
  let ia = ka + 1;
  let ib = kb + 1;
  for (let guard = 0; guard < 64; guard++) {
    const A = a[ia]!;
    const B = b[ib]!;
    const ta = A.x * u.x + A.y * u.y;
    const tb = B.x * u.x + B.y * u.y;
    const aEnds = ia === a.length - 1;
    const bEnds = ib === b.length - 1;
    if (ta < tb - EPS) return aEnds ? 0 : turn(u, direction(A, a[ia + 1]!));
    if (tb < ta - EPS) return bEnds ? 0 : -turn(u, direction(B, b[ib + 1]!));
    if (aEnds || bEnds) return 0;
    const da = direction(A, a[ia + 1]!);
    const db = direction(B, b[ib + 1]!);
    const ta2 = turn(u, da);
    const tb2 = turn(u, db);
    if (ta2 !== tb2) return ta2 > tb2 ? 1 : -1;
    if (ta2 === 0) return 0;
    u = da;
    ia++;
    ib++;
  }
  return 0;
}

/**
 * Relations that join the same two boxes (either way), by route: the bundle each is in (-1 when
 * it is alone) and the distance its bundle keeps across a horizontal line and a vertical one
 * (PARALLEL_SPACING, more for wide labels).
 */
interface Bundles {
  of: Int32Array;
  across: Array<{ horizontal: number; vertical: number }>;
}

function bundles(edges: readonly RouteEdge[]): Bundles {
  const of = new Int32Array(edges.length).fill(-1);
  const byPair = new Map<string, number[]>();
  edges.forEach((e, k) => {
    const pair = e.from < e.to ? `${e.from}\u0000${e.to}` : `${e.to}\u0000${e.from}`;
    const list = byPair.get(pair);
    if (list) list.push(k);
    else byPair.set(pair, [k]);
  });
  const across: Bundles['across'] = [];
  for (const list of byPair.values()) {
    if (list.length < 2) continue;
    let w = 0;
    let h = 0;
    for (const k of list) {
      w = Math.max(w, edges[k]!.label?.w ?? 0);
      h = Math.max(h, edges[k]!.label?.h ?? 0);
    }
    const gap = (half: number) => Math.min(PARALLEL_MAX, Math.max(PARALLEL_SPACING, half > 0 ? half + LABEL_CLEARANCE : 0));
    for (const k of list) of[k] = across.length;
    across.push({ horizontal: gap(h / 2), vertical: gap(w / 2) });
  }
  return { of, across };
}

/**
 * Moves routes that run along the same stretch, on one line or on lines too close to tell
 * apart, to their own places across it (routes take the same cheapest lines between boxes, so
 * without this they are drawn on top of each other). Horizontal segments first, then vertical
 * ones, then horizontal ones again (moving a vertical segment stretches its neighbours).
 */
function nudge(paths: Point[][], boxes: CellGrid<RouteNode>, containers: ReadonlySet<RouteNode>, kin: Bundles, work: NudgeWork): void {
  for (const horizontal of [true, false, true]) nudgeAcross(paths, boxes, containers, horizontal, kin, work);
}

/** Nudging's passes over constraints (RouteStats.narrowings), and the rooms of segments found so far, by direction, line and stretch. */
interface NudgeWork {
  narrowings: number;
  rooms: Record<'horizontal' | 'vertical', Map<number, Map<number, Map<number, Room>>>>;
}

/** A segment's room across its line, and beyond a container's wall it passes through (see room). */
interface Room {
  min: number;
  max: number;
  beyond: { min: number; max: number } | null;
}

/**
 * One direction of nudge: every horizontal (or vertical) segment gets a place across its line
 * such that segments overlapping along their lines are at least a gap apart (SPACING where the
 * channel has room, narrower only where a chain of them has not), in the order of their lines
 * and, on one line, in the order that keeps routes from crossing (where that order leaves routes
 * under a pixel apart and the order of their room does not, a group of them in the order of
 * their room: see the module comment); each stays within its own room (boxes with CLEARANCE,
 * MAX_SHIFT). The first and last segment of a route move too, along the side of their box
 * (spreadPorts placed them; this parts the legs of routes that leave two facing boxes at the
 * same height, and of straight routes between the same two boxes). Constraints only point from
 * a segment to later ones in that order, so a pass forwards (each as low as its room and the
 * ones before allow) and one backwards (as high as the ones after allow) tell which chains are
 * too long for their room, and a last pass forwards places each.
 */
function nudgeAcross(
  paths: Point[][],
  boxes: CellGrid<RouteNode>,
  containers: ReadonlySet<RouteNode>,
  horizontal: boolean,
  kin: Bundles,
  work: NudgeWork,
): void {
  const segs: Segment[] = [];
  // The distance two segments keep where they have room: SPACING, or their bundle's when both
  // routes join the same two boxes; and the most any segment of a route keeps from another.
  const bundleGap = kin.across.map((a) => (horizontal ? a.horizontal : a.vertical));
  const gapOf = (s: Segment, t: Segment): number => {
    const b = kin.of[s.route]!;
    return b >= 0 && b === kin.of[t.route] ? bundleGap[b]! : SPACING;
  };
  // Whether t's stretch holds all of s's and t keeps the same distances to others as s does (see solve).
  const covers = (t: Segment, s: Segment): boolean => t.lo <= s.lo && t.hi >= s.hi && kin.of[s.route] === kin.of[t.route];
  const reach = (s: Segment): number => {
    const b = kin.of[s.route]!;
    return b >= 0 ? bundleGap[b]! : SPACING;
  };
  paths.forEach((pts, route) => {
    for (let k = 0; k + 1 < pts.length; k++) {
      const p = pts[k]!;
      const q = pts[k + 1]!;
      const along = horizontal ? p.y === q.y && p.x !== q.x : p.x === q.x && p.y !== q.y;
      if (!along) continue;
      const c = horizontal ? p.y : p.x;
      const lo = horizontal ? Math.min(p.x, q.x) : Math.min(p.y, q.y);
      const hi = horizontal ? Math.max(p.x, q.x) : Math.max(p.y, q.y);
      segs.push({ route, k, c, lo, hi, min: c, max: c, beyond: null, free: null });
    }
  });
  for (const s of segs) {
    // A segment's room depends on its line and stretch alone (the boxes are the same every time
    // the routes are laid, and searching a few again leaves most segments where they were).
    const rooms = horizontal ? work.rooms.horizontal : work.rooms.vertical;
    let byLo = rooms.get(s.c);
    if (!byLo) rooms.set(s.c, (byLo = new Map()));
    let byHi = byLo.get(s.lo);
    if (!byHi) byLo.set(s.lo, (byHi = new Map()));
    const known = byHi.get(s.hi);
    if (known) [s.min, s.max, s.beyond] = [known.min, known.max, known.beyond];
    else {
      room(s, boxes, containers, horizontal);
      byHi.set(s.hi, { min: s.min, max: s.max, beyond: s.beyond });
    }
    keepEndLegs(s, paths[s.route]!, horizontal);
  }
  if (segs.length < 2) {
    for (const s of segs) moveIntoRoom(paths[s.route]!, s, horizontal);
    return;
  }

  const reversed = new Map<number, Point[]>();
  const backwards = (r: number): Point[] => {
    let p = reversed.get(r);
    if (!p) reversed.set(r, (p = [...paths[r]!].reverse()));
    return p;
  };
  // On one line: the one running left of another (looking where it goes) on its left.
  /**
   * On one line: -1 when `s` goes before `t` (the one running left of the other, looking where
   * it goes, on its left), else 1; `weight` 2 when both ways along agree (the wrong order costs
   * two crossings), 1 when they do not (the routes cross somewhere anyway).
   */
  const sameLine = (s: Segment, t: Segment): { order: number; weight: number } => {
    const a = paths[s.route]!;
    const u = direction(a[s.k]!, a[s.k + 1]!);
    const bAhead = paths[t.route]!;
    const v = direction(bAhead[t.k]!, bAhead[t.k + 1]!);
    const flip = u.x !== v.x || u.y !== v.y;
    const b = flip ? backwards(t.route) : bAhead;
    const kb = flip ? b.length - 2 - t.k : t.k;
    const ra = backwards(s.route);
    const rb = flip ? bAhead : backwards(t.route);
    const ahead = sideAhead(a, s.k, b, kb);
    const behind = -sideAhead(ra, ra.length - 2 - s.k, rb, rb.length - 2 - kb);
    let left = ahead || behind;
    const weight = ahead !== 0 && behind !== 0 && ahead !== behind ? 1 : 2;
    if (left === 0) left = s.route < t.route ? 1 : s.route > t.route ? -1 : s.k < t.k ? 1 : -1;
    // Left of the way a route goes is up for one going right, right for one going down.
    const leftIsLess = horizontal ? u.x > 0 : u.y < 0;
    return { order: left > 0 === leftIsLess ? -1 : 1, weight };
  };
  segs.sort((s, t) => s.c - t.c || s.lo - t.lo);
  // On each line, the segments that overlap in the order sameLine wants (a topological order;
  // where routes' wishes go round in a circle, the one fewest others want first goes first).
  for (let from = 0; from < segs.length; ) {
    let to = from + 1;
    while (to < segs.length && segs[to]!.c === segs[from]!.c) to++;
    if (to - from > 1) segs.splice(from, to - from, ...lineOrder(segs.slice(from, to), sameLine));
    from = to;
  }

  // Places the segments within their rooms: where each goes, how many constraints are left
  // under a pixel, and the segments of the groups that have such constraints.
  const solve = (): { moves: Array<{ s: Segment; to: number }>; tight: number; crowded: Segment[] } => {
    // Constraints: s before t, overlapping along the line, and able to come within their distance
    // (SPACING, or their bundle's: see gapOf).
    const n = segs.length;
    const after: number[][] = Array.from({ length: n }, () => []);
    const before: number[][] = Array.from({ length: n }, () => []);
    const parent = Array.from({ length: n }, (_, i) => i);
    const find = (i: number): number => {
      while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
      return i;
    };
    // Each segment's room before keepEndLegs narrowed it, read once (the scan below meets each many times).
    const freeMin = Float64Array.from(segs, (s) => s.free?.min ?? s.min);
    for (let i = 0; i < n; i++) {
      const s = segs[i]!;
      const far = reach(s);
      const sMax = s.free?.max ?? s.max;
      for (let j = i + 1; j < n; j++) {
        const t = segs[j]!;
        if (t.c - MAX_SHIFT > sMax + far) break;
        if (Math.min(s.hi, t.hi) - Math.max(s.lo, t.lo) <= 0.5) continue;
        if (freeMin[j]! >= sMax + gapOf(s, t)) continue;
        after[i]!.push(j);
        before[j]!.push(i);
        parent[find(i)] = find(j);
        // Past a segment t whose stretch holds all of s's, of a route with the same distances to
        // others (of the same bundle, or both of none), s need not be kept from the ones after t:
        // each that overlaps s overlaps t, and is kept from t as it would be from s, t being kept
        // from s (and where t's room keeps it from one, s is kept below t). Relations between the
        // same two boxes run so: a thousand of them made half a million constraints, a thousand so.
        if (covers(t, s)) break;
      }
    }
    const groups = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      if (after[i]!.length === 0 && before[i]!.length === 0) continue;
      const root = find(i);
      const list = groups.get(root);
      if (list) list.push(i);
      else groups.set(root, [i]);
    }
    // How far the segments of its own line that must lie before it and after it reach (their gaps
    // summed along the longest chain each way): it wishes to sit where that puts it around its
    // line, so the routes of one line spread evenly around it (see place).
    const depth = new Float64Array(n);
    const height = new Float64Array(n);

    /** A group's segments in an order in which every constraint points from one to a later one. */
    interface Order {
      group: number[];
      after: number[][];
    }
    /** The gap each constraint of an order keeps: that of `after[i][k]` at gaps.get(i)[k]. */
    type Gaps = Map<number, Float64Array>;
    const lowest = new Float64Array(n);
    const highest = new Float64Array(n);
    // The lowest place each segment of `order` can take (its room's low end, pushed up by the ones
    // before it) and the highest (its room's high end, pushed down by the ones after it).
    // Beside each bound, the gaps summed along the chain of constraints that sets it, all of them
    // and what they keep over SPACING: how much a chain too long must narrow (see separations).
    const lowSum = new Float64Array(n);
    const lowWide = new Float64Array(n);
    const highSum = new Float64Array(n);
    const highWide = new Float64Array(n);
    const bounds = (order: Order, gaps: Gaps): void => {
      for (const i of order.group) {
        lowest[i] = segs[i]!.min;
        lowSum[i] = lowWide[i] = 0;
      }
      for (const i of order.group) {
        const list = order.after[i]!;
        const gap = gaps.get(i)!;
        for (let k = 0; k < list.length; k++) {
          const j = list[k]!;
          const at = lowest[i]! + gap[k]!;
          if (at <= lowest[j]!) continue;
          lowest[j] = at;
          lowSum[j] = lowSum[i]! + gap[k]!;
          lowWide[j] = lowWide[i]! + Math.max(0, gap[k]! - SPACING);
        }
      }
      for (let g = order.group.length - 1; g >= 0; g--) {
        const i = order.group[g]!;
        const list = order.after[i]!;
        const gap = gaps.get(i)!;
        let [p, sum, wide] = [segs[i]!.max, 0, 0];
        for (let k = 0; k < list.length; k++) {
          const j = list[k]!;
          const at = highest[j]! - gap[k]!;
          if (at >= p) continue;
          [p, sum, wide] = [at, highSum[j]! + gap[k]!, highWide[j]! + Math.max(0, gap[k]! - SPACING)];
        }
        highest[i] = p;
        highSum[i] = sum;
        highWide[i] = wide;
      }
    };
    // The gap each constraint keeps: SPACING, narrowed only on the constraints that lie on a chain
    // of segments too long for the room its ends have (s before t with lowest(s) + gap >
    // highest(t)). A narrow channel squeezes its own routes, not every route of the group it is
    // chained to: one uniform gap for a group (groups run across the diagram) drew 230 segments of
    // the bench's 200-instance diagram a pixel apart for one tight spot. Each pass narrows such a
    // gap by what the longest chain through it must lose to fit (its excess over the chain's gaps
    // summed, all of them scaled alike), and by NARROWING at least, so that passes end: by
    // NARROWING alone, a thousand routes between two boxes took 70 passes of their million
    // constraints (3 to 5 s), one pass or two so. A gap of 0 always fits (in either order each
    // segment's room reaches the places of the ones before it: the order runs along the lines,
    // or along the rooms' high ends), so this ends.
    const separations = (order: Order): Gaps => {
      const gaps: Gaps = new Map();
      for (const i of order.group) {
        const list = order.after[i]!;
        const gap = new Float64Array(list.length);
        for (let k = 0; k < list.length; k++) gap[k] = gapOf(segs[i]!, segs[list[k]!]!);
        gaps.set(i, gap);
      }
      // A bundle's wider distance (gapOf) yields first: while a constraint too tight keeps more
      // than SPACING, only such ones narrow, down to SPACING, so that other routes keep theirs (the
      // bench's 50-instance diagram: 4 more crossings when a wide label's bundle squeezed them).
      // Gaps only narrow, so bounds only loosen: once no wide one is too tight, none is again.
      let widening = false;
      for (const gap of gaps.values()) if (gap.some((g) => g > SPACING)) widening = true;
      // First no gap narrows below APART; where a chain is still too long with all its gaps
      // there, its constraints narrow below it, by what the chain must lose (and at least by
      // FINE_NARROWING, for FINE_PASSES passes). By NARROWING at least, as gaps above APART, a gap
      // just too wide for its chain went a tenth below what the chain needed: the bench's
      // 1,000-instance diagram had 48 routes in a 48 px channel between two boundaries' walls, 12
      // gaps of 0.92 px where the rest of the chain kept 1.04 (a gap narrowed for a longer chain
      // leaves its shorter ones room that no gap takes back, gaps only narrow), and 29 pairs
      // of routes on top of each other across the diagram; 0 so.
      let floor = APART;
      let fine = FINE_PASSES;
      for (let narrowed = true; narrowed; ) {
        bounds(order, gaps);
        work.narrowings++;
        narrowed = false;
        let stuck = false;
        if (floor === 0) fine--;
        const wide: boolean =
          widening &&
          order.group.some((i) => {
            const list = order.after[i]!;
            const gap = gaps.get(i)!;
            return list.some((j, k) => gap[k]! > SPACING && lowest[i]! + gap[k]! > highest[j]! + EPS);
          });
        widening = wide;
        for (const i of order.group) {
          const list = order.after[i]!;
          const gap = gaps.get(i)!;
          for (let k = 0; k < list.length; k++) {
            const j = list[k]!;
            const g = gap[k]!;
            const excess = lowest[i]! + g - highest[j]!;
            if (g === 0 || excess <= EPS) continue;
            if (wide) {
              if (g <= SPACING) continue;
              const over = lowWide[i]! + (g - SPACING) + highWide[j]!;
              const fits = SPACING + (g - SPACING) * Math.max(0, 1 - excess / over);
              gap[k] = Math.max(SPACING, Math.min(g / WIDE_NARROWING, fits));
            } else {
              if (g <= floor) {
                stuck = true;
                continue;
              }
              const fits = g * Math.max(0, 1 - excess / (lowSum[i]! + g + highSum[j]!));
              const narrower = Math.max(floor, Math.min(g / (floor > 0 || fine <= 0 ? NARROWING : FINE_NARROWING), fits));
              gap[k] = narrower < 0.01 ? 0 : narrower;
            }
            narrowed = true;
          }
        }
        // Only constraints at APART are left too tight: their chains narrow below it.
        if (!narrowed && stuck && floor > 0) {
          floor = 0;
          narrowed = true;
        }
      }
      return gaps;
    };
    // Where keeping end legs long (keepEndLegs) leaves routes of `order` on top of each other, the
    // segments kept so give up that room, a few at a time, until none is left on top or none is
    // kept: first those on a constraint left under a pixel, then those on one narrowed at all, then
    // every one of the group. A short leg puts an arrowhead on a turn; routes on top of each other
    // cannot be told apart (and ordered by their room instead they cross: the bench's 50-instance
    // diagram, 99 crossings with the legs eased so, 133 without).
    const easeEndLegs = (order: Order, gaps: Gaps): Gaps => {
      for (const under of [1, Infinity]) {
        const ease = new Set<number>();
        for (const i of order.group) {
          const gap = gaps.get(i)!;
          order.after[i]!.forEach((j, k) => {
            const squeezed = under === Infinity ? gap[k]! < gapOf(segs[i]!, segs[j]!) - EPS : gap[k]! < under;
            if (squeezed) ease.add(i).add(j);
          });
        }
        if (under === Infinity) for (const i of order.group) ease.add(i);
        let eased = false;
        for (const i of ease) {
          const s = segs[i]!;
          if (!s.free) continue;
          [s.min, s.max] = [s.free.min, s.free.max];
          s.free = null;
          eased = true;
        }
        if (eased) gaps = separations(order);
        if (onTop(order, gaps) === 0) break;
      }
      return gaps;
    };
    // Constraints of `order` whose gap is under a pixel: routes drawn on top of each other.
    const onTop = (order: Order, gaps: Gaps): number => {
      let count = 0;
      for (const i of order.group) for (const gap of gaps.get(i)!) if (gap < 1) count++;
      return count;
    };
    // Each segment in order: where it wishes to be (around its line, offset by what depth and
    // height say), within the lowest place the ones before it leave and the highest the ones after
    // it allow. Every constraint is kept, so no wish can squeeze the ones after it.
    const at = new Float64Array(n);
    const place = (order: Order, gaps: Gaps): void => {
      bounds(order, gaps);
      for (const i of order.group) depth[i] = height[i] = 0;
      for (const i of order.group) {
        const list = order.after[i]!;
        const gap = gaps.get(i)!;
        for (let k = 0; k < list.length; k++) {
          const j = list[k]!;
          if (segs[j]!.c === segs[i]!.c) depth[j] = Math.max(depth[j]!, depth[i]! + gap[k]!);
        }
      }
      for (let g = order.group.length - 1; g >= 0; g--) {
        const i = order.group[g]!;
        const list = order.after[i]!;
        const gap = gaps.get(i)!;
        for (let k = 0; k < list.length; k++) {
          const j = list[k]!;
          if (segs[j]!.c === segs[i]!.c) height[i] = Math.max(height[i]!, height[j]! + gap[k]!);
        }
      }
      for (const i of order.group) lowest[i] = segs[i]!.min;
      for (const i of order.group) {
        const s = segs[i]!;
        const wish = s.c + (depth[i]! - (depth[i]! + height[i]!) / 2);
        at[i] = Math.min(highest[i]!, Math.max(lowest[i]!, wish));
        const list = order.after[i]!;
        const gap = gaps.get(i)!;
        for (let k = 0; k < list.length; k++) lowest[list[k]!] = Math.max(lowest[list[k]!]!, at[i]! + gap[k]!);
      }
    };
    // `group` ordered by where its segments may go (the one whose room ends lowest first), with
    // its constraints made anew in that order: s before t when they overlap along their lines and
    // their rooms let them come within SPACING (as the constraints above).
    const byRoom = (group: number[]): Order => {
      const sorted = [...group].sort((i, j) => segs[i]!.max - segs[j]!.max || segs[i]!.min - segs[j]!.min || i - j);
      const order: Order = { group: sorted, after: new Array<number[]>(n) };
      for (let a = 0; a < sorted.length; a++) {
        const i = sorted[a]!;
        const s = segs[i]!;
        const list: number[] = [];
        for (let b = a + 1; b < sorted.length; b++) {
          const j = sorted[b]!;
          const t = segs[j]!;
          if (t.min >= s.max + gapOf(s, t) || Math.min(s.hi, t.hi) - Math.max(s.lo, t.lo) <= 0.5) continue;
          list.push(j);
          if (covers(t, s)) break;
        }
        order.after[i] = list;
      }
      return order;
    };
    const moves: Array<{ s: Segment; to: number }> = [];
    let tightTotal = 0;
    const crowded: Segment[] = [];
    for (const group of groups.values()) {
      let order: Order = { group, after };
      let gaps = separations(order);
      if (onTop(order, gaps) > 0) gaps = easeEndLegs(order, gaps);
      const tight = onTop(order, gaps);
      if (tight > 0) {
        // The order that keeps routes from crossing leaves some under a pixel apart: in the order
        // of where each may go (a channel's narrow end first) there may be fewer. Routes that cross
        // can be followed; routes drawn on top of each other cannot. Where it is no better, the
        // routes keep the order that does not cross them.
        const roomy = byRoom(group);
        const roomyGaps = separations(roomy);
        if (onTop(roomy, roomyGaps) < tight) [order, gaps] = [roomy, roomyGaps];
      }
      const left = onTop(order, gaps);
      if (left > 0) {
        tightTotal += left;
        for (const i of group) crowded.push(segs[i]!);
      }
      place(order, gaps);
      for (const i of group) {
        const s = segs[i]!;
        const to = Math.min(s.max, Math.max(s.min, at[i]!));
        if (Math.abs(to - s.c) > EPS) moves.push({ s, to });
      }
    }
    // A segment in no group has no other to keep from: it moves only when its line lies outside
    // its room (keepEndLegs: a leg at a box too short).
    for (let i = 0; i < n; i++) {
      if (after[i]!.length > 0 || before[i]!.length > 0) continue;
      const s = segs[i]!;
      if (s.c < s.min - EPS || s.c > s.max + EPS) moves.push({ s, to: Math.min(s.max, Math.max(s.min, s.c)) });
    }
    return { moves, tight: tightTotal, crowded };
  };
  let { moves, tight, crowded } = solve();
  // Routes that leave (or enter) a container through its wall along their line must stay inside
  // it there, between its side wall and whatever is beside it: where a neighbouring box's wall
  // comes near the container's, routes passing by are squeezed into that sliver (the bench's
  // 200-instance diagram with stacked boundaries whose right walls ended 14 px apart: 8 routes
  // in 6 px). Where a group is left with routes under a pixel apart, its segments that pass
  // through a container's wall may take the room beyond the wall's nearer side instead (their
  // routes then leave through the side, and the rest of the group has their room inside); the
  // placing is made again with those rooms, and kept if fewer routes are left on top of each other.
  const switched = crowded.filter((s) => s.beyond !== null);
  if (tight > 0 && switched.length > 0) {
    const inside = switched.map((s) => ({ min: s.min, max: s.max }));
    for (const s of switched) [s.min, s.max] = [s.beyond!.min, s.beyond!.max];
    const again = solve();
    if (again.tight < tight) ({ moves, tight, crowded } = again);
    else
      for (let k = 0; k < switched.length; k++) {
        switched[k]!.min = inside[k]!.min;
        switched[k]!.max = inside[k]!.max;
      }
  }
  for (const { s, to } of moves) moveSegment(paths[s.route]!, s.k, to, horizontal);
}

/** How many times the route of `id` crosses the others of `routes` (orthogonal: a horizontal segment through a vertical one). */
function crossingsOf(id: string, routes: ReadonlyMap<string, readonly Point[]>): number {
  const own = routes.get(id)!;
  const box = extentOf(own);
  let count = 0;
  for (const [other, pts] of routes) {
    if (other === id) continue;
    // A crossing lies inside both routes' extents: a route whose extent does not meet this one's crosses it nowhere.
    const at = extentOf(pts);
    if (at.x0 > box.x1 || at.x1 < box.x0 || at.y0 > box.y1 || at.y1 < box.y0) continue;
    for (let i = 1; i < own.length; i++) {
      const p = own[i - 1]!;
      const q = own[i]!;
      for (let j = 1; j < pts.length; j++) {
        const u = pts[j - 1]!;
        const v = pts[j]!;
        const horizontal = p.y === q.y;
        const h0 = horizontal ? p : u;
        const h1 = horizontal ? q : v;
        const v0 = horizontal ? u : p;
        const v1 = horizontal ? v : q;
        if (h0.y !== h1.y || v0.x !== v1.x) continue;
        if (
          v0.x > Math.min(h0.x, h1.x) + EPS &&
          v0.x < Math.max(h0.x, h1.x) - EPS &&
          h0.y > Math.min(v0.y, v1.y) + EPS &&
          h0.y < Math.max(v0.y, v1.y) - EPS
        )
          count++;
      }
    }
  }
  return count;
}

/** The least and greatest x and y of a route's points. */
function extentOf(pts: readonly Point[]): { x0: number; x1: number; y0: number; y1: number } {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const p of pts) {
    if (p.x < x0) x0 = p.x;
    if (p.x > x1) x1 = p.x;
    if (p.y < y0) y0 = p.y;
    if (p.y > y1) y1 = p.y;
  }
  return { x0, x1, y0, y1 };
}

/** Whether a route's last leg (after a turn) is shorter than LAST_LEG. */
function shortLastLeg(pts: readonly Point[]): boolean {
  const n = pts.length;
  return n > 2 && Math.abs(pts[n - 1]!.x - pts[n - 2]!.x) + Math.abs(pts[n - 1]!.y - pts[n - 2]!.y) < LAST_LEG - EPS;
}

/** Moves segment k of a route (points k and k + 1) across its line to `to`. */
function moveSegment(pts: Point[], k: number, to: number, horizontal: boolean): void {
  for (const at of [k, k + 1]) pts[at] = horizontal ? { x: pts[at]!.x, y: to } : { x: to, y: pts[at]!.y };
}

/** A segment alone on its axis, moved into its room where its line lies outside it (see keepEndLegs). */
function moveIntoRoom(pts: Point[], s: Segment, horizontal: boolean): void {
  const to = Math.min(s.max, Math.max(s.min, s.c));
  if (Math.abs(to - s.c) > EPS) moveSegment(pts, s.k, to, horizontal);
}

/**
 * The room of the segment before a route's last leg, and of the one after its first leg, kept far
 * enough from the box the leg ends at (or leaves) for that leg to be at least LAST_LEG (FIRST_LEG)
 * long: routes turn onto their boxes on the margin line, MARGIN out, and nudging may move that
 * turn nearer, which left the arrowhead (ARROW_PX) on the turn. Where the room does not reach that
 * far, the segment keeps to the room's far end, as far from the box as it can.
 */
function keepEndLegs(s: Segment, pts: readonly Point[], horizontal: boolean): void {
  const last = pts.length - 1;
  const keep = (end: Point, leg: number) => {
    const e = horizontal ? end.y : end.x;
    if (Math.abs(s.c - e) < EPS) return;
    s.free ??= { min: s.min, max: s.max };
    if (s.c < e) s.max = Math.max(s.min, Math.min(s.max, e - leg));
    else s.min = Math.min(s.max, Math.max(s.min, e + leg));
  };
  if (s.k + 1 === last - 1 && last >= 2) keep(pts[last]!, LAST_LEG);
  if (s.k === 1 && last >= 2) keep(pts[0]!, FIRST_LEG);
}

/**
 * Segments of one line (sorted by where they start) in an order that puts each overlapping pair
 * as `before` says. Where the wishes go round in a circle (routes that must cross somewhere),
 * as few as can be are broken: the greedy order of Eades, Lin and Smyth (1993) — sinks last,
 * sources first, else the one with most wishes out over wishes in.
 */
function lineOrder(line: Segment[], before: (s: Segment, t: Segment) => { order: number; weight: number }): Segment[] {
  const k = line.length;
  const outs: Array<Array<[number, number]>> = Array.from({ length: k }, () => []);
  const ins: Array<Array<[number, number]>> = Array.from({ length: k }, () => []);
  for (let i = 0; i < k; i++) {
    for (let j = i + 1; j < k && line[j]!.lo < line[i]!.hi - 0.5; j++) {
      if (Math.min(line[i]!.hi, line[j]!.hi) - Math.max(line[i]!.lo, line[j]!.lo) <= 0.5) continue;
      const { order, weight } = before(line[i]!, line[j]!);
      const [p, q] = order < 0 ? [i, j] : [j, i];
      outs[p]!.push([q, weight]);
      ins[q]!.push([p, weight]);
    }
  }
  const inWeight = ins.map((l) => l.reduce((sum, [, w]) => sum + w, 0));
  const outWeight = outs.map((l) => l.reduce((sum, [, w]) => sum + w, 0));
  const left = new Array<boolean>(k).fill(true);
  const head: number[] = [];
  const tail: number[] = [];
  let remaining = k;
  const take = (i: number, to: number[]) => {
    left[i] = false;
    remaining--;
    to.push(i);
    for (const [q, w] of outs[i]!) inWeight[q]! -= w;
    for (const [p, w] of ins[i]!) outWeight[p]! -= w;
  };
  while (remaining > 0) {
    let moved = true;
    while (moved) {
      moved = false;
      for (let i = k - 1; i >= 0; i--) {
        if (left[i] && outWeight[i] === 0) {
          take(i, tail);
          moved = true;
        }
      }
      for (let i = 0; i < k; i++) {
        if (left[i] && inWeight[i] === 0) {
          take(i, head);
          moved = true;
        }
      }
    }
    if (remaining === 0) break;
    let pick = -1;
    for (let i = 0; i < k; i++) if (left[i] && (pick < 0 || outWeight[i]! - inWeight[i]! > outWeight[pick]! - inWeight[pick]!)) pick = i;
    take(pick, head);
  }
  return [...head, ...tail.reverse()].map((i) => line[i]!);
}

/**
 * The room of segment `s` across its line: as far as MAX_SHIFT, but never nearer than CLEARANCE
 * to a box beside it (its neighbours stretch or shrink with it, so its whole stretch counts),
 * and inside a box it runs in (the container of an end) or ends on (a leg at a box stays on
 * the box's side, CLEARANCE from its corners). A segment that passes through a container's wall
 * along its line (it runs in the container for part of its stretch only) also gets the room
 * beyond the container's side nearer to it, with every other box as above (`beyond`).
 */
function room(s: Segment, boxes: CellGrid<RouteNode>, containers: ReadonlySet<RouteNode>, horizontal: boolean): void {
  const [down, up] = across(horizontal, s.c, s.lo, s.hi, boxes, null);
  s.min = s.c - down;
  s.max = s.c + up;
  // The container whose side wall is nearest among those the segment leaves along its line.
  let wall: RouteNode | null = null;
  let side = 0;
  let nearest = Infinity;
  boxes.some(horizontal ? { x: s.lo, y: s.c, w: s.hi - s.lo, h: 0 } : { x: s.c, y: s.lo, w: 0, h: s.hi - s.lo }, (n) => {
    if (!containers.has(n)) return false;
    const [a0, a1, p0, p1] = horizontal ? [n.x, n.x + n.w, n.y, n.y + n.h] : [n.y, n.y + n.h, n.x, n.x + n.w];
    if (!(s.c > p0 && s.c < p1)) return false;
    const through = (s.lo < a0 - EPS && s.hi > a0 + EPS) || (s.lo < a1 - EPS && s.hi > a1 + EPS);
    if (!through) return false;
    const d = Math.min(s.c - p0, p1 - s.c);
    if (d < nearest) [wall, side, nearest] = [n, s.c - p0 < p1 - s.c ? -1 : 1, d];
    return false;
  });
  if (!wall) return;
  const w = wall as RouteNode;
  const [d2, u2] = across(horizontal, s.c, s.lo, s.hi, boxes, w);
  const [p0, p1] = horizontal ? [w.y, w.y + w.h] : [w.x, w.x + w.w];
  const min = side > 0 ? Math.max(s.c - d2, p1 + CLEARANCE) : s.c - d2;
  const max = side > 0 ? s.c + u2 : Math.min(s.c + u2, p0 - CLEARANCE);
  if (max - min >= SPACING) s.beyond = { min, max };
}

/**
 * How far a horizontal (or vertical) stretch at c from lo to hi along its line may move down and
 * up across it: as far as MAX_SHIFT, but never nearer than CLEARANCE to a box beside it (other
 * than `skip`), and inside a box it runs in.
 */
function across(
  horizontal: boolean,
  c: number,
  lo: number,
  hi: number,
  boxes: CellGrid<RouteNode>,
  skip: RouteNode | null = null,
): [number, number] {
  let down = MAX_SHIFT;
  let up = MAX_SHIFT;
  const band = horizontal
    ? { x: lo, y: c - MAX_SHIFT - CLEARANCE, w: hi - lo, h: 2 * (MAX_SHIFT + CLEARANCE) }
    : { x: c - MAX_SHIFT - CLEARANCE, y: lo, w: 2 * (MAX_SHIFT + CLEARANCE), h: hi - lo };
  boxes.some(band, (n) => {
    if (n === skip) return false;
    const [a0, a1, p0, p1] = horizontal ? [n.x, n.x + n.w, n.y, n.y + n.h] : [n.y, n.y + n.h, n.x, n.x + n.w];
    if (a0 - CLEARANCE >= hi || a1 + CLEARANCE <= lo) return false;
    if (c > p0 && c < p1) {
      down = Math.min(down, Math.max(0, c - p0 - CLEARANCE));
      up = Math.min(up, Math.max(0, p1 - CLEARANCE - c));
    } else if (c <= p0) up = Math.min(up, Math.max(0, p0 - CLEARANCE - c));
    else down = Math.min(down, Math.max(0, c - p1 - CLEARANCE));
    return false;
  });
  return [down, up];
}
