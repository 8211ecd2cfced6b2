/**
 * The crossing-minimizing layered layout (src/layout/sugiyama.ts) and its separation solver
 * (src/layout/vpsc.ts) on their own: optimality of the solver, relations pointing down, no
 * crossings where a graph can be drawn without, containers as rectangles that hold their
 * children, fit 100×100 and hold no other box.
 */
import test from 'ava';
import fc from 'fast-check';
import { LAYOUT } from '../src/layout/layout.js';
import { sugiyama, type SugiyamaBox, type SugiyamaInput, type SugiyamaNode } from '../src/layout/sugiyama.js';
import { solveSeparation, type Separation } from '../src/layout/vpsc.js';

const box = (w = 16, h = 8, cluster = -1): SugiyamaNode => ({ w, h, minW: Math.min(w, 12), minH: Math.min(h, 6), cluster });
const cluster = { minW: 24, minH: 8, maxW: 100, maxH: 100 };

/** Crossings of the straight lines between the centres of related boxes. */
function crossings(nodes: SugiyamaBox[], edges: ReadonlyArray<readonly [number, number]>): number {
  const c = (b: SugiyamaBox) => [b.x + b.w / 2, b.y + b.h / 2] as const;
  const orient = (p: readonly number[], q: readonly number[], r: readonly number[]) =>
    (q[0]! - p[0]!) * (r[1]! - p[1]!) - (q[1]! - p[1]!) * (r[0]! - p[0]!);
  let n = 0;
  for (let i = 0; i < edges.length; i++) {
    for (let j = i + 1; j < edges.length; j++) {
      const [a, b] = edges[i]!.map((k) => c(nodes[k]!));
      const [p, q] = edges[j]!.map((k) => c(nodes[k]!));
      const d1 = orient(p!, q!, a!);
      const d2 = orient(p!, q!, b!);
      const d3 = orient(a!, b!, p!);
      const d4 = orient(a!, b!, q!);
      if (d1 * d2 < 0 && d3 * d4 < 0) n++;
    }
  }
  return n;
}

const overlap = (a: SugiyamaBox, b: SugiyamaBox) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const inside = (outer: SugiyamaBox, inner: SugiyamaBox) =>
  inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.w <= outer.x + outer.w && inner.y + inner.h <= outer.y + outer.h;

function checkBoxes(
  t: import('ava').ExecutionContext,
  input: SugiyamaInput,
  out: { nodes: SugiyamaBox[]; clusters: Array<SugiyamaBox | null> },
) {
  for (const b of out.nodes) t.true(Number.isInteger(b.x) && Number.isInteger(b.y), 'whole units');
  for (let i = 0; i < out.nodes.length; i++) {
    for (let j = i + 1; j < out.nodes.length; j++) t.false(overlap(out.nodes[i]!, out.nodes[j]!), `boxes ${i} and ${j} overlap`);
  }
  out.clusters.forEach((c, k) => {
    if (!c) return;
    t.true(c.w <= 100 && c.h <= 100, `container ${k} is ${c.w}×${c.h}`);
    input.nodes.forEach((n, v) => {
      if (n.cluster === k) t.true(inside(c, out.nodes[v]!), `child ${v} inside container ${k}`);
      else t.false(overlap(c, out.nodes[v]!), `box ${v} on container ${k}`);
    });
    out.clusters.forEach((d, l) => {
      if (d && l > k) t.false(overlap(c, d), `containers ${k} and ${l} overlap`);
    });
  });
}

test('separation: the optimum of Σ w·(x − d)² under the constraints (against dual coordinate ascent)', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.double({ min: 0, max: 50, noNaN: true }), fc.double({ min: 0.1, max: 5, noNaN: true })), {
        minLength: 2,
        maxLength: 12,
      }),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 0, max: 8 })), { maxLength: 30 }),
      (vars, raw) => {
        const n = vars.length;
        const cons: Separation[] = [];
        for (const [a, b, gap] of raw) {
          const l = a % n;
          const r = b % n;
          if (l < r) cons.push({ left: l, right: r, gap }); // left < right: no cycle
        }
        const d = vars.map((v) => v[0]);
        const w = vars.map((v) => v[1]);
        const x = solveSeparation(d, w, cons);
        for (const c of cons) if (x[c.right]! < x[c.left]! + c.gap - 1e-6) return false;
        // Hildreth's method converges to the optimum of the same problem.
        const y = Float64Array.from(d);
        const lambda = new Float64Array(cons.length);
        for (let it = 0; it < 5000; it++) {
          cons.forEach((c, k) => {
            let delta = (c.gap - (y[c.right]! - y[c.left]!)) / (1 / w[c.right]! + 1 / w[c.left]!);
            if (lambda[k]! + delta < 0) delta = -lambda[k]!;
            lambda[k]! += delta;
            y[c.right]! += delta / w[c.right]!;
            y[c.left]! -= delta / w[c.left]!;
          });
        }
        const f = (z: ArrayLike<number>) => d.reduce((s, dv, i) => s + w[i]! * (z[i]! - dv) ** 2, 0);
        return f(x) <= f(y) + 1e-6 * (1 + f(y));
      },
    ),
    { numRuns: 200, seed: 7 },
  );
  t.pass();
});

