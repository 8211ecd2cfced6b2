/**
 * The drawing of one diagram as SVG: a pure function of the diagram and the model, shared by
 * the diagram page (inline), `GET /diagrams/<id>.svg` and the API's `Accept: image/svg+xml`.
 *
 * Every element sits at its stored grid position times GRID_PX, so `x`, `y`, `width` and
 * `height` of a box are exactly the stored layout; the `viewBox` moves to wherever the
 * diagram is (positions may be negative). Text areas follow the layout's own height rule
 * (one character per grid unit, one grid unit per line: src/layout/layout.ts).
 */
import { textAreaHeight } from '../layout/layout.js';
import type { Component, ComponentInstance, Diagram, Model, TextArea } from '../model/types.js';
import { esc } from '../escape.js';

/** Pixels per editor grid unit. */
export const GRID_PX = 14;
/** Blank space around the diagram, grid units. */
const MARGIN = 2;

export interface DrawOptions {
  /** Each component box links here (the page: its panel). None: boxes are not links. */
  componentHref?: (componentId: string) => string;
  /** Adds the handles the page's script drags. */
  editable?: boolean;
  /** Element id → what a draft did to it: the class `c4-added`, `c4-removed` or `c4-changed` on its group (removed ones faded). */
  marks?: ReadonlyMap<string, 'added' | 'removed' | 'changed'>;
}

function markClass(options: DrawOptions, id: string): string {
  const mark = options.marks?.get(id);
  return mark === undefined ? '' : ` c4-${mark}`;
}

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

const STYLE = `
.c4-diagram{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;background:#fff}
.c4-diagram .box rect.body{fill:#eef4fb;stroke:#2f5d8a;stroke-width:1.5}
.c4-diagram .box.placeholder rect.body{fill:#fafafa;stroke:#777;stroke-dasharray:6 4}
.c4-diagram .box.container rect.body{fill:none;stroke:#555;stroke-width:1.5;stroke-dasharray:2 4}
.c4-diagram .name{font-size:13px;font-weight:600;fill:#102a43}
.c4-diagram .kind{font-size:11px;fill:#486581}
.c4-diagram .placeholder-text{font-size:12px;font-style:italic;fill:#555}
.c4-diagram .api-marker rect{fill:#f0b429}
.c4-diagram .api-marker text{font-size:9px;font-weight:700;fill:#3b2300}
.c4-diagram .relation line{stroke:#52606d;stroke-width:1.3}
.c4-diagram .relation-label .label{font-size:11px;fill:#243b53;paint-order:stroke;stroke:#fff;stroke-width:4px;stroke-linejoin:round}
.c4-diagram .textarea text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px;fill:#334e68}
.c4-diagram .handle{fill:#2f5d8a;opacity:0;cursor:nwse-resize}
.c4-diagram.editable .draggable{cursor:move}
.c4-diagram.editable .draggable:hover .handle,.c4-diagram.editable .draggable:focus-within .handle{opacity:.6}
.c4-diagram a:focus-visible rect.body{stroke:#d64545;stroke-width:3}
.c4-diagram .c4-added rect.body,.c4-diagram .c4-added line{stroke:#1f8a4c;stroke-width:3}
.c4-diagram .c4-changed rect.body,.c4-diagram .c4-changed line{stroke:#c77700;stroke-width:3}
.c4-diagram .c4-removed{opacity:.35}
.c4-diagram .c4-removed rect.body,.c4-diagram .c4-removed line{stroke:#c0392b;stroke-dasharray:5 4}
`;

const px = (units: number) => units * GRID_PX;

function boxOf(i: ComponentInstance): Box {
  return { x: i.position.x, y: i.position.y, w: i.width, h: i.height };
}

function textAreaBox(t: TextArea): Box {
  return { x: t.position.x, y: t.position.y, w: t.width, h: textAreaHeight(t.text, t.width) };
}

/** The text area's lines as the layout counts them: each line cut every `width` characters. */
export function textAreaLines(text: string, width: number): string[] {
  const w = Math.max(1, Math.floor(width));
  const lines: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    const chars = [...line];
    if (chars.length === 0) lines.push('');
    for (let i = 0; i < chars.length; i += w) lines.push(chars.slice(i, i + w).join(''));
  }
  return lines;
}

