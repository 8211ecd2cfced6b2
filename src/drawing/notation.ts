/**
 * The C4 notation (issue 25.4): what kind of element an instance is, its shape and colours,
 * its text (name, `[Type]`, the first line of its description), and the legend.
 *
 * Kinds come from the slug of the component's type: `person`, `software-system`, `container`,
 * `component`, `database` (and any slug containing `database`, `datastore` or `data-store`: a
 * cylinder), `queue` (and any slug containing `queue` or `topic`: a pipe). An element is
 * **external** when its component carries a tag named `External` (any case) or its type's slug
 * starts with `external` (`external-system`, `external-person`): it is drawn grey, as C4 draws
 * systems outside the one described. An instance without a component is a placeholder
 * (dashed); a container instance is a boundary (dashed, title in its top-left corner).
 * Colours are the C4 model's conventional palette; text on them keeps a contrast ratio of at
 * least 4.5:1.
 */
import { c4OfSlug, isExternalTag } from '../model/c4-kinds.js';
import type { ComponentInstance, Model } from '../model/types.js';
import { esc } from '../escape.js';
import { clip, ellipsize, firstLine, textWidth, wrapText, type Font } from './text.js';

export type Kind =
  | 'person'
  | 'software-system'
  | 'container'
  | 'component'
  | 'database'
  | 'queue'
  | 'external'
  | 'external-person'
  | 'element'
  | 'placeholder'
  | 'boundary';

export const NOTATION_STYLE = `
.c4-diagram .box .body,.c4-diagram .shape{stroke-width:1.5}
.c4-diagram .box text{fill:#fff}
.c4-diagram .box .name{font-size:13px;font-weight:700}
.c4-diagram .box .kind{font-size:10.5px;font-weight:400}
.c4-diagram .box .desc{font-size:11px}
.c4-diagram .k-person .shape{fill:#08427b;stroke:#073b6f}
.c4-diagram .k-software-system .body{fill:#1168bd;stroke:#0b4884}
.c4-diagram .k-container .body,.c4-diagram .k-database .shape,.c4-diagram .k-queue .shape{fill:#2f6fb3;stroke:#1f4f82}
.c4-diagram .k-component .body{fill:#85bbf0;stroke:#5d82a8}
.c4-diagram .k-component text{fill:#0b2540}
.c4-diagram .k-element .body{fill:#e8eef5;stroke:#52606d}
.c4-diagram .k-element text{fill:#102a43}
.c4-diagram .k-external .body,.c4-diagram .k-external-person .shape{fill:#6b6b6b;stroke:#4d4d4d}
.c4-diagram .k-placeholder .body{fill:#fafafa;stroke:#777;stroke-dasharray:6 4}
.c4-diagram .k-placeholder text{fill:#444;font-style:italic}
.c4-diagram .k-boundary .body{fill:none;stroke:#444;stroke-width:1.5;stroke-dasharray:8 5}
.c4-diagram .k-boundary text{fill:#222}
.c4-diagram .k-person rect.body,.c4-diagram .k-external-person rect.body,.c4-diagram .k-database rect.body,.c4-diagram .k-queue rect.body{fill:transparent;stroke:none}
.c4-diagram .shape-top{fill-opacity:.25;fill:#fff}
.c4-diagram .api-marker rect{fill:#f0b429}
.c4-diagram .api-marker text{font-size:9px;font-weight:700;fill:#3b2300}
.c4-diagram .legend rect.frame{fill:#fff;stroke:#bbb}
.c4-diagram .legend text{font-size:11px;fill:#222}
.c4-diagram .legend .sample{stroke-width:1}
.c4-diagram .legend path.line{fill:none;stroke:#5a6672;stroke-width:1.4;stroke-dasharray:6 3}
`;

const NAME: Font = { size: 13, bold: true };
const KIND: Font = { size: 10.5 };
const DESC: Font = { size: 11 };
const NAME_LINE = 16;
const SMALL_LINE = 14;
const PAD = 8;
/**
 * A box (or boundary) whose room for text, within PAD of its sides, is narrower than this (two
 * ems of its name, `W…` about) cannot show one character and "…" at the usual sizes: its text
 * keeps TIGHT_PAD from its sides instead and is set smaller, by the box's room over this, so
 * that the name is still cut with "…" as everywhere else and never runs out of the box (a box
 * one grid unit wide drew a 14 px `W` in 14 px, and a boundary's title 7 px beyond its wall).
 */
