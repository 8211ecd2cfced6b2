/**
 * A layered layout that keeps relations from crossing (the Sugiyama scheme Graphviz `dot` and
 * ELK `layered` use), with containers as nested groups, for the new elements of a diagram
 * (./layout.ts). Top to bottom, in grid units:
 *
 * 1. Cycles are broken by the greedy ordering of Eades, Lin and Smyth (few relations read
 *    reversed).
 * 2. Ranks: longest path from the sources, then each box moves towards its relations (sources
 *    just above what they use, sinks just below what uses them, a box with more relations on
 *    one side to that side, a box related to that one alone along with it), so relations are
 *    short. A container's children get rows of their own first, in that order, at most as many
 *    as fit the container's width and height (a bounded-width layering: a child that finds
 *    no room goes to the nearest row that has some), then children move or trade rows while
 *    that shortens their relations (shortenRows); rows are filled to the whole width, 90 % and
 *    80 % of it in turn (up to FILLS_UP_TO boxes), and the layout whose straight lines between
 *    related boxes cross least is kept (room left in rows lets relations pass them without
 *    squeezing them; which share is best varies). The container then moves as one block
 *    among the other boxes, and a box related to one of its children goes above or below the
 *    whole block. A relation the ranks cannot point down is drawn upwards or across a row.
 * 3. A relation across several ranks gets a point on every rank in between (a dummy node); a
 *    dummy belongs to a container when the relation runs inside it there. A container is one
 *    contiguous block in each of its rows, and containers keep one left-to-right order.
 * 4. Order within rows: barycentre sweeps down and up, then transposition of neighbours while
 *    it removes crossings; the order with the fewest crossings seen is kept.
 * 5. x: as close as its order allows to the boxes each box is related to (least squares, then
 *    the L1 objective of dot, which lines related boxes up; each step solved exactly under the
 *    separation constraints by ./vpsc.ts); long relations run straight. y: rank by rank; the
 *    boxes outside containers `layerGap` apart, each container's rows in a rhythm of their own
 *    (its children's height and row gap, less inside a container that had to be made smaller),
 *    with room for its title and padding, every box below what it would otherwise meet above.
 *
 * A container whose children do not fit 100×100 this way is retried with smaller children set
 * closer (STEPS); when even the last step does not fit, it is reported (null) and the caller
 * packs it in rows instead. Graphs too large for this (nodes + dummies above MAX_NODES) are
 * reported as null too: the caller uses the linear placement of ./layers.ts.
 */
import { SeparationSolver, solveSeparation, type Separation } from './vpsc.js';

export interface SugiyamaNode {
  w: number;
  h: number;
  /** Smallest size the box may be made inside a container that must fit (a given size: its own). */
  minW: number;
  minH: number;
  /** Index of the container (cluster) it is drawn in, or -1. */
  cluster: number;
}

export interface SugiyamaCluster {
  /** Smallest outer size (room for the title) and largest. */
  minW: number;
  minH: number;
  maxW: number;
  maxH: number;
}

export interface SugiyamaSpacing {
  gap: number;
  layerGap: number;
  padTop: number;
  padSide: number;
  padBottom: number;
}

export interface SugiyamaInput {
  nodes: readonly SugiyamaNode[];
  clusters: readonly SugiyamaCluster[];
  /** Relations as [from, to] node indexes; repeated pairs and self relations are ignored. */
  edges: ReadonlyArray<readonly [number, number]>;
}

export interface SugiyamaBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface SugiyamaResult {
  nodes: SugiyamaBox[];
  /** A container's box, or null when its children could not be laid out inside 100×100. */
  clusters: Array<SugiyamaBox | null>;
}

/** Boxes + dummies beyond which the caller's linear placement is used. */
export const MAX_NODES = 4000;

/** How a container's children are made smaller and set closer when they do not fit. */
const STEPS = [
  { f: 1, gap: 4, rowGap: 8 },
  { f: 1, gap: 3, rowGap: 6 },
  { f: 1, gap: 2, rowGap: 5 },
  { f: 0.85, gap: 3, rowGap: 4 },
  { f: 0.75, gap: 3, rowGap: 4 },
  { f: 0.65, gap: 2, rowGap: 3 },
  { f: 0, gap: 2, rowGap: 3 },
] as const;

/** Space a dummy (a relation passing a row) keeps from a box and from another dummy. */
const DUMMY_BOX = 2;
const DUMMY_DUMMY = 1;

export function sugiyama(input: SugiyamaInput, spacing: SugiyamaSpacing): SugiyamaResult | null {
  const edges = uniqueEdges(input);
  // Containers' rows shortened, filled to each share of the width in turn (smaller graphs) or
  // to the whole width; the drawing whose straight lines between related boxes cross least is
  // kept. Rows as found (first come, first served) when shortened ones are too large.
  const fills = input.nodes.length <= FILLS_UP_TO ? ROW_FILLS : ROW_FILLS.slice(0, 1);
  let best: { result: SugiyamaResult; crossings: number } | null = null;
  const hasKids = input.clusters.map(() => false);
  for (const node of input.nodes) if (node.cluster >= 0) hasKids[node.cluster] = true;
  for (const fill of fills) {
    const result = layered(input, edges, spacing, fill);
    if (result === null) continue;
    // A container that did not fit (null: the caller packs it instead) puts a layout last.
    const whole = result.nodes.length === input.nodes.length && result.clusters.every((b, k) => b !== null || !hasKids[k]);
    const crossings = !whole ? Infinity : fills.length > 1 ? straightCrossings(result.nodes, edges) : 0;
    if (best === null || crossings < best.crossings) best = { result, crossings };
  }
  return best?.result ?? layered(input, edges, spacing, null);
}

/**
 * Shares of a container's width its rows are filled to before they are shortened (shortenRows).
 * Rows with room left give the relations that pass them a way between the children without
 * squeezing the row (the bench's 50-instance diagrams, seeds 1–8: rows filled to the whole
 * width, 789 crossings; 90 %, 665; 80 %, 591; the first come, first served rows, 964), but
 * which share is best varies from diagram to diagram: each is tried (633 crossings, the same
 * seeds), up to FILLS_UP_TO boxes (three layouts instead of one: about 15 ms more at 50
 * instances; a 200-instance diagram keeps its one layout).
 */
const ROW_FILLS = [1, 0.9, 0.8];
const FILLS_UP_TO = 150;

/** Crossings of the straight lines between the centres of related boxes: a cheap forecast of the routes'. */
export function straightCrossings(nodes: readonly SugiyamaBox[], edges: ReadonlyArray<readonly [number, number]>): number {
  const segs = edges.map(([a, b]) => {
    const p = nodes[a]!;
    const q = nodes[b]!;
    return [p.x + p.w / 2, p.y + p.h / 2, q.x + q.w / 2, q.y + q.h / 2] as const;
  });
  const side = (ax: number, ay: number, bx: number, by: number, cx: number, cy: number) =>
    Math.sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax));
  let count = 0;
  for (let i = 0; i < segs.length; i++) {
    const [ax, ay, bx, by] = segs[i]!;
    const x0 = Math.min(ax, bx);
    const x1 = Math.max(ax, bx);
    const y0 = Math.min(ay, by);
    const y1 = Math.max(ay, by);
    for (let j = i + 1; j < segs.length; j++) {
      const [cx, cy, dx, dy] = segs[j]!;
      if (Math.max(cx, dx) < x0 || Math.min(cx, dx) > x1 || Math.max(cy, dy) < y0 || Math.min(cy, dy) > y1) continue;
      if (
        side(ax, ay, bx, by, cx, cy) * side(ax, ay, bx, by, dx, dy) < 0 &&
        side(cx, cy, dx, dy, ax, ay) * side(cx, cy, dx, dy, bx, by) < 0
      )
        count++;
    }
  }
  return count;
}

