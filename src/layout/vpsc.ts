/**
 * Positions on a line under separation constraints ("VPSC", Dwyer, Marriott & Stuckey, 2006):
 * the x minimizing Σ weight·(x − desired)² such that x[right] ≥ x[left] + gap for every
 * constraint. The layered layout (./sugiyama.ts) uses it to place each row's boxes as near as
 * they may get to where their relations pull them, in order and never closer than their gap.
 *
 * Variables are merged into blocks whose members keep fixed offsets; `satisfy` visits the
 * variables in the order of the constraints and merges a block with the block on the left of
 * its most violated constraint until nothing is violated; `refine` then splits blocks at
 * constraints whose Lagrange multiplier is negative (the two halves want to move apart) and
 * lets the halves satisfy their neighbours again, until no multiplier is negative: the
 * optimum. The constraints must not form a cycle. A solver is built once for a set of
 * constraints and solves for any number of desired positions.
 */

export interface Separation {
  left: number;
  right: number;
  gap: number;
}

const EPS = 1e-7;

export class SeparationSolver {
  private readonly n: number;
  private readonly left: Int32Array;
  private readonly right: Int32Array;
  private readonly gap: Float64Array;
  /** Constraints into / out of each variable (CSR). */
  private readonly inStart: Int32Array;
  private readonly inList: Int32Array;
  private readonly outStart: Int32Array;
  private readonly outList: Int32Array;
  private readonly order: Int32Array;

  constructor(n: number, constraints: readonly Separation[]) {
    this.n = n;
    const m = constraints.length;
    this.left = new Int32Array(m);
    this.right = new Int32Array(m);
    this.gap = new Float64Array(m);
    const inCount = new Int32Array(n + 1);
    const outCount = new Int32Array(n + 1);
    constraints.forEach((c, k) => {
      this.left[k] = c.left;
      this.right[k] = c.right;
      this.gap[k] = c.gap;
      inCount[c.right + 1]!++;
      outCount[c.left + 1]!++;
    });
    for (let v = 0; v < n; v++) {
      inCount[v + 1]! += inCount[v]!;
      outCount[v + 1]! += outCount[v]!;
    }
    this.inStart = inCount;
    this.outStart = outCount;
    this.inList = new Int32Array(m);
    this.outList = new Int32Array(m);
    const inAt = inCount.slice(0, n);
    const outAt = outCount.slice(0, n);
    for (let k = 0; k < m; k++) {
      this.inList[inAt[this.right[k]!]!++] = k;
      this.outList[outAt[this.left[k]!]!++] = k;
    }
    // Topological order of the constraint graph (Kahn; input order on ties).
    const waiting = new Int32Array(n);
    for (let k = 0; k < m; k++) waiting[this.right[k]!]!++;
    const order: number[] = [];
    for (let v = 0; v < n; v++) if (waiting[v] === 0) order.push(v);
    for (let i = 0; i < order.length; i++) {
      const v = order[i]!;
      for (let j = this.outStart[v]!; j < this.outStart[v + 1]!; j++) {
        const r = this.right[this.outList[j]!]!;
        if (--waiting[r]! === 0) order.push(r);
      }
    }
    if (order.length < n) throw new Error('separation constraints form a cycle');
    this.order = Int32Array.from(order);
  }