const TIGHT = 2 * NAME.size;
const TIGHT_PAD = 2;

/**
 * How much smaller text is set in a box `width` px wide (1: as usual), and the width it is
 * wrapped in (see TIGHT); `lineRoom`: the height one line of the name may take there at most,
 * where it is less than NAME_LINE (a box one grid unit tall: its name is set smaller to fit).
 */
function fitting(width: number, lineRoom = NAME_LINE): { scale: number; width: number } {
  const tall = Math.max(0, Math.min(1, lineRoom / NAME_LINE));
  if (width - 2 * PAD >= TIGHT) return { scale: tall, width: width - 2 * PAD };
  const room = Math.max(0, width - 2 * TIGHT_PAD);
  return { scale: Math.min(1, tall, room / TIGHT), width: room };
}

const scaled = (font: Font, scale: number): Font => (scale === 1 ? font : { ...font, size: font.size * scale });
/** The inline size of a text set smaller than its class says (see TIGHT), or nothing. */
const sizeStyle = (font: Font, scale: number): string => (scale === 1 ? '' : ` style="font-size:${n1(font.size)}px"`);

function slugKind(slug: string): Kind | null {
  const { shape, external } = c4OfSlug(slug);
  if (external) return shape === 'person' ? 'external-person' : 'external';
  return shape;
}

/** The kind of an instance (see the module comment). */
export function classify(i: ComponentInstance, model: Pick<Model, 'components' | 'types'>, tagNames: ReadonlyMap<string, string>): Kind {
  if (i.isContainer) return 'boundary';
  const component = i.component === null ? undefined : model.components.get(i.component);
  if (!component) return 'placeholder';
  const slug = component.typeId == null ? '' : (model.types.get(component.typeId)?.slug ?? '');
  const kind = slugKind(slug) ?? 'element';
  const external = (component.tags ?? []).some((t) => isExternalTag(tagNames.get(t)));
  if (external) return kind === 'person' ? 'external-person' : 'external';
  return kind;
}

interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

interface InstanceOptions {
  /** Each component box links to this followed by the component's id. */
  componentHref?: string;
  editable: boolean;
  /** For a share link: the API marker without its API context (DrawOptions.shared). */
  shared: boolean;
  extraClass: string;
}

const n1 = (v: number) => String(Math.round(v * 10) / 10);

/** A person's head (radius `r`, touching the box's top), the top of its body and the body's corner radius. */
function personShape(b: Rect): { r: number; top: number; corner: number } {
  const r = Math.min(b.h * 0.17, b.w * 0.2);
  // As SVG draws a rect's rx: at most half its width and height.
  const top = b.y + 2 * r - 2;
  return { r, top, corner: Math.min(r * 1.4, 24, b.w / 2, (b.y + b.h - top) / 2) };
}

/** Where the shape of a kind starts to fill the left and right sides of box `b`: a person's body, below its head. */
export function sidesFrom(kind: Kind, b: Rect): number {
  return kind === 'person' || kind === 'external-person' ? personShape(b).top : b.y;
}

/** The vertical radius of a cylinder's top and bottom ellipses. */
const cylinderRim = (b: Rect) => Math.min(10, b.h * 0.12);

/** The horizontal radius of a pipe's end ellipses. */
const pipeEnd = (b: Rect) => Math.min(10, b.w * 0.1);

const inEllipse = (x: number, y: number, cx: number, cy: number, rx: number, ry: number) =>
  rx > 0 && ry > 0 && ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1;