/**
 * The layered layout with containers' rows filled to `fill` of their width and shortened, or
 * (`fill` null) as found; null when the graph is too large for it.
 */
function layered(
  input: SugiyamaInput,
  edges: Array<[number, number]>,
  spacing: SugiyamaSpacing,
  fill: number | null,
): SugiyamaResult | null {
  const steps = input.clusters.map((c, k) => firstStep(input, k, c, spacing));
  let best: Attempt | null = null;
  let extra = 0;
  for (;;) {
    const out = attempt(input, edges, steps, spacing, fill);
    if (out === null) return null;
    const up = out.tooBig.filter((k) => steps[k]! < STEPS.length - 1);
    if (out.tooBig.length === 0) {
      // Everything fits. A container whose rows had no room for some child may, set closer,
      // hold it where it belongs (fewer relations across rows): a step or two more is tried
      // for those, and the fewest crossings win.
      if (best === null || out.crossings < best.crossings || (out.crossings === best.crossings && out.size < best.size)) best = out;
      const more = input.clusters.map((_, k) => k).filter((k) => out.crowded[k] && steps[k]! < STEPS.length - 1);
      if (best.crossings === 0 || extra >= EXTRA_STEPS || more.length === 0 || out.size > EXTRA_STEPS_UP_TO) break;
      for (const k of more) steps[k]!++;
      extra++;
      continue;
    }
    if (up.length === 0) {
      if (best) break;
      const failed = new Set(out.tooBig);
      return { nodes: out.nodes, clusters: out.clusters.map((b, k) => (failed.has(k) ? null : b)) };
    }
    for (const k of up) steps[k]!++;
  }
  return { nodes: best.nodes, clusters: best.clusters };
}

/** Further steps tried once everything fits, for graphs of at most this many nodes + dummies. */
const EXTRA_STEPS = 2;
const EXTRA_STEPS_UP_TO = 300;

function uniqueEdges(input: SugiyamaInput): Array<[number, number]> {
  const n = input.nodes.length;
  const seen = new Set<number>();
  const out: Array<[number, number]> = [];
  for (const [a, b] of input.edges) {
    if (a === b || a < 0 || b < 0 || a >= n || b >= n) continue;
    const key = a < b ? a * n + b : b * n + a;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push([a, b]);
  }
  return out;
}

function childSize(node: SugiyamaNode, step: number): { w: number; h: number } {
  const f = STEPS[step]!.f;
  return {
    w: Math.max(node.minW, Math.min(node.w, Math.round(node.w * f))),
    h: Math.max(node.minH, Math.min(node.h, Math.round(node.h * f))),
  };
}

/** The first step whose children could cover less than the container's inner area. */
function firstStep(input: SugiyamaInput, k: number, c: SugiyamaCluster, s: SugiyamaSpacing): number {
  const kids = input.nodes.filter((n) => n.cluster === k);
  const area = (c.maxW - 2 * s.padSide) * (c.maxH - s.padTop - s.padBottom);
  for (let step = 0; step < STEPS.length; step++) {
    const st = STEPS[step]!;
    let need = 0;
    for (const n of kids) {
      const size = childSize(n, step);
      need += (size.w + st.gap) * (size.h + st.rowGap);
    }
    if (need <= 0.8 * area) return step;
  }
  return STEPS.length - 1;
}

interface Attempt {
  nodes: SugiyamaBox[];
  clusters: Array<SugiyamaBox | null>;
  tooBig: number[];
  /** Crossings of the layered graph (with dummies) in the order found; nodes + dummies. */
  crossings: number;
  size: number;
  /** Containers where a child could not have the row it wanted (no room). */
  crowded: boolean[];
}

function attempt(
  input: SugiyamaInput,
  edges: Array<[number, number]>,
  steps: number[],
  sp: SugiyamaSpacing,
  fill: number | null,
): Attempt | null {
  const n = input.nodes.length;
  const C = input.clusters.length;
  const W: number[] = [];
  const H: number[] = [];
  const cl: number[] = [];
  for (const node of input.nodes) {
    const c = node.cluster;
    const size = c >= 0 ? childSize(node, steps[c]!) : { w: node.w, h: node.h };
    W.push(size.w);
    H.push(size.h);
    cl.push(c);
  }

  // 1. Acyclic: edges against the greedy order are reversed.
  const dag = breakCycles(n, edges);

  // 2. Ranks.
  const rowH = new Array(C).fill(0);
  for (let v = 0; v < n; v++) if (cl[v]! >= 0) rowH[cl[v]!] = Math.max(rowH[cl[v]!], H[v]!);
  const {
    rank,
    tooBig: full,
    crowded,
  } = assignRanks(n, dag, cl, W, C, fill !== null, {
    capacity: (c) => (input.clusters[c]!.maxW - 2 * sp.padSide) * (fill ?? 1),
    gap: (c) => STEPS[steps[c]!]!.gap,
    rows: (c) => {
      const rg = STEPS[steps[c]!]!.rowGap;
      return Math.floor((input.clusters[c]!.maxH - sp.padTop - sp.padBottom + rg) / (rowH[c] + rg));
    },
  });
  if (full.length > 0) {
    // Only the containers too full are reported; the others have no box yet.
    return { nodes: [], clusters: input.clusters.map(() => ({ x: 0, y: 0, w: 0, h: 0 })), tooBig: full, crossings: 0, size: 0, crowded };
  }

  // 3. Dummies and fillers.
  const g = buildLayers(n, dag, rank, cl, W, H, C);
  if (g.count > MAX_NODES) return null;

  // 4. Order.
  const crossings = orderLayers(g, C);

  // 5. Coordinates.
  const x = assignX(
    g,
    C,
    input.clusters,
    sp,
    (c) => STEPS[steps[c]!]!.gap,
    (c) => STEPS[steps[c]!]!.f < 1,
  );
  const ys = assignY(g, C, sp, (c) => STEPS[steps[c]!]!.rowGap, x);
  // Whole units: floor keeps every whole-unit separation and never widens a row.
  const nodes: SugiyamaBox[] = [];
  for (let v = 0; v < n; v++) nodes.push({ x: Math.floor(x.pos[v]! + 1e-6), y: ys.y[v]!, w: W[v]!, h: H[v]! });
  const clusters: Array<SugiyamaBox | null> = [];
  const tooBig: number[] = [];
  for (let c = 0; c < C; c++) {
    if (!g.span[c]) {
      clusters.push(null);
      continue;
    }
    let x0 = Infinity;
    let x1 = -Infinity;
    for (let v = 0; v < n; v++) {
      if (cl[v] !== c) continue;
      x0 = Math.min(x0, nodes[v]!.x);
      x1 = Math.max(x1, nodes[v]!.x + nodes[v]!.w);
    }
    const info = input.clusters[c]!;
    const left = Math.min(x0 - sp.padSide, Math.ceil(x.left[c]! - 1e-6));
    const right = Math.max(x1 + sp.padSide, left + info.minW);
    const top = ys.top[c]!;
    const bottom = Math.max(ys.bottom[c]!, top + info.minH);
    const box = { x: left, y: top, w: right - left, h: bottom - top };
    if (box.w > info.maxW || box.h > info.maxH) tooBig.push(c);
    clusters.push(box);
  }
  return { nodes, clusters, tooBig, crossings, size: g.count, crowded };
}

