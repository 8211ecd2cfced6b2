/**
 * Automatic layout of C4 diagrams (external-api.md §2.5–2.7, CONTRACT.md §4).
 *
 * Units: whole editor grid units. A position is the top-left corner of a box, x grows to the
 * right, y grows downwards, negative values are allowed. Positions are absolute: a child's
 * position is in the same coordinate system as its container's, and a child is "inside" when
 * its box lies within the container's box.
 *
 * Rules chosen here (see LAYOUT for the numbers):
 * - Flow direction: top to bottom (people at the top, data stores at the bottom, as C4
 *   diagrams are read), with as few relations crossing as a layered layout finds: each
 *   connected group of new elements gets the layout of ./sugiyama.ts (the scheme of Graphviz
 *   `dot` and ELK `layered`: a relation a→b puts b below a, dummy points for long relations,
 *   barycentre sweeps and transposition against crossings, positions pulled towards related
 *   boxes), with containers as nested groups: a container's children in rows of their own
 *   inside it (rows shortening the relations among them, with room left for relations that
 *   pass), the container one rectangle among the other boxes, a box related to a child
 *   above or below the whole container. The groups are then packed in rows (largest group
 *   first, rows about ROW_ASPECT times as wide as high), so unrelated elements do not end up
 *   in one tall column. Repeated relations between the same two instances (either way) count
 *   once.
 * - Cost: about linear in boxes + dummies (a few tens of milliseconds for 200 instances); a
 *   group whose boxes and dummy points exceed sugiyama's MAX_NODES gets the linear layered
 *   placement of ./layers.ts instead (same flow, containers packed in rows).
 * - Default box size: 16×8; wider for long labels (label length + 4, at most 40) and taller
 *   when a long label wraps at that width.
 * - Containers: an empty container is 24×16 (wider for long labels). A container with children
 *   and no given size is sized to hold them with padding (2 left/right/bottom, 4 on top for
 *   the container's title), capped at 100×100: its children get as many rows as fit, each
 *   row at most the container's width; when they do not fit, new children (no given size)
 *   are made smaller and set closer, step by step (sugiyama's STEPS), down to 12×6. A
 *   container whose children still do not fit, or whose size is given, has its children
 *   packed in rows within the container's width instead (in the order of their relations,
 *   made smaller the same way); if they still do not fit in 100 (or the given height), the
 *   container keeps the capped (or given) size and the last rows continue below its bottom
 *   edge: they overflow the container's box but still overlap nothing, because the space they
 *   take is reserved for the container when everything else is placed.
 * - Text areas: default width = longest line of text, between 10 and 40. Height: see
 *   textAreaHeight (one grid unit per character horizontally, one per line vertically, lines
 *   wrapped at a space where one fits).
 * - Only new elements move. Elements with a given position keep it exactly, given sizes are
 *   kept exactly. New top-level instances are laid out as one block, placed either to the
 *   right of or below the bounding box of everything already placed (whichever gives the
 *   smaller overall bounding box; right on a tie), 8 units away. New text areas are placed in
 *   rows below everything else.
 * - New children of an already placed container (given position, or children with given
 *   positions) go into free space inside the container's box (first free spot, top to bottom,
 *   left to right). If the container's size was not given it grows instead; it keeps its
 *   position, so it grows to the right and downwards. Candidates: the new children as a block
 *   (their layered arrangement; rows within the width limit; rows within the container's current
 *   width; one column) to the right of or below its current children, or at the first free
 *   spot in the largest allowed box. They are compared by: the box covers no placed element
 *   it did not cover before and no new child covers one, then fewest children outside the
 *   box, then the smaller area (overflowing children included); on a tie the first candidate
 *   in the order above wins. When every block covers something or leaves children outside,
 *   it also tries the largest boxes that cover nothing new (widths from the current one up to
 *   the limit, each as tall as what lies below allows, 4 units away from it) filled one child
 *   at a time, top to bottom; children that still do not fit go, packed in rows, to the first
 *   free spot below (outside the container's box, but on top of nothing). The container's current width is
 *   always such a box, so a result without overlaps is always among the candidates. Other
 *   elements count with their exact boxes (a container's box and each child's box).
 *   If its size was given and there is no room, the children are placed one by one into any
 *   free spot inside, and the ones that still do not fit go (in rows) to the first free spot below
 *   (overflowing the container's box, accepted) — never on top of another element.
 * - Overlaps are avoided for everything this module places. Given positions are never moved,
 *   so boxes that the input itself placed on top of each other stay that way, and a default
 *   size chosen for a box with a given position may touch a neighbour that was placed by hand.
 * - Input that breaks the model's rules is laid out as if it were valid: a parent that does not
 *   exist or is not a container, or a parent on a container, is ignored (top-level instance);
 *   of several instances with the same id only the first one counts.
 * - Deterministic: everything is processed in input order, ties broken by it.
 */
import { findSpot, rectContains, rectsOverlap, shelfPack, translate, unionAll, type Rect } from './geometry.js';
import { layeredPlacement } from './layers.js';
import { sugiyama, type SugiyamaCluster, type SugiyamaNode } from './sugiyama.js';

export { rectsOverlap, type Rect } from './geometry.js';

/** A point on the editor grid: x grows to the right, y downwards. */
export interface Position {
  x: number;
  y: number;
}

export interface LayoutInstance {
  id: string;
  parent: string | null;
  isContainer: boolean;
  /** Text shown in the box (component name or placeholder); used to pick a default width. */
  label: string;
  position?: Position;
  width?: number;
  height?: number;
  /** A container's size before it takes new children: it grows from it, never below it. */
  minWidth?: number;
  minHeight?: number;
}

export interface LayoutTextArea {
  id: string;
  text: string;
  position?: Position;
  width?: number;
}

export interface LayoutRelation {
  from: string;
  to: string;
}

export interface LayoutInput {
  instances: LayoutInstance[];
  textareas: LayoutTextArea[];
  relations: LayoutRelation[];
}

export interface LayoutResult {
  instances: Map<string, { position: Position; width: number; height: number }>;
  textareas: Map<string, { position: Position; width: number }>;
}

