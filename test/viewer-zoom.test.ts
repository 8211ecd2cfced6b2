/**
 * Looking at a diagram in real Chromium: it opens fitted to the window, zooms with the buttons,
 * the wheel and two fingers, pans by dragging the background or with one finger, and Escape
 * closes the open panel. The demo's C2 (1708 × 980 px) in a 1400 × 900 window, as in issue 25.
 * The list's pictures, and a share link made on the page, opened by a stranger and framed by a wiki.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import anyTest, { type TestFn } from 'ava';
import type { BrowserContext, Page } from 'playwright-core';
import {
  callApi,
  EDITOR_AND_READER,
  type EditorAndReader,
  editorAndReader,
  SAMPLE,
  signIn as signInWith,
  useBrowserRig,
} from './support/browser.js';

interface Context extends EditorAndReader {
  c2: { url: string; id: string; instances: Array<{ id: string; component: string | null; isContainer: boolean }> };
}

const test = anyTest as TestFn<Context>;
const browserTest = useBrowserRig(test, 'zoom', { demo: { from: SAMPLE, keys: EDITOR_AND_READER } }, async (rig) => {
  const model = await callApi(rig, rig.keys.editor, 'GET', '/api/external/model');
  const c2 = model.diagrams.find((d: any) => d.level === 'C2');
  return { ...editorAndReader(rig), c2: { url: c2.url, id: c2.id, instances: c2.componentInstances } };
});

/** A new browser context signed in with `key`, on the demo's C2. */
async function signIn(
  t: { context: Context },
  key: string,
  options: { hasTouch?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const page = await signInWith(t.context, key, options);
  await page.goto(t.context.c2.url);
  return { context: page.context(), page };
}

interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
  width: number;
}

/** The canvas and every box, as the browser lays them out now. */
function geometry(page: Page): Promise<{ canvas: Rect; boxes: Record<string, Rect>; scale: number }> {
  return page.evaluate(() => {
    const document = (globalThis as any).document;
    const rect = (el: any) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width };
    };
    const boxes: Record<string, any> = {};
    for (const g of document.querySelectorAll('svg.c4-diagram g.box'))
      boxes[g.getAttribute('data-id')] = rect(g.querySelector('rect.body'));
    return { canvas: rect(document.querySelector('.canvas')), boxes, scale: Number(document.querySelector('.canvas').dataset.scale) };
  });
}

const inside = (inner: Rect, outer: Rect) =>
  inner.left >= outer.left - 0.5 && inner.top >= outer.top - 0.5 && inner.right <= outer.right + 0.5 && inner.bottom <= outer.bottom + 0.5;

/** A point of the canvas over no box, relation, label or text area: where a drag pans. */
function background(page: Page): Promise<{ x: number; y: number }> {
  return page.evaluate(() => {
    const document = (globalThis as any).document;
    const r = document.querySelector('.canvas').getBoundingClientRect();
    for (let y = r.top + 10; y < r.bottom - 60; y += 7) {
      for (let x = r.left + 10; x < r.right - 60; x += 7) {
        const hit = document.elementFromPoint(x, y);
        if (hit?.closest('.canvas') && !hit.closest('g.box, g.relation, g.relation-label, g.textarea, a')) return { x, y };
      }
    }
    throw new Error('no background in the canvas');
  });
}

/** A box that is a component, not a container. */
const someBox = (t: { context: Context }) => t.context.c2.instances.find((i) => !i.isContainer && i.component !== null)!;