// ---------------------------------------------------------------------------------------------
// 1. Cycles

/** For each of `n` nodes, the heads of its edges and the tails of the edges into it, in edge order. */
function adjacency(n: number, edges: ReadonlyArray<[number, number]>): [number[][], number[][]] {
  const outs: number[][] = Array.from({ length: n }, () => []);
  const ins: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    outs[a]!.push(b);
    ins[b]!.push(a);
  }
  return [outs, ins];
}

/** Edges oriented along the Eades–Lin–Smyth order (sinks last, sources first, then largest out − in). */
function breakCycles(n: number, edges: Array<[number, number]>): Array<[number, number]> {
  const [outs, ins] = adjacency(n, edges);
  const outDeg = Int32Array.from(outs, (l) => l.length);
  const inDeg = Int32Array.from(ins, (l) => l.length);
  const gone = new Uint8Array(n);
  const head: number[] = [];
  const tail: number[] = [];
  let left = n;
  const remove = (v: number) => {
    gone[v] = 1;
    left--;
    for (const u of outs[v]!) if (!gone[u]) inDeg[u]!--;
    for (const u of ins[v]!) if (!gone[u]) outDeg[u]!--;
  };
  while (left > 0) {
    let progress = true;
    while (progress) {
      progress = false;
      for (let v = 0; v < n; v++) {
        if (gone[v]) continue;
        if (outDeg[v] === 0) {
          tail.push(v);
          remove(v);
          progress = true;
        } else if (inDeg[v] === 0) {
          head.push(v);
          remove(v);
          progress = true;
        }
      }
    }
    if (left === 0) break;
    let best = -1;
    let bestDelta = -Infinity;
    for (let v = 0; v < n; v++) {
      if (gone[v]) continue;
      const d = outDeg[v]! - inDeg[v]!;
      if (d > bestDelta) {
        bestDelta = d;
        best = v;
      }
    }
    head.push(best);
    remove(best);
  }
  const place = new Int32Array(n);
  head.forEach((v, i) => {
    place[v] = i;
  });
  tail.reverse().forEach((v, i) => {
    place[v] = head.length + i;
  });
  return edges.map(([a, b]) => (place[a]! < place[b]! ? [a, b] : [b, a]));
}

// ---------------------------------------------------------------------------------------------
// 2. Ranks

interface RowLimits {
  /** Inner width a container's row may fill, the gap between its children, and its number of rows. */
  capacity: (c: number) => number;
  gap: (c: number) => number;
  rows: (c: number) => number;
}

/**
 * Ranks (rows) of the nodes. A container's children get rows of their own first (as the
 * relations among them and their longest-path ranks order them, within the container's width
 * and height); the container then moves as one block among the other nodes. A relation the
 * block's rows cannot respect is drawn upwards or across a row. `tooBig`: containers whose
 * children do not fit even so.
 */
function assignRanks(
  n: number,
  dag: Array<[number, number]>,
  cl: number[],
  W: number[],
  C: number,
  shorten: boolean,
  lim: RowLimits,
): { rank: Int32Array; tooBig: number[]; crowded: boolean[] } {
  const [succs, preds] = adjacency(n, dag);
  // Topological order (Kahn, input order on ties) and longest path from the sources.
  const waiting = Int32Array.from(preds, (l) => l.length);
  const topo: number[] = [];
  for (let v = 0; v < n; v++) if (waiting[v] === 0) topo.push(v);
  const r0 = new Int32Array(n);
  for (let i = 0; i < topo.length; i++) {
    const v = topo[i]!;
    for (const u of succs[v]!) {
      r0[u] = Math.max(r0[u]!, r0[v]! + 1);
      if (--waiting[u]! === 0) topo.push(u);
    }
  }
  relax(r0, topo, preds, succs, () => true);

  // Rows inside each container.
  const kidsOf: number[][] = Array.from({ length: C }, () => []);
  for (let v = 0; v < n; v++) if (cl[v]! >= 0) kidsOf[cl[v]!]!.push(v);
  const iota = new Int32Array(n);
  const tooBig: number[] = [];
  // Containers where a child did not get the row it wanted for lack of room.
  const crowded: boolean[] = new Array(C).fill(false);
  for (let c = 0; c < C; c++) {
    const kids = kidsOf[c]!;
    if (kids.length === 0) continue;
    let min0 = Infinity;
    for (const k of kids) min0 = Math.min(min0, r0[k]!);
    const sorted = [...kids].sort((a, b) => r0[a]! - r0[b]! || a - b);
    let moved = false;
    const rowsFor = (target: (k: number) => number, intra: boolean): Map<number, number> | null => {
      moved = false;
      const used: number[] = [];
      const row = new Map<number, number>();
      const fits = (r: number, k: number) => (used[r] ?? 0) === 0 || used[r]! + lim.gap(c) + W[k]! <= lim.capacity(c);
      for (const k of sorted) {
        let lo = 0;
        if (intra) for (const p of preds[k]!) if (row.has(p)) lo = Math.max(lo, row.get(p)! + 1);
        const want = Math.max(lo, target(k));
        // The nearest row with room: above first for a child that relations leave (they then
        // still point down), below first for one they only enter.
        const upFirst = succs[k]!.length > 0;
        let r = -1;
        for (let d = 0; r < 0 && (want - d >= lo || want + d < lim.rows(c)); d++) {
          const tries = d === 0 ? [want] : upFirst ? [want - d, want + d] : [want + d, want - d];
          for (const t of tries) {
            if (t >= lo && t < lim.rows(c) && fits(t, k)) {
              r = t;
              break;
            }
          }
        }
        if (r < 0) return null;
        if (r !== want) moved = true;
        used[r] = (used[r] ?? 0) > 0 ? used[r]! + lim.gap(c) + W[k]! : W[k]!;
        row.set(k, r);
      }
      return row;
    };
    let rows = rowsFor((k) => r0[k]! - min0, true);
    crowded[c] = moved;
    if (!rows) {
      crowded[c] = true;
      rows =
        rowsFor(() => 0, true) ??
        // Rows filled in order: relations among the children may then run across a row or upwards.
        rowsFor(() => 0, false);
    }
    if (!rows) {
      tooBig.push(c);
      continue;
    }
    if (shorten) shortenRows(c, kids, rows, preds, succs, cl, W, lim);
    for (const [k, r] of rows) iota[k] = r;
  }
  if (tooBig.length > 0) return { rank: r0, tooBig, crowded };

  // Containers as blocks among the other nodes: a box related to a container's child goes
  // above the whole container (or below it), as a reader expects of a boundary; children of
  // two containers only need to be in order. Items (boxes, containers) are placed in the order
  // of their first longest-path rank; a relation to an item placed later does not count then.
  const rowsOf = new Int32Array(C);
  for (let v = 0; v < n; v++) if (cl[v]! >= 0) rowsOf[cl[v]!] = Math.max(rowsOf[cl[v]!]!, iota[v]! + 1);
  const itemOf = (v: number) => (cl[v]! >= 0 ? n + cl[v]! : v);
  const off = (v: number) => (cl[v]! >= 0 ? iota[v]! : 0);
  /** Least rank(b) − rank(a) for a relation a→b between different items. */
  const minlen = (a: number, b: number): number => {
    if (cl[a]! < 0 && cl[b]! >= 0) return 1 + iota[b]!;
    if (cl[a]! >= 0 && cl[b]! < 0) return rowsOf[cl[a]!]! - iota[a]!;
    return 1;
  };
  const itemIn: Array<Array<[number, number]>> = Array.from({ length: n + C }, () => []);
  const itemOut: Array<Array<[number, number]>> = Array.from({ length: n + C }, () => []);
  for (const [a, b] of dag) {
    if (itemOf(a) === itemOf(b)) continue;
    itemOut[itemOf(a)]!.push([a, b]);
    itemIn[itemOf(b)]!.push([a, b]);
  }
  const first = new Map<number, number>();
  for (let v = 0; v < n; v++) {
    const it = itemOf(v);
    first.set(it, Math.min(first.get(it) ?? Infinity, r0[v]! * (n + 1) + v));
  }
  const items = [...first.keys()].sort((a, b) => first.get(a)! - first.get(b)!);
  const done = new Uint8Array(n + C);
  const base = new Int32Array(n + C);
  const rankOf = (v: number) => base[itemOf(v)]! + off(v);
  for (const it of items) {
    let b = 0;
    for (const [p, k] of itemIn[it]!) if (done[itemOf(p)]) b = Math.max(b, rankOf(p) + minlen(p, k) - off(k));
    base[it] = b;
    done[it] = 1;
  }
  // Shorter relations: each item moves within what its relations that are kept allow, to the
  // side with more of them (sources down to just above what they use, sinks up).
  for (let pass = 0; pass < 4; pass++) {
    let moved = false;
    for (const list of [items, [...items].reverse()]) {
      for (const it of list) {
        let lo = -Infinity;
        let hi = Infinity;
        let np = 0;
        let ns = 0;
        for (const [p, k] of itemIn[it]!) {
          const need = rankOf(p) + minlen(p, k) - off(k);
          if (need > base[it]!) continue;
          lo = Math.max(lo, need);
          np++;
        }
        for (const [k, q] of itemOut[it]!) {
          const allow = rankOf(q) - minlen(k, q) - off(k);
          if (allow < base[it]!) continue;
          hi = Math.min(hi, allow);
          ns++;
        }
        if (np === 0 && ns === 0) continue;
        let target = base[it]!;
        if (np === 0 || ns > np) target = hi;
        else if (ns === 0 || np > ns) target = lo;
        target = Math.max(lo, Math.min(hi, target));
        if (!Number.isFinite(target) || target === base[it]) continue;
        base[it] = target;
        moved = true;
      }
    }
    if (!moved) break;
  }
  const rank = new Int32Array(n);
  for (let v = 0; v < n; v++) rank[v] = rankOf(v);
  let low = 0;
  for (let v = 0; v < n; v++) low = Math.min(low, rank[v]!);
  for (let v = 0; v < n; v++) rank[v]! -= low;

  // Dense ranks from 0.
  const present = [...new Set(rank)].sort((a, b) => a - b);
  const dense = new Map(present.map((r, i) => [r, i]));
  for (let v = 0; v < n; v++) rank[v] = dense.get(rank[v]!)!;
  return { rank, tooBig, crowded };
}

