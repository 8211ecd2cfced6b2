/**
 * Measuring a drawn diagram from the browser's own geometry (issue 25's acceptance counts), and
 * Graphviz `dot`'s drawing of the same graph as the yardstick for crossings.
 *
 * `geometryInPage` runs in the page: every box's outline (`getBBox` of its body), every
 * relation's path sampled along its length (`getPointAtLength`), every label's box, and each
 * name's lines with the width of the words broken across them (`getComputedTextLength`).
 * `countProblems` turns that into the counts; `dotCrossings` lays the same boxes and relations
 * out with dot and counts the crossings of its edges the same way.
 */
import type { Page } from 'playwright-core';

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Whether a polyline (its corners' curves taken as corners) passes through the box shrunk by `inset`. */
export function passesThrough(points: ReadonlyArray<{ x: number; y: number }>, b: Box, inset: number): boolean {
  return points.some((p, k) => {
    if (k === 0) return false;
    const q = points[k - 1]!;
    return (
      Math.max(p.x, q.x) > b.x + inset &&
      Math.min(p.x, q.x) < b.x + b.w - inset &&
      Math.max(p.y, q.y) > b.y + inset &&
      Math.min(p.y, q.y) < b.y + b.h - inset
    );
  });
}

export interface DrawnBox extends Box {
  id: string;
  parent: string | null;
  container: boolean;
  /** A boundary's title (name and type), else null. */
  title: Box | null;
  /** Words broken across two lines of the name although they fit the box. */
  brokenWords: string[];
}

export interface DrawnRelation {
  id: string;
  from: string;
  to: string;
  points: Array<[number, number]>;
}

export interface Geometry {
  boxes: DrawnBox[];
  relations: DrawnRelation[];
  labels: Array<Box & { id: string }>;
}

/** Runs in the page (a string, so that no transpiler helper leaks into it); `names`: component id → name. */
const IN_PAGE = `(names) => {
  const svg = document.querySelector('svg.c4-diagram');
  const bbox = (el) => { const b = el.getBBox(); return { x: b.x, y: b.y, w: b.width, h: b.height }; };
  const boxes = [...svg.querySelectorAll('g[data-kind="instance"]')].map((g) => {
    const outline = bbox(g.querySelector('rect.body'));
    const container = g.dataset.container === 'true';
    const brokenWords = [];
    const name = names[g.dataset.component] || null;
    const lines = [...g.querySelectorAll('text.name')].map((t) => t.textContent);
    if (!container && name !== null && lines.length > 1) {
      // Walk the name along the drawn lines: a break not at white space splits a word.
      let at = 0;
      for (let i = 0; i < lines.length - 1; i++) {
        const line = lines[i];
        if (line.endsWith('…')) break;
        at = name.indexOf(line, at);
        if (at < 0) break;
        at += line.length;
        if (at < name.length && !/\\s/.test(name[at]) && at > 0 && !/\\s/.test(name[at - 1])) {
          let start = at;
          while (start > 0 && !/\\s/.test(name[start - 1])) start--;
          let end = at;
          while (end < name.length && !/\\s/.test(name[end])) end++;
          const word = name.slice(start, end);
          const probe = document.createElementNS('http://www.w3.org/2000/svg', 'text');
          probe.setAttribute('class', 'name');
          probe.textContent = word;
          g.appendChild(probe);
          const width = probe.getComputedTextLength();
          probe.remove();
          if (width <= outline.w - 16) brokenWords.push(word);
        }
      }
    }
    const titleText = container ? g.querySelector('text.name') : null;
    return {
      id: g.dataset.id,
      parent: g.dataset.parent || null,
      container,
      title: titleText ? bbox(titleText) : null,
      brokenWords,
      ...outline,
    };
  });
  const relations = [...svg.querySelectorAll('g.relation')].map((g) => {
    const path = g.querySelector('path, line, polyline');
    const length = path.getTotalLength();
    const points = [];
    for (let s = 0; s < length; s += 2) { const p = path.getPointAtLength(s); points.push([p.x, p.y]); }
    const end = path.getPointAtLength(length);
    points.push([end.x, end.y]);
    return { id: g.dataset.id, from: g.dataset.from, to: g.dataset.to, points };
  });
  const labels = [...svg.querySelectorAll('g.relation-label')].map((g) => ({ id: g.dataset.id, ...bbox(g) }));
  return { boxes, relations, labels };
}`;

export async function geometryInPage(page: Page, names: Record<string, string>): Promise<Geometry> {
  return page.evaluate(`(${IN_PAGE})(${JSON.stringify(names)})`) as Promise<Geometry>;
}

const overlaps = (a: Box, b: Box, tolerance = 0.5) =>
  a.x + tolerance < b.x + b.w && b.x + tolerance < a.x + a.w && a.y + tolerance < b.y + b.h && b.y + tolerance < a.y + a.h;

const inside = (outer: Box, inner: Box) =>
  inner.x >= outer.x - 0.5 &&
  inner.y >= outer.y - 0.5 &&
  inner.x + inner.w <= outer.x + outer.w + 0.5 &&
  inner.y + inner.h <= outer.y + outer.h + 0.5;

/** True when the segment p→q passes through the interior of `r` shrunk by `shrink` (Liang–Barsky). */
function segmentThrough(p: [number, number], q: [number, number], r: Box, shrink = 2): boolean {
  const x0 = r.x + shrink;
  const x1 = r.x + r.w - shrink;
  const y0 = r.y + shrink;
  const y1 = r.y + r.h - shrink;
  if (x1 <= x0 || y1 <= y0) return false;
  let t0 = 0;
  let t1 = 1;
  const dx = q[0] - p[0];
  const dy = q[1] - p[1];
  for (const [pp, qq] of [
    [-dx, p[0] - x0],
    [dx, x1 - p[0]],
    [-dy, p[1] - y0],
    [dy, y1 - p[1]],
  ] as const) {
    if (pp === 0) {
      if (qq <= 0) return false;
    } else {
      const t = qq / pp;
      if (pp < 0) t0 = Math.max(t0, t);
      else t1 = Math.min(t1, t);
      if (t0 >= t1) return false;
    }
  }
  return t1 - t0 > 1e-9;
}

/**
 * A sampled line as few segments as it has: points where it goes on straight are dropped
 * (a routed relation is a handful of straight legs and small rounded corners).
 */
function thin(points: Array<[number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const p of points) {
    const last = out[out.length - 1];
    if (last && Math.abs(p[0] - last[0]) + Math.abs(p[1] - last[1]) < 0.5) continue;
    if (out.length >= 2) {
      const a = out[out.length - 2]!;
      const b = out[out.length - 1]!;
      const ux = b[0] - a[0];
      const uy = b[1] - a[1];
      const vx = p[0] - b[0];
      const vy = p[1] - b[1];
      const turn = Math.abs(ux * vy - uy * vx) / (Math.hypot(ux, uy) * Math.hypot(vx, vy));
      if (turn < 0.02 && ux * vx + uy * vy > 0) out.pop();
    }
    out.push(p);
  }
  return out;
}

type Pt = [number, number];

/** Two lines closer than this (px) touch: they are drawn on top of each other there. */
const CONTACT = 0.75;

function nearestOnSegment(p: Pt, a: Pt, b: Pt): { d: number; t: number } {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const len2 = dx * dx + dy * dy;
  const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2));
  return { d: Math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy), t };
}