/** The numbers behind the layout rules, in grid units. */
export const LAYOUT = {
  /** Default instance box. */
  boxWidth: 16,
  boxHeight: 8,
  /** A default-sized box is label length + labelMargin wide, at most maxLabelWidth. */
  labelMargin: 4,
  maxLabelWidth: 40,
  /** An empty container without a given size. */
  containerWidth: 24,
  containerHeight: 16,
  /** Space between a container's edge and its children (top leaves room for the title). */
  padTop: 4,
  padSide: 2,
  padBottom: 2,
  /** Space between sibling boxes. */
  gap: 4,
  /** Space between the group of new elements and what was already placed, and between groups. */
  groupGap: 8,
  /** Space between the rows (ranks) of the top-to-bottom flow. */
  layerGap: 8,
  /** Default text area width: longest line, clamped to these. */
  textMinWidth: 10,
  textMaxWidth: 40,
  /** Largest width/height the service stores. */
  maxSize: 100,
  /**
   * Coordinates a request may send (the model's POSITION_LIMIT, test/layout.test.ts holds them
   * equal; not imported, so that the layout worker loads no schema): what is placed stays within.
   */
  coordinateLimit: 1_000_000,
} as const;

const L = LAYOUT;

/**
 * Width to height of the rows unrelated groups are packed in. The flow runs top to bottom and
 * screens are wide, so rows are wide: a container then has room to grow downwards when it
 * takes new children later.
 */
const ROW_ASPECT = 3;

// ---------------------------------------------------------------------------------------------
// Sizes