/**
 * Shorter relations inside a container whose rows are bounded. Rows found first come, first
 * served leave many relations across several rows (the bench's 50-instance diagram: 13 of ~60
 * relations inside its 40-child boundary joined neighbouring rows), which pass the rows between
 * through the gaps of children packed side by side and cross the relations there. Local search:
 * a child moves to another row with room, or trades rows with a child there, while that lowers
 * the rows its relations span (a relation from outside counts as coming from above the first
 * row, one to outside as going below the last), every relation among the children that pointed
 * down still pointing down. Deterministic: children in input order, rows top to bottom, the
 * first improvement taken; at most SHORTEN_PASSES passes.
 */
function shortenRows(
  c: number,
  kids: readonly number[],
  row: Map<number, number>,
  preds: number[][],
  succs: number[][],
  cl: number[],
  W: number[],
  lim: RowLimits,
): void {
  const rows = lim.rows(c);
  const cap = lim.capacity(c);
  const gap = lim.gap(c);
  const used = new Float64Array(rows);
  const count = new Int32Array(rows);
  const byRow: number[][] = Array.from({ length: rows }, () => []);
  kids.forEach((k, i) => {
    const r = row.get(k)!;
    used[r]! += W[k]!;
    count[r]!++;
    byRow[r]!.push(i);
  });
  /** Row r still fits with a child of width `add` in and one of width `remove` out (`net` children more). */
  const fits = (r: number, add: number, remove: number, net: number): boolean =>
    used[r]! + add - remove + Math.max(0, count[r]! + net - 1) * gap <= cap + 1e-9;
  // Relations among the children (by index in kids), and how many come from and go to outside.
  const index = new Map(kids.map((k, i) => [k, i]));
  const up = kids.map((k) => preds[k]!.filter((p) => cl[p] === c).map((p) => index.get(p)!));
  const down = kids.map((k) => succs[k]!.filter((q) => cl[q] === c).map((q) => index.get(q)!));
  const fromOut = kids.map((k, i) => preds[k]!.length - up[i]!.length);
  const toOut = kids.map((k, i) => succs[k]!.length - down[i]!.length);
  const at = kids.map((k) => row.get(k)!);
  // Relations among the children that point down now: they must go on doing so.
  const mustDown = new Set<number>();
  const key = (i: number, j: number) => i * kids.length + j;
  down.forEach((list, i) => {
    for (const j of list) if (at[i]! < at[j]!) mustDown.add(key(i, j));
  });
  /** Where u is with i at `to` and `other` (if any) at `otherTo`. */
  const where = (u: number, other: number, otherTo: number) => (u === other ? otherTo : at[u]!);
  /** Change of the rows i's relations span with i at `to` (and `other` at `otherTo`). */
  const delta = (i: number, to: number, other = -1, otherTo = -1): number => {
    const from = at[i]!;
    let d = (fromOut[i]! - toOut[i]!) * (to - from);
    for (const p of up[i]!) d += Math.abs(to - where(p, other, otherTo)) - Math.abs(from - at[p]!);
    for (const q of down[i]!) d += Math.abs(where(q, other, otherTo) - to) - Math.abs(at[q]! - from);
    return d;
  };
  /** i at `to` (and `other` at `otherTo`) keeps every relation of i that must point down so. */
  const legal = (i: number, to: number, other = -1, otherTo = -1): boolean => {
    for (const p of up[i]!) if (mustDown.has(key(p, i)) && where(p, other, otherTo) >= to) return false;
    for (const q of down[i]!) if (mustDown.has(key(i, q)) && where(q, other, otherTo) <= to) return false;
    return true;
  };
  const move = (i: number, to: number) => {
    const from = at[i]!;
    const w = W[kids[i]!]!;
    used[from]! -= w;
    count[from]!--;
    used[to]! += w;
    count[to]!++;
    at[i] = to;
    const list = byRow[from]!;
    list.splice(list.indexOf(i), 1);
    byRow[to]!.push(i);
  };
  for (let pass = 0; pass < SHORTEN_PASSES; pass++) {
    let improved = false;
    for (let i = 0; i < kids.length; i++) {
      const a = at[i]!;
      const wi = W[kids[i]!]!;
      for (let b = 0; b < rows && at[i] === a; b++) {
        if (b === a) continue;
        if (fits(b, wi, 0, 1) && legal(i, b) && delta(i, b) < 0) {
          move(i, b);
          improved = true;
          break;
        }
        for (const j of byRow[b]!) {
          const wj = W[kids[j]!]!;
          if (!fits(b, wi, wj, 0) || !fits(a, wj, wi, 0)) continue;
          if (!legal(i, b, j, a) || !legal(j, a, i, b)) continue;
          // A relation between the two keeps its span and counts as no change in either delta.
          if (delta(i, b, j, a) + delta(j, a, i, b) < 0) {
            move(i, b);
            move(j, a);
            improved = true;
            break;
          }
        }
      }
    }
    if (!improved) break;
  }
  kids.forEach((k, i) => {
    row.set(k, at[i]!);
  });
}

