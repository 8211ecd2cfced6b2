/**
 * The drawing of one diagram as SVG: a pure function of the diagram and the model, shared by
 * the diagram page (inline), `GET /diagrams/<id>.svg` and the API's `Accept: image/svg+xml`.
 *
 * Every element sits at its stored grid position times GRID_PX, so `x`, `y`, `width` and
 * `height` of a box are exactly the stored layout; the `viewBox` moves to wherever the
 * diagram is (positions may be negative). Relations are routed around the boxes (./route.ts),
 * their labels placed along the routes (./labels.ts), boxes drawn in the C4 notation
 * (./notation.ts). Text is bounded before it is measured (./text.ts): the cost of a drawing
 * grows linearly with the diagram, never with the length of one name or text area.
 */
import { unionAll } from '../layout/geometry.js';
import { textAreaHeight, textAreaLines as wrappedLines } from '../layout/layout.js';
import type { Diagram, Model, TextArea } from '../model/types.js';

/** What a drawing reads of the model: its components (names, types, tags), types and tags. */
export type DrawingModel = Pick<Model, 'components' | 'types' | 'tags'>;
import { esc } from '../escape.js';
import { LabelPlacer } from './labels.js';
import { classify, drawInstance, legend, NOTATION_STYLE, shapeContains, sidesFrom, type Kind } from './notation.js';
import { ARROW_PX, routeEdges, type Point, type RouteNode } from './route.js';
import { clip, textWidth, wrapText } from './text.js';

/** Pixels per editor grid unit. */
export const GRID_PX = 14;
/** Blank space around the diagram, grid units. */
const MARGIN = 2;
/** Lines of a text area drawn at most; the rest is shown as "…" (docs/api.md, Limits). */
export const DRAWN_TEXTAREA_LINES = 200;
/** Characters of one text area line drawn at most (a text area is at most this wide). */
const DRAWN_TEXTAREA_WIDTH = 200;

export type Mark = 'added' | 'removed' | 'changed';

export interface DrawOptions {
  /**
   * Each component box links to this followed by the component's id (the page: `#c-`, its
   * panel). None: boxes are not links. Text, so that the options go to a worker as they are.
   */
  componentHref?: string;
  /** Adds the handles the page's script drags. */
  editable?: boolean;
  /**
   * Changes to show (a draft's visual diff): element id (instance, text area or relation) →
   * the class `c4-added`, `c4-removed` or `c4-changed` on that element's group.
   */
  marks?: ReadonlyMap<string, Mark>;
  /** Draws the legend of the notation below the diagram (default true). */
  legend?: boolean;
  /**
   * Drawn for a share link's page and drawings: a component's API marker does not say its API
   * context, which a share page does not show (docs/api.md §16: name, type, state and
   * description only).
   */
  shared?: boolean;
}

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

const LABEL_FONT = { size: 11 };
const LABEL_LINE = 13;
const LABEL_MAX_WIDTH = 170;

const STYLE = `
.c4-diagram{font-family:'DejaVu Sans',Verdana,system-ui,sans-serif;background:#fff}
${NOTATION_STYLE}
.c4-diagram .relation path{fill:none;stroke:#5a6672;stroke-width:1.4;stroke-dasharray:6 3}
.c4-diagram .relation-label rect{fill:#fff;fill-opacity:.92}
.c4-diagram .relation-label text{font-size:11px;fill:#26323d}
.c4-diagram .textarea text{font-family:'DejaVu Sans Mono',ui-monospace,Menlo,Consolas,monospace;font-size:11px;fill:#334e68}
.c4-diagram .handle{fill:#2f5d8a;opacity:0;cursor:nwse-resize}
.c4-diagram.editable .draggable{cursor:move}
.c4-diagram.editable .draggable:hover .handle,.c4-diagram.editable .draggable:focus-within .handle{opacity:.6}
.c4-diagram a:focus-visible .body,.c4-diagram a:focus-visible .shape,.c4-diagram .draggable:focus-visible>.body,.c4-diagram .draggable:focus-visible>.frame{stroke:#d64545;stroke-width:3}
.c4-diagram .c4-removed{opacity:.4}
.c4-diagram .c4-removed .body,.c4-diagram .c4-removed .shape,.c4-diagram .c4-removed path{stroke:#c0392b;stroke-width:3}
.c4-diagram .c4-added .body,.c4-diagram .c4-added .shape,.c4-diagram .c4-added path{stroke:#2f9e44;stroke-width:3}
.c4-diagram .c4-changed .body,.c4-diagram .c4-changed .shape,.c4-diagram .c4-changed path{stroke:#e8890c;stroke-width:3}
@media print{.c4-diagram .handle{display:none}}
`;

