/**
 * A box's text inside its box as Chromium draws it (getBBox of every text element), for names
 * and descriptions of scripts and symbols the drawing's metrics estimate (src/drawing/text.ts):
 * emoji, CJK, Arabic, Greek. The estimate may be wider than the glyphs, never narrower.
 */
import test from 'ava';
import { chromium } from 'playwright-core';
import { drawDiagram, GRID_PX } from '../src/drawing/svg.js';
import type { ComponentInstance } from '../src/model/types.js';
import { chromiumPath } from './support/browser.js';
import { component, diagram, instance, model, TYPES } from './support/drawing-model.js';

const NAMES = [
  '🎉🚀👍🎉🚀👍🎉🚀👍🎉🚀👍🎉🚀👍🎉',
  'Launch 🚀 pad 🎉 and 👍 more 🚀 rockets 🎉 here',
  '数据库服务器集群管理系统数据库服务器',
  'نظام إدارة الطلبات والمدفوعات',
  'Ωμέγα Σύστημα Πληρωμών',
];

/** Every text of the drawing's boxes as Chromium draws it (where there is one: chromiumPath): its box's id, the text, and where it begins and ends across. */
async function instanceTexts(svg: string): Promise<Array<{ id: string; text: string; left: number; right: number }>> {
  const browser = await chromium.launch({ executablePath: chromiumPath! });
  try {
    const page = await browser.newPage();
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    return (await page.evaluate(`[...document.querySelectorAll('g[data-kind="instance"] text')].map((text) => {
      const g = text.closest('g[data-kind="instance"]');
      const b = text.getBBox();
      return { id: g.dataset.id, text: text.textContent, left: b.x, right: b.x + b.width };
    })`)) as Array<{ id: string; text: string; left: number; right: number }>;
  } finally {
    await browser.close();
  }
}

test('every text of a box lies inside the box as Chromium draws it: emoji, CJK, Arabic, Greek names and descriptions', async (t) => {
  if (!chromiumPath) {
    t.pass();
    return;
  }
  const m = model();
  const instances: ComponentInstance[] = [];
  let k = 0;
  for (const name of NAMES) {
    for (const width of [8, 12, 20]) {
      component(m, `c${k}`, name, TYPES[k % TYPES.length]!, { desc: `${name} ${name}` });
      instances.push(instance(`i${k}`, `c${k}`, (k % 6) * 24, Math.floor(k / 6) * 12, { width, height: 9 }));
      k++;
    }
  }
  const svg = drawDiagram(diagram({ componentInstances: instances }), m, { legend: false });
  const texts = await instanceTexts(svg);
  const byId = new Map(instances.map((i) => [i.id, i]));
  t.true(texts.length > 40, `${texts.length} texts`);
  for (const text of texts) {
    const i = byId.get(text.id)!;
    const [x0, x1] = [i.position.x * GRID_PX, (i.position.x + i.width) * GRID_PX];
    t.true(
      text.left >= x0 - 1 && text.right <= x1 + 1,
      `'${text.text}' drawn ${text.left.toFixed(1)}–${text.right.toFixed(1)}, its box ${x0}–${x1}`,
    );
  }
});

test('boxes and boundaries one or two grid units wide: their text, set smaller, lies inside them as Chromium draws it', async (t) => {
  if (!chromiumPath) {
    t.pass();
    return;
  }
  const m = model();
  const instances: ComponentInstance[] = [];
  let k = 0;
  for (const name of [...NAMES, 'WWW', 'Order Service', 'x']) {
    for (const width of [1, 2]) {
      for (const container of [false, true]) {
        component(m, `c${k}`, name, TYPES[k % TYPES.length]!, { desc: name });
        instances.push(instance(`i${k}`, `c${k}`, (k % 10) * 4, Math.floor(k / 10) * 10, { width, height: 8, isContainer: container }));
        k++;
      }
    }
  }
  const svg = drawDiagram(diagram({ componentInstances: instances }), m, { legend: false });
  const texts = await instanceTexts(svg);
  const byId = new Map(instances.map((i) => [i.id, i]));
  t.true(texts.length > 40, `${texts.length} texts`);
  const outside: string[] = [];
  for (const text of texts) {
    const i = byId.get(text.id)!;
    const [x0, x1] = [i.position.x * GRID_PX, (i.position.x + i.width) * GRID_PX];
    if (text.left < x0 - 1 || text.right > x1 + 1)
      outside.push(`${i.width} units: '${text.text}' drawn ${text.left.toFixed(1)}–${text.right.toFixed(1)}, its box ${x0}–${x1}`);
  }
  t.deepEqual(outside, []);
});
