/**
 * Live pages in a real browser: a diagram open in Chromium redraws when an API write moves one
 * of its boxes (keeping the page's zoom), its component panel shows the API notice as soon as
 * the API changes the component, and the diagram's history page grows by the new commit.
 */
import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { type BrowserRig, callApi, GRID, SAMPLE, signIn, useBrowserRig } from './support/browser.js';

interface Context extends BrowserRig {
  key: string;
}

const test = anyTest as TestFn<Context>;
const browserTest = useBrowserRig(test, 'live', { demo: { from: SAMPLE, keys: { editor: { label: 'Ada Editor' } } } }, (rig) => ({
  key: rig.keys.editor,
}));

const api = (t: { context: Context }, method: string, path: string, body?: unknown) =>
  callApi(t.context, t.context.key, method, path, body);
/** A new browser context signed in through the sign-in page, on `path`. */
const signedIn = (t: { context: Context }, path: string): Promise<Page> => signIn(t.context, t.context.key, { next: path });

/** A diagram of the sample with a component instance on it. */
async function diagramWithComponent(t: { context: Context }) {
  const diagrams = await api(t, 'GET', '/api/external/diagram');
  const diagram = diagrams.find((d: any) => d.componentInstances.some((i: any) => i.component !== null && !i.isContainer));
  const instance = diagram.componentInstances.find((i: any) => i.component !== null && !i.isContainer);
  return { diagram, instance };
}

/** live.js marks the page once its stream is open (the server has its listener by then). */
async function streamOpen(page: Page): Promise<void> {
  await page.waitForFunction(() => (globalThis as any).document.body.dataset.live === 'open');
}

/** Listens before acting: resolves when live.js has swapped in the new state. */
function refreshed(page: Page): Promise<void> {
  return page.evaluate(
    () =>
      new Promise<void>((resolve) => (globalThis as any).document.addEventListener('c4store:refreshed', () => resolve(), { once: true })),
  );
}

browserTest('an open diagram redraws when an API write moves one of its boxes, keeping the zoom', async (t) => {
  const { diagram, instance } = await diagramWithComponent(t);
  const page = await signedIn(t, `/orgs/demo/diagrams/${diagram.id}`);
  const box = `svg.c4-diagram g.box[data-id="${instance.id}"] rect.body`;
  t.is(Number(await page.getAttribute(box, 'x')), instance.position.x * GRID);
  // The reader has zoomed: the drawing's size on this page is theirs.
  await page.evaluate(() => (globalThis as any).document.querySelector('svg.c4-diagram').setAttribute('style', 'width: 2100px'));
  await streamOpen(page);

  const done = refreshed(page);
  const moved = { ...instance.position, x: instance.position.x + 7 };
  const written = await api(t, 'POST', '/api/external/diagram', [
    {
      ...diagram,
      componentInstances: diagram.componentInstances.map((i: any) => (i.id === instance.id ? { ...i, position: moved } : i)),
    },
  ]);
  t.truthy(written);
  await done;
  await page.waitForFunction(([selector, x]) => Number((globalThis as any).document.querySelector(selector)?.getAttribute('x')) === x, [
    box,
    moved.x * GRID,
  ] as const);
  t.is(Number(await page.getAttribute(box, 'x')), moved.x * GRID, 'the box is drawn where the API put it');
  t.is(await page.getAttribute('svg.c4-diagram', 'style'), 'width: 2100px', 'the zoom is kept');
  const head = (await api(t, 'GET', '/api/external/changes?limit=1000')).changes.at(-1).id;
  t.is(await page.getAttribute('article.diagram-page', 'data-commit'), head, 'a drag after this names the new commit');
});

browserTest('the component panel shows the API notice the moment an API write lands', async (t) => {
  const { diagram, instance } = await diagramWithComponent(t);
  const page = await signedIn(t, `/orgs/demo/diagrams/${diagram.id}#c-${instance.component}`);
  await streamOpen(page);
  const component = await api(t, 'GET', `/api/external/component/${instance.component}`);
  const done = refreshed(page);
  await api(t, 'POST', '/api/external/component', [{ ...component, desc: 'Changed by the pipeline', apiContext: 'pipeline run 77' }]);
  await done;
  const panel = page.locator(`#c-${instance.component}`);
  t.regex((await panel.textContent())!, /Updated through the API \(pipeline run 77\)/);
  t.regex((await panel.textContent())!, /Changed by the pipeline/);
});

browserTest("a diagram's history page grows live", async (t) => {
  const { diagram } = await diagramWithComponent(t);
  const page = await signedIn(t, `/orgs/demo/diagrams/${diagram.id}/history`);
  await streamOpen(page);
  const rows = await page.locator('.history-page tbody tr').count();
  const done = refreshed(page);
  await api(t, 'POST', '/api/external/diagram', [{ ...diagram, desc: 'Described live' }]);
  await done;
  t.is(await page.locator('.history-page tbody tr').count(), rows + 1);
  t.is(await page.locator('.history-page tbody tr.live-new').count(), 1);
});