const px = (units: number) => units * GRID_PX;

function round(n: number): string {
  return String(Math.round(n * 10) / 10);
}

/** The text area's lines as the layout counts them (wrapped at a space where one fits), at most `maxLines`. */
export function textAreaLines(text: string, width: number, maxLines = DRAWN_TEXTAREA_LINES): string[] {
  return wrappedLines(text, Math.min(DRAWN_TEXTAREA_WIDTH, width), maxLines);
}

/** A text area's drawn box: as wide as stored, as tall as its drawn lines (+1 for "…"). */
function textAreaBox(t: TextArea): Box {
  const h = textAreaHeight(t.text, t.width);
  return { x: t.position.x, y: t.position.y, w: t.width, h: Math.min(h, DRAWN_TEXTAREA_LINES + 1) };
}

function bounds(boxes: Box[]): Box {
  return unionAll(boxes) ?? { x: 0, y: 0, w: 20, h: 10 };
}

function markClass(options: DrawOptions, id: string): string {
  const mark = options.marks?.get(id);
  return mark ? ` c4-${mark}` : '';
}

/** `b`: its textAreaBox, whose height already says whether lines were left out (one more than drawn). */
function textAreaSvg(t: TextArea, b: Box, options: DrawOptions): string {
  const lines = textAreaLines(t.text, t.width).map(
    (line, n) => `<text x="${px(b.x)}" y="${px(b.y + n) + 11}" xml:space="preserve">${esc(line)}</text>`,
  );
  if (b.h > DRAWN_TEXTAREA_LINES) lines.push(`<text x="${px(b.x)}" y="${px(b.y + DRAWN_TEXTAREA_LINES) + 11}">…</text>`);
  const handle = options.editable
    ? `<rect class="handle" x="${px(b.x + b.w) - 10}" y="${px(b.y + b.h) - 10}" width="10" height="10"/>`
    : '';
  const frame = `<rect class="frame" x="${px(b.x)}" y="${px(b.y)}" width="${px(b.w)}" height="${px(b.h)}" fill="transparent"/>`;
  // Arranged with the keyboard too (static/viewer.js): it takes the focus, named by its first line.
  const focusable = options.editable ? ` tabindex="0" aria-label="${esc(clip(`Text area ${t.text.split('\n')[0]}`))}"` : '';
  return (
    `<g class="textarea${options.editable ? ' draggable' : ''}${markClass(options, t.id)}" data-kind="textarea" data-id="${esc(t.id)}" data-x="${b.x}" data-y="${b.y}" data-w="${b.w}" data-h="${b.h}"${focusable}>` +
    `${frame}${lines.join('')}${handle}</g>`
  );
}

function pathOf(points: readonly Point[]): string {
  // Orthogonal, with rounded corners (radius up to 8 px, less on short segments).
  let d = `M${round(points[0]!.x)},${round(points[0]!.y)}`;
  for (let i = 1; i < points.length; i++) {
    const p = points[i]!;
    if (i === points.length - 1) {
      d += ` L${round(p.x)},${round(p.y)}`;
      break;
    }
    const prev = points[i - 1]!;
    const next = points[i + 1]!;
    const nextLength = Math.abs(next.x - p.x) + Math.abs(next.y - p.y);
    let r = Math.min(8, (Math.abs(p.x - prev.x) + Math.abs(p.y - prev.y)) / 2, nextLength / 2);
    // The last bend leaves the arrowhead a straight stretch to sit on (routing keeps the last leg
    // at least ARROW_PX long): on the curve it looked off its line.
    if (i === points.length - 2) r = Math.min(r, Math.max(0, nextLength - ARROW_PX));
    const inX = Math.sign(p.x - prev.x);
    const inY = Math.sign(p.y - prev.y);
    const outX = Math.sign(next.x - p.x);
    const outY = Math.sign(next.y - p.y);
    d += ` L${round(p.x - inX * r)},${round(p.y - inY * r)} Q${round(p.x)},${round(p.y)} ${round(p.x + outX * r)},${round(p.y + outY * r)}`;
  }
  return d;
}

/** A relation's label as drawn: its lines (at most 3) and the size of its box. */
export interface RelationLabel {
  text: string[];
  w: number;
  h: number;
}

/** The label drawn for a relation's `label`, or null when it has none. */
export function relationLabel(label: string | null): RelationLabel | null {
  if (label === null || label.trim() === '') return null;
  const text = wrapText(label, LABEL_MAX_WIDTH, LABEL_FONT, 3);
  return { text, w: Math.ceil(Math.max(...text.map((l) => textWidth(l, LABEL_FONT)))) + 6, h: text.length * LABEL_LINE + 4 };
}

