/**
 * Relation labels along their own route, never over a box, a container's title or another
 * label (issue 25.3).
 *
 * Candidates are spots on the route: the middle of each segment first (longest segments first),
 * then points further along each. The first candidate that is free wins; a label placed along
 * another route's line is accepted only when no spot is free of lines too. When the route has
 * no free spot at all (a crowded hand-made layout), the label goes to the nearest free spot
 * around the route's middle, searched ring by ring, so it never covers anything.
 */
import { CellGrid, type Filed } from './cell-grid.js';
import type { Point } from './route.js';

export interface LabelBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

const GAP = 2;
/** How many rings (of 8 px) beyond the first free spot a spot clear of other routes is looked for (see nearestFree). */
const MORE_RINGS = 16;

interface Tagged extends LabelBox, Filed {
  tag: string;
}

/** Whether `r`, with a gap around it, meets a box of `grid` not tagged `except`. */
function hits(grid: CellGrid<Tagged>, r: LabelBox, except = '\u0000'): boolean {
  const around = { x: r.x - GAP, y: r.y - GAP, w: r.w + 2 * GAP, h: r.h + 2 * GAP };
  return grid.some(
    around,
    (o) => o.tag !== except && r.x < o.x + o.w + GAP && o.x < r.x + r.w + GAP && r.y < o.y + o.h + GAP && o.y < r.y + r.h + GAP,
  );
}

export class LabelPlacer {
  private readonly solid = new CellGrid<Tagged>(96);
  private readonly lines = new CellGrid<Tagged>(64);

  /** Boxes, titles and text areas labels must keep off. */
  block(r: LabelBox): void {
    this.solid.add(r, { ...r, tag: '' });
  }

  /** A route (named `tag`) whose segments other routes' labels should rather not lie on. */
  addRoute(tag: string, points: readonly Point[]): void {
    for (let i = 1; i < points.length; i++) {
      const p = points[i - 1]!;
      const q = points[i]!;
      const segment = { x: Math.min(p.x, q.x), y: Math.min(p.y, q.y), w: Math.abs(p.x - q.x), h: Math.abs(p.y - q.y), tag };
      this.lines.add(segment, segment);
    }
  }

  /** Where a w×h label of route `tag` goes (its box), now reserved. */
  place(tag: string, points: readonly Point[], w: number, h: number): LabelBox {
    const candidates = spotsAlong(points);
    const at = (p: Point): LabelBox => ({ x: p.x - w / 2, y: p.y - h / 2, w, h });
    let fallback: LabelBox | null = null;
    for (const p of candidates) {
      const box = at(p);
      if (hits(this.solid, box)) continue;
      if (!hits(this.lines, box, tag)) return this.take(box);
      fallback ??= box;
    }
    if (fallback) return this.take(fallback);
    return this.take(this.nearestFree(tag, candidates[0] ?? { x: 0, y: 0 }, w, h));
  }

  /**
   * The free spot nearest `centre`, searched ring by ring. Off its own route, a label lying on
   * another relation's line reads as that relation's: a spot clear of other routes' lines is
   * taken when one lies a little further (up to twice as far, at most MORE_RINGS rings beyond
   * the first free spot); else the first free spot.
   */
  private nearestFree(tag: string, centre: Point, w: number, h: number): LabelBox {
    const step = 8;
    let first: LabelBox | null = null;
    let last = 10_000;
    for (let ring = 1; ring < last; ring++) {
      const d = ring * step;
      // Along each side of the ring from its middle out: the nearer spots of a ring first.
      for (let j = 0; j <= ring; j++) {
        for (const p of [
          { x: centre.x - j * step, y: centre.y - d },
          { x: centre.x + j * step, y: centre.y - d },
          { x: centre.x - j * step, y: centre.y + d },
          { x: centre.x + j * step, y: centre.y + d },
          { x: centre.x - d, y: centre.y - j * step },
          { x: centre.x - d, y: centre.y + j * step },
          { x: centre.x + d, y: centre.y - j * step },
          { x: centre.x + d, y: centre.y + j * step },
        ]) {
          const box = { x: p.x - w / 2, y: p.y - h / 2, w, h };
          if (hits(this.solid, box)) continue;
          if (!hits(this.lines, box, tag)) return box;
          if (first === null) {
            first = box;
            last = Math.min(last, ring + Math.min(ring, MORE_RINGS) + 1);
          }
        }
      }
    }
    return first ?? { x: centre.x - w / 2, y: centre.y - h / 2, w, h };
  }

  private take(box: LabelBox): LabelBox {
    this.solid.add(box, { ...box, tag: '' });
    return box;
  }
}

/** Spots on a route for a label: segment middles (longest first), then fractions along them. */
function spotsAlong(points: readonly Point[]): Point[] {
  const segments: Array<{ p: Point; q: Point; length: number; n: number }> = [];
  for (let i = 1; i < points.length; i++) {
    const p = points[i - 1]!;
    const q = points[i]!;
    segments.push({ p, q, length: Math.abs(p.x - q.x) + Math.abs(p.y - q.y), n: i });
  }
  // Prefer the middle of the route: segments nearer the middle first among equally long ones.
  const middle = (points.length - 1) / 2;
  segments.sort((s, t) => t.length - s.length || Math.abs(s.n - 0.5 - middle) - Math.abs(t.n - 0.5 - middle));
  const out: Point[] = [];
  const lerp = (s: { p: Point; q: Point }, t: number) => ({ x: s.p.x + (s.q.x - s.p.x) * t, y: s.p.y + (s.q.y - s.p.y) * t });
  for (const s of segments) out.push(lerp(s, 0.5));
  for (const t of [0.35, 0.65, 0.2, 0.8, 0.1, 0.9, 0.05, 0.95]) for (const s of segments) if (s.length > 20) out.push(lerp(s, t));
  return out;
}