/**
 * The part [t0, t1] of segment p→q that lies within CONTACT of segment a→b, or null. The
 * distance to a segment is convex along a segment, so that part is one interval: found by
 * ternary search for the nearest point and bisection for its ends.
 */
function contactInterval(p: Pt, q: Pt, a: Pt, b: Pt): [number, number] | null {
  const at = (t: number): number => nearestOnSegment([p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])], a, b).d;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const m1 = lo + (hi - lo) / 3;
    const m2 = hi - (hi - lo) / 3;
    if (at(m1) <= at(m2)) hi = m2;
    else lo = m1;
  }
  const tMin = (lo + hi) / 2;
  if (at(tMin) > CONTACT) return null;
  const edge = (inside: number, outside: number): number => {
    if (at(outside) <= CONTACT) return outside;
    for (let i = 0; i < 50; i++) {
      const m = (inside + outside) / 2;
      if (at(m) <= CONTACT) inside = m;
      else outside = m;
    }
    return inside;
  };
  return [edge(tMin, 0), edge(tMin, 1)];
}

/**
 * Which side of line `b` point p lies on (+1 or -1), judged by b's segment nearest to p (at a
 * corner of b, by the bisector of its two segments' normals); null when that nearest point is one
 * of b's ends (p is beyond the line, on neither side).
 */