/** Kinds whose shape leaves parts of its box empty (a person's head, a cylinder's or a pipe's ends). */
const UNFILLED: ReadonlySet<Kind> = new Set<Kind>(['person', 'external-person', 'database', 'queue']);

/**
 * A route's start (or end) carried on along its first (last) leg into its box until it meets the
 * shape drawn there: routes are found between boxes, and a person's head and body, a cylinder or
 * a pipe leave parts of the box empty, where an arrow's tip pointed at nothing (the top corners
 * of a person's box: 36 px above the body of a default-sized one). Only a leg that enters the
 * box through its side, along an axis; the leg then runs on, straight, to the outline.
 */
function toShape(points: Point[], atStart: boolean, kind: Kind, b: Box): void {
  if (points.length < 2) return;
  const k = atStart ? 0 : points.length - 1;
  const p = points[k]!;
  const q = points[atStart ? 1 : points.length - 2]!;
  const dx = Math.sign(p.x - q.x);
  const dy = Math.sign(p.y - q.y);
  if ((dx === 0) === (dy === 0)) return;
  const into = { x: p.x + dx, y: p.y + dy };
  if (!(into.x > b.x && into.x < b.x + b.w && into.y > b.y && into.y < b.y + b.h)) return;
  const meets = (s: number) => shapeContains(kind, b, p.x + dx * s, p.y + dy * s);
  if (meets(0)) return;
  const limit = dx === 0 ? b.h : b.w;
  let s = 1;
  while (s < limit && !meets(s)) s++;
  if (!meets(s)) return;
  // The outline lies in the last pixel stepped: halved down to a twentieth of one.
  let outside = s - 1;
  for (let i = 0; i < 5; i++) {
    const mid = (outside + s) / 2;
    if (meets(mid)) s = mid;
    else outside = mid;
  }
  points[k] = { x: p.x + dx * s, y: p.y + dy * s };
}

