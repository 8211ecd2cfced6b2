/**
 * Relations meet the shapes drawn, not the boxes around them: a person is a head above a rounded
 * body, a database a cylinder, a queue a pipe (src/drawing/notation.ts), each in a box it does not
 * fill. Checked on the pixels resvg draws (the PNG's renderer, text left out): just inside an
 * arrow's tip, along its last leg, lies the shape's fill; just outside, not.
 */
import { Resvg } from '@resvg/resvg-js';
import test from 'ava';
import { layoutDiagram } from '../src/layout/layout.js';
import { drawDiagram } from '../src/drawing/svg.js';
import type { ComponentInstance, Relation } from '../src/model/types.js';
import { component, diagram, instance, model } from './support/drawing-model.js';
import { seededRandom } from './support/random.js';

interface Drawn {
  pixel(x: number, y: number): [number, number, number];
  tips: Array<{
    id: string;
    to: string;
    from: string;
    tip: [number, number];
    way: [number, number];
    start: [number, number];
    out: [number, number];
  }>;
}

/** The SVG rasterized at one pixel per unit, without fonts (text is not what is looked at), and each relation's ends and their directions. */
function render(svg: string): Drawn {
  const [vx, vy] = /viewBox="([-\d.]+) ([-\d.]+)/.exec(svg)!.slice(1).map(Number) as [number, number];
  const image = new Resvg(svg, { font: { loadSystemFonts: false, fontFiles: [] }, background: '#ffffff' }).render();
  const { width, pixels } = image;
  const tips: Drawn['tips'] = [];
  for (const m of svg.matchAll(
    /<g class="relation[^"]*" data-id="([^"]*)" data-from="([^"]*)" data-to="([^"]*)">(?:<title>.*?<\/title>)?<path d="([^"]+)"/g,
  )) {
    const n = m[4]!.match(/-?\d+(\.\d+)?/g)!.map(Number);
    const unit = (a: [number, number], b: [number, number]): [number, number] => {
      const l = Math.hypot(b[0] - a[0], b[1] - a[1]) || 1;
      return [(b[0] - a[0]) / l, (b[1] - a[1]) / l];
    };
    const at = (k: number): [number, number] => [n[k]!, n[k + 1]!];
    const tip = at(n.length - 2);
    const start = at(0);
    tips.push({ id: m[1]!, from: m[2]!, to: m[3]!, tip, way: unit(at(n.length - 4), tip), start, out: unit(start, at(2)) });
  }
  return {
    tips,
    pixel(x, y) {
      const i = (Math.floor(y - vy) * width + Math.floor(x - vx)) * 4;
      return [pixels[i]!, pixels[i + 1]!, pixels[i + 2]!];
    },
  };
}

/** The C4 blues of people, databases and queues (fill and stroke), not the grey of a relation nor white. */
const blue = ([r, , b]: [number, number, number]) => b - r > 60;

const SHAPED = ['person', 'database', 'queue'];

test('every relation ends on the person, cylinder or pipe drawn, not in the empty corners of its box: self-relations, spread ends, laid out or placed by hand', async (t) => {
  const random = seededRandom(5);
  let ends = 0;
  for (let round = 0; round < 40; round++) {
    const m = model();
    const n = 2 + Math.floor(random() * 6);
    const instances: ComponentInstance[] = [];
    for (let k = 0; k < n; k++) {
      const type = k < 2 ? SHAPED[Math.floor(random() * 3)]! : ['container', ...SHAPED][Math.floor(random() * 4)]!;
      component(m, `c${k}`, `Element ${k}`, type);
      instances.push(instance(`i${k}`, `c${k}`, 0, 0, { width: 0, height: 0 }));
    }
    const relations: Relation[] = Array.from({ length: n * 2 }, (_, k) => ({
      id: `r${k}`,
      fromComponentInstance: `i${Math.floor(random() * n)}`,
      toComponentInstance: k % 3 === 0 ? `i${k % 2}` : `i${Math.floor(random() * n)}`,
      label: null,
      desc: null,
      linksTo: [],
    }));
    const byHand = round % 2 === 1;
    const layout = await layoutDiagram({
      instances: instances.map((i) => ({ id: i.id, parent: null, isContainer: false, label: `Element ${i.id}` })),
      relations: relations.map((r) => ({ from: r.fromComponentInstance, to: r.toComponentInstance })),
      textareas: [],
    });
    for (const i of instances) {
      const b = layout.instances.get(i.id)!;
      Object.assign(i, { position: b.position, width: b.width, height: b.height });
      if (byHand) {
        i.position = { x: Math.floor(random() * 60), y: Math.floor(random() * 40) };
        i.width = 8 + Math.floor(random() * 16);
        i.height = 5 + Math.floor(random() * 8);
      }
    }
    if (byHand && instances.some((a, k) => instances.slice(k + 1).some((b) => overlapping(a, b)))) continue;
    const svg = drawDiagram(diagram({ componentInstances: instances, relations }), m, { legend: false });
    const drawn = render(svg);
    const typeOf = (id: string) => m.types.get(m.components.get(`c${id.slice(1)}`)!.typeId!)!.slug;
    for (const r of drawn.tips) {
      for (const [end, point, inward] of [
        [r.to, r.tip, r.way],
        [r.from, r.start, [-r.out[0], -r.out[1]]],
      ] as const) {
        if (!SHAPED.includes(typeOf(end))) continue;
        ends++;
        const inside = drawn.pixel(point[0] + 3 * inward[0], point[1] + 3 * inward[1]);
        const outside = drawn.pixel(point[0] - 3 * inward[0], point[1] - 3 * inward[1]);
        const where = `round ${round}: ${r.id} ${r.from}→${r.to} at ${point.join(',')} on the ${typeOf(end)} ${end}`;
        t.true(blue(inside), `${where}: ${inside.join(',')} just inside`);
        t.false(blue(outside), `${where}: ${outside.join(',')} just outside`);
      }
    }
  }
  t.true(ends > 300, `${ends} ends looked at`);
});

function overlapping(a: ComponentInstance, b: ComponentInstance): boolean {
  const gap = 2;
  return (
    a.position.x < b.position.x + b.width + gap &&
    b.position.x < a.position.x + a.width + gap &&
    a.position.y < b.position.y + b.height + gap &&
    b.position.y < a.position.y + a.height + gap
  );
}