browserTest('the diagram opens fitted to the window: every box inside the canvas, nothing cut off', async (t) => {
  const { context, page } = await signIn(t, t.context.readerKey);
  const seen = await geometry(page);
  t.true(seen.scale < 1, `fitted: ${seen.scale}`);
  t.is(Object.keys(seen.boxes).length, t.context.c2.instances.length);
  for (const [id, box] of Object.entries(seen.boxes)) t.true(inside(box, seen.canvas), `${id} inside the canvas`);
  // The canvas stays within the window: nothing cut off at the right.
  t.true(seen.canvas.right <= 1400);
  // Opened, the panel takes the right column; Fit brings the whole drawing back beside it.
  await page.locator(`g.box[data-id="${someBox(t).id}"] a`).click();
  await page.locator(`#c-${someBox(t).component}`).waitFor({ state: 'visible' });
  await page.click('.zoom-bar button[data-zoom="fit"]');
  const beside = await geometry(page);
  for (const [id, box] of Object.entries(beside.boxes)) t.true(inside(box, beside.canvas), `${id} inside the narrower canvas`);
  const panel = await page.locator(`#c-${someBox(t).component}`).boundingBox();
  t.true(beside.canvas.right <= panel!.x, 'the panel hides none of the drawing');
  await context.close();
});

browserTest('zoom with the buttons and the wheel (around the pointer), 1:1 shows actual size', async (t) => {
  const { context, page } = await signIn(t, t.context.readerKey);
  const id = someBox(t).id;
  const before = await geometry(page);
  await page.click('.zoom-bar button[data-zoom="in"]');
  const zoomed = await geometry(page);
  t.true(Math.abs(zoomed.boxes[id]!.width / before.boxes[id]!.width - 1.25) < 0.01);
  await page.click('.zoom-bar button[data-zoom="out"]');
  t.true(Math.abs((await geometry(page)).boxes[id]!.width - before.boxes[id]!.width) < 0.5);
  await page.click('.zoom-bar button[data-zoom="actual"]');
  const actual = await geometry(page);
  t.is(actual.scale, 1);
  const drawnWidth = await page.locator(`g.box[data-id="${id}"] rect.body`).getAttribute('width');
  t.true(Math.abs(actual.boxes[id]!.width - Number(drawnWidth)) < 0.5);
  t.is((await page.locator('.zoom-level').textContent())?.trim(), '100%');

  // The wheel zooms around the pointer: the point under it stays where it is.
  await page.click('.zoom-bar button[data-zoom="fit"]');
  const fitted = await geometry(page);
  const box = fitted.boxes[id]!;
  const pointer = { x: box.left + 5, y: box.top + 5 };
  await page.mouse.move(pointer.x, pointer.y);
  await page.mouse.wheel(0, -300);
  await page.waitForFunction((scale) => Number((globalThis as any).document.querySelector('.canvas').dataset.scale) > scale, fitted.scale);
  const wheeled = await geometry(page);
  t.true(wheeled.scale > fitted.scale);
  const grown = wheeled.scale / fitted.scale;
  t.true(Math.abs(wheeled.boxes[id]!.left - (pointer.x - 5 * grown)) < 1, 'the box corner moved away from the pointer by the zoom only');
  t.true(Math.abs(wheeled.boxes[id]!.top - (pointer.y - 5 * grown)) < 1);
  await context.close();
});

browserTest('an editor pans by dragging the background: everything moves with the pointer, nothing is saved', async (t) => {
  const { context, page } = await signIn(t, t.context.editorKey);
  const arranged: string[] = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/arrange')) arranged.push(request.url());
  });
  await page.click('.zoom-bar button[data-zoom="in"]');
  const before = await geometry(page);
  const from = await background(page);
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x + 60, from.y + 30, { steps: 4 });
  await page.mouse.move(from.x + 120, from.y + 45, { steps: 4 });
  await page.mouse.up();
  const after = await geometry(page);
  for (const [id, box] of Object.entries(before.boxes)) {
    t.true(Math.abs(after.boxes[id]!.left - box.left - 120) < 1, `${id} moved right by the drag`);
    t.true(Math.abs(after.boxes[id]!.top - box.top - 45) < 1, `${id} moved down by the drag`);
  }
  t.is(after.scale, before.scale);
  await page.waitForTimeout(200);
  t.deepEqual(arranged, []);
  t.false(page.url().includes('#c-'), 'no panel opened');
  await context.close();
});

