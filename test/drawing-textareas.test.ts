/**
 * Text areas are notes on the diagram: relations are routed round them as round boxes
 * (src/drawing/svg.ts gives them to the router as obstacles), so no line is drawn over a note's
 * text. Random diagrams with notes placed by hand among the boxes, fixed seeds.
 */
import test from 'ava';
import { drawDiagram, GRID_PX } from '../src/drawing/svg.js';
import type { ComponentInstance, Relation, TextArea } from '../src/model/types.js';
import { component, diagram, instance, model, TYPES } from './support/drawing-model.js';
import { seededRandom } from './support/random.js';

type Box = { x: number; y: number; w: number; h: number };

const apart = (a: Box, b: Box, gap: number) =>
  a.x + a.w + gap <= b.x || b.x + b.w + gap <= a.x || a.y + a.h + gap <= b.y || b.y + b.h + gap <= a.y;

function through(route: Array<{ x: number; y: number }>, b: Box): boolean {
  return route.some((p, k) => {
    if (k === 0) return false;
    const q = route[k - 1]!;
    return (
      Math.max(p.x, q.x) > b.x + 1 &&
      Math.min(p.x, q.x) < b.x + b.w - 1 &&
      Math.max(p.y, q.y) > b.y + 1 &&
      Math.min(p.y, q.y) < b.y + b.h - 1
    );
  });
}

test('no relation is drawn over a text area placed by hand among the boxes (random diagrams, fixed seed)', (t) => {
  const random = seededRandom(3);
  let routes = 0;
  let areas = 0;
  for (let round = 0; round < 60; round++) {
    const m = model();
    const instances: ComponentInstance[] = [];
    const taken: Box[] = [];
    const place = (w: number, h: number): Box | null => {
      for (let tries = 0; tries < 50; tries++) {
        const b = { x: Math.floor(random() * 70), y: Math.floor(random() * 50), w, h };
        if (taken.every((o) => apart(o, b, 2))) {
          taken.push(b);
          return b;
        }
      }
      return null;
    };
    for (let k = 0; k < 8; k++) {
      const b = place(10 + Math.floor(random() * 8), 5 + Math.floor(random() * 4));
      if (!b) continue;
      component(m, `c${k}`, `Service ${k}`, TYPES[k % TYPES.length]!);
      instances.push(instance(`i${instances.length}`, `c${k}`, b.x, b.y, { width: b.w, height: b.h }));
    }
    const textareas: TextArea[] = [];
    for (let k = 0; k < 4; k++) {
      const text = 'A note about the system,\nwritten by hand.';
      const b = place(14 + Math.floor(random() * 10), 3);
      if (b) textareas.push({ id: `t${k}`, position: { x: b.x, y: b.y }, width: b.w, text });
    }
    const n = instances.length;
    const relations: Relation[] = Array.from({ length: n * 2 }, (_, k) => ({
      id: `r${k}`,
      fromComponentInstance: `i${Math.floor(random() * n)}`,
      toComponentInstance: `i${Math.floor(random() * n)}`,
      label: null,
      desc: null,
      linksTo: [],
    }));
    const svg = drawDiagram(diagram({ componentInstances: instances, relations, textareas }), m);
    const notes = [
      ...svg.matchAll(/data-kind="textarea" data-id="([^"]*)" data-x="([-\d]+)" data-y="([-\d]+)" data-w="(\d+)" data-h="(\d+)"/g),
    ].map((x) => ({
      id: x[1]!,
      x: +x[2]! * GRID_PX,
      y: +x[3]! * GRID_PX,
      w: +x[4]! * GRID_PX,
      h: +x[5]! * GRID_PX,
    }));
    areas += notes.length;
    for (const r of svg.matchAll(/<g class="relation" data-id="([^"]*)"[^>]*><path d="([^"]+)"/g)) {
      routes++;
      const v = r[2]!.match(/-?\d+(\.\d+)?/g)!.map(Number);
      const route = Array.from({ length: v.length / 2 }, (_, k) => ({ x: v[2 * k]!, y: v[2 * k + 1]! }));
      for (const note of notes) t.false(through(route, note), `round ${round}: ${r[1]} over the text area ${note.id}: ${r[2]}`);
    }
  }
  t.true(routes > 500 && areas > 100, `${routes} relations, ${areas} text areas`);
});