const SHORTEN_PASSES = 8;

/**
 * Each movable node moves within the ranks its relations allow (only relations that point
 * down count), to the side with more of them: sources to just above what they use, sinks to
 * just below what uses them.
 */
function relax(rank: Int32Array, topo: number[], preds: number[][], succs: number[][], movable: (v: number) => boolean): void {
  // A box related to v alone (a sink only v uses, a source that uses only v) follows v: it does
  // not hold v back.
  const hangsBelow = (u: number, v: number) => succs[u]!.length === 0 && preds[u]!.length === 1 && preds[u]![0] === v && movable(u);
  const hangsAbove = (u: number, v: number) => preds[u]!.length === 0 && succs[u]!.length === 1 && succs[u]![0] === v && movable(u);
  for (let pass = 0; pass < 4; pass++) {
    let moved = false;
    for (const list of [topo, [...topo].reverse()]) {
      for (const v of list) {
        if (!movable(v)) continue;
        const r = rank[v]!;
        let lo = -Infinity;
        let hi = Infinity;
        let np = 0;
        let ns = 0;
        for (const u of preds[v]!) {
          if (rank[u]! >= r || hangsAbove(u, v)) continue;
          lo = Math.max(lo, rank[u]! + 1);
          np++;
        }
        for (const u of succs[v]!) {
          if (rank[u]! <= r || hangsBelow(u, v)) continue;
          hi = Math.min(hi, rank[u]! - 1);
          ns++;
        }
        if (np === 0 && ns === 0) continue;
        let target = r;
        if (np === 0 || ns > np) target = hi;
        else if (ns === 0 || np > ns) target = lo;
        target = Math.max(lo, Math.min(hi, target));
        if (!Number.isFinite(target) || target === r) continue;
        rank[v] = target;
        for (const u of succs[v]!) if (hangsBelow(u, v)) rank[u] = target + 1;
        for (const u of preds[v]!) if (hangsAbove(u, v)) rank[u] = target - 1;
        moved = true;
      }
    }
    if (!moved) break;
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Layers with dummies

interface Layers {
  /** Real nodes come first (0..real-1), then dummies. */
  real: number;
  count: number;
  rank: number[];
  cl: number[];
  w: number[];
  h: number[];
  dummy: boolean[];
  up: number[][];
  down: number[][];
  layers: number[][];
  pos: Int32Array;
  /** Each cluster's first and last rank (null: no children). */
  span: Array<[number, number] | null>;
}

function buildLayers(
  n: number,
  dag: Array<[number, number]>,
  rank0: Int32Array,
  cl0: number[],
  W: number[],
  H: number[],
  C: number,
): Layers {
  const g: Layers = {
    real: n,
    count: n,
    rank: Array.from(rank0),
    cl: [...cl0],
    w: [...W],
    h: [...H],
    dummy: new Array(n).fill(false),
    up: Array.from({ length: n }, () => []),
    down: Array.from({ length: n }, () => []),
    layers: [],
    pos: new Int32Array(0),
    span: new Array(C).fill(null),
  };
  for (let v = 0; v < n; v++) {
    const c = g.cl[v]!;
    if (c < 0) continue;
    const s = g.span[c];
    const r = g.rank[v]!;
    g.span[c] = s ? [Math.min(s[0], r), Math.max(s[1], r)] : [r, r];
  }
  const inside = (c: number, r: number) => c >= 0 && g.span[c] !== null && g.span[c]![0] <= r && r <= g.span[c]![1];
  const addNode = (r: number, c: number): number => {
    const id = g.count++;
    g.rank.push(r);
    g.cl.push(c);
    g.w.push(0);
    g.h.push(0);
    g.dummy.push(true);
    g.up.push([]);
    g.down.push([]);
    return id;
  };
  const link = (a: number, b: number) => {
    g.down[a]!.push(b);
    g.up[b]!.push(a);
  };
  for (const [from, to] of dag) {
    // A relation the ranks could not point down is drawn upwards; one within a row has no
    // dummies and takes no part in the order.
    if (g.rank[from] === g.rank[to]) continue;
    const [a, b] = g.rank[from]! < g.rank[to]! ? [from, to] : [to, from];
    const ra = g.rank[a]!;
    const rb = g.rank[b]!;
    let prev = a;
    for (let r = ra + 1; r < rb; r++) {
      const ca = g.cl[a]!;
      const cb = g.cl[b]!;
      let c = -1;
      if (inside(ca, r) && inside(cb, r)) c = ca === cb || r - ra <= rb - r ? ca : cb;
      else if (inside(ca, r)) c = ca;
      else if (inside(cb, r)) c = cb;
      const d = addNode(r, c);
      link(prev, d);
      prev = d;
      if (g.count > MAX_NODES) return g;
    }
    link(prev, b);
  }
  // A container is present in every row it spans: an empty row of it gets a filler.
  let ranks = 0;
  for (let v = 0; v < g.count; v++) ranks = Math.max(ranks, g.rank[v]! + 1);
  const has = new Set<number>();
  for (let v = 0; v < g.count; v++) if (g.cl[v]! >= 0) has.add(g.cl[v]! * 1_000_003 + g.rank[v]!);
  for (let c = 0; c < C; c++) {
    const s = g.span[c];
    if (!s) continue;
    for (let r = s[0]; r <= s[1]; r++) if (!has.has(c * 1_000_003 + r)) addNode(r, c);
  }
  g.layers = Array.from({ length: ranks }, () => []);
  g.pos = new Int32Array(g.count);
  return g;
}

// ---------------------------------------------------------------------------------------------
// 4. Order

function orderLayers(g: Layers, C: number): number {
  // Initial order: depth-first from the top rows, relations in input order.
  const seen = new Uint8Array(g.count);
  const visit = (start: number) => {
    const stack = [start];
    while (stack.length > 0) {
      const v = stack.pop()!;
      if (seen[v]) continue;
      seen[v] = 1;
      g.layers[g.rank[v]!]!.push(v);
      const next = g.down[v]!;
      for (let i = next.length - 1; i >= 0; i--) if (!seen[next[i]!]) stack.push(next[i]!);
    }
  };
  const roots = Array.from({ length: g.count }, (_, v) => v).sort((a, b) => g.rank[a]! - g.rank[b]! || a - b);
  for (const v of roots) if (!seen[v]) visit(v);
  for (const layer of g.layers) groupClusters(g, layer);
  setPositions(g);
  enforceClusterOrder(g, C);

  const ranks = g.layers.length;
  const big = g.count > 1500;
  const maxSweeps = big ? 8 : 32;
  let best = g.layers.map((l) => [...l]);
  let bestCross = totalCrossings(g);
  let stall = 0;
  for (let sweep = 0; sweep < maxSweeps && bestCross > 0; sweep++) {
    if (sweep % 2 === 0) for (let r = 1; r < ranks; r++) sortLayer(g, r, g.up);
    else for (let r = ranks - 2; r >= 0; r--) sortLayer(g, r, g.down);
    enforceClusterOrder(g, C);
    transpose(g, big ? 2 : 6);
    const cross = totalCrossings(g);
    if (cross < bestCross) {
      bestCross = cross;
      best = g.layers.map((l) => [...l]);
      stall = 0;
    } else if (++stall >= 6) break;
  }
  g.layers = best;
  setPositions(g);
  return bestCross;
}

function setPositions(g: Layers): void {
  for (const layer of g.layers)
    layer.forEach((v, i) => {
      g.pos[v] = i;
    });
}

/** Members of each cluster brought together at the place of the first one. */
function groupClusters(g: Layers, layer: number[]): void {
  const groups = new Map<number, number[]>();
  const units: Array<number | number[]> = [];
  for (const v of layer) {
    const c = g.cl[v]!;
    if (c < 0) {
      units.push(v);
      continue;
    }
    let list = groups.get(c);
    if (!list) {
      list = [];
      groups.set(c, list);
      units.push(list);
    }
    list.push(v);
  }
  layer.length = 0;
  for (const u of units) {
    if (typeof u === 'number') layer.push(u);
    else layer.push(...u);
  }
}

/** Barycentre sort of one layer against its neighbours in `adj`; clusters sorted as blocks. */
function sortLayer(g: Layers, r: number, adj: number[][]): void {
  const layer = g.layers[r]!;
  const bary = new Map<number, number>();
  for (const v of layer) {
    const nb = adj[v]!;
    if (nb.length === 0) continue;
    let s = 0;
    for (const u of nb) s += g.pos[u]!;
    bary.set(v, s / nb.length);
  }
  const keyOf = (v: number) => bary.get(v) ?? g.pos[v]!;
  interface Unit {
    key: number;
    at: number;
    members: number[];
  }
  const units: Unit[] = [];
  const byCluster = new Map<number, Unit>();
  for (const v of layer) {
    const c = g.cl[v]!;
    if (c < 0) {
      units.push({ key: keyOf(v), at: g.pos[v]!, members: [v] });
      continue;
    }
    let u = byCluster.get(c);
    if (!u) {
      u = { key: 0, at: g.pos[v]!, members: [] };
      byCluster.set(c, u);
      units.push(u);
    }
    u.members.push(v);
  }
  for (const u of byCluster.values()) {
    let s = 0;
    let k = 0;
    for (const v of u.members) {
      if (bary.has(v)) {
        s += bary.get(v)!;
        k++;
      }
    }
    u.key = k > 0 ? s / k : u.members.reduce((a, v) => a + g.pos[v]!, 0) / u.members.length;
    u.members.sort((a, b) => keyOf(a) - keyOf(b) || g.pos[a]! - g.pos[b]!);
  }
  units.sort((a, b) => a.key - b.key || a.at - b.at);
  layer.length = 0;
  for (const u of units) layer.push(...u.members);
  layer.forEach((v, i) => {
    g.pos[v] = i;
  });
}

/** One left-to-right order of the clusters, the same in every row (their boxes are rectangles). */
function enforceClusterOrder(g: Layers, C: number): void {
  if (C < 2) return;
  const sum = new Float64Array(C);
  const cnt = new Float64Array(C);
  for (const layer of g.layers) {
    const len = Math.max(1, layer.length);
    for (const v of layer) {
      const c = g.cl[v]!;
      if (c < 0) continue;
      sum[c] += g.pos[v]! / len;
      cnt[c]++;
    }
  }
  const rankOf = new Float64Array(C);
  const order = Array.from({ length: C }, (_, c) => c)
    .filter((c) => cnt[c]! > 0)
    .sort((a, b) => sum[a]! / cnt[a]! - sum[b]! / cnt[b]! || a - b);
  order.forEach((c, i) => {
    rankOf[c] = i;
  });
  for (const layer of g.layers) {
    const blocks = new Map<number, number[]>();
    const slots: Array<number | null> = [];
    for (const v of layer) {
      const c = g.cl[v]!;
      if (c < 0) {
        slots.push(v);
        continue;
      }
      if (!blocks.has(c)) {
        blocks.set(c, []);
        slots.push(null);
      }
      blocks.get(c)!.push(v);
    }
    if (blocks.size < 2) continue;
    const sorted = [...blocks.keys()].sort((a, b) => rankOf[a]! - rankOf[b]!);
    let next = 0;
    layer.length = 0;
    for (const s of slots) {
      if (s === null) layer.push(...blocks.get(sorted[next++]!)!);
      else layer.push(s);
    }
    layer.forEach((v, i) => {
      g.pos[v] = i;
    });
  }
}

/** Crossings between two adjacent rows (by inversion counting). */
function layerCrossings(g: Layers, r: number): number {
  const pairs: Array<[number, number]> = [];
  for (const v of g.layers[r]!) for (const u of g.down[v]!) pairs.push([g.pos[v]!, g.pos[u]!]);
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const size = g.layers[r + 1]!.length + 1;
  const tree = new Int32Array(size + 1);
  let crossings = 0;
  let seen = 0;
  for (const [, q] of pairs) {
    // Number already inserted with position > q.
    let i = q + 1;
    let le = 0;
    while (i > 0) {
      le += tree[i]!;
      i -= i & -i;
    }
    crossings += seen - le;
    seen++;
    for (let j = q + 1; j <= size; j += j & -j) tree[j]!++;
  }
  return crossings;
}

function totalCrossings(g: Layers): number {
  let s = 0;
  for (let r = 0; r + 1 < g.layers.length; r++) s += layerCrossings(g, r);
  return s;
}

/** Crossings among the relations of u and v (u left of v) with the rows above and below. */
function pairCrossings(g: Layers, u: number, v: number): number {
  let c = 0;
  for (const a of g.up[u]!) for (const b of g.up[v]!) if (g.pos[a]! > g.pos[b]!) c++;
  for (const a of g.down[u]!) for (const b of g.down[v]!) if (g.pos[a]! > g.pos[b]!) c++;
  return c;
}

/** Swaps neighbours (both at top level, or both in one cluster) while that removes crossings. */
function transpose(g: Layers, passes: number): void {
  for (let pass = 0; pass < passes; pass++) {
    let improved = false;
    for (const layer of g.layers) {
      for (let i = 0; i + 1 < layer.length; i++) {
        const u = layer[i]!;
        const v = layer[i + 1]!;
        if (g.cl[u] !== g.cl[v]) continue;
        if (pairCrossings(g, v, u) < pairCrossings(g, u, v)) {
          layer[i] = v;
          layer[i + 1] = u;
          g.pos[v] = i;
          g.pos[u] = i + 1;
          improved = true;
        }
      }
    }
    if (!improved) break;
  }
}

// ---------------------------------------------------------------------------------------------
// 5. Coordinates

interface XResult {
  pos: Float64Array;
  left: Float64Array;
  right: Float64Array;
}

function assignX(
  g: Layers,
  C: number,
  clusters: readonly SugiyamaCluster[],
  sp: SugiyamaSpacing,
  kidGap: (c: number) => number,
  squeeze: (c: number) => boolean,
): XResult {
  const N = g.count;
  // Variables: nodes (left edges), then each cluster's left and right wall.
  const L = (c: number) => N + 2 * c;
  const R = (c: number) => N + 2 * c + 1;
  const total = N + 2 * C;
  const width = (v: number) => (v < N ? g.w[v]! : 0);
  const cons: Separation[] = [];
  const filler = (v: number) => g.dummy[v]! && g.up[v]!.length === 0 && g.down[v]!.length === 0;
  // A relation passing a row keeps some room; inside a container whose children had to be made
  // smaller it runs in the gap between two children (so it makes the container no wider).
  const sepNodes = (a: number, b: number, inGap: number, inside: boolean): number => {
    const da = g.dummy[a]!;
    const db = g.dummy[b]!;
    if (filler(a) || filler(b)) return 0;
    if (da && db) return inside ? 0 : DUMMY_DUMMY;
    if (da || db) return inside ? (da ? Math.ceil(inGap / 2) : Math.floor(inGap / 2)) : DUMMY_BOX;
    return inGap;
  };
  const outGap = (v: number) => (g.dummy[v] ? DUMMY_BOX : sp.gap);
  const wallGap = (v: number) => (g.dummy[v] && (squeeze(g.cl[v]!) || filler(v)) ? 0 : sp.padSide);
  for (const layer of g.layers) {
    // Top-level units: a node, or a cluster (its walls).
    let prev: { kind: 'node'; v: number } | { kind: 'cluster'; c: number } | null = null;
    let prevMember = -1;
    for (const v of layer) {
      const c = g.cl[v]!;
      if (c >= 0) {
        if (!(prev && prev.kind === 'cluster' && prev.c === c)) {
          // Entering cluster c.
          if (prev?.kind === 'node') cons.push({ left: prev.v, right: L(c), gap: width(prev.v) + outGap(prev.v) });
          else if (prev?.kind === 'cluster') {
            cons.push({ left: prevMember, right: R(prev.c), gap: width(prevMember) + wallGap(prevMember) });
            cons.push({ left: R(prev.c), right: L(c), gap: sp.gap });
          }
          cons.push({ left: L(c), right: v, gap: wallGap(v) });
          prev = { kind: 'cluster', c };
        } else {
          cons.push({ left: prevMember, right: v, gap: width(prevMember) + sepNodes(prevMember, v, kidGap(c), squeeze(c)) });
        }
        prevMember = v;
        continue;
      }
      if (prev?.kind === 'cluster') {
        cons.push({ left: prevMember, right: R(prev.c), gap: width(prevMember) + wallGap(prevMember) });
        cons.push({ left: R(prev.c), right: v, gap: outGap(v) });
      } else if (prev?.kind === 'node') {
        cons.push({ left: prev.v, right: v, gap: width(prev.v) + sepNodes(prev.v, v, sp.gap, false) });
      }
      prev = { kind: 'node', v };
    }
    if (prev?.kind === 'cluster') cons.push({ left: prevMember, right: R(prev.c), gap: width(prevMember) + wallGap(prevMember) });
  }
  for (let c = 0; c < C; c++) if (g.span[c]) cons.push({ left: L(c), right: R(c), gap: clusters[c]!.minW });
  // Every box of a container keeps the padding from both walls (a row may start with a relation).
  for (let v = 0; v < g.real; v++) {
    const c = g.cl[v]!;
    if (c < 0) continue;
    cons.push({ left: L(c), right: v, gap: sp.padSide });
    cons.push({ left: v, right: R(c), gap: width(v) + sp.padSide });
  }

  // Start: each row packed and centred on 0.
  const desired = new Float64Array(total);
  const weight = new Float64Array(total).fill(1);
  for (const layer of g.layers) {
    let at = 0;
    const start: number[] = [];
    for (let i = 0; i < layer.length; i++) {
      const v = layer[i]!;
      if (i > 0) at += g.dummy[v] || g.dummy[layer[i - 1]!] ? DUMMY_BOX : sp.gap;
      start.push(at);
      at += width(v);
    }
    layer.forEach((v, i) => {
      desired[v] = start[i]! - at / 2;
    });
  }
  for (let c = 0; c < C; c++) {
    weight[L(c)] = 1e-3;
    weight[R(c)] = 1e-3;
  }
  const solver = new SeparationSolver(total, cons);
  let x = solver.solve(desired, weight, false);

  // Pull towards related boxes: majorization steps lowering Σ ω·|centre − centre| (weights
  // ω/|distance|, recomputed each round: the L1 objective of dot, which lines related boxes up
  // rather than averaging them; the first rounds are plain least squares).
  const omega = (a: number, b: number) => (g.dummy[a] && g.dummy[b] ? 8 : g.dummy[a] || g.dummy[b] ? 2 : 1);
  const rounds = N > 1500 ? 8 : N > 500 ? 12 : 20;
  for (let round = 0; round < rounds; round++) {
    const cx = (v: number) => x[v]! + width(v) / 2;
    const l1 = round >= 2;
    for (let v = 0; v < N; v++) {
      let s = 0;
      let w = 0;
      const cv = cx(v);
      for (let side = 0; side < 2; side++) {
        for (const u of side === 0 ? g.up[v]! : g.down[v]!) {
          const cu = cx(u);
          const o = l1 ? omega(u, v) / Math.max(0.5, Math.abs(cu - cv)) : omega(u, v);
          s += o * cu;
          w += o;
        }
      }
      if (w === 0) {
        desired[v] = x[v]!;
        weight[v] = 0.05;
      } else {
        desired[v] = s / w - width(v) / 2;
        weight[v] = w;
      }
    }
    for (let c = 0; c < C; c++) {
      const mid = (x[L(c)]! + x[R(c)]!) / 2;
      desired[L(c)] = mid;
      desired[R(c)] = mid;
    }
    const next = solver.solve(desired, weight);
    let moved = 0;
    for (let v = 0; v < total; v++) moved = Math.max(moved, Math.abs(next[v]! - x[v]!));
    x = next;
    if (moved < 0.05 && l1) break;
  }
  // Normalize to start at 0.
  let min = Infinity;
  for (let v = 0; v < N; v++) if (!g.dummy[v]) min = Math.min(min, x[v]!);
  for (let c = 0; c < C; c++) if (g.span[c]) min = Math.min(min, x[L(c)]!);
  if (!Number.isFinite(min)) min = 0;
  const pos = new Float64Array(N);
  for (let v = 0; v < N; v++) pos[v] = x[v]! - min;
  const left = new Float64Array(C);
  const right = new Float64Array(C);
  for (let c = 0; c < C; c++) {
    left[c] = x[L(c)]! - min;
    right[c] = x[R(c)]! - min;
  }
  // A container pulled wider than it may be: each of its rows is moved as little as it can
  // into the widest box it may have, centred where it was (it only gets narrower, so it meets
  // nothing new); rows that do not fit even packed are packed without room for relations.
  for (let c = 0; c < C; c++) {
    if (!g.span[c] || right[c]! - left[c]! <= clusters[c]!.maxW) continue;
    const maxW = clusters[c]!.maxW;
    const a = Math.round((left[c]! + right[c]! - maxW) / 2);
    let lo = Infinity;
    let hi = -Infinity;
    for (const layer of g.layers) {
      const members = layer.filter((v) => g.cl[v] === c);
      if (members.length === 0) continue;
      const k = members.length;
      // One unit less than allowed: rounding each box to whole units may take it back.
      const desired = [a, ...members.map((v) => pos[v]!), a + maxW - 1];
      const weight = [1e6, ...members.map(() => 1), 1e6];
      const cons: Separation[] = [{ left: 0, right: 1, gap: wallGap(members[0]!) }];
      for (let i = 1; i < k; i++)
        cons.push({ left: i, right: i + 1, gap: width(members[i - 1]!) + sepNodes(members[i - 1]!, members[i]!, kidGap(c), squeeze(c)) });
      cons.push({ left: k, right: k + 1, gap: width(members[k - 1]!) + wallGap(members[k - 1]!) });
      members.forEach((v, i) => {
        if (g.dummy[v]) return;
        cons.push({ left: 0, right: i + 1, gap: sp.padSide });
        cons.push({ left: i + 1, right: k + 1, gap: width(v) + sp.padSide });
      });
      let xs = solveSeparation(desired, weight, cons);
      // The walls weigh a lot but not infinitely: take up what they gave.
      const shift = Math.max(0, a - xs[0]!);
      for (let i = 0; i < xs.length; i++) xs[i]! += shift;
      if (xs[0]! < a - 0.01 || xs[k + 1]! > a + maxW) {
        // Packed without room for relations: boxes only, the relations' dummies in the gaps.
        const real = members.filter((v) => !g.dummy[v]);
        const w = real.reduce((sum, v) => sum + width(v), 0) + (real.length - 1) * kidGap(c);
        let at = a + Math.floor((maxW - w) / 2);
        const place = new Map<number, number>();
        for (const v of real) {
          place.set(v, at);
          at += width(v) + kidGap(c);
        }
        xs = Float64Array.from([a, ...members.map((v) => place.get(v) ?? a + maxW / 2), a + maxW]);
      }
      members.forEach((v, i) => {
        pos[v] = xs[i + 1]!;
        if (!g.dummy[v]) {
          lo = Math.min(lo, pos[v]! - sp.padSide);
          hi = Math.max(hi, pos[v]! + width(v) + sp.padSide);
        }
      });
    }
    left[c] = Math.max(a, Math.floor(lo));
    right[c] = Math.max(left[c]! + clusters[c]!.minW, Math.min(a + maxW, Math.ceil(hi)));
  }
  return { pos, left, right };
}

/** Boxes taller than this do not set their row's height: they reach down beside the next rows. */
const TALL = 24;

interface YResult {
  /** Top of each node (real ones). */
  y: number[];
  /** Each cluster's top and bottom (outer box). */
  top: number[];
  bottom: number[];
}

/**
 * y of each box, rank by rank. A container's rows follow its own rhythm (its children's height
 * and its row gap, room for its title above the first row); the boxes outside containers follow
 * theirs (`layerGap` between rows). Every box also goes below whatever lies above it that it
 * would otherwise meet (a box, or a whole container above it), and below the boxes its
 * relations come from — so containers side by side do not stretch one another, and a tall box
 * reaches down beside the next rows instead of making them all that tall.
 */
function assignY(g: Layers, C: number, sp: SugiyamaSpacing, rowGap: (c: number) => number, x: XResult): YResult {
  const ranks = g.layers.length;
  const y = new Array(g.real).fill(0);
  const top = new Array(C).fill(0);
  const bottom = new Array(C).fill(0);
  // Where the relations into each real box come from (through their dummies).
  const source = (d: number): number[] => {
    const out: number[] = [];
    const stack = [...g.up[d]!];
    while (stack.length > 0) {
      const u = stack.pop()!;
      if (u < g.real) out.push(u);
      else stack.push(...g.up[u]!);
    }
    return out;
  };
  const preds = Array.from({ length: g.real }, (_, v) => source(v));
  // What lies above: horizontal extent and bottom; `cluster`: a child of that container (-1: a
  // box outside containers, -2: a whole container).
  const above: Array<{ x0: number; x1: number; bottom: number; cluster: number }> = [];
  const clear = (x0: number, x1: number, cluster: number, from: number, gap: number): number => {
    let at = from;
    for (const a of above) {
      if (a.x1 + 1 <= x0 || x1 + 1 <= a.x0) continue;
      if (cluster >= 0 ? a.cluster !== cluster : a.cluster >= 0) continue;
      at = Math.max(at, a.bottom + gap);
    }
    return at;
  };
  /**
   * At or below `from`, and below the boxes v's relations come from (a container's own row gap
   * between its children or two containers' children, `layerGap` otherwise).
   */
  const below = (v: number, from: number, first = true): number => {
    let at = from;
    const cv = g.cl[v]!;
    for (const u of preds[v]!) {
      const cu = g.cl[u]!;
      // A container's later rows follow its own rhythm: a box outside it that leads into one
      // of them sits beside the container, and does not stretch it.
      if (cv >= 0 && cu !== cv && !first) continue;
      const gap = cv >= 0 && cu >= 0 ? Math.min(rowGap(cv), rowGap(cu)) : sp.layerGap;
      at = Math.max(at, y[u]! + g.h[u]! + gap);
    }
    return at;
  };
  const rowEnd = new Array(C).fill(0);
  let floor = 0;
  let lastTop = -1;
  // The lowest bottom of the containers whose rows are all above: later rows start below it.
  let ended = -Infinity;
  for (let r = 0; r < ranks; r++) {
    const layer = g.layers[r]!;
    // Boxes outside containers: their own rows, `layerGap` apart.
    const outside = layer.filter((v) => v < g.real && g.cl[v]! < 0);
    if (outside.length > 0) {
      if (lastTop >= 0) {
        let h = 0;
        for (const v of g.layers[lastTop]!) if (v < g.real && g.cl[v]! < 0 && g.h[v]! <= TALL) h = Math.max(h, g.h[v]!);
        floor += h + sp.layerGap;
      }
      floor = Math.max(floor, ended + sp.layerGap);
      let h = 0;
      for (const v of outside) if (g.h[v]! <= TALL) h = Math.max(h, g.h[v]!);
      for (const v of outside) {
        const off = g.h[v]! <= h ? Math.floor((h - g.h[v]!) / 2) : 0;
        y[v] = below(v, clear(x.pos[v]!, x.pos[v]! + g.w[v]!, -1, floor + off, sp.layerGap));
      }
      lastTop = r;
    }
    // Each container's row in this rank.
    for (let c = 0; c < C; c++) {
      const s = g.span[c];
      if (!s || s[0] > r || s[1] < r) continue;
      const kids = layer.filter((v) => v < g.real && g.cl[v] === c);
      let at =
        r === s[0]
          ? clear(x.left[c]!, x.right[c]!, -1, Math.max(floor, ended + sp.layerGap), sp.layerGap) + sp.padTop
          : rowEnd[c] + rowGap(c);
      let h = 0;
      for (const v of kids) h = Math.max(h, g.h[v]!);
      for (const v of kids) at = below(v, at, r === s[0]);
      if (r === s[0]) top[c] = at - sp.padTop;
      for (const v of kids) y[v] = at + Math.floor((h - g.h[v]!) / 2);
      // A row with no child (only relations passing) takes no height.
      rowEnd[c] = kids.length > 0 ? at + h : at - rowGap(c);
    }
    for (const v of layer) {
      if (v < g.real) above.push({ x0: x.pos[v]!, x1: x.pos[v]! + g.w[v]!, bottom: y[v]! + g.h[v]!, cluster: g.cl[v]! });
    }
    for (let c = 0; c < C; c++) {
      if (g.span[c]?.[1] !== r) continue;
      bottom[c] = rowEnd[c] + sp.padBottom;
      ended = Math.max(ended, bottom[c]);
      above.push({ x0: x.left[c]!, x1: x.right[c]!, bottom: bottom[c], cluster: -2 });
    }
  }
  return { y, top, bottom };
}