browserTest('on a touch screen one finger pans and two fingers pinch to zoom', async (t) => {
  const { context, page } = await signIn(t, t.context.readerKey, { hasTouch: true });
  const cdp = await context.newCDPSession(page);
  const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', points: Array<{ x: number; y: number; id: number }>) =>
    cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map((p) => ({ x: p.x, y: p.y, id: p.id })) });
  const id = someBox(t).id;
  const before = await geometry(page);
  const from = await background(page);
  await touch('touchStart', [{ ...from, id: 1 }]);
  for (let step = 1; step <= 5; step++) await touch('touchMove', [{ x: from.x + step * 16, y: from.y + step * 6, id: 1 }]);
  await touch('touchEnd', []);
  const panned = await geometry(page);
  t.true(Math.abs(panned.boxes[id]!.left - before.boxes[id]!.left - 80) < 1.5, 'one finger panned');
  t.true(Math.abs(panned.boxes[id]!.top - before.boxes[id]!.top - 30) < 1.5);

  const centre = { x: (panned.canvas.left + panned.canvas.right) / 2, y: (panned.canvas.top + panned.canvas.bottom) / 2 };
  await touch('touchStart', [
    { x: centre.x - 40, y: centre.y, id: 1 },
    { x: centre.x + 40, y: centre.y, id: 2 },
  ]);
  for (let step = 1; step <= 6; step++) {
    await touch('touchMove', [
      { x: centre.x - 40 - step * 10, y: centre.y, id: 1 },
      { x: centre.x + 40 + step * 10, y: centre.y, id: 2 },
    ]);
  }
  await touch('touchEnd', []);
  const pinched = await geometry(page);
  // The fingers went from 80 px apart to 200: two and a half times the scale.
  t.true(Math.abs(pinched.scale / panned.scale - 2.5) < 0.05, `${pinched.scale / panned.scale}`);
  t.false(page.url().includes('#c-'), 'no panel opened by the gestures');
  await context.close();
});

browserTest('Escape closes the open panel and gives the focus back to its box', async (t) => {
  const { context, page } = await signIn(t, t.context.editorKey);
  const box = someBox(t);
  const body = (await page.locator(`g.box[data-id="${box.id}"] rect.body`).boundingBox())!;
  await page.mouse.click(body.x + body.width / 2, body.y + body.height / 2);
  const panel = page.locator(`#c-${box.component}`);
  await panel.waitFor({ state: 'visible' });
  await page.keyboard.press('Escape');
  await panel.waitFor({ state: 'hidden' });
  t.false(page.url().includes('#c-'));
  t.is(await page.evaluate(() => (globalThis as any).document.activeElement?.closest('g.box')?.getAttribute('data-id')), box.id);
  // Escape with no panel open does nothing.
  await page.keyboard.press('Escape');
  t.true(await page.locator('.diagram-page h1').isVisible());
  await context.close();
});

browserTest('the diagram list shows a picture of each diagram, drawn from the diagram itself', async (t) => {
  const { context, page } = await signIn(t, t.context.readerKey);
  await page.goto(`${t.context.server.url}/`);
  const rows = page.locator('section.level tbody tr');
  const count = await rows.count();
  t.is(count, 4);
  for (let n = 0; n < count; n++) {
    const row = rows.nth(n);
    const image = row.locator('td.thumb img');
    await image.scrollIntoViewIfNeeded();
    await page.waitForFunction((img: any) => img.complete, await image.elementHandle());
    const loaded = await image.evaluate((img: any) => ({
      width: img.naturalWidth,
      height: img.naturalHeight,
      src: img.getAttribute('src'),
    }));
    const name = await row.locator('td:nth-child(2) a').getAttribute('href');
    t.is(loaded.src, `${name}.png?scale=0.25`);
    t.true(loaded.width > 50 && loaded.height > 20, `${name}: ${loaded.width} × ${loaded.height}`);
    // The picture leads to the diagram, and is not a second stop for the keyboard.
    t.is(await row.locator('td.thumb a').getAttribute('href'), name);
    t.is(await row.locator('td.thumb a').getAttribute('tabindex'), '-1');
  }
  await context.close();
});

