/**
 * A cheap top-to-bottom layered placement (the Sugiyama scheme Graphviz `dot` uses, without
 * dummy nodes or coordinate assignment), used instead of ./sugiyama.ts for groups too large for
 * it (./layout.ts). Linear in nodes and edges per
 * sweep, a fixed number of sweeps, plus sorting each layer:
 * - cycles are broken by a depth-first search in input order (an edge back to a node on the
 *   search path is read reversed);
 * - each node goes into the layer after the deepest of its predecessors (longest path), so
 *   relations point downwards: people at the top, data stores at the bottom;
 * - within a layer, nodes are ordered by the barycentre of their neighbours in the layer
 *   above, then of those in the layer below, alternately (SWEEPS times; ties keep the
 *   previous order), which removes most crossings;
 * - layers are rows `layerGap` apart, as tall as their tallest node; a row's nodes sit `gap`
 *   apart, rows centred on each other. Nothing overlaps.
 */
const SWEEPS = 8;

export interface LayeredSpacing {
  gap: number;
  layerGap: number;
}

/**
 * Top-left corners for boxes of the given sizes, with edges [from, to] as indexes into `sizes`
 * (self edges and out-of-range indexes are ignored). Relative to (0, 0).
 */
export function layeredPlacement(
  sizes: ReadonlyArray<{ w: number; h: number }>,
  edges: ReadonlyArray<readonly [number, number]>,
  spacing: LayeredSpacing,
): Array<{ x: number; y: number }> {
  const n = sizes.length;
  const out: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    if (a === b || a < 0 || b < 0 || a >= n || b >= n) continue;
    out[a]!.push(b);
  }

  // Break cycles: iterative depth-first search; edges to a node still on the path are reversed.
  const state = new Uint8Array(n); // 0 unseen, 1 on path, 2 done
  const preds: number[][] = Array.from({ length: n }, () => []);
  const succs: number[][] = Array.from({ length: n }, () => []);
  const next = new Int32Array(n);
  for (let start = 0; start < n; start++) {
    if (state[start] !== 0) continue;
    const stack = [start];
    state[start] = 1;
    while (stack.length > 0) {
      const v = stack[stack.length - 1]!;
      const list = out[v]!;
      if (next[v]! < list.length) {
        const u = list[next[v]!++]!;
        if (state[u] === 1) {
          preds[v]!.push(u);
          succs[u]!.push(v);
        } else {
          preds[u]!.push(v);
          succs[v]!.push(u);
          if (state[u] === 0) {
            state[u] = 1;
            stack.push(u);
          }
        }
      } else {
        state[v] = 2;
        stack.pop();
      }
    }
  }

  // Longest-path layering in topological order (Kahn).
  const layer = new Int32Array(n);
  const waiting = new Int32Array(n);
  for (let v = 0; v < n; v++) waiting[v] = preds[v]!.length;
  const topo: number[] = [];
  for (let v = 0; v < n; v++) if (waiting[v] === 0) topo.push(v);
  for (let i = 0; i < topo.length; i++) {
    const v = topo[i]!;
    for (const u of succs[v]!) {
      layer[u] = Math.max(layer[u]!, layer[v]! + 1);
      if (--waiting[u]! === 0) topo.push(u);
    }
  }

  // Order within layers: barycentre sweeps, down then up.
  const layers: number[][] = [];
  for (let v = 0; v < n; v++) (layers[layer[v]!] ??= []).push(v);
  const pos = new Float64Array(n);
  const place = (nodes: number[]) => {
    nodes.forEach((v, i) => {
      pos[v] = i;
    });
  };
  for (const nodes of layers) if (nodes) place(nodes);
  const key = new Float64Array(n);
  const reorder = (nodes: number[], neighbours: number[][]) => {
    for (const v of nodes) {
      const list = neighbours[v]!;
      key[v] = list.length === 0 ? pos[v]! : list.reduce((s, u) => s + pos[u]!, 0) / list.length;
    }
    nodes.sort((a, b) => key[a]! - key[b]! || pos[a]! - pos[b]!);
    place(nodes);
  };
  for (let sweep = 0; sweep < SWEEPS; sweep++) {
    if (sweep % 2 === 0) for (let l = 1; l < layers.length; l++) reorder(layers[l] ?? [], preds);
    else for (let l = layers.length - 2; l >= 0; l--) reorder(layers[l] ?? [], succs);
  }

  // Rows, centred on the widest.
  const widths = layers.map(
    (nodes) => (nodes ?? []).reduce((s, v) => s + sizes[v]!.w, 0) + Math.max(0, (nodes ?? []).length - 1) * spacing.gap,
  );
  const widest = Math.max(0, ...widths);
  const result: Array<{ x: number; y: number }> = new Array(n);
  let y = 0;
  layers.forEach((nodes, l) => {
    let x = Math.floor((widest - widths[l]!) / 2);
    let height = 0;
    for (const v of nodes ?? []) {
      result[v] = { x, y };
      x += sizes[v]!.w + spacing.gap;
      height = Math.max(height, sizes[v]!.h);
    }
    y += height + spacing.layerGap;
  });
  return result;
}