/** Whether (x, y) lies inside the rectangle with rounded corners of radius `r`. */
function inRoundedRect(x: number, y: number, b: Rect, r: number): boolean {
  if (x < b.x || x > b.x + b.w || y < b.y || y > b.y + b.h) return false;
  const cx = Math.min(Math.max(x, b.x + r), b.x + b.w - r);
  const cy = Math.min(Math.max(y, b.y + r), b.y + b.h - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

/**
 * Whether the point lies on or inside the outline a kind draws in box `b`: a person's head or
 * body, a database's cylinder, a queue's pipe; the box itself for the kinds that fill it. What a
 * relation's end must reach to touch the shape (svg.ts).
 */
export function shapeContains(kind: Kind, b: Rect, x: number, y: number): boolean {
  switch (kind) {
    case 'person':
    case 'external-person': {
      const { r, top, corner } = personShape(b);
      return inEllipse(x, y, b.x + b.w / 2, b.y + r, r, r) || inRoundedRect(x, y, { x: b.x, y: top, w: b.w, h: b.y + b.h - top }, corner);
    }
    case 'database': {
      const ry = cylinderRim(b);
      const cx = b.x + b.w / 2;
      return (
        (x >= b.x && x <= b.x + b.w && y >= b.y + ry && y <= b.y + b.h - ry) ||
        inEllipse(x, y, cx, b.y + ry, b.w / 2, ry) ||
        inEllipse(x, y, cx, b.y + b.h - ry, b.w / 2, ry)
      );
    }
    case 'queue': {
      const rx = pipeEnd(b);
      const cy = b.y + b.h / 2;
      return (
        (x >= b.x + rx && x <= b.x + b.w - rx && y >= b.y && y <= b.y + b.h) ||
        inEllipse(x, y, b.x + rx, cy, rx, b.h / 2) ||
        inEllipse(x, y, b.x + b.w - rx, cy, rx, b.h / 2)
      );
    }
    default:
      return x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h;
  }
}

/** The outline of a kind in a box: the `.body` element(s), and the part of the box left for text. */
function shape(kind: Kind, b: Rect): { svg: string; text: Rect } {
  const rect = (rx: number) => `<rect class="body" x="${n1(b.x)}" y="${n1(b.y)}" width="${n1(b.w)}" height="${n1(b.h)}" rx="${rx}"/>`;
  switch (kind) {
    case 'person':
    case 'external-person': {
      // Head above a rounded body; the invisible rect keeps the box's exact geometry for tools.
      const { r, top, corner } = personShape(b);
      return {
        svg:
          `${rect(0)}<circle class="shape" cx="${n1(b.x + b.w / 2)}" cy="${n1(b.y + r)}" r="${n1(r)}"/>` +
          `<rect class="shape" x="${n1(b.x)}" y="${n1(top)}" width="${n1(b.w)}" height="${n1(b.y + b.h - top)}" rx="${n1(corner)}"/>`,
        text: { x: b.x, y: top + 4, w: b.w, h: b.y + b.h - top - 4 },
      };
    }
    case 'database': {
      const ry = cylinderRim(b);
      const x0 = b.x;
      const x1 = b.x + b.w;
      const rx = b.w / 2;
      const d =
        `M${n1(x0)},${n1(b.y + ry)} A${n1(rx)},${n1(ry)} 0 0 1 ${n1(x1)},${n1(b.y + ry)} V${n1(b.y + b.h - ry)} ` +
        `A${n1(rx)},${n1(ry)} 0 0 1 ${n1(x0)},${n1(b.y + b.h - ry)} Z`;
      const rim = `M${n1(x0)},${n1(b.y + ry)} A${n1(rx)},${n1(ry)} 0 0 0 ${n1(x1)},${n1(b.y + ry)}`;
      return {
        svg: `${rect(0)}<path class="shape" d="${d}"/><path class="shape shape-top" d="${rim}"/>`,
        text: { x: b.x, y: b.y + 2 * ry, w: b.w, h: b.h - 3 * ry },
      };
    }
    case 'queue': {
      const rx = pipeEnd(b);
      const ry = b.h / 2;
      const y0 = b.y;
      const y1 = b.y + b.h;
      const d =
        `M${n1(b.x + rx)},${n1(y0)} H${n1(b.x + b.w - rx)} A${n1(rx)},${n1(ry)} 0 0 1 ${n1(b.x + b.w - rx)},${n1(y1)} ` +
        `H${n1(b.x + rx)} A${n1(rx)},${n1(ry)} 0 0 1 ${n1(b.x + rx)},${n1(y0)} Z`;
      const rim = `M${n1(b.x + b.w - rx)},${n1(y0)} A${n1(rx)},${n1(ry)} 0 0 0 ${n1(b.x + b.w - rx)},${n1(y1)}`;
      return {
        svg: `${rect(0)}<path class="shape" d="${d}"/><path class="shape shape-top" d="${rim}"/>`,
        text: { x: b.x + rx, y: b.y, w: b.w - 3 * rx, h: b.h },
      };
    }
    case 'boundary':
      return { svg: rect(0), text: b };
    default:
      return { svg: rect(6), text: b };
  }
}

/** The lines of a box's text that fit its text area: name, `[Type]`, first line of the description. */
function boxText(
  name: string,
  kindLine: string,
  desc: string,
  area: Rect,
): { lines: Array<[cls: string, font: Font, line: string]>; scale: number } {
  // A name line's glyphs take NAME_LINE less its 2 px above them: a box one unit tall has room for 14 px of them.
  const { scale, width } = fitting(area.w, area.h + 2);
  const [nameFont, kindFont, descFont] = [scaled(NAME, scale), scaled(KIND, scale), scaled(DESC, scale)];
  const [nameLine, smallLine] = [NAME_LINE * scale, SMALL_LINE * scale];
  const room = area.h - 2 * PAD + 4;
  let nameLines = wrapText(name, width, nameFont, 3);
  const kindLines = kindLine === '' ? [] : wrapText(kindLine, width, kindFont, 1);
  let descLines = desc === '' ? [] : wrapText(desc, width, descFont, 2);
  const height = () => nameLines.length * nameLine + (kindLines.length + descLines.length) * smallLine;
  // Wrapped again into fewer lines, not cut: the last line shown then ends in "…".
  while (height() > room && descLines.length > 0)
    descLines = descLines.length === 1 ? [] : wrapText(desc, width, descFont, descLines.length - 1);
  let kinds = kindLines;
  if (height() > room) kinds = [];
  const total = () => nameLines.length * nameLine + (kinds.length + descLines.length) * smallLine;
  while (total() > room && nameLines.length > 1) nameLines = wrapText(name, width, nameFont, nameLines.length - 1);
  return {
    lines: [
      ...nameLines.map((l): [string, Font, string] => ['name', nameFont, l]),
      ...kinds.map((l): [string, Font, string] => ['kind', kindFont, l]),
      ...descLines.map((l): [string, Font, string] => ['desc', descFont, l]),
    ],
    scale,
  };
}

/** Room a shortened `[Type]` needs at least: less shows too little of it to be worth drawing. */
const SHORT_KIND = 40;

/** The API marker's size. */
const MARKER = { w: 27, h: 13 };

/**
 * Where a box's API marker goes: the top-right corner of the part of the shape left for text, so
 * that it lies on the shape drawn (below a cylinder's rim, inside a pipe's ends) rather than
 * across its outline; a person's stays in the box's top-right corner, beside the head, above the
 * body and its text.
 */
function markerAt(kind: Kind, b: Rect, area: Rect): { x: number; y: number } {
  if (kind === 'person' || kind === 'external-person') return { x: b.x + b.w - MARKER.w - 3, y: b.y + 3 };
  return { x: area.x + area.w - MARKER.w - 3, y: area.y + 3 };
}

/**
 * A boundary's title line in `width` pixels: its name, then `[Type]` in the smaller font, never
 * beyond the boundary. When both do not fit: a type that takes at most half the line is kept
 * whole and the name shortened (`Order Pla… [Container]`); a longer type is shortened instead
 * (`Payments [Software Sys…]`) when the name fits whole with SHORT_KIND to spare, and left out
 * otherwise, the name then taking the whole line.
 */
function boundaryTitle(name: string, kindText: string, width: number, NAME: Font, KIND: Font): { title: string; kindText: string } {
  const alone = { title: wrapText(name, width, NAME, 1)[0] ?? '', kindText: '' };
  if (kindText === '') return alone;
  const space = textWidth(' ', NAME);
  const kindWidth = textWidth(kindText, KIND);
  const nameWidth = textWidth(wrapText(name, Number.POSITIVE_INFINITY, NAME, 1)[0] ?? '', NAME);
  if (nameWidth + space + kindWidth <= width) return { title: alone.title, kindText };
  if (space + kindWidth <= width / 2) return { title: wrapText(name, width - space - kindWidth, NAME, 1)[0] ?? '', kindText };
  const kindRoom = width - nameWidth - space;
  if (kindRoom < SHORT_KIND * (KIND.size / 10.5)) return alone;
  return { title: alone.title, kindText: `${ellipsize(kindText.slice(0, -1), kindRoom - textWidth(']', KIND), KIND)}]` };
}

/**
 * One instance's group. `blocks`: the rectangles relation labels must keep off (a box: all of
 * it; a boundary: its title); `marker`: the API marker's rectangle, when drawn.
 */
export function drawInstance(
  i: ComponentInstance,
  model: Pick<Model, 'components' | 'types'>,
  kind: Kind,
  b: Rect,
  options: InstanceOptions,
): { svg: string; blocks: Rect[]; marker: Rect | null } {
  const component = i.component === null ? undefined : model.components.get(i.component);
  const type = component?.typeId == null ? undefined : model.types.get(component.typeId);
  const name = component ? component.name : i.placeholder === '' ? 'placeholder' : i.placeholder;
  const typeName = component ? (type?.name ?? 'no type') : '';
  const { svg: outline, text: area } = shape(kind, b);
  const parts: string[] = [outline];
  const blocks: Rect[] = [];
  let marker: Rect | null = null;
  if (kind === 'boundary') {
    // One line in the strip the layout leaves above the children (LAYOUT.padTop): name [Type].
    // As wide as the boundary less PAD each side; a narrow one's is set smaller (see TIGHT).
    // The title's glyphs reach 5 px + NAME_LINE × scale down (baseline at 5 + 13 × scale).
    const { scale, width } = fitting(b.w, b.h - 5);
    const pad = (b.w - width) / 2;
    const [nameFont, kindFont] = [scaled(NAME, scale), scaled(KIND, scale)];
    const { title, kindText } = boundaryTitle(name, typeName === '' ? '' : `[${typeName}]`, width, nameFont, kindFont);
    // The space before the tspan, not inside it (resvg, the PNGs, drops a tspan's leading
    // space), so it is drawn, and measured, in the name's font.
    const kindWidth = kindText === '' ? 0 : textWidth(' ', nameFont) + textWidth(kindText, kindFont);
    parts.push(
      `<text class="name" x="${n1(b.x + pad)}" y="${n1(b.y + 5 + NAME.size * scale)}"${sizeStyle(nameFont, scale)}>${esc(title)}` +
        (kindText === '' ? '' : ` <tspan class="kind"${sizeStyle(kindFont, scale)}>${esc(kindText)}</tspan>`) +
        '</text>',
    );
    blocks.push({ x: b.x, y: b.y, w: Math.min(b.w, 2 * pad + textWidth(title, nameFont) + kindWidth), h: 26 });
  } else {
    blocks.push(b);
    const texts = (within: Rect) => {
      const { lines, scale } = boxText(name, typeName === '' ? '' : `[${typeName}]`, component ? firstLine(component.desc) : '', within);
      const heights = lines.map(([cls]) => (cls === 'name' ? NAME_LINE : SMALL_LINE) * scale);
      const total = heights.reduce((s, h) => s + h, 0);
      return { lines, heights, scale, top: within.y + within.h / 2 - total / 2 };
    };
    let text = texts(area);
    const centre = area.x + area.w / 2;
    // The API marker sits in the text's top-right corner: text that would run under it starts below it instead.
    const marker = component?.apiContext === undefined ? null : markerAt(kind, b, area);
    const underMarker = (t: typeof text) => {
      let y = t.top;
      return t.lines.some(([, font, line], n) => {
        y += t.heights[n]!;
        const [top, bottom] = [y - 4 - 11, y - 4 + 3];
        return top < marker!.y + MARKER.h + 2 && bottom > marker!.y - 2 && centre + textWidth(line, font) / 2 > marker!.x - 2;
      });
    };
    if (marker && underMarker(text)) {
      const below = marker.y + MARKER.h;
      text = texts({ ...area, y: below, h: area.y + area.h - below });
    }
    let y = text.top;
    const cx = n1(centre);
    const tspans: string[] = [];
    text.lines.forEach(([cls, font, line], n) => {
      y += text.heights[n]!;
      tspans.push(
        `<text class="${cls}" x="${cx}" y="${n1(y - 4 * text.scale)}" text-anchor="middle"${sizeStyle(font, text.scale)}>${esc(line)}</text>`,
      );
    });
    parts.push(tspans.join(''));
  }
  if (component?.apiContext !== undefined) {
    const { x, y } = kind === 'boundary' ? { x: b.x + b.w - 30, y: b.y + 3 } : markerAt(kind, b, area);
    marker = { x, y, w: 27, h: 13 };
    parts.push(
      `<g class="api-marker"><title>Updated through the API${options.shared ? '' : ` (${esc(clip(component.apiContext))})`}</title>` +
        `<rect x="${n1(x)}" y="${n1(y)}" width="27" height="13" rx="3"/><text x="${n1(x + 4)}" y="${n1(y + 10)}">API</text></g>`,
    );
  }
  if (options.editable) {
    parts.push(`<rect class="handle" x="${n1(b.x + b.w - 10)}" y="${n1(b.y + b.h - 10)}" width="10" height="10"/>`);
  }
  let inner = parts.join('');
  const linked = component !== undefined && options.componentHref !== undefined;
  if (linked) {
    const label = clip(`${component.name} [${typeName}]: details`);
    inner = `<a href="${esc(options.componentHref + component.id)}" aria-label="${esc(label)}">${inner}</a>`;
  }
  // Arranged with the keyboard too (static/viewer.js): a box the keyboard cannot reach through a
  // link of its own takes the focus itself.
  const focusable =
    options.editable && !linked ? ` tabindex="0" aria-label="${esc(clip(`${i.isContainer ? 'Boundary' : 'Placeholder'} ${name}`))}"` : '';
  const classes = [
    'box',
    `k-${kind}`,
    i.isContainer ? 'container' : '',
    component ? 'component' : 'placeholder',
    options.editable ? 'draggable' : '',
  ]
    .filter((c) => c !== '')
    .join(' ');
  const g = (units: number) => units;
  const data =
    `data-kind="instance" data-id="${esc(i.id)}" data-x="${g(i.position.x)}" data-y="${g(i.position.y)}" data-w="${g(i.width)}" data-h="${g(i.height)}"` +
    ` data-container="${i.isContainer}" data-parent="${esc(i.parent ?? '')}"` +
    (component ? ` data-component="${esc(component.id)}"` : '') +
    ` data-c4="${kind}"`;
  return { svg: `<g class="${classes}${options.extraClass}" ${data}${focusable}>${inner}</g>`, blocks, marker };
}

const LEGEND_NAMES: Array<[Kind, string]> = [
  ['person', 'Person'],
  ['software-system', 'Software system'],
  ['container', 'Container'],
  ['component', 'Component'],
  ['database', 'Database'],
  ['queue', 'Queue'],
  ['external', 'External'],
  ['external-person', 'External person'],
  ['element', 'Other type'],
  ['placeholder', 'Placeholder'],
  ['boundary', 'Boundary'],
];

/** A small legend of the kinds present, its top-left corner at `at`. */
export function legend(present: Kind[], at: { x: number; y: number }, relations: boolean): { svg: string; w: number; h: number } {
  const seen = new Set(present);
  const rows = LEGEND_NAMES.filter(([k]) => seen.has(k));
  const items: string[] = [];
  let x = at.x + 8;
  const y = at.y + 8;
  const sampleW = 34;
  const sampleH = 20;
  for (const [kind, label] of rows) {
    const s = shape(kind, { x, y, w: sampleW, h: sampleH });
    items.push(`<g class="k-${kind} sample">${s.svg}</g><text x="${n1(x + sampleW + 5)}" y="${n1(y + 14)}">${label}</text>`);
    x += sampleW + 5 + textWidth(label, DESC) + 14;
  }
  if (relations) {
    items.push(
      `<path class="line" d="M${n1(x)},${n1(y + 10)} H${n1(x + 30)}" marker-end="url(#c4-arrow)"/><text x="${n1(x + 36)}" y="${n1(y + 14)}">Relation</text>`,
    );
    x += 36 + textWidth('Relation', DESC) + 8;
  }
  const w = x - at.x;
  const h = sampleH + 16;
  return {
    svg: `<g class="legend" aria-label="Legend"><rect class="frame" x="${n1(at.x)}" y="${n1(at.y)}" width="${n1(w)}" height="${h}" rx="4"/>${items.join('')}</g>`,
    w,
    h,
  };
}