/** Words into lines of at most `width` characters (a longer word is cut). */
function wrapWords(text: string, width: number): string[] {
  const w = Math.max(1, width);
  const lines: string[] = [];
  let line = '';
  for (const word of text
    .trim()
    .split(/\s+/)
    .filter((s) => s !== '')) {
    let rest = word;
    while ([...rest].length > w) {
      if (line !== '') lines.push(line);
      line = '';
      lines.push([...rest].slice(0, w).join(''));
      rest = [...rest].slice(w).join('');
    }
    if (line === '') line = rest;
    else if ([...line].length + 1 + [...rest].length <= w) line += ` ${rest}`;
    else {
      lines.push(line);
      line = rest;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Where the segment from the centre of `from` towards `to` leaves `from`'s box. */
function edgePoint(from: Box, towards: { x: number; y: number }): { x: number; y: number } {
  const cx = from.x + from.w / 2;
  const cy = from.y + from.h / 2;
  const dx = towards.x - cx;
  const dy = towards.y - cy;
  if (dx === 0 && dy === 0) return { x: cx, y: cy };
  const scale = Math.min(dx === 0 ? Infinity : from.w / 2 / Math.abs(dx), dy === 0 ? Infinity : from.h / 2 / Math.abs(dy));
  return { x: cx + dx * Math.min(1, scale), y: cy + dy * Math.min(1, scale) };
}

function centre(b: Box) {
  return { x: b.x + b.w / 2, y: b.y + b.h / 2 };
}

function round(n: number): string {
  return String(Math.round(n * 100) / 100);
}

function bounds(boxes: Box[]): Box {
  if (boxes.length === 0) return { x: 0, y: 0, w: 20, h: 10 };
  const x0 = Math.min(...boxes.map((b) => b.x));
  const y0 = Math.min(...boxes.map((b) => b.y));
  const x1 = Math.max(...boxes.map((b) => b.x + b.w));
  const y1 = Math.max(...boxes.map((b) => b.y + b.h));
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

function apiMarker(b: Box, component: Component): string {
  const x = px(b.x + b.w) - 30;
  const y = px(b.y) + 3;
  return (
    `<g class="api-marker"><title>Updated through the API (${esc(component.apiContext)})</title>` +
    `<rect x="${x}" y="${y}" width="27" height="13" rx="3"/><text x="${x + 4}" y="${y + 10}">API</text></g>`
  );
}

function instanceSvg(i: ComponentInstance, model: Model, options: DrawOptions): string {
  const b = boxOf(i);
  const component = i.component === null ? undefined : model.components.get(i.component);
  const type = component?.typeId == null ? undefined : model.types.get(component.typeId);
  const classes = ['box', i.isContainer ? 'container' : '', component ? 'component' : 'placeholder', options.editable ? 'draggable' : '']
    .filter((c) => c !== '')
    .join(' ');
  const maxChars = Math.max(1, b.w - 2);
  const parts: string[] = [
    `<rect class="body" x="${px(b.x)}" y="${px(b.y)}" width="${px(b.w)}" height="${px(b.h)}" rx="${i.isContainer ? 0 : 6}"/>`,
  ];
  const lines: Array<[cls: string, text: string]> = [];
  if (component) {
    for (const line of wrapWords(component.name, maxChars)) lines.push(['name', line]);
    lines.push(['kind', `[${type?.name ?? 'no type'}]`]);
  } else {
    for (const line of wrapWords(i.placeholder === '' ? 'placeholder' : i.placeholder, maxChars)) lines.push(['placeholder-text', line]);
  }
  // A container's title sits in its top-left corner, above its children; a box's label is centred.
  const lineHeight = 16;
  if (i.isContainer) {
    // One line, within the strip the layout leaves above the children (LAYOUT.padTop).
    const title = component ? `${component.name} ` : i.placeholder === '' ? 'placeholder' : i.placeholder;
    const kind = component ? `<tspan class="kind">[${esc(type?.name ?? 'no type')}]</tspan>` : '';
    parts.push(
      `<text class="${component ? 'name' : 'placeholder-text'}" x="${px(b.x) + 8}" y="${px(b.y) + 17}">${esc(title)}${kind}</text>`,
    );
  } else {
    const top = px(b.y) + px(b.h) / 2 - ((lines.length - 1) * lineHeight) / 2 + 4;
    lines.forEach(([cls, text], n) => {
      parts.push(
        `<text class="${cls}" x="${px(b.x + b.w / 2)}" y="${round(top + n * lineHeight)}" text-anchor="middle">${esc(text)}</text>`,
      );
    });
  }
  if (component?.apiContext !== undefined) parts.push(apiMarker(b, component));
  if (options.editable) {
    parts.push(`<rect class="handle" x="${px(b.x + b.w) - 10}" y="${px(b.y + b.h) - 10}" width="10" height="10"/>`);
  }
  let inner = parts.join('');
  if (component && options.componentHref) {
    const label = `${component.name} [${type?.name ?? 'no type'}]: details`;
    inner = `<a href="${esc(options.componentHref(component.id))}" aria-label="${esc(label)}">${inner}</a>`;
  }
  const data =
    `data-kind="instance" data-id="${esc(i.id)}" data-x="${b.x}" data-y="${b.y}" data-w="${b.w}" data-h="${b.h}"` +
    ` data-container="${i.isContainer}" data-parent="${esc(i.parent ?? '')}"` +
    (component ? ` data-component="${esc(component.id)}"` : '');
  return `<g class="${classes}${markClass(options, i.id)}" ${data}>${inner}</g>`;
}

function textAreaSvg(t: TextArea, options: DrawOptions): string {
  const b = textAreaBox(t);
  const lines = textAreaLines(t.text, t.width).map(
    (line, n) => `<text x="${px(b.x)}" y="${px(b.y + n) + 11}" xml:space="preserve">${esc(line)}</text>`,
  );
  const handle = options.editable
    ? `<rect class="handle" x="${px(b.x + b.w) - 10}" y="${px(b.y + b.h) - 10}" width="10" height="10"/>`
    : '';
  const frame = `<rect class="frame" x="${px(b.x)}" y="${px(b.y)}" width="${px(b.w)}" height="${px(b.h)}" fill="transparent"/>`;
  return (
    `<g class="textarea${options.editable ? ' draggable' : ''}${markClass(options, t.id)}" data-kind="textarea" data-id="${esc(t.id)}" data-x="${b.x}" data-y="${b.y}" data-w="${b.w}" data-h="${b.h}">` +
    `${frame}${lines.join('')}${handle}</g>`
  );
}

/** The diagram as a standalone SVG document fragment (carries its own namespace and style). */
export function drawDiagram(diagram: Diagram, model: Model, options: DrawOptions = {}): string {
  const boxes = new Map(diagram.componentInstances.map((i) => [i.id, boxOf(i)]));
  const all = bounds([...boxes.values(), ...diagram.textareas.map(textAreaBox)]);
  const view = { x: all.x - MARGIN, y: all.y - MARGIN, w: all.w + 2 * MARGIN, h: all.h + 2 * MARGIN };

  const containers = diagram.componentInstances.filter((i) => i.isContainer).map((i) => instanceSvg(i, model, options));
  const others = diagram.componentInstances.filter((i) => !i.isContainer).map((i) => instanceSvg(i, model, options));
  const lines: string[] = [];
  const labels: string[] = [];
  for (const r of diagram.relations) {
    const from = boxes.get(r.fromComponentInstance);
    const to = boxes.get(r.toComponentInstance);
    if (!from || !to) continue;
    const a = edgePoint(from, centre(to));
    const z = edgePoint(to, centre(from));
    const data = `data-id="${esc(r.id)}" data-from="${esc(r.fromComponentInstance)}" data-to="${esc(r.toComponentInstance)}"`;
    const title = r.desc === null ? '' : `<title>${esc(r.desc)}</title>`;
    lines.push(
      `<g class="relation${markClass(options, r.id)}" ${data}>${title}<line x1="${round(px(a.x))}" y1="${round(px(a.y))}" x2="${round(px(z.x))}" y2="${round(px(z.y))}" marker-end="url(#c4-arrow)"/></g>`,
    );
    if (r.label !== null && r.label !== '') {
      const mid = { x: px((a.x + z.x) / 2), y: px((a.y + z.y) / 2) };
      labels.push(
        `<g class="relation-label${markClass(options, r.id)}" data-id="${esc(r.id)}"><text class="label" x="${round(mid.x)}" y="${round(mid.y)}" text-anchor="middle">${esc(r.label)}</text></g>`,
      );
    }
  }
  const textareas = diagram.textareas.map((t) => textAreaSvg(t, options));
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="c4-diagram${options.editable ? ' editable' : ''}" ` +
    `viewBox="${px(view.x)} ${px(view.y)} ${px(view.w)} ${px(view.h)}" width="${px(view.w)}" height="${px(view.h)}" ` +
    `data-grid="${GRID_PX}" role="${options.componentHref ? 'group' : 'img'}" aria-label="${esc(`${diagram.name} (${diagram.level})`)}">` +
    `<title>${esc(diagram.name)}</title><style>${STYLE}</style>` +
    '<defs><marker id="c4-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">' +
    '<path d="M0,0 L10,5 L0,10 z" fill="#52606d"/></marker></defs>' +
    `<g class="containers">${containers.join('')}</g><g class="relations">${lines.join('')}</g>` +
    `<g class="instances">${others.join('')}</g><g class="relation-labels">${labels.join('')}</g>` +
    `<g class="textareas">${textareas.join('')}</g></svg>`
  );
}