function sideOf(p: Pt, b: Pt[]): number | null {
  let best = Infinity;
  let at = -1;
  let tAt = 0;
  for (let j = 1; j < b.length; j++) {
    const { d, t } = nearestOnSegment(p, b[j - 1]!, b[j]!);
    if (d < best) {
      best = d;
      at = j;
      tAt = t;
    }
  }
  if (at < 0 || (at === 1 && tAt <= 0) || (at === b.length - 1 && tAt >= 1)) return null;
  // The normal on the positive side of segment j (cross(direction, normal) > 0), unit length.
  const normal = (j: number): Pt => {
    const dx = b[j]![0] - b[j - 1]![0];
    const dy = b[j]![1] - b[j - 1]![1];
    const len = Math.hypot(dx, dy) || 1;
    return [-dy / len, dx / len];
  };
  let n = normal(at);
  let origin = b[at - 1]!;
  if (tAt <= 0 || tAt >= 1) {
    // Nearest at a corner: the bisector of the normals of the segments meeting there.
    const other = tAt <= 0 ? at - 1 : at + 1;
    const m = normal(other);
    if (Math.hypot(n[0] + m[0], n[1] + m[1]) > 1e-9) n = [n[0] + m[0], n[1] + m[1]];
    origin = tAt <= 0 ? b[at - 1]! : b[at]!;
  }
  const side = (p[0] - origin[0]) * n[0] + (p[1] - origin[1]) * n[1];
  return side === 0 ? null : Math.sign(side);
}

/**
 * Crossings of line `a` with line `b`. Where the two touch (come within CONTACT px: they cross
 * there, or run on top of each other for a while), `a` is looked at just before and just after
 * the touching stretch: it crossed `b` when it comes out on the other side of `b` than it went
 * in. One crossing per such stretch. Touching at an end of either line is no crossing.
 */
function crossingsOf(a: Pt[], b: Pt[]): number {
  const cum = [0];
  for (let i = 1; i < a.length; i++) cum.push(cum[i - 1]! + Math.hypot(a[i]![0] - a[i - 1]![0], a[i]![1] - a[i - 1]![1]));
  const total = cum[cum.length - 1]!;
  const pointAt = (s: number): Pt => {
    let i = 1;
    while (i < a.length - 1 && cum[i]! < s) i++;
    const len = cum[i]! - cum[i - 1]!;
    const t = len === 0 ? 0 : (s - cum[i - 1]!) / len;
    return [a[i - 1]![0] + t * (a[i]![0] - a[i - 1]![0]), a[i - 1]![1] + t * (a[i]![1] - a[i - 1]![1])];
  };
  // Touching stretches as intervals of arc length along a.
  const runs: Array<[number, number]> = [];
  for (let i = 1; i < a.length; i++) {
    const p = a[i - 1]!;
    const q = a[i]!;
    for (let j = 1; j < b.length; j++) {
      const u = b[j - 1]!;
      const v = b[j]!;
      if (
        Math.min(p[0], q[0]) > Math.max(u[0], v[0]) + CONTACT ||
        Math.min(u[0], v[0]) > Math.max(p[0], q[0]) + CONTACT ||
        Math.min(p[1], q[1]) > Math.max(u[1], v[1]) + CONTACT ||
        Math.min(u[1], v[1]) > Math.max(p[1], q[1]) + CONTACT
      )
        continue;
      const iv = contactInterval(p, q, u, v);
      if (!iv) continue;
      const len = cum[i]! - cum[i - 1]!;
      runs.push([cum[i - 1]! + iv[0] * len, cum[i - 1]! + iv[1] * len]);
    }
  }
  if (runs.length === 0) return 0;
  runs.sort((x, y) => x[0] - y[0]);
  const merged: Array<[number, number]> = [];
  for (const r of runs) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  let n = 0;
  for (const [s0, s1] of merged) {
    if (s0 <= 0.5 || s1 >= total - 0.5) continue;
    const before = sideOf(pointAt(s0 - 0.5), b);
    const after = sideOf(pointAt(s1 + 0.5), b);
    if (before !== null && after !== null && before !== after) n++;
  }
  return n;
}

/**
 * Crossings between the lines of different relations: one for every place where one line goes
 * from one side of another to its other side. Two lines drawn on top of each other for a stretch
 * (routes sharing a channel or a corner) cross once if they leave it on the other sides than they
 * came in, and not at all otherwise: their sampled points zigzag across each other there, which
 * a count of intersecting segment pairs took for dozens of crossings.
 */
export function countCrossings(lines: Array<Array<[number, number]>>): number {
  const thinned = lines.map((l) => thin(l));
  const boxes = thinned.map((l) => {
    let x0 = Infinity;
    let y0 = Infinity;
    let x1 = -Infinity;
    let y1 = -Infinity;
    for (const [x, y] of l) {
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      x1 = Math.max(x1, x);
      y1 = Math.max(y1, y);
    }
    return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
  });
  let crossings = 0;
  for (let i = 0; i < thinned.length; i++) {
    for (let j = i + 1; j < thinned.length; j++) {
      if (thinned[i]!.length < 2 || thinned[j]!.length < 2 || !overlaps(boxes[i]!, boxes[j]!, -2)) continue;
      crossings += crossingsOf(thinned[i]!, thinned[j]!);
    }
  }
  return crossings;
}