/** The diagram as a standalone SVG document fragment (carries its own namespace and style). */
export function drawDiagram(diagram: Diagram, model: DrawingModel, options: DrawOptions = {}): string {
  const instances = diagram.componentInstances;
  const kinds = new Map<string, Kind>();
  const tagNames = new Map<string, string>();
  for (const tag of model.tags.values()) tagNames.set(tag.id, tag.name);
  for (const i of instances) kinds.set(i.id, classify(i, model, tagNames));

  const placer = new LabelPlacer();
  const nodes: RouteNode[] = [];
  const drawn: string[] = [];
  const containers: string[] = [];
  for (const i of instances) {
    const box = { x: px(i.position.x), y: px(i.position.y), w: px(i.width), h: px(i.height) };
    const solidFrom = sidesFrom(kinds.get(i.id)!, box);
    const { svg, blocks, marker } = drawInstance(i, model, kinds.get(i.id)!, box, {
      ...(options.componentHref ? { componentHref: options.componentHref } : {}),
      editable: options.editable === true,
      shared: options.shared === true,
      extraClass: markClass(options, i.id),
    });
    // A boundary's title and API marker: relations drawn inside it to its wall keep off them.
    const inner = i.isContainer ? [...blocks, ...(marker ? [marker] : [])] : [];
    nodes.push({
      id: i.id,
      parent: i.parent,
      ...box,
      ...(solidFrom > box.y ? { sidesFrom: solidFrom } : {}),
      ...(inner.length > 0 ? { inner } : {}),
    });
    for (const r of blocks) placer.block(r);
    (i.isContainer ? containers : drawn).push(svg);
  }
  const areaBoxes = diagram.textareas.map(textAreaBox);
  // Text areas are notes: relations go round them as round boxes (never an end: an id with a space is no instance's).
  const notes: RouteNode[] = [];
  for (const [k, b] of areaBoxes.entries()) {
    const box = { x: px(b.x), y: px(b.y), w: px(b.w), h: px(b.h) };
    placer.block(box);
    notes.push({ id: `textarea ${diagram.textareas[k]!.id}`, parent: null, ...box });
  }

  // Labels are measured before routing: relations between the same two boxes are drawn far
  // enough apart for their labels (route.ts, PARALLEL_SPACING).
  const labelOf = new Map<string, RelationLabel>();
  for (const r of diagram.relations) {
    const label = relationLabel(r.label);
    if (label) labelOf.set(r.id, label);
  }
  const routes = routeEdges(
    [...nodes, ...notes],
    diagram.relations.map((r) => {
      const label = labelOf.get(r.id);
      return {
        id: r.id,
        from: r.fromComponentInstance,
        to: r.toComponentInstance,
        ...(label ? { label: { w: label.w, h: label.h } } : {}),
      };
    }),
  );
  const nodeOf = new Map(nodes.map((n) => [n.id, n]));
  for (const r of diagram.relations) {
    const points = routes.get(r.id);
    if (!points) continue;
    for (const [end, atStart] of [
      [r.fromComponentInstance, true],
      [r.toComponentInstance, false],
    ] as const) {
      const kind = kinds.get(end);
      const node = nodeOf.get(end);
      if (kind && node && UNFILLED.has(kind)) toShape(points, atStart, kind, node);
    }
  }
  for (const [id, points] of routes) placer.addRoute(id, points);
  const lines: string[] = [];
  const labels: string[] = [];
  const labelBoxes: Box[] = [];
  for (const r of diagram.relations) {
    const points = routes.get(r.id);
    if (!points) continue;
    const data = `data-id="${esc(r.id)}" data-from="${esc(r.fromComponentInstance)}" data-to="${esc(r.toComponentInstance)}"`;
    const title = r.desc === null ? '' : `<title>${esc(clip(r.desc))}</title>`;
    lines.push(
      `<g class="relation${markClass(options, r.id)}" ${data}>${title}<path d="${pathOf(points)}" marker-end="url(#c4-arrow)"/></g>`,
    );
    const label = labelOf.get(r.id);
    if (label) {
      const { text, w, h } = label;
      const box = placer.place(r.id, points, w, h);
      labelBoxes.push(box);
      const tspans = text
        // A space ends each wrapped line, so the label's text reads whole (copy, screen readers).
        .map(
          (l, n) =>
            `<tspan x="${round(box.x + box.w / 2)}" y="${round(box.y + 2 + (n + 1) * LABEL_LINE - 3)}">${esc(l)}${n < text.length - 1 ? ' ' : ''}</tspan>`,
        )
        .join('');
      labels.push(
        `<g class="relation-label${markClass(options, r.id)}" data-id="${esc(r.id)}"><rect x="${round(box.x)}" y="${round(box.y)}" width="${round(box.w)}" height="${round(box.h)}" rx="3"/>` +
          `<text class="label" text-anchor="middle">${tspans}</text></g>`,
      );
    }
  }
  const textareas = diagram.textareas.map((t, i) => textAreaSvg(t, areaBoxes[i]!, options));

  // Routes may run outside the boxes (round a container at the picture's edge): the picture
  // holds them whole. (An arrowhead drawn wholly off the canvas also makes resvg abort the process.)
  const routePoints = [...routes.values()].flat().map((p) => ({ x: p.x, y: p.y, w: 0, h: 0 }));
  const all = bounds([
    ...nodes,
    ...areaBoxes.map((b) => ({ x: px(b.x), y: px(b.y), w: px(b.w), h: px(b.h) })),
    ...labelBoxes,
    ...routePoints,
  ]);
  let view = { x: all.x - px(MARGIN), y: all.y - px(MARGIN), w: all.w + 2 * px(MARGIN), h: all.h + 2 * px(MARGIN) };
  let legendSvg = '';
  if (options.legend !== false && instances.length > 0) {
    const l = legend([...kinds.values()], { x: view.x + px(MARGIN), y: view.y + view.h }, diagram.relations.length > 0);
    legendSvg = l.svg;
    view = { ...view, w: Math.max(view.w, l.w + 2 * px(MARGIN)), h: view.h + l.h + px(MARGIN) };
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="c4-diagram${options.editable ? ' editable' : ''}" ` +
    `viewBox="${round(view.x)} ${round(view.y)} ${round(view.w)} ${round(view.h)}" width="${round(view.w)}" height="${round(view.h)}" ` +
    `data-grid="${GRID_PX}" role="${options.componentHref ? 'group' : 'img'}" aria-label="${esc(clip(`${diagram.name} (${diagram.level})`))}">` +
    `<title>${esc(clip(diagram.name))}</title><style>${STYLE}</style>` +
    // orient="auto", not auto-start-reverse: resvg (the PNGs) reads that as 0°, every head pointing right.
    '<defs><marker id="c4-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto">' +
    '<path d="M0,0 L10,5 L0,10 z" fill="#5a6672"/></marker></defs>' +
    `<g class="containers">${containers.join('')}</g><g class="relations">${lines.join('')}</g>` +
    `<g class="instances">${drawn.join('')}</g><g class="relation-labels">${labels.join('')}</g>` +
    `<g class="textareas">${textareas.join('')}</g>${legendSvg}</svg>`
  );
}