browserTest(
  'an editor makes a share link on the page; anyone opens it, also framed by another site; revoked there, it is gone',
  async (t) => {
    const { context, page } = await signIn(t, t.context.editorKey);
    await page.locator('details.share summary').click();
    await page.fill('#share-label', 'Team wiki');
    await page.click('form.make-share button[type=submit]');
    await page.locator('.share-made').waitFor();
    const url = await page.inputValue('#share-url');
    t.regex(url, new RegExp(`^${t.context.server.url}/share/[A-Za-z0-9_-]{43}$`));
    t.is(
      await page.inputValue('#share-markdown'),
      `[![${await page
        .locator('.share-made h1')
        .textContent()
        .then((h) => h!.replace('Share link to ', ''))}](${url}.svg)](${url})`,
    );

    // Anyone: a browser with no session at all, the diagram zooms there too.
    const stranger = await t.context.browser.newContext({ viewport: { width: 1200, height: 800 } });
    const visitor = await stranger.newPage();
    await visitor.goto(url);
    t.true((await visitor.locator('.diagram-page h1').textContent())!.length > 0);
    t.is(await visitor.locator('g.box').count(), t.context.c2.instances.length);
    const before = Number(await visitor.locator('.canvas').getAttribute('data-scale'));
    await visitor.click('.zoom-bar button[data-zoom="in"]');
    t.true(Number(await visitor.locator('.canvas').getAttribute('data-scale')) > before);
    t.is(await visitor.locator('header.top .who').count(), 0);

    // Framed by another site, as a wiki would.
    const wiki = createServer((_, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(`<!doctype html><h1>Wiki</h1><iframe src="${url}" width="900" height="600"></iframe>`);
    });
    await new Promise<void>((resolve) => wiki.listen(0, '127.0.0.1', resolve));
    try {
      await visitor.goto(`http://127.0.0.1:${(wiki.address() as AddressInfo).port}/`);
      const framed = visitor.frameLocator('iframe');
      await framed.locator('svg.c4-diagram').waitFor();
      t.is(await framed.locator('g.box').count(), t.context.c2.instances.length);
    } finally {
      wiki.close();
    }

    // Back on the diagram page: listed with its label, and revoked from there.
    await page.click('.share-made a');
    const listed = page.locator('.share-links li', { hasText: 'Team wiki' });
    await listed.waitFor();
    // Told apart from another of its label: its id, its time to the second, and the button names which it revokes.
    const id = (await listed.locator('code').textContent())!;
    t.regex((await listed.textContent())!, /made \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} by /);
    t.is(await listed.locator('button').getAttribute('aria-label'), `Revoke the link ${id} (Team wiki)`);
    await Promise.all([page.waitForURL(`${t.context.c2.url}#share`), listed.locator('button').click()]);
    t.is(await page.locator('.share-links li', { hasText: 'Team wiki' }).count(), 0);
    const gone = await visitor.goto(url);
    t.is(gone!.status(), 404);
    await stranger.close();
    await context.close();
  },
);

browserTest('keys zoom (+, −, 1 for actual size, 0 to fit), but not while typing into a field', async (t) => {
  const { context, page } = await signIn(t, t.context.editorKey);
  const scale = async () => Number(await page.locator('.canvas').getAttribute('data-scale'));
  const fitted = await scale();
  await page.keyboard.press('+');
  t.true(Math.abs((await scale()) / fitted - 1.25) < 0.001);
  await page.keyboard.press('-');
  t.true(Math.abs((await scale()) - fitted) < 0.001);
  await page.keyboard.press('1');
  t.is(await scale(), 1);
  await page.keyboard.press('0');
  t.true(Math.abs((await scale()) - fitted) < 0.001);
  await page.locator('details.share summary').click();
  await page.fill('#share-label', '');
  await page.locator('#share-label').press('+');
  await page.locator('#share-label').press('1');
  t.true(Math.abs((await scale()) - fitted) < 0.001, 'typing does not zoom');
  t.is(await page.inputValue('#share-label'), '+1');
  await context.close();
});