export interface Problems {
  relationsThroughBoxes: string[];
  labelOverlaps: string[];
  brokenWords: string[];
  childrenOutside: string[];
  overlappingBoxes: string[];
  crossings: number;
}

export function countProblems(g: Geometry): Problems {
  const byId = new Map(g.boxes.map((b) => [b.id, b]));
  const relationsThroughBoxes: string[] = [];
  for (const r of g.relations) {
    const exempt = new Set([r.from, r.to, byId.get(r.from)?.parent, byId.get(r.to)?.parent]);
    for (const b of g.boxes) {
      if (exempt.has(b.id)) continue;
      for (let i = 1; i < r.points.length; i++) {
        if (segmentThrough(r.points[i - 1]!, r.points[i]!, b)) {
          relationsThroughBoxes.push(`${r.id} through ${b.id}`);
          break;
        }
      }
    }
  }
  const labelOverlaps: string[] = [];
  for (let i = 0; i < g.labels.length; i++) {
    const l = g.labels[i]!;
    for (let j = i + 1; j < g.labels.length; j++)
      if (overlaps(l, g.labels[j]!)) labelOverlaps.push(`label ${l.id} on label ${g.labels[j]!.id}`);
    for (const b of g.boxes) {
      const solid = b.container ? b.title : b;
      if (solid && overlaps(l, solid)) labelOverlaps.push(`label ${l.id} on ${b.container ? 'the title of ' : ''}${b.id}`);
    }
  }
  const childrenOutside = g.boxes.filter((b) => b.parent && byId.get(b.parent) && !inside(byId.get(b.parent)!, b)).map((b) => b.id);
  const overlappingBoxes: string[] = [];
  for (let i = 0; i < g.boxes.length; i++) {
    for (let j = i + 1; j < g.boxes.length; j++) {
      const a = g.boxes[i]!;
      const b = g.boxes[j]!;
      if (a.parent === b.id || b.parent === a.id) continue;
      if (overlaps(a, b)) overlappingBoxes.push(`${a.id} and ${b.id}`);
    }
  }
  return {
    relationsThroughBoxes,
    labelOverlaps,
    brokenWords: g.boxes.flatMap((b) => b.brokenWords.map((w) => `${b.id}: ${w}`)),
    childrenOutside,
    overlappingBoxes,
    crossings: countCrossings(g.relations.map((r) => r.points)),
  };
}

/** The edges dot draws for the same boxes (sizes in px), boundaries as clusters, and their crossings. */
export async function dotCrossings(g: Geometry, labels: ReadonlyMap<string, string>): Promise<number> {
  const { Graphviz } = await import('@hpcc-js/wasm-graphviz');
  const graphviz = await Graphviz.load();
  const q = (s: string) => JSON.stringify(s);
  const inch = (px: number) => (px / 72).toFixed(3);
  const lines: string[] = ['digraph G {', 'compound=true; node [shape=box fixedsize=true label=""];'];
  const kids = new Map<string, DrawnBox[]>();
  for (const b of g.boxes) if (b.parent) kids.set(b.parent, [...(kids.get(b.parent) ?? []), b]);
  const node = (b: DrawnBox) => `${q(b.id)} [width=${inch(b.w)} height=${inch(b.h)}];`;
  const anchor = new Map<string, string>();
  for (const b of g.boxes) {
    if (b.parent) continue;
    if (!b.container) lines.push(node(b));
    else {
      const children = kids.get(b.id) ?? [];
      lines.push(`subgraph ${q(`cluster_${b.id}`)} {`);
      if (children.length === 0) lines.push(`${q(b.id)} [width=${inch(b.w)} height=${inch(b.h)}];`);
      for (const k of children) lines.push(node(k));
      lines.push('}');
      if (children.length > 0) anchor.set(b.id, children[0]!.id);
    }
  }
  for (const r of g.relations) {
    const from = anchor.get(r.from) ?? r.from;
    const to = anchor.get(r.to) ?? r.to;
    const extra = [
      anchor.has(r.from) ? `ltail=${q(`cluster_${r.from}`)}` : '',
      anchor.has(r.to) ? `lhead=${q(`cluster_${r.to}`)}` : '',
      labels.get(r.id) ? `label=${q(labels.get(r.id)!)}` : '',
    ].filter((s) => s !== '');
    lines.push(`${q(from)} -> ${q(to)} [${extra.join(' ')}];`);
  }
  lines.push('}');
  const out = JSON.parse(graphviz.layout(lines.join('\n'), 'json', 'dot')) as {
    edges?: Array<{ _draw_?: Array<{ op: string; points?: Array<[number, number]> }> }>;
  };
  const curves: Array<Array<[number, number]>> = [];
  for (const e of out.edges ?? []) {
    const spline = (e._draw_ ?? []).find((op) => op.op === 'b' || op.op === 'B');
    if (!spline?.points) continue;
    const pts = spline.points;
    const sampled: Array<[number, number]> = [];
    for (let i = 0; i + 3 < pts.length; i += 3) {
      const [p0, p1, p2, p3] = [pts[i]!, pts[i + 1]!, pts[i + 2]!, pts[i + 3]!];
      for (let k = 0; k <= 16; k++) {
        const t = k / 16;
        const m = 1 - t;
        sampled.push([
          m * m * m * p0[0] + 3 * m * m * t * p1[0] + 3 * m * t * t * p2[0] + t * t * t * p3[0],
          m * m * m * p0[1] + 3 * m * m * t * p1[1] + 3 * m * t * t * p2[1] + t * t * t * p3[1],
        ]);
      }
    }
    curves.push(sampled);
  }
  return countCrossings(curves);
}