test('layered: relations point down, and a graph drawable without crossings is drawn without', (t) => {
  // Two sources and two sinks given in the order that would cross: a→d, b→c.
  const twist: SugiyamaInput = {
    nodes: [box(), box(), box(), box()],
    clusters: [],
    edges: [
      [0, 3],
      [1, 2],
    ],
  };
  const out = sugiyama(twist, LAYOUT)!;
  t.is(crossings(out.nodes, twist.edges), 0);
  // A binary tree of depth 4, children listed against their parents' order.
  const nodes = Array.from({ length: 31 }, () => box());
  const edges: Array<[number, number]> = [];
  for (let v = 1; v < 31; v++) edges.push([Math.floor((v - 1) / 2), v]);
  edges.reverse();
  const tree = { nodes, clusters: [], edges };
  const laid = sugiyama(tree, LAYOUT)!;
  t.is(crossings(laid.nodes, edges), 0);
  for (const [a, b] of edges) t.true(laid.nodes[a]!.y + laid.nodes[a]!.h <= laid.nodes[b]!.y, `${a} above ${b}`);
  checkBoxes(t, tree, laid);
});

test('layered: a box related to a container’s child goes above or below the whole container', (t) => {
  // person → ui (in the container) → api (in) → db (in); api → external.
  const input: SugiyamaInput = {
    nodes: [box(), box(16, 8, 0), box(16, 8, 0), box(16, 8, 0), box()],
    clusters: [cluster],
    edges: [
      [0, 1],
      [1, 2],
      [2, 3],
      [2, 4],
    ],
  };
  const out = sugiyama(input, LAYOUT)!;
  checkBoxes(t, input, out);
  const c = out.clusters[0]!;
  t.true(out.nodes[0]!.y + out.nodes[0]!.h <= c.y, 'the person above the container');
  t.true(out.nodes[4]!.y >= c.y + c.h, 'the external system below it');
  t.true(out.nodes[1]!.y < out.nodes[2]!.y && out.nodes[2]!.y < out.nodes[3]!.y, 'the flow continues inside');
  t.is(crossings(out.nodes, input.edges), 0);
});

test('layered: 40 children with relations fit a 100×100 container, made smaller as needed; other boxes stay outside', (t) => {
  const nodes: SugiyamaNode[] = [box(20, 8), box(20, 8)];
  for (let k = 0; k < 40; k++) nodes.push(box(22, 8, 0));
  nodes.push(box(20, 8), box(20, 8));
  const edges: Array<[number, number]> = [
    [0, 2],
    [1, 3],
  ];
  for (let k = 0; k < 40; k++) {
    if (k >= 6) edges.push([2 + (k % 6), 2 + k]);
    if (k >= 20) edges.push([2 + k - 14, 2 + k]);
  }
  edges.push([2 + 30, 42], [2 + 35, 43]);
  const input = { nodes, clusters: [cluster], edges };
  const out = sugiyama(input, LAYOUT)!;
  t.truthy(out.clusters[0]);
  checkBoxes(t, input, out);
});

test("layered: a container's rows are shortened: 10 chains of 4 children (more per rank than fit a row) cross at most 18 times as straight lines (12; 57 with the rows first come, first served)", (t) => {
  const nodes: SugiyamaNode[] = [];
  const edges: Array<[number, number]> = [];
  for (let c = 0; c < 10; c++) {
    for (let k = 0; k < 4; k++) nodes.push(box(16 + (c % 3) * 4, 8, 0));
    for (let k = 0; k < 3; k++) edges.push([c * 4 + k, c * 4 + k + 1]);
  }
  for (let c = 0; c < 10; c++) edges.push([c * 4 + 1, ((c * 7 + 3) % 10) * 4 + 3]);
  nodes.push(box(), box());
  for (let c = 0; c < 10; c += 2) edges.push([40 + (c % 4 === 0 ? 0 : 1), c * 4]);
  const input: SugiyamaInput = { nodes, clusters: [cluster], edges };
  const out = sugiyama(input, LAYOUT)!;
  checkBoxes(t, input, out);
  // Relations among the children still point down.
  for (const [a, b] of edges) if (a < 40 && b < 40) t.true(out.nodes[a]!.y < out.nodes[b]!.y, `${a} above ${b}`);
  const n = crossings(out.nodes, edges);
  t.true(n <= 18, `${n} crossings`);
});

test('layered: two containers side by side keep their children apart and one order in every row', (t) => {
  const nodes: SugiyamaNode[] = [];
  const edges: Array<[number, number]> = [];
  for (let c = 0; c < 2; c++) for (let k = 0; k < 6; k++) nodes.push(box(18, 8, c));
  for (let c = 0; c < 2; c++) for (let k = 0; k < 5; k++) edges.push([c * 6 + k, c * 6 + k + 1]);
  edges.push([1, 9], [8, 3], [4, 11]);
  const input = { nodes, clusters: [cluster, cluster], edges };
  const out = sugiyama(input, LAYOUT)!;
  checkBoxes(t, input, out);
});

test('layered: random graphs with containers — no overlaps, children inside, containers within 100×100', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 25 }),
      fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 3 }),
      fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 60 }),
      (leaves, sizes, raw) => {
        const nodes: SugiyamaNode[] = [];
        for (let i = 0; i < leaves; i++) nodes.push(box(16 + (i % 3) * 6));
        sizes.forEach((k, c) => {
          for (let i = 0; i < k; i++) nodes.push(box(16 + (i % 4) * 5, 8, c));
        });
        const edges = raw.map(([a, b]) => [a % nodes.length, b % nodes.length] as [number, number]);
        const input = { nodes, clusters: sizes.map(() => cluster), edges };
        const out = sugiyama(input, LAYOUT);
        if (!out) return true;
        let ok = true;
        const fail = () => {
          ok = false;
        };
        const tt = { true: (v: boolean) => v || fail(), false: (v: boolean) => !v || fail() } as unknown as import('ava').ExecutionContext;
        checkBoxes(tt, input, out);
        return ok;
      },
    ),
    { numRuns: 150, seed: 3 },
  );
  t.pass();
});