  /** Positions for these desired positions and weights; `refine` false: feasible, not optimal. */
  solve(desired: ArrayLike<number>, weight: ArrayLike<number>, refine = true): Float64Array {
    const { n, left, right, gap, inStart, inList, outStart, outList } = this;
    const m = left.length;
    const active = new Uint8Array(m);
    const blockOf = new Int32Array(n);
    const offset = new Float64Array(n);
    const w = new Float64Array(n);
    // Blocks: members as a linked list (head, next), their count, Σ w·(desired − offset), Σ w
    // and position; a dead block has no members. Splits add blocks: room grows as needed.
    let cap = 2 * n + 16;
    let head = new Int32Array(cap);
    let size = new Int32Array(cap);
    let wpos = new Float64Array(cap);
    let wsum = new Float64Array(cap);
    let pos = new Float64Array(cap);
    const next = new Int32Array(n);
    let blocks = n;
    for (let v = 0; v < n; v++) {
      w[v] = Math.max(EPS, weight[v]!);
      head[v] = v;
      next[v] = -1;
      size[v] = 1;
      wpos[v] = w[v]! * desired[v]!;
      wsum[v] = w[v]!;
      pos[v] = desired[v]!;
      blockOf[v] = v;
    }
    const newBlock = (): number => {
      if (blocks === cap) {
        cap *= 2;
        const grow = <T extends Int32Array | Float64Array>(a: T): T => {
          const b = new (a.constructor as new (k: number) => T)(cap);
          b.set(a);
          return b;
        };
        head = grow(head);
        size = grow(size);
        wpos = grow(wpos);
        wsum = grow(wsum);
        pos = grow(pos);
      }
      return blocks++;
    };
    const x = (v: number): number => pos[blockOf[v]!]! + offset[v]!;
    const violation = (k: number): number => x(left[k]!) + gap[k]! - x(right[k]!);
    /** Blocks created or moved since their multipliers were last computed. */
    const dirty: number[] = [];

    /** Moves the variables of `from` into `into`, shifting their offsets by `shift`. */
    const absorb = (into: number, from: number, shift: number): void => {
      dirty.push(into);
      let last = -1;
      for (let v = head[from]!; v >= 0; v = next[v]!) {
        offset[v]! += shift;
        blockOf[v] = into;
        wpos[into]! += w[v]! * (desired[v]! - offset[v]!);
        wsum[into]! += w[v]!;
        last = v;
      }
      next[last] = head[into]!;
      head[into] = head[from]!;
      size[into]! += size[from]!;
      pos[into] = wpos[into]! / wsum[into]!;
      head[from] = -1;
      size[from] = 0;
    };
    /** Merges the blocks on both sides of constraint k, making it tight. */
    const mergeAcross = (k: number): number => {
      const bl = blockOf[left[k]!]!;
      const br = blockOf[right[k]!]!;
      const d = offset[left[k]!]! + gap[k]! - offset[right[k]!]!;
      active[k] = 1;
      if (size[bl]! >= size[br]!) {
        absorb(bl, br, d);
        return bl;
      }
      absorb(br, bl, -d);
      return br;
    };
    const mostViolated = (b: number, incoming: boolean): number => {
      let best = -1;
      let worst = EPS;
      const start = incoming ? inStart : outStart;
      const list = incoming ? inList : outList;
      for (let v = head[b]!; v >= 0; v = next[v]!) {
        for (let j = start[v]!; j < start[v + 1]!; j++) {
          const k = list[j]!;
          if (blockOf[incoming ? left[k]! : right[k]!] === b) continue;
          const viol = violation(k);
          if (viol > worst) {
            worst = viol;
            best = k;
          }
        }
      }
      return best;
    };
    const mergeLeft = (b: number): void => {
      for (let k = mostViolated(b, true); k >= 0; k = mostViolated(b, true)) b = mergeAcross(k);
    };
    const mergeRight = (b: number): void => {
      for (let k = mostViolated(b, false); k >= 0; k = mostViolated(b, false)) b = mergeAcross(k);
    };

    for (const v of this.order) mergeLeft(blockOf[v]!);
    if (!refine) return this.positions(x);
    // satisfy's result is feasible; refining can, rarely, leave a block whose members' offsets
    // break a constraint between them (two blocks related both ways): then this result stands.
    const satisfied = this.positions(x);

    // Refine: Lagrange multipliers over each block's tree of active constraints; every block
    // whose smallest multiplier is negative is split there, the halves move apart and satisfy
    // their neighbours again; until no multiplier is negative.
    const parentEdge = new Int32Array(n).fill(-2);
    const acc = new Float64Array(n);
    const post: number[] = [];
    const stack: number[] = [];
    const lm = new Float64Array(m);
    /** Multipliers of block b's active constraints; the one with the smallest negative, or -1. */
    const lowest = (b: number): number => {
      if (size[b]! < 2) return -1;
      const root = head[b]!;
      post.length = 0;
      stack.length = 0;
      parentEdge[root] = -1;
      stack.push(root);
      while (stack.length > 0) {
        const v = stack.pop()!;
        post.push(v);
        acc[v] = 2 * w[v]! * (x(v) - desired[v]!);
        for (let j = outStart[v]!; j < outStart[v + 1]!; j++) {
          const k = outList[j]!;
          const u = right[k]!;
          if (!active[k] || parentEdge[u] !== -2 || blockOf[u] !== b) continue;
          parentEdge[u] = k;
          stack.push(u);
        }
        for (let j = inStart[v]!; j < inStart[v + 1]!; j++) {
          const k = inList[j]!;
          const u = left[k]!;
          if (!active[k] || parentEdge[u] !== -2 || blockOf[u] !== b) continue;
          parentEdge[u] = k;
          stack.push(u);
        }
      }
      let at = -1;
      let min = -1e-6;
      for (let i = post.length - 1; i >= 0; i--) {
        const v = post[i]!;
        const k = parentEdge[v]!;
        parentEdge[v] = -2;
        if (k < 0) continue;
        // v hangs below its parent through constraint k: the multiplier carries v's subtree.
        const isRight = right[k] === v;
        const parent = isRight ? left[k]! : right[k]!;
        lm[k] = isRight ? acc[v]! : -acc[v]!;
        acc[parent]! += acc[v]!;
        if (lm[k]! < min) {
          min = lm[k]!;
          at = k;
        }
      }
      return at;
    };

    const mark = new Int32Array(n);
    let stamp = 0;
    /** Splits block b at active constraint k into the part holding k's left end and the rest. */
    const split = (b: number, k: number): void => {
      active[k] = 0;
      stamp++;
      mark[left[k]!] = stamp;
      stack.length = 0;
      stack.push(left[k]!);
      while (stack.length > 0) {
        const v = stack.pop()!;
        for (let j = outStart[v]!; j < outStart[v + 1]!; j++) {
          const c = outList[j]!;
          const u = right[c]!;
          if (active[c] && blockOf[u] === b && mark[u] !== stamp) {
            mark[u] = stamp;
            stack.push(u);
          }
        }
        for (let j = inStart[v]!; j < inStart[v + 1]!; j++) {
          const c = inList[j]!;
          const u = left[c]!;
          if (active[c] && blockOf[u] === b && mark[u] !== stamp) {
            mark[u] = stamp;
            stack.push(u);
          }
        }
      }
      const lb = newBlock();
      const rb = newBlock();
      for (const id of [lb, rb]) {
        head[id] = -1;
        size[id] = 0;
        wpos[id] = 0;
        wsum[id] = 0;
      }
      for (let v = head[b]!; v >= 0; ) {
        const following = next[v]!;
        const id = mark[v] === stamp ? lb : rb;
        next[v] = head[id]!;
        head[id] = v;
        size[id]!++;
        wpos[id]! += w[v]! * (desired[v]! - offset[v]!);
        wsum[id]! += w[v]!;
        blockOf[v] = id;
        v = following;
      }
      head[b] = -1;
      size[b] = 0;
      for (const id of [rb, lb]) {
        pos[id] = wpos[id]! / wsum[id]!;
        dirty.push(id);
      }
    };

    const worstOf = new Map<number, number>();
    const seen = new Int32Array(cap);
    let seenStamp = 0;
    for (let b = 0; b < blocks; b++) if (size[b]! > 1) dirty.push(b);
    for (let round = 0; round < 4 * n + 10; round++) {
      seenStamp++;
      for (const b of dirty) {
        if (size[b] === 0 || (b < seen.length && seen[b] === seenStamp)) continue;
        if (b < seen.length) seen[b] = seenStamp;
        const k = lowest(b);
        if (k >= 0) worstOf.set(b, k);
        else worstOf.delete(b);
      }
      dirty.length = 0;
      const splits: number[] = [];
      for (const [b, k] of worstOf) if (size[b]! > 0) splits.push(k);
      worstOf.clear();
      if (splits.length === 0) break;
      for (const k of splits) if (active[k] && blockOf[left[k]!] === blockOf[right[k]!]) split(blockOf[left[k]!]!, k);
      // The halves move apart (that is what the negative multiplier says); each may then run
      // into a neighbour on its own side.
      for (const k of splits) {
        mergeLeft(blockOf[left[k]!]!);
        mergeRight(blockOf[right[k]!]!);
      }
    }
    const out = this.positions(x);
    for (let k = 0; k < m; k++) if (out[left[k]!]! + gap[k]! - out[right[k]!]! > 1e-6) return satisfied;
    return out;
  }

  private positions(x: (v: number) => number): Float64Array {
    const out = new Float64Array(this.n);
    for (let v = 0; v < this.n; v++) out[v] = x(v);
    return out;
  }
}

/** One solve (see SeparationSolver). */
export function solveSeparation(
  desired: ArrayLike<number>,
  weight: ArrayLike<number>,
  constraints: readonly Separation[],
  refine = true,
): Float64Array {
  return new SeparationSolver(desired.length, constraints).solve(desired, weight, refine);
}
