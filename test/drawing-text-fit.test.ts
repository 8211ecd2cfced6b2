/**
 * A box's text stays inside its box (src/drawing/notation.ts), measured from the SVG itself: every
 * `<text>` of an instance, at the x and y it is drawn at, as wide as the drawing's own metrics
 * (DejaVu Sans advance widths, src/drawing/text.ts) make it. Random diagrams of hostile names
 * (long words, CJK, right-to-left, emoji, markup) and hand-made sizes, with fixed seeds.
 */
import test from 'ava';
import { type Kind, shapeContains } from '../src/drawing/notation.js';
import { drawDiagram, GRID_PX } from '../src/drawing/svg.js';
import { type Font, textWidth } from '../src/drawing/text.js';
import type { ComponentInstance } from '../src/model/types.js';
import { component, diagram, instance, model, TYPES } from './support/drawing-model.js';
import { picker, seededRandom } from './support/random.js';

const FONTS: Record<string, Font> = { name: { size: 13, bold: true }, kind: { size: 10.5 }, desc: { size: 11 } };

const NAMES = [
  'Order Service',
  'Supercalifragilisticexpialidociousandmore',
  '数据库服务器集群管理系统',
  'نظام إدارة الطلبات',
  'Payments 🎉🚀 API',
  'A "quoted" <name> & co',
  'x',
  'Very long name of a service that goes on and on and on for a while',
  'WWWWWWWWWWWWWWWWWWWWWWWW',
];
const TYPE_NAMES = ['system', 'Software System (external, run by the payments platform team)', '数据库', 'x'];

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

interface DrawnText {
  instance: string;
  cls: string;
  left: number;
  right: number;
  baseline: number;
  size: number;
  text: string;
}