function charCount(s: string): number {
  return [...s].length;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

/**
 * One line of a text area's text, wrapped at `width` characters (code points; one per grid
 * unit): each piece ends at the last space that fits, the space itself dropped, and a word
 * longer than the width is cut at it. Calls `emit` with each piece's UTF-16 offsets in `line`
 * (an empty line is one empty piece) until it returns false. One pass, however long the line.
 */
function wrapTextLine(line: string, width: number, emit: (from: number, to: number) => boolean): void {
  let start = 0;
  let count = 0;
  // The last space in the piece after its first character, and the characters before it.
  let space = -1;
  let beforeSpace = 0;
  for (let i = 0; i < line.length; ) {
    const isSpace = line.charCodeAt(i) === 32;
    if (count === width) {
      if (isSpace) {
        if (!emit(start, i)) return;
        start = i + 1;
        count = 0;
        space = -1;
        i++;
        continue;
      }
      if (space > start) {
        if (!emit(start, space)) return;
        count -= beforeSpace + 1;
        start = space + 1;
      } else {
        if (!emit(start, i)) return;
        start = i;
        count = 0;
      }
      space = -1;
    }
    if (isSpace) {
      space = i;
      beforeSpace = count;
    }
    count++;
    i += (line.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
  }
  if (start < line.length || line.length === 0) emit(start, line.length);
}

const LINE_BREAK = /\r\n|\r|\n/;

function wrapWidth(width: number): number {
  return Math.max(1, Math.floor(Number.isFinite(width) ? width : 1));
}

/**
 * Height of a text area in grid units: every line of the text (split at line breaks) wraps at
 * `width` characters (one character per grid unit) at a space where it can (wrapTextLine), and
 * every wrapped line is one grid unit high; an empty line counts as one line. At least 1.
 */
export function textAreaHeight(text: string, width: number): number {
  const w = wrapWidth(width);
  let lines = 0;
  for (const line of (text ?? '').split(LINE_BREAK)) {
    wrapTextLine(line, w, () => {
      lines++;
      return true;
    });
  }
  return Math.max(1, lines);
}

/** The first `maxLines` lines of a text area as wrapped for textAreaHeight: what a drawing shows. */
export function textAreaLines(text: string, width: number, maxLines: number): string[] {
  const w = wrapWidth(width);
  const lines: string[] = [];
  for (const line of (text ?? '').split(LINE_BREAK)) {
    if (lines.length >= maxLines) break;
    wrapTextLine(line, w, (from, to) => {
      lines.push(line.slice(from, to));
      return lines.length < maxLines;
    });
  }
  return lines;
}

/** Default width of a text area: its longest line, between textMinWidth and textMaxWidth. */
export function defaultTextAreaWidth(text: string): number {
  let longest = 0;
  for (const line of (text ?? '').split(/\r\n|\r|\n/)) longest = Math.max(longest, charCount(line));
  return clamp(longest, L.textMinWidth, L.textMaxWidth);
}

/** Default box width for a label (non-container). */
function defaultBoxWidth(label: string): number {
  return clamp(charCount(label.trim()) + L.labelMargin, L.boxWidth, L.maxLabelWidth);
}

/** Default box height for a label shown in a box of the given width. */
function defaultBoxHeight(label: string, width: number): number {
  const len = charCount(label.trim());
  const lines = Math.max(1, Math.ceil(len / Math.max(1, width - L.labelMargin)));
  return clamp(Math.max(L.boxHeight, lines + 6), 1, L.maxSize);
}

/** Smallest width of a container showing `label` as its title. */
function containerMinWidth(label: string): number {
  return clamp(charCount(label.trim()) + L.labelMargin, L.boxWidth, L.maxSize);
}
const CONTAINER_MIN_HEIGHT = 8;

/** The size chosen for an instance without a given size (containers: when empty). */
export function defaultInstanceSize(label: string, isContainer: boolean): { width: number; height: number } {
  if (isContainer) {
    return { width: Math.max(L.containerWidth, containerMinWidth(label)), height: L.containerHeight };
  }
  const width = defaultBoxWidth(label);
  return { width, height: defaultBoxHeight(label, width) };
}

// ---------------------------------------------------------------------------------------------
// Working model

interface Inst {
  id: string;
  /** Index in the input; unique, used for ordering. */
  index: number;
  label: string;
  isContainer: boolean;
  parent: Inst | null;
  kids: Inst[];
  pos?: Position;
  givenW?: number;
  givenH?: number;
  /** A container's size before: what it is sized to is never below it. */
  minW?: number;
  minH?: number;
  /** Final size for non-containers; containers are sized during layout. */
  w: number;
  h: number;
}

/** A box with an id; coordinates relative to some origin given by the context. */
interface Box extends Rect {
  id: string;
}

/**
 * A laid-out top-level item (instance with its children, or text area). x/y: own top-left;
 * kids and foot are relative to the own top-left. foot = own box ∪ children (children may
 * overflow a capped or given-size container); it is the space the item occupies.
 */
interface Placed {
  x: number;
  y: number;
  w: number;
  h: number;
  kids: Box[];
  foot: Rect;
}

interface Ctx {
  relations: Array<[Inst, Inst]>;
}

function isNum(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function hasPos(p: Position | null | undefined): p is Position {
  return p != null && isNum(p.x) && isNum(p.y);
}

/**
 * The parent each instance is laid out in: the given parent when it names another instance
 * that is a container and the instance itself is not a container; otherwise null.
 * Of several instances with the same id only the first is used.
 */
export function effectiveParents(instances: readonly LayoutInstance[]): Map<string, string | null> {
  const byId = new Map<string, LayoutInstance>();
  for (const i of instances) if (!byId.has(i.id)) byId.set(i.id, i);
  const out = new Map<string, string | null>();
  for (const i of byId.values()) {
    const p = i.parent;
    const ok = p != null && p !== i.id && !i.isContainer && byId.get(p)?.isContainer === true;
    out.set(i.id, ok ? p : null);
  }
  return out;
}

function prepare(input: LayoutInput): { insts: Inst[]; byId: Map<string, Inst> } {
  const parents = effectiveParents(input.instances);
  const byId = new Map<string, Inst>();
  const insts: Inst[] = [];
  input.instances.forEach((src, index) => {
    if (byId.has(src.id)) return;
    const givenW = isNum(src.width) ? src.width : undefined;
    const givenH = isNum(src.height) ? src.height : undefined;
    const label = src.label ?? '';
    let w = givenW ?? 0;
    let h = givenH ?? 0;
    if (!src.isContainer) {
      w = givenW ?? defaultBoxWidth(label);
      h = givenH ?? defaultBoxHeight(label, w);
    }
    const inst: Inst = {
      id: src.id,
      index,
      label,
      isContainer: src.isContainer === true,
      parent: null,
      kids: [],
      w,
      h,
      ...(hasPos(src.position) ? { pos: { x: src.position.x, y: src.position.y } } : {}),
      ...(givenW !== undefined ? { givenW } : {}),
      ...(givenH !== undefined ? { givenH } : {}),
      ...(src.isContainer && isNum(src.minWidth) ? { minW: src.minWidth } : {}),
      ...(src.isContainer && isNum(src.minHeight) ? { minH: src.minHeight } : {}),
    };
    byId.set(src.id, inst);
    insts.push(inst);
  });
  for (const inst of insts) {
    const p = parents.get(inst.id);
    if (p != null) {
      const parent = byId.get(p)!;
      inst.parent = parent;
      parent.kids.push(inst);
    }
  }
  return { insts, byId };
}

function resolveRelations(relations: readonly LayoutRelation[], byId: Map<string, Inst>): Array<[Inst, Inst]> {
  const seen = new Set<string>();
  const out: Array<[Inst, Inst]> = [];
  for (const r of relations) {
    const a = byId.get(r.from);
    const b = byId.get(r.to);
    if (!a || !b || a === b) continue;
    const key = `${a.index}>${b.index}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push([a, b]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Containers

/**
 * A container holding the given children (relative to its own top-left corner): given sizes
 * kept; otherwise sized to the children plus padding, at least the title width, capped at
 * maxSize. An empty container gets the default container size.
 */
function containerFromKids(c: Inst, kids: Box[]): Placed {
  let w: number;
  let h: number;
  if (kids.length === 0) {
    // A container that grows from a kept size (minW/minH) and has no placed child yet is that
    // size already: other containers' new children are laid out around this box.
    const d = defaultInstanceSize(c.label, true);
    w = c.givenW ?? clamp(Math.max(d.width, c.minW ?? 0), 1, L.maxSize);
    h = c.givenH ?? clamp(Math.max(d.height, c.minH ?? 0), 1, L.maxSize);
  } else {
    const b = unionAll(kids)!;
    w = c.givenW ?? clamp(Math.max(containerMinWidth(c.label), c.minW ?? 0, Math.ceil(b.x + b.w) + L.padSide), 1, L.maxSize);
    h = c.givenH ?? clamp(Math.max(CONTAINER_MIN_HEIGHT, c.minH ?? 0, Math.ceil(b.y + b.h) + L.padBottom), 1, L.maxSize);
  }
  return { x: 0, y: 0, w, h, kids, foot: unionAll([{ x: 0, y: 0, w, h }, ...kids])! };
}

/** Inner width available to children of a container whose width is given, or maxSize. */
function innerWidthLimit(c: Inst): number {
  return Math.max(1, (c.givenW ?? L.maxSize) - 2 * L.padSide);
}

/** Smallest size a new child is shrunk to so that a container holds all its children. */
const MIN_CHILD = { w: 12, h: 6 };

/**
 * Children in rows within the container's width (used when the layered layout does not fit,
 * for containers of a given size and beyond sugiyama's size): ordered by layers of the relations among them (so they flow
 * top to bottom), and — when they would not fit in the largest allowed box — new children
 * (no given size) are made smaller and set closer, step by step, until they do (60 children
 * fit at the smallest step).
 */
function packContainer(c: Inst, order: Inst[], relations: ReadonlyArray<[Inst, Inst]> = []): Placed {
  const at = new Map(order.map((k, n) => [k, n]));
  const edges: Array<[number, number]> = [];
  for (const [a, b] of relations) {
    const ia = at.get(a);
    const ib = at.get(b);
    if (ia !== undefined && ib !== undefined) edges.push([ia, ib]);
  }
  const flow = layeredPlacement(order, edges, { gap: L.gap, layerGap: L.layerGap });
  const sorted = order
    .map((k, n) => ({ k, p: flow[n]! }))
    .sort((a, b) => a.p.y - b.p.y || a.p.x - b.p.x)
    .map((e) => e.k);
  const limitW = innerWidthLimit(c);
  const limitH = (c.givenH ?? L.maxSize) - L.padTop - L.padBottom;
  const steps = [
    { f: 1, gap: L.gap },
    { f: 0.85, gap: L.gap },
    { f: 0.85, gap: 3 },
    { f: 0.75, gap: 3 },
    { f: 0.65, gap: 2 },
    { f: 0, gap: 2 },
  ];
  let kids: Box[] = [];
  for (const step of steps) {
    const sizes = sorted.map((k) => ({
      w: k.givenW ?? Math.max(MIN_CHILD.w, Math.min(k.w, Math.round(k.w * step.f))),
      h: k.givenH ?? Math.max(MIN_CHILD.h, Math.min(k.h, Math.round(k.h * step.f))),
    }));
    const pos = shelfPack(sizes, limitW, step.gap);
    kids = sorted.map((k, i) => ({ id: k.id, x: L.padSide + pos[i]!.x, y: L.padTop + pos[i]!.y, w: sizes[i]!.w, h: sizes[i]!.h }));
    const bottom = Math.max(...kids.map((k) => k.y + k.h)) - L.padTop;
    if (bottom <= limitH) break;
  }
  return containerFromKids(c, kids);
}

/** A container on its own: no children, or a single child in the top-left corner. */
function simpleContainer(c: Inst): Placed {
  return containerFromKids(
    c,
    c.kids.map((k) => ({ id: k.id, x: L.padSide, y: L.padTop, w: k.w, h: k.h })),
  );
}

function leafPlaced(i: { w: number; h: number }): Placed {
  return { x: 0, y: 0, w: i.w, h: i.h, kids: [], foot: { x: 0, y: 0, w: i.w, h: i.h } };
}

function footAt(p: Placed): Rect {
  return translate(p.foot, p.x, p.y);
}

/** The item's own box and its children's boxes, absolute (the exact space it takes). */
function boxesAt(p: Placed): Rect[] {
  return [{ x: p.x, y: p.y, w: p.w, h: p.h }, ...p.kids.map((k) => translate(k, p.x, p.y))];
}

function readingOrder<T extends { inst: Inst; x: number; y: number }>(list: T[]): T[] {
  return [...list].sort((a, b) => a.x - b.x || a.y - b.y || a.inst.index - b.inst.index);
}

// ---------------------------------------------------------------------------------------------
// Groups

/**
 * Lays out a set of new items of one level (top-level instances, or the new children of one
 * container), with the relations among them, as a block whose top-left corner is (0, 0).
 * Containers among the items carry their (new) children along. Each connected group gets the
 * layered layout of ./sugiyama.ts (the linear one of ./layers.ts beyond its size); the groups
 * are then packed in rows at most `rowLimit` wide (or about ROW_ASPECT:1 when that is smaller).
 */
function layoutBlock(items: Inst[], ctx: Ctx, rowLimit: number): Map<Inst, Placed> {
  const inSet = new Set(items);
  const itemOf = (n: Inst): Inst | null => (inSet.has(n) ? n : n.parent && inSet.has(n.parent) ? n.parent : null);

  // Connected groups (union-find over items; relations of children count for their container).
  const root = new Map<Inst, Inst>(items.map((i) => [i, i]));
  const find = (i: Inst): Inst => {
    let r = i;
    while (root.get(r) !== r) r = root.get(r)!;
    root.set(i, r);
    return r;
  };
  for (const [a, b] of ctx.relations) {
    const ia = itemOf(a);
    const ib = itemOf(b);
    if (!ia || !ib || ia === ib) continue;
    const ra = find(ia);
    const rb = find(ib);
    if (ra !== rb) {
      if (ra.index < rb.index) root.set(rb, ra);
      else root.set(ra, rb);
    }
  }
  const groupsByRoot = new Map<Inst, Inst[]>();
  for (const i of items) {
    const r = find(i);
    const g = groupsByRoot.get(r);
    if (g) g.push(i);
    else groupsByRoot.set(r, [i]);
  }
  const groups = [...groupsByRoot.values()].sort((a, b) => b.length - a.length || a[0]!.index - b[0]!.index);

  // Each group as a block with its own origin.
  const blocks: Array<{ placed: Map<Inst, Placed>; bbox: Rect }> = [];
  for (const g of groups) {
    const placed =
      g.length === 1 && (!g[0]!.isContainer || g[0]!.kids.length <= 1)
        ? new Map([[g[0]!, g[0]!.isContainer ? simpleContainer(g[0]!) : leafPlaced(g[0]!)]])
        : groupLayout(g, ctx, inSet);
    const bbox = unionAll([...placed.values()].map(footAt))!;
    for (const p of placed.values()) {
      p.x -= bbox.x;
      p.y -= bbox.y;
    }
    blocks.push({ placed, bbox: { x: 0, y: 0, w: bbox.w, h: bbox.h } });
  }

  // Pack the groups in rows.
  let area = 0;
  let widest = 0;
  for (const b of blocks) {
    area += (b.bbox.w + L.groupGap) * (b.bbox.h + L.groupGap);
    widest = Math.max(widest, b.bbox.w);
  }
  const rowWidth = Math.max(widest, Math.min(rowLimit, Math.ceil(Math.sqrt(area * ROW_ASPECT))));
  const spots = shelfPack(
    blocks.map((b) => b.bbox),
    rowWidth,
    L.groupGap,
  );
  const result = new Map<Inst, Placed>();
  blocks.forEach((b, i) => {
    for (const [inst, p] of b.placed) {
      p.x += spots[i]!.x;
      p.y += spots[i]!.y;
      result.set(inst, p);
    }
  });
  return result;
}

/**
 * One connected group: the crossing-minimizing layered layout (./sugiyama.ts) with its
 * containers as nested groups. A container whose children cannot be laid out inside 100×100
 * (or inside its given size) is packed in rows instead and laid out as one box, relations to
 * its children going to it; a group too large for that layout gets the linear one.
 */
function groupLayout(g: Inst[], ctx: Ctx, inSet: Set<Inst>): Map<Inst, Placed> {
  const packed = new Map<Inst, Placed>();
  for (const i of g) {
    // A container whose size is given is packed within that size.
    if (i.isContainer && i.kids.length > 0 && (i.givenW !== undefined || i.givenH !== undefined)) {
      packed.set(i, packContainer(i, i.kids, ctx.relations));
    }
  }
  for (;;) {
    const nodes: SugiyamaNode[] = [];
    const clusters: SugiyamaCluster[] = [];
    const clusterInst: Inst[] = [];
    const nodeOf = new Map<Inst, number>();
    const addNode = (i: Inst, w: number, h: number, cluster: number, shrinkable: boolean) => {
      nodeOf.set(i, nodes.length);
      nodes.push({
        w,
        h,
        minW: shrinkable && i.givenW === undefined ? Math.min(w, MIN_CHILD.w) : w,
        minH: shrinkable && i.givenH === undefined ? Math.min(h, MIN_CHILD.h) : h,
        cluster,
      });
    };
    for (const i of g) {
      if (!i.isContainer) addNode(i, i.w, i.h, -1, false);
      else if (packed.has(i)) addNode(i, packed.get(i)!.foot.w, packed.get(i)!.foot.h, -1, false);
      else if (i.kids.length === 0) {
        const s = simpleContainer(i);
        addNode(i, s.w, s.h, -1, false);
      } else {
        const k = clusters.length;
        clusters.push({ minW: containerMinWidth(i.label), minH: CONTAINER_MIN_HEIGHT, maxW: L.maxSize, maxH: L.maxSize });
        clusterInst.push(i);
        for (const kid of i.kids) addNode(kid, kid.w, kid.h, k, true);
      }
    }
    // The node an end of a relation attaches to: itself, its packed container, or for a
    // container laid out with its children, its first child.
    const endpoint = (n: Inst): number | undefined => {
      if (!inSet.has(n) && !(n.parent && inSet.has(n.parent))) return undefined;
      if (nodeOf.has(n)) return nodeOf.get(n);
      if (n.parent && packed.has(n.parent)) return nodeOf.get(n.parent);
      if (n.isContainer && n.kids.length > 0) return nodeOf.get(n.kids[0]!);
      return undefined;
    };
    const edges: Array<[number, number]> = [];
    for (const [a, b] of ctx.relations) {
      if (a.parent === b || b.parent === a) continue;
      const ea = endpoint(a);
      const eb = endpoint(b);
      if (ea === undefined || eb === undefined || ea === eb) continue;
      edges.push([ea, eb]);
    }
    const out = sugiyama({ nodes, clusters, edges }, L);
    if (out === null) return groupLayered(g, packed, ctx, inSet);
    const failed = clusterInst.filter((_, k) => out.clusters[k] === null);
    if (failed.length > 0) {
      for (const c of failed) packed.set(c, packContainer(c, c.kids, ctx.relations));
      continue;
    }
    const result = new Map<Inst, Placed>();
    for (const i of g) {
      if (nodeOf.has(i)) {
        const b = out.nodes[nodeOf.get(i)!]!;
        const q = packed.get(i);
        if (q) result.set(i, { ...q, kids: q.kids.map((k) => ({ ...k })), x: b.x - q.foot.x, y: b.y - q.foot.y });
        else if (i.isContainer) result.set(i, { ...simpleContainer(i), x: b.x, y: b.y });
        else result.set(i, { ...leafPlaced(i), x: b.x, y: b.y });
        continue;
      }
      const box = out.clusters[clusterInst.indexOf(i)]!;
      const kids: Box[] = i.kids.map((k) => {
        const b = out.nodes[nodeOf.get(k)!]!;
        return { id: k.id, x: b.x - box.x, y: b.y - box.y, w: b.w, h: b.h };
      });
      result.set(i, { x: box.x, y: box.y, w: box.w, h: box.h, kids, foot: unionAll([{ x: 0, y: 0, w: box.w, h: box.h }, ...kids])! });
    }
    return result;
  }
}

/** A container's own placement on its own: children packed in rows. */
function packedItem(i: Inst, packed: Map<Inst, Placed>, relations: ReadonlyArray<[Inst, Inst]>): Placed {
  if (!i.isContainer) return leafPlaced(i);
  return packed.get(i) ?? (i.kids.length <= 1 ? simpleContainer(i) : packContainer(i, i.kids, relations));
}

/** A group too large for ./sugiyama.ts: the linear layered placement of its items, containers packed. */
function groupLayered(g: Inst[], packed: Map<Inst, Placed>, ctx: Ctx, inSet: Set<Inst>): Map<Inst, Placed> {
  const list = g.map((i): [Inst, Placed] => [i, packedItem(i, packed, ctx.relations)]);
  const at = new Map(g.map((i, n) => [i, n]));
  const itemAt = (n: Inst): number | undefined => at.get(inSet.has(n) ? n : n.parent && inSet.has(n.parent) ? n.parent : n);
  const edges: Array<readonly [number, number]> = [];
  const seen = new Set<number>();
  for (const [a, b] of ctx.relations) {
    const ia = itemAt(a);
    const ib = itemAt(b);
    if (ia === undefined || ib === undefined || ia === ib) continue;
    const key = Math.min(ia, ib) * g.length + Math.max(ia, ib);
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push([ia, ib]);
  }
  const spots = layeredPlacement(
    list.map(([, p]) => p.foot),
    edges,
    { gap: L.gap, layerGap: L.layerGap },
  );
  const out = new Map<Inst, Placed>();
  list.forEach(([i, p], n) => {
    out.set(i, { ...p, x: spots[n]!.x - p.foot.x, y: spots[n]!.y - p.foot.y });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Containers that are already placed

/**
 * Places the new children of a container whose position P is known (given, or derived from
 * children with given positions). Returns the container relative to P. `externalAbs`: the
 * boxes of the other placed elements and of their children (absolute).
 */
function layoutPlacedContainer(c: Inst, P: Position, externalAbs: Rect[], ctx: Ctx): Placed {
  const fixed: Box[] = c.kids.filter((k) => k.pos).map((k) => ({ id: k.id, x: k.pos!.x - P.x, y: k.pos!.y - P.y, w: k.w, h: k.h }));
  const fresh = c.kids.filter((k) => !k.pos);
  if (fresh.length === 0) return containerFromKids(c, fixed);

  const external = externalAbs.map((r) => translate(r, -P.x, -P.y));
  const innerW = innerWidthLimit(c);
  const relevant = (region: Rect): Rect[] => external.filter((r) => rectsOverlap(r, region));
  // The container as it is before the new children arrive.
  const base = containerFromKids(c, fixed);
  const baseBox: Rect = { x: 0, y: 0, w: base.w, h: base.h };

  // Arrangements of the new children: layered; packed in rows within the width limit; packed in
  // rows within the container's current inner width (grows downwards only); one column.
  const block = layoutBlock(fresh, ctx, innerW);
  const order = readingOrder(fresh.map((k) => ({ inst: k, x: block.get(k)!.x, y: block.get(k)!.y }))).map((e) => e.inst);
  const layered: Box[] = order.map((k) => ({ id: k.id, x: block.get(k)!.x, y: block.get(k)!.y, w: k.w, h: k.h }));
  const rowsWithin = (width: number): Box[] => {
    const spots = shelfPack(order, width, L.gap);
    return order.map((k, i) => ({ id: k.id, x: spots[i]!.x, y: spots[i]!.y, w: k.w, h: k.h }));
  };
  const variants = [layered, rowsWithin(innerW), rowsWithin(Math.max(1, base.w - 2 * L.padSide)), rowsWithin(0)];
  const moved = (v: Box[], at: Position): Box[] => v.map((b) => translate(b, at.x, at.y));

  // 1. Free space inside the container's current box.
  const sized = c.givenW !== undefined && c.givenH !== undefined;
  if (fixed.length > 0 || sized) {
    const inner: Rect = { x: L.padSide, y: L.padTop, w: base.w - 2 * L.padSide, h: base.h - L.padTop - L.padBottom };
    const obstacles = [...fixed, ...relevant(inner)];
    for (const v of variants) {
      const b = unionAll(v)!;
      const spot = findSpot(inner, obstacles, b.w, b.h, L.gap);
      if (spot) return containerFromKids(c, [...fixed, ...moved(v, spot)]);
    }
  }

  // 2. Size given and no room for the block: one child at a time into any free spot inside;
  //    what does not fit goes to the first free spot below (overflowing the container's box).
  if (sized) return fillOneByOne(c, fixed, order, external, base.w, base.h);

  // 3. Grow the container (its size, or one dimension of it, was not given). Every candidate
  //    is scored: [covers a placed element it did not cover before, children outside, area];
  //    the first candidate with the smallest score wins.
  const score = (p: Placed): number[] => {
    const own: Rect = { x: 0, y: 0, w: p.w, h: p.h };
    const added = p.kids.slice(fixed.length);
    const addedBox = unionAll(added);
    const covers = external.some(
      (r) =>
        (rectsOverlap(r, own) && !rectsOverlap(r, baseBox)) ||
        (addedBox !== null && rectsOverlap(r, addedBox) && added.some((k) => rectsOverlap(r, k))),
    );
    const outside = p.kids.filter((k) => !rectContains(own, k)).length;
    return [covers ? 1 : 0, outside, p.foot.w * p.foot.h];
  };
  let best: { p: Placed; score: number[] } | null = null;
  const consider = (p: Placed): void => {
    const s = score(p);
    if (!best || lexLess(s, best.score)) best = { p, score: s };
  };

  // 3a. The arrangements as blocks: to the right of or below the placed children, or at the
  //     first free spot (clear of other placed elements) in the largest allowed box.
  const anchors: Position[] = [];
  if (fixed.length > 0) {
    const fb = unionAll(fixed)!;
    anchors.push({ x: Math.ceil(fb.x + fb.w) + L.gap, y: Math.max(L.padTop, Math.floor(fb.y)) });
    anchors.push({ x: L.padSide, y: Math.ceil(fb.y + fb.h) + L.gap });
  } else {
    anchors.push({ x: L.padSide, y: L.padTop });
  }
  const maxW = c.givenW ?? L.maxSize;
  const maxH = c.givenH ?? L.maxSize;
  const maxInner: Rect = { x: L.padSide, y: L.padTop, w: maxW - 2 * L.padSide, h: maxH - L.padTop - L.padBottom };
  for (const v of variants) {
    const b = unionAll(v)!;
    const spot = findSpot(maxInner, [...fixed, ...relevant(maxInner)], b.w, b.h, L.gap);
    for (const a of spot ? [...anchors, spot] : anchors) consider(containerFromKids(c, [...fixed, ...moved(v, a)]));
  }

  // 3b. When every block covers something or leaves children outside: the largest boxes that
  //     cover nothing new (for each width from the current one up to the limit, as tall as
  //     the elements below allow), filled one child at a time; children that do not fit go
  //     to free space below. The current width always qualifies, so something overlap-free
  //     is always among the candidates.
  if (best!.score[0] !== 0 || best!.score[1] !== 0) {
    const maxBox: Rect = { x: 0, y: 0, w: maxW, h: maxH };
    const around = external.filter((r) => rectsOverlap(r, maxBox) && !rectsOverlap(r, baseBox));
    const widths = [base.w];
    if (c.givenW === undefined) {
      widths.push(maxW);
      for (const r of around) widths.push(Math.floor(r.x) - L.gap);
      // Widths that hold j more columns of the widest new child next to the placed ones.
      const from = fixed.length > 0 ? Math.ceil(unionAll(fixed)!.x + unionAll(fixed)!.w) + L.gap : L.padSide;
      const kw = Math.max(...fresh.map((k) => k.w));
      for (let j = 1; from + j * kw + (j - 1) * L.gap + L.padSide <= maxW; j++) {
        widths.push(from + j * kw + (j - 1) * L.gap + L.padSide);
      }
    }
    const candidates = [...new Set(widths.filter((w) => w >= base.w && w <= maxW))].sort((a, b) => a - b);
    for (const w of candidates) {
      let h = maxH;
      let ok = true;
      for (const r of around) {
        if (!rectsOverlap(r, { x: 0, y: 0, w, h: maxH })) continue;
        if (r.y < base.h) {
          ok = false;
          break;
        }
        h = Math.min(h, Math.max(base.h, Math.floor(r.y) - L.gap));
      }
      if (ok) consider(fillOneByOne(c, fixed, order, external, w, h));
    }
  }
  return best!.p;
}

/**
 * The new children (`order`) of a placed container, one at a time into the first free spot of
 * a w×h box (relative to the container's top-left corner, padding kept); the ones that do not
 * fit go, packed in rows, to the first free spot below. The container keeps a given size;
 * otherwise it is sized to the children inside that box (so it stays within it). Never on top
 * of another element.
 */
function fillOneByOne(c: Inst, fixed: Box[], order: Inst[], external: Rect[], w: number, h: number): Placed {
  const relevant = (region: Rect): Rect[] => external.filter((r) => rectsOverlap(r, region));
  const inner: Rect = { x: L.padSide, y: L.padTop, w: w - 2 * L.padSide, h: h - L.padTop - L.padBottom };
  const occupied: Rect[] = [...fixed, ...relevant(inner)];
  const kids: Box[] = [...fixed];
  const inside: Box[] = [...fixed];
  // Occupied space only grows, so a size that found no room finds none later, nor does any
  // larger one: once the box is full, the remaining children cost nothing to turn away.
  const noRoom: Array<{ w: number; h: number; gap: number }> = [];
  const spotInside = (k: Inst, gap: number): Position | null => {
    if (noRoom.some((s) => s.gap === gap && s.w <= k.w && s.h <= k.h)) return null;
    const spot = findSpot(inner, occupied, k.w, k.h, gap);
    if (!spot) noRoom.push({ w: k.w, h: k.h, gap });
    return spot;
  };
  const overflow: Inst[] = [];
  for (const k of order) {
    const spot = spotInside(k, L.gap) ?? spotInside(k, 1);
    if (!spot) {
      overflow.push(k);
      continue;
    }
    const box = { id: k.id, x: spot.x, y: spot.y, w: k.w, h: k.h };
    kids.push(box);
    occupied.push(box);
    if (rectContains(inner, box)) inside.push(box);
  }
  if (overflow.length > 0) {
    const rows = shelfPack(overflow, Math.max(1, inner.w), L.gap);
    const block = overflow.map((k, i) => ({ id: k.id, x: rows[i]!.x, y: rows[i]!.y, w: k.w, h: k.h }));
    const bb = unionAll(block)!;
    const below: Rect = { x: inner.x, y: inner.y, w: Math.max(inner.w, bb.w), h: Infinity };
    const spot = findSpot(below, [...occupied, ...relevant(below)], bb.w, bb.h, L.gap) ?? {
      x: inner.x,
      y: Math.ceil(Math.max(inner.y, ...occupied.map((o) => o.y + o.h), ...relevant(below).map((o) => o.y + o.h))) + L.gap,
    };
    for (const b of block) kids.push(translate(b, spot.x, spot.y));
  }
  const own = containerFromKids(c, inside);
  return { x: 0, y: 0, w: own.w, h: own.h, kids, foot: unionAll([{ x: 0, y: 0, w: own.w, h: own.h }, ...kids])! };
}

function lexLess(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    if (a[i]! !== b[i]!) return a[i]! < b[i]!;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Entry points

/** False when every instance has position, width and height and every text area position and width. */
export function needsLayout(input: LayoutInput): boolean {
  return (
    input.instances.some((i) => !hasPos(i.position) || !isNum(i.width) || !isNum(i.height)) ||
    input.textareas.some((t) => !hasPos(t.position) || !isNum(t.width))
  );
}

/** Whether `corners` (a rectangle of top-left corners) lies within the coordinates a request may send. */
function withinCoordinates(box: Rect): boolean {
  const limit = L.coordinateLimit;
  return box.x >= -limit && box.y >= -limit && box.x + box.w <= limit && box.y + box.h <= limit;
}

/**
 * Completes the layout of a diagram: every instance gets a position and size, every text area a
 * position and width. Given values are kept exactly; only elements without a position are
 * placed. Pure; nothing is computed when nothing needs placing.
 */
export async function layoutDiagram(input: LayoutInput): Promise<LayoutResult> {
  if (!needsLayout(input)) return copyGiven(input);
  const { insts, byId } = prepare(input);
  const ctx: Ctx = { relations: resolveRelations(input.relations, byId) };

  interface TopItem {
    placed: Placed;
    inst?: Inst;
    ta?: LayoutTextArea;
  }
  const fixed: TopItem[] = [];
  const placedContainers: Array<{ item: TopItem; inst: Inst }> = [];
  const fresh: Inst[] = [];

  for (const i of insts) {
    if (i.parent) continue;
    if (!i.isContainer) {
      if (i.pos) fixed.push({ inst: i, placed: { ...leafPlaced(i), x: i.pos.x, y: i.pos.y } });
      else fresh.push(i);
      continue;
    }
    const fixedKids = i.kids.filter((k) => k.pos);
    let P: Position | undefined = i.pos;
    if (!P && fixedKids.length > 0) {
      // Anchored by its placed children: the box starts one padding above-left of them.
      const fb = unionAll(fixedKids.map((k) => ({ x: k.pos!.x, y: k.pos!.y, w: k.w, h: k.h })))!;
      P = { x: fb.x - L.padSide, y: fb.y - L.padTop };
    }
    if (!P) {
      fresh.push(i);
      continue;
    }
    const kids = fixedKids.map((k) => ({ id: k.id, x: k.pos!.x - P.x, y: k.pos!.y - P.y, w: k.w, h: k.h }));
    const item: TopItem = { inst: i, placed: { ...containerFromKids(i, kids), x: P.x, y: P.y } };
    fixed.push(item);
    placedContainers.push({ item, inst: i });
  }

  const freshTexts: LayoutTextArea[] = [];
  const seenTexts = new Set<string>();
  for (const t of input.textareas) {
    if (seenTexts.has(t.id)) continue;
    seenTexts.add(t.id);
    const w = isNum(t.width) ? t.width : defaultTextAreaWidth(t.text);
    const size = { w, h: textAreaHeight(t.text, w) };
    if (hasPos(t.position)) fixed.push({ ta: t, placed: { ...leafPlaced(size), x: t.position.x, y: t.position.y } });
    else freshTexts.push(t);
  }

  // New children of placed containers, each container in input order.
  for (const { item, inst } of placedContainers) {
    if (!inst.kids.some((k) => !k.pos)) continue;
    const P = { x: item.placed.x, y: item.placed.y };
    const external = fixed.filter((f) => f !== item).flatMap((f) => boxesAt(f.placed));
    item.placed = { ...layoutPlacedContainer(inst, P, external, ctx), x: P.x, y: P.y };
  }

  // New top-level instances: one block next to what is placed.
  const all: TopItem[] = [...fixed];
  if (fresh.length > 0) {
    const block = layoutBlock(fresh, ctx, Infinity);
    const blockItems = fresh.map((i) => ({ inst: i, placed: block.get(i)! }));
    const bb = unionAll(blockItems.map((b) => footAt(b.placed)))!;
    const F = unionAll(fixed.map((f) => footAt(f.placed)));
    let at: Position = { x: -bb.x, y: -bb.y };
    if (F) {
      const right = { x: Math.ceil(F.x + F.w) + L.groupGap, y: Math.floor(F.y) };
      const below = { x: Math.floor(F.x), y: Math.ceil(F.y + F.h) + L.groupGap };
      const areaAt = (p: Position): number => {
        const u = unionAll([F, { x: p.x, y: p.y, w: bb.w, h: bb.h }])!;
        return u.w * u.h;
      };
      // Right or below, whichever keeps the whole smaller; at the edge of the coordinates, left or
      // above, so that nothing lands beyond what a request could send back.
      const left = { x: Math.floor(F.x) - L.groupGap - Math.ceil(bb.w), y: Math.floor(F.y) };
      const above = { x: Math.floor(F.x), y: Math.floor(F.y) - L.groupGap - Math.ceil(bb.h) };
      const preferred = areaAt(below) < areaAt(right) ? [below, right] : [right, below];
      // The top-left corners of the block's boxes, relative to the block: what must stay within.
      const corners = unionAll(blockItems.flatMap((b) => boxesAt(b.placed)).map((r) => ({ x: r.x - bb.x, y: r.y - bb.y, w: 0, h: 0 })))!;
      const fits = (p: Position) => withinCoordinates({ x: p.x + corners.x, y: p.y + corners.y, w: corners.w, h: corners.h });
      const chosen = [...preferred, left, above].find(fits) ?? preferred[0]!;
      at = { x: chosen.x - bb.x, y: chosen.y - bb.y };
    }
    for (const b of blockItems) {
      b.placed.x += at.x;
      b.placed.y += at.y;
      all.push(b);
    }
  }

  // New text areas: in rows below everything.
  if (freshTexts.length > 0) {
    const B = unionAll(all.map((f) => footAt(f.placed)));
    const sizes = freshTexts.map((t) => {
      const w = isNum(t.width) ? t.width : defaultTextAreaWidth(t.text);
      return { w, h: textAreaHeight(t.text, w) };
    });
    const spots = shelfPack(sizes, Math.max(L.maxSize, B ? Math.ceil(B.w) : 0), L.gap);
    const rows = unionAll(sizes.map((size, n) => ({ x: spots[n]!.x, y: spots[n]!.y, w: size.w, h: size.h })))!;
    const corners = unionAll(spots.map((spot) => ({ x: spot.x, y: spot.y, w: 0, h: 0 })))!;
    // Below everything; at the bottom edge of the coordinates, above it.
    let origin = B ? { x: Math.floor(B.x), y: Math.ceil(B.y + B.h) + L.gap } : { x: 0, y: 0 };
    if (B && !withinCoordinates({ x: origin.x + corners.x, y: origin.y + corners.y, w: corners.w, h: corners.h })) {
      origin = { x: origin.x, y: Math.floor(B.y) - L.gap - Math.ceil(rows.h) };
    }
    freshTexts.forEach((t, n) => {
      all.push({ ta: t, placed: { ...leafPlaced(sizes[n]!), x: origin.x + spots[n]!.x, y: origin.y + spots[n]!.y } });
    });
  }

  // Assemble, in input order.
  const instBoxes = new Map<string, { position: Position; width: number; height: number }>();
  const taBoxes = new Map<string, { position: Position; width: number }>();
  for (const item of all) {
    const p = item.placed;
    if (item.inst) {
      instBoxes.set(item.inst.id, { position: { x: p.x, y: p.y }, width: p.w, height: p.h });
      for (const k of p.kids) {
        instBoxes.set(k.id, { position: { x: p.x + k.x, y: p.y + k.y }, width: k.w, height: k.h });
      }
    } else if (item.ta) {
      taBoxes.set(item.ta.id, { position: { x: p.x, y: p.y }, width: p.w });
    }
  }
  const result: LayoutResult = { instances: new Map(), textareas: new Map() };
  for (const i of insts) {
    const b = instBoxes.get(i.id);
    if (b) result.instances.set(i.id, b);
  }
  for (const t of input.textareas) {
    const b = taBoxes.get(t.id);
    if (b && !result.textareas.has(t.id)) result.textareas.set(t.id, b);
  }
  return result;
}

function copyGiven(input: LayoutInput): LayoutResult {
  const result: LayoutResult = { instances: new Map(), textareas: new Map() };
  for (const i of input.instances) {
    if (result.instances.has(i.id)) continue;
    result.instances.set(i.id, { position: { x: i.position!.x, y: i.position!.y }, width: i.width!, height: i.height! });
  }
  for (const t of input.textareas) {
    if (result.textareas.has(t.id)) continue;
    result.textareas.set(t.id, { position: { x: t.position!.x, y: t.position!.y }, width: t.width! });
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Checks (for tests and callers)

/** True when the interiors of two boxes intersect (touching edges is fine). */
export function boxesOverlap(
  a: { position: Position; width: number; height: number },
  b: { position: Position; width: number; height: number },
): boolean {
  return rectsOverlap(
    { x: a.position.x, y: a.position.y, w: a.width, h: a.height },
    { x: b.position.x, y: b.position.y, w: b.width, h: b.height },
  );
}

/**
 * Pairs of elements (instance or text area ids) whose boxes overlap, except a container and
 * its own children. Text area heights follow textAreaHeight.
 */
export function findOverlaps(result: LayoutResult, input: LayoutInput): Array<[string, string]> {
  const parents = effectiveParents(input.instances);
  const boxes: Array<{ id: string; r: Rect; inst: boolean }> = [];
  for (const [id, b] of result.instances) {
    boxes.push({ id, r: { x: b.position.x, y: b.position.y, w: b.width, h: b.height }, inst: true });
  }
  const texts = new Map(input.textareas.map((t) => [t.id, t.text]));
  for (const [id, b] of result.textareas) {
    const h = textAreaHeight(texts.get(id) ?? '', b.width);
    boxes.push({ id, r: { x: b.position.x, y: b.position.y, w: b.width, h }, inst: false });
  }
  const out: Array<[string, string]> = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i]!;
      const b = boxes[j]!;
      if (a.inst && b.inst && (parents.get(a.id) === b.id || parents.get(b.id) === a.id)) continue;
      if (rectsOverlap(a.r, b.r)) out.push([a.id, b.id]);
    }
  }
  return out;
}

/** Ids of children whose box is not inside their container's box. */
export function findChildrenOutside(result: LayoutResult, input: LayoutInput): string[] {
  const out: string[] = [];
  for (const [id, parent] of effectiveParents(input.instances)) {
    if (parent == null) continue;
    const c = result.instances.get(id);
    const p = result.instances.get(parent);
    if (!c || !p) continue;
    const inside = rectContains(
      { x: p.position.x, y: p.position.y, w: p.width, h: p.height },
      { x: c.position.x, y: c.position.y, w: c.width, h: c.height },
    );
    if (!inside) out.push(id);
  }
  return out;
}
