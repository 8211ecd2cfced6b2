/**
 * A cheap left-to-right layered placement, used instead of elk for graphs above elk's budget
 * (./layout.ts). Linear in nodes and edges apart from sorting each layer once:
 * - cycles are broken by a depth-first search in input order (an edge back to a node on the
 *   search path is read reversed);
 * - each node goes into the layer after the deepest of its predecessors (longest path);
 * - within a layer, nodes are ordered by the average row of their predecessors (one sweep,
 *   ties in input order), so related boxes stay near each other;
 * - layers are columns `layerGap` apart, as wide as their widest node; nodes are stacked
 *   `gap` apart. Nothing overlaps.
 */
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

  // Order within layers: by the mean row of the predecessors, layer by layer.
  const layers: number[][] = [];
  for (let v = 0; v < n; v++) (layers[layer[v]!] ??= []).push(v);
  const row = new Float64Array(n);
  for (const nodes of layers) {
    const key = new Map<number, number>();
    for (const v of nodes) {
      const p = preds[v]!;
      key.set(v, p.length === 0 ? v : p.reduce((s, u) => s + row[u]!, 0) / p.length);
    }
    nodes.sort((a, b) => key.get(a)! - key.get(b)! || a - b);
    nodes.forEach((v, i) => {
      row[v] = i;
    });
  }

  // Columns.
  const result: Array<{ x: number; y: number }> = new Array(n);
  let x = 0;
  for (const nodes of layers) {
    let y = 0;
    let width = 0;
    for (const v of nodes) {
      result[v] = { x, y };
      y += sizes[v]!.h + spacing.gap;
      width = Math.max(width, sizes[v]!.w);
    }
    x += width + spacing.layerGap;
  }
  return result;
}