/** Each instance's texts as drawn: a boundary's title is one line, its `[Type]` tspan after the name. */
function instanceTexts(svg: string): DrawnText[] {
  const out: DrawnText[] = [];
  for (const g of svg.matchAll(/<g class="box [^"]*" data-kind="instance" data-id="([^"]+)"[^>]*>(.*?)<\/g>(?=<g class="box|<\/g>)/g)) {
    for (const t of g[2]!.matchAll(
      /<text class="(name|kind|desc)" x="([-\d.]+)" y="([-\d.]+)"( text-anchor="middle")?(?: style="font-size:([\d.]+)px")?>(.*?)<\/text>/g,
    )) {
      const [, cls, x, y, middle, size, body] = t as unknown as [
        string,
        string,
        string,
        string,
        string | undefined,
        string | undefined,
        string,
      ];
      // Text set smaller than its class says (a tiny box) carries its size; a boundary's [Type] tspan too.
      const font = size ? { ...FONTS[cls]!, size: Number(size) } : FONTS[cls]!;
      const kind = /^(.*?) <tspan class="kind"(?: style="font-size:([\d.]+)px")?>(.*)<\/tspan>$/.exec(body);
      const text = unescapeXml(kind ? kind[1]! : body);
      let width = textWidth(text, font);
      if (kind) width += textWidth(' ', font) + textWidth(unescapeXml(kind[3]!), kind[2] ? { size: Number(kind[2]) } : FONTS.kind!);
      const left = middle ? Number(x) - width / 2 : Number(x);
      out.push({
        instance: g[1]!,
        cls,
        left,
        right: left + width,
        baseline: Number(y),
        size: font.size,
        text: kind ? `${text} ${unescapeXml(kind[3]!)}` : text,
      });
    }
  }
  return out;
}

test("every line of a box's text lies inside its box, however long, wide or foreign the name, type and description, whatever the box's size", (t) => {
  const random = seededRandom(7);
  const pick = picker(random);
  let checked = 0;
  for (let round = 0; round < 200; round++) {
    const m = model();
    for (const [k, name] of TYPE_NAMES.entries()) m.types.set(`tn${k}`, { id: `tn${k}`, slug: TYPES[k]!, name });
    const instances: ComponentInstance[] = [];
    const n = 1 + Math.floor(random() * 6);
    for (let k = 0; k < n; k++) {
      component(m, `c${k}`, pick(NAMES), 'container', random() < 0.6 ? { desc: `${pick(NAMES)} ${pick(NAMES)}` } : {});
      m.components.get(`c${k}`)!.typeId = random() < 0.5 ? `tn${Math.floor(random() * TYPE_NAMES.length)}` : `t-${pick(TYPES)}`;
      instances.push(
        instance(`i${k}`, `c${k}`, k * 110, 0, {
          isContainer: random() < 0.3,
          width: 3 + Math.floor(random() * 40),
          height: 4 + Math.floor(random() * 10),
        }),
      );
    }
    const svg = drawDiagram(diagram({ componentInstances: instances }), m);
    const byId = new Map(instances.map((i) => [i.id, i]));
    for (const text of instanceTexts(svg)) {
      const i = byId.get(text.instance)!;
      const box = { x: i.position.x * GRID_PX, y: i.position.y * GRID_PX, w: i.width * GRID_PX, h: i.height * GRID_PX };
      checked++;
      t.true(
        text.left >= box.x - 0.5 && text.right <= box.x + box.w + 0.5,
        `round ${round}: ${text.cls} '${text.text}' spans ${text.left.toFixed(1)}–${text.right.toFixed(1)}, its box ${box.x}–${box.x + box.w}`,
      );
      t.true(text.baseline - 10 >= box.y && text.baseline + 3 <= box.y + box.h, `round ${round}: '${text.text}' at y ${text.baseline}`);
    }
  }
  t.true(checked > 500, `${checked} lines`);
});

test("a boundary's title keeps its name when its type does not fit beside it: the type is shortened, or left out, never drawn beyond the boundary", (t) => {
  const m = model();
  m.types.set('long', { id: 'long', slug: 'software-system', name: 'Software System (external, run by the payments platform team)' });
  component(m, 'c', 'Payments', 'container');
  m.components.get('c')!.typeId = 'long';
  const titleOf = (width: number) => {
    const svg = drawDiagram(diagram({ componentInstances: [instance('b', 'c', 0, 0, { isContainer: true, width, height: 10 })] }), m);
    const [text] = instanceTexts(svg);
    t.true(text!.right <= width * GRID_PX, `${width} units: '${text!.text}' ends at ${text!.right}`);
    return text!.text;
  };
  // Wide enough for both: as written.
  t.is(titleOf(60), 'Payments [Software System (external, run by the payments platform team)]');
  // The name whole, the type cut short with its bracket closed (it ran 270 px out of the boundary).
  t.regex(titleOf(16), /^Payments \[Software.*…\]$/);
  // Too narrow for the type even cut: the name alone, as much of it as fits.
  t.regex(titleOf(6), /^Paym[a-z]*…$/);
  // A short type stays whole beside a long name, which is cut.
  m.types.set('long', { id: 'long', slug: 'container', name: 'Container' });
  m.components.get('c')!.name = 'Payments platform of the northern region';
  t.regex(titleOf(20), /^Payments platform.*… \[Container\]$/);
});

test('a name or description drawn shortened ends in "…": the lines a box has no room for are never dropped without a sign', (t) => {
  const random = seededRandom(11);
  const pick = picker(random);
  const words = (s: string) => s.split(/\s+/).join('');
  let shortened = 0;
  for (let round = 0; round < 200; round++) {
    const m = model();
    const instances: ComponentInstance[] = [];
    for (let k = 0; k < 4; k++) {
      component(m, `c${k}`, pick(NAMES), pick(TYPES), { desc: `${pick(NAMES)} ${pick(NAMES)} ${pick(NAMES)}` });
      instances.push(instance(`i${k}`, `c${k}`, k * 50, 0, { width: 8 + Math.floor(random() * 20), height: 4 + Math.floor(random() * 6) }));
    }
    const texts = instanceTexts(drawDiagram(diagram({ componentInstances: instances }), m));
    for (const [k, i] of instances.entries()) {
      const c = m.components.get(`c${k}`)!;
      for (const [cls, whole] of [
        ['name', c.name],
        ['desc', c.desc!],
      ] as const) {
        const lines = texts.filter((x) => x.instance === i.id && x.cls === cls).map((x) => x.text);
        if (lines.length === 0 || words(lines.join(' ')) === words(whole)) continue;
        shortened++;
        t.true(
          lines.at(-1)!.endsWith('…'),
          `round ${round}: ${i.width}×${i.height} ${c.typeId} ${cls} '${whole}' drawn as ${JSON.stringify(lines)}`,
        );
      }
    }
  }
  t.true(shortened > 50, `${shortened} texts shortened`);
});

test("a component's API marker lies on its shape and over none of its text, whatever the box's size, kind and name", (t) => {
  const random = seededRandom(13);
  const pick = picker(random);
  let markers = 0;
  for (let round = 0; round < 150; round++) {
    const m = model();
    const instances: ComponentInstance[] = [];
    for (let k = 0; k < 4; k++) {
      const type = pick(TYPES);
      component(m, `c${k}`, pick(NAMES), type, random() < 0.7 ? { desc: `${pick(NAMES)} ${pick(NAMES)}` } : {});
      (m.components.get(`c${k}`) as { apiContext?: string }).apiContext = 'ci';
      instances.push(instance(`i${k}`, `c${k}`, k * 50, 0, { width: 8 + Math.floor(random() * 24), height: 4 + Math.floor(random() * 8) }));
    }
    const svg = drawDiagram(diagram({ componentInstances: instances }), m);
    const texts = instanceTexts(svg);
    for (const g of svg.matchAll(
      /data-kind="instance" data-id="([^"]+)"[^>]*data-c4="([^"]+)">.*?<g class="api-marker">.*?<rect x="([-\d.]+)" y="([-\d.]+)" width="(\d+)" height="(\d+)"/g,
    )) {
      const [, id, kind, x, y, w, h] = g as unknown as [string, string, Kind, string, string, string, string];
      const marker = { x: +x, y: +y, w: +w, h: +h };
      const i = instances.find((n) => n.id === id)!;
      const box = { x: i.position.x * GRID_PX, y: i.position.y * GRID_PX, w: i.width * GRID_PX, h: i.height * GRID_PX };
      markers++;
      const where = `round ${round}: ${kind} ${i.width}×${i.height} ${id}`;
      // On the shape: every corner of the marker (a person's beside its head, in its box).
      const on = (px: number, py: number) =>
        kind === 'person' ? px >= box.x && px <= box.x + box.w && py >= box.y : shapeContains(kind, box, px, py);
      for (const [px, py] of [
        [marker.x, marker.y],
        [marker.x + marker.w, marker.y],
        [marker.x, marker.y + marker.h],
        [marker.x + marker.w, marker.y + marker.h],
      ] as const)
        t.true(on(px, py), `${where}: the marker's corner ${px},${py} off the ${kind}`);
      for (const text of texts.filter((x) => x.instance === id)) {
        const over =
          text.right > marker.x &&
          text.left < marker.x + marker.w &&
          text.baseline + 3 > marker.y &&
          text.baseline - 11 < marker.y + marker.h;
        t.false(over, `${where}: the marker over '${text.text}'`);
      }
    }
  }
  t.true(markers > 400, `${markers} markers`);
});

test('boxes one or two grid units wide or tall, of every kind, boundaries too: every line of their text lies inside the box, cut with "…" or set smaller, never beyond it (a 1-unit box ran its name a few pixels out; a 1-unit-tall boundary drew its title below itself)', (t) => {
  let checked = 0;
  let small = 0;
  const outside: string[] = [];
  for (const name of NAMES) {
    for (const width of [1, 2, 3]) {
      for (const height of [1, 2, 3, 8]) {
        const m = model();
        const instances = TYPES.map((type, k) => {
          component(m, `c${k}`, name, type, { desc: name });
          return instance(`i${k}`, `c${k}`, k * 10, 0, { width, height });
        });
        component(m, 'b', name, 'software-system');
        instances.push(instance('ib', 'b', 0, 20, { width, height, isContainer: true }));
        instances.push(instance('ip', null, 20, 20, { width, height, placeholder: name }));
        const svg = drawDiagram(diagram({ componentInstances: instances }), m);
        const byId = new Map(instances.map((i) => [i.id, i]));
        for (const text of instanceTexts(svg)) {
          const i = byId.get(text.instance)!;
          const box = { x: i.position.x * GRID_PX, y: i.position.y * GRID_PX, w: i.width * GRID_PX, h: i.height * GRID_PX };
          checked++;
          if (text.size < 10) small++;
          // Glyphs reach about 0.77 em above the baseline and 0.23 em below it (10 and 3 px of the 13 px name).
          if (text.baseline - 0.77 * text.size < box.y - 0.5 || text.baseline + 0.23 * text.size > box.y + box.h + 0.5)
            outside.push(
              `${width}×${height} ${text.instance}: ${text.cls} '${text.text}' at y ${text.baseline} (${text.size} px), its box ${box.y}–${box.y + box.h}`,
            );
          if (text.left < box.x - 0.5 || text.right > box.x + box.w + 0.5)
            outside.push(
              `${width}×${height} ${text.instance}: ${text.cls} '${text.text}' spans ${text.left.toFixed(1)}–${text.right.toFixed(1)}, its box ${box.x}–${box.x + box.w}`,
            );
        }
      }
    }
  }
  t.deepEqual(outside, []);
  t.true(checked > 200, `${checked} lines`);
  t.true(small > 100, `${small} lines set smaller`);
});