/** A straight stretch of a drawn relation: horizontal (at y = c, from x = lo to hi) or vertical (at x = c). */
export interface Run {
  id: string;
  horizontal: boolean;
  c: number;
  lo: number;
  hi: number;
}

function run(id: string, p: { x: number; y: number }, q: { x: number; y: number }): Run | null {
  if (Math.abs(p.y - q.y) < 1e-9 && p.x !== q.x) return { id, horizontal: true, c: p.y, lo: Math.min(p.x, q.x), hi: Math.max(p.x, q.x) };
  if (Math.abs(p.x - q.x) < 1e-9 && p.y !== q.y) return { id, horizontal: false, c: p.x, lo: Math.min(p.y, q.y), hi: Math.max(p.y, q.y) };
  return null;
}

/** The straight stretches of routes given as their corners (routeEdges' answer), by relation id. */
export function runsOfRoutes(routes: ReadonlyMap<string, ReadonlyArray<{ x: number; y: number }>>): Run[] {
  const runs: Run[] = [];
  for (const [id, pts] of routes) {
    for (let i = 1; i < pts.length; i++) {
      const r = run(id, pts[i - 1]!, pts[i]!);
      if (r) runs.push(r);
    }
  }
  return runs;
}

/**
 * The straight stretches of every relation of a drawn SVG (`<g class="relation" data-id>` and its
 * `<path>`): the path's `L` pieces; its rounded corners (`Q`) are left out.
 */
export function runsOfSvg(svg: string): Run[] {
  const runs: Run[] = [];
  for (const m of svg.matchAll(/<g class="relation[^"]*" data-id="([^"]*)"[^>]*>(?:<title>[\s\S]*?<\/title>)?<path d="([^"]*)"/g)) {
    const id = m[1]!;
    let at = { x: 0, y: 0 };
    for (const [, command, args] of m[2]!.matchAll(/([MLQ])([^MLQ]*)/g)) {
      const v = args!.trim().split(/[ ,]+/).map(Number);
      const to = { x: v[v.length - 2]!, y: v[v.length - 1]! };
      if (command === 'L') {
        const r = run(id, at, to);
        if (r) runs.push(r);
      }
      at = to;
    }
  }
  return runs;
}

/**
 * Pairs of relations drawn on top of each other: stretches of two relations on one line, or on
 * lines under `within` px apart, that share more than `along` px of it. Sorted by line, each
 * stretch is compared with those of the next `within` px only.
 */
export function drawnOnTop(runs: readonly Run[], within = 1, along = 1): string[] {
  const sorted = [...runs].sort((a, b) => Number(a.horizontal) - Number(b.horizontal) || a.c - b.c);
  const pairs = new Set<string>();
  for (let i = 0; i < sorted.length; i++) {
    const s = sorted[i]!;
    for (let j = i + 1; j < sorted.length; j++) {
      const u = sorted[j]!;
      if (u.horizontal !== s.horizontal || u.c - s.c >= within) break;
      if (u.id === s.id || Math.min(s.hi, u.hi) - Math.max(s.lo, u.lo) <= along) continue;
      pairs.add(s.id < u.id ? `${s.id} and ${u.id}` : `${u.id} and ${s.id}`);
    }
  }
  return [...pairs];
}
