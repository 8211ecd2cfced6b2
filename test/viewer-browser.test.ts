/**
 * The viewer in a real browser (Debian's chromium driven by playwright-core): sign-in, every
 * diagram of the sample repository drawn at its stored layout, the API notice, dragging as one
 * commit, a reader who cannot drag, a stale page. One browser for every case; screenshots go
 * to test-artifacts/ (and docs/viewer.png with C4STORE_DOCS_SCREENSHOT=1).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import {
  ARTIFACTS,
  arrangeAnswer,
  callApi,
  drag,
  GRID,
  EDITOR_AND_READER,
  type EditorAndReader,
  editorAndReader,
  rigGit,
  SAMPLE,
  signIn as signInWith,
  useBrowserRig,
} from './support/browser.js';

type Context = EditorAndReader;

const test = anyTest as TestFn<Context>;
const browserTest = useBrowserRig(test, 'viewer', { demo: { from: SAMPLE, keys: EDITOR_AND_READER } }, editorAndReader);

const api = (t: { context: Context }, method: string, path: string, body?: unknown) =>
  callApi(t.context, t.context.editorKey, method, path, body);
const git = (t: { context: Context }, ...args: string[]) => rigGit(t.context, 'demo', ...args);
const commitCount = async (t: { context: Context }) => Number(await git(t, 'rev-list', '--count', 'main'));
/** A new browser context signed in through the sign-in page with `key`, on the index. */
const signIn = (t: { context: Context }, key: string): Promise<Page> => signInWith(t.context, key);

interface Drawn {
  instances: Record<string, { x: number; y: number; w: number; h: number; shown: boolean; text: string }>;
  labels: Record<string, string>;
  textareas: Record<string, { x: number; y: number; w: number; text: string }>;
}

function drawn(page: Page): Promise<Drawn> {
  return page.evaluate(() => {
    // Runs in the page; the test's TypeScript knows no DOM.
    const document = (globalThis as any).document;
    const num = (el: any, name: string) => Number(el.getAttribute(name));
    const result: Drawn = { instances: {}, labels: {}, textareas: {} };
    for (const g of document.querySelectorAll('svg.c4-diagram g.box')) {
      const rect = g.querySelector('rect.body')!;
      const box = rect.getBoundingClientRect();
      result.instances[g.getAttribute('data-id')!] = {
        x: num(rect, 'x'),
        y: num(rect, 'y'),
        w: num(rect, 'width'),
        h: num(rect, 'height'),
        shown: box.width > 0 && box.height > 0,
        text: g.textContent ?? '',
      };
    }
    for (const g of document.querySelectorAll('svg.c4-diagram g.relation-label'))
      result.labels[g.getAttribute('data-id')!] = g.textContent ?? '';
    for (const g of document.querySelectorAll('svg.c4-diagram g.textarea')) {
      const frame = g.querySelector('rect.frame')!;
      result.textareas[g.getAttribute('data-id')!] = {
        x: num(frame, 'x'),
        y: num(frame, 'y'),
        w: num(frame, 'width'),
        text: [...g.querySelectorAll('text')].map((line: any) => line.textContent).join(''),
      };
    }
    return result;
  });
}

browserTest(
  'sign in, open every diagram of the sample repository: each element at its stored place, containers around their children',
  async (t) => {
    const page = await signIn(t, t.context.editorKey);
    const [cookie] = await page.context().cookies();
    t.like(cookie, { name: 'c4s_session', httpOnly: true, sameSite: 'Strict', secure: false });
    t.false(cookie.value.includes(t.context.editorKey));
    t.is(await page.evaluate(() => (globalThis as any).document.cookie), '', 'the page script cannot read the session');
    await page.screenshot({ path: join(ARTIFACTS, 'index.png'), fullPage: true });
    const model = await api(t, 'GET', '/api/external/model');
    t.is(model.diagrams.length, 4);
    for (const level of ['C1', 'C2', 'C3', 'C4']) t.true(await page.locator(`section.level h3:text-is("${level}")`).isVisible());
    for (const diagram of model.diagrams) {
      t.true(diagram.url.startsWith(`${t.context.server.url}/orgs/demo/diagrams/`));
      await page.goto(diagram.url);
      t.is(await page.locator('.diagram-page > h1').textContent(), diagram.name);
      t.true((await page.locator('.diagram-page > .meta').textContent())!.includes(`Level ${diagram.level}`));
      const seen = await drawn(page);
      t.is(Object.keys(seen.instances).length, diagram.componentInstances.length);
      for (const instance of diagram.componentInstances) {
        const box = seen.instances[instance.id];
        t.deepEqual(
          { x: box.x, y: box.y, w: box.w, h: box.h },
          {
            x: instance.position.x * GRID,
            y: instance.position.y * GRID,
            w: instance.width * GRID,
            h: instance.height * GRID,
          },
          `${diagram.name}: instance ${instance.ref ?? instance.id}`,
        );
        t.true(box.shown);
        const component = model.components.find((c: any) => c.id === instance.component);
        if (component) t.true(box.text.replace(/\s+/g, ' ').includes(component.name.split(' ')[0]), component.name);
        else t.true(box.text.includes(instance.placeholder || 'placeholder'));
      }
      for (const relation of diagram.relations) {
        if (relation.label) t.is(seen.labels[relation.id], relation.label);
      }
      for (const area of diagram.textareas) {
        const drawnArea = seen.textareas[area.id];
        t.deepEqual(
          { x: drawnArea.x, y: drawnArea.y, w: drawnArea.w },
          { x: area.position.x * GRID, y: area.position.y * GRID, w: area.width * GRID },
        );
        t.is(drawnArea.text, area.text.replace(/\r?\n/g, ''));
      }
      // The rendered boxes, as the browser lays them out: every child inside its container.
      const containment = await page.evaluate(() => {
        const document = (globalThis as any).document;
        const out: Array<{ child: string; inside: boolean }> = [];
        for (const child of document.querySelectorAll('svg.c4-diagram g.box[data-parent]:not([data-parent=""])')) {
          const outer = document
            .querySelector(`svg.c4-diagram g.box[data-id="${child.getAttribute('data-parent')}"] rect.body`)!
            .getBoundingClientRect();
          const inner = child.querySelector('rect.body')!.getBoundingClientRect();
          out.push({
            child: child.getAttribute('data-id')!,
            inside: inner.left >= outer.left && inner.top >= outer.top && inner.right <= outer.right && inner.bottom <= outer.bottom,
          });
        }
        return out;
      });
      t.is(containment.length, diagram.componentInstances.filter((i: any) => i.parent !== null).length);
      for (const { child, inside } of containment) t.true(inside, `${diagram.name}: ${child} inside its container`);
      await page.screenshot({ path: join(ARTIFACTS, `diagram-${diagram.level}.png`), fullPage: true });
    }
    await page.context().close();
  },
);

browserTest(
  'a component changed through the API shows the notice in its panel and a marker on its box; the panel opens by keyboard',
  async (t) => {
    const model = await api(t, 'GET', '/api/external/model');
    const diagram = model.diagrams.find((d: any) => d.level === 'C1');
    const instance = diagram.componentInstances.find((i: any) => i.component !== null);
    const component = model.components.find((c: any) => c.id === instance.component);
    await api(t, 'POST', '/api/external/component', [
      { ...component, typeSlug: undefined, desc: 'Changed by the pipeline.', apiContext: 'pipeline run 42' },
    ]);
    const page = await signIn(t, t.context.editorKey);
    await page.goto(diagram.url);
    const box = page.locator(`g.box[data-id="${instance.id}"]`);
    t.is(await box.locator('.api-marker').count(), 1);
    const panel = page.locator(`#c-${component.id}`);
    t.false(await panel.isVisible());
    await box.locator('a').focus();
    await page.keyboard.press('Enter');
    await panel.waitFor({ state: 'visible' });
    t.is(
      (await panel.locator('.api-notice').textContent())?.trim(),
      'Updated through the API (pipeline run 42): later API updates may overwrite changes made here',
    );
    t.true((await panel.textContent())!.includes('Changed by the pipeline.'));
    // An attribute of type LINK is a link; the diagrams it appears on are listed.
    t.true((await panel.locator('dl.attributes a[href^="https://"]').count()) >= 1);
    t.true((await panel.locator(`ul.appears a[href$="${diagram.id}"]`).count()) === 1);
    await page.screenshot({ path: join(ARTIFACTS, 'api-notice.png'), fullPage: true });
    if (process.env.C4STORE_DOCS_SCREENSHOT === '1') {
      await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
      await page.screenshot({ path: join(import.meta.dirname, '..', 'docs', 'viewer.png') });
    }
    // Printed: no navigation, the drawing across the page, every component's details below it.
    await page.emulateMedia({ media: 'print' });
    t.false(await page.locator('header.top').isVisible());
    const components = new Set(diagram.componentInstances.map((i: any) => i.component).filter(Boolean));
    t.is(await page.locator('.panel:visible').count(), components.size);
    await page.pdf({ path: join(ARTIFACTS, 'diagram-print.pdf') }).catch(() => undefined);
    await page.emulateMedia({ media: 'screen' });

    // Edited in the panel: one commit, and the notice goes (the last change came from here).
    const before = await commitCount(t);
    await panel.locator('details.edit summary').click();
    await panel.locator('input[name=name]').fill(`${component.name} (edited)`);
    await Promise.all([page.waitForURL(`${diagram.url}#c-${component.id}`), panel.locator('button[type=submit]').click()]);
    await panel.waitFor({ state: 'visible' });
    t.is(await panel.locator('.api-notice').count(), 0);
    t.is(await box.locator('.api-marker').count(), 0);
    t.true((await box.textContent())!.includes('(edited)'));
    t.is(await commitCount(t), before + 1);
    await api(t, 'POST', '/api/external/component', [{ ...component, typeSlug: undefined }]);
    await page.context().close();
  },
);

browserTest(
  'dragging a box moves it by whole grid units: the API serves the new position, exactly one new commit by the signed-in key',
  async (t) => {
    const model = await api(t, 'GET', '/api/external/model');
    const diagram = model.diagrams.find((d: any) => d.level === 'C2');
    const instance = diagram.componentInstances.find((i: any) => !i.isContainer && i.parent === null);
    const page = await signIn(t, t.context.editorKey);
    await page.goto(diagram.url);
    const before = await commitCount(t);
    const saved = arrangeAnswer(page);
    await drag(page, `g.box[data-id="${instance.id}"]`, { dx: 3, dy: 2 });
    t.is((await saved).status(), 200);
    const after = (await api(t, 'GET', `/api/external/diagram/${diagram.id}`)).componentInstances.find((i: any) => i.id === instance.id);
    t.deepEqual(after.position, { x: instance.position.x + 3, y: instance.position.y + 2 });
    t.is(after.width, instance.width);
    t.is(await commitCount(t), before + 1);
    t.is(await git(t, 'log', '-1', '--format=%an'), 'Ada Editor');
    // The page now shows the new commit: a second drop (resizing by the corner) needs no reload.
    const resized = arrangeAnswer(page);
    await drag(page, `g.box[data-id="${instance.id}"]`, { dx: 2, dy: 1 }, true);
    t.is((await resized).status(), 200);
    const grown = (await api(t, 'GET', `/api/external/diagram/${diagram.id}`)).componentInstances.find((i: any) => i.id === instance.id);
    t.deepEqual([grown.width, grown.height, grown.position], [instance.width + 2, instance.height + 1, after.position]);
    t.is(await commitCount(t), before + 2);
    const drawnNow = await drawn(page);
    t.is(drawnNow.instances[instance.id].x, after.position.x * GRID);
    await page.screenshot({ path: join(ARTIFACTS, 'after-drag.png'), fullPage: true });
    await page.context().close();
  },
);

browserTest('a real mouse click on a box opens its panel for an editor key, and changes nothing', async (t) => {
  const model = await api(t, 'GET', '/api/external/model');
  const diagram = model.diagrams.find((d: any) => d.level === 'C2');
  const instance = diagram.componentInstances.find((i: any) => !i.isContainer && i.component !== null);
  const page = await signIn(t, t.context.editorKey);
  const arranged: string[] = [];
  const failed: string[] = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/arrange')) arranged.push(request.url());
  });
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error') failed.push(message.text());
  });
  await page.goto(diagram.url);
  // The page asks for nothing that is not there and logs no error. Its icon is in the page, so a
  // browser with tabs asks no /favicon.ico (headless Chromium asks none either way).
  t.deepEqual(failed, []);
  t.regex((await page.locator('link[rel=icon]').getAttribute('href')) ?? '', /^data:image\/svg\+xml,/);
  t.is(await page.locator('.diagram-page').getAttribute('data-editable'), 'true');
  const before = await commitCount(t);
  const body = page.locator(`g.box[data-id="${instance.id}"] rect.body`);
  await body.scrollIntoViewIfNeeded();
  const box = (await body.boundingBox())!;
  // The middle of the box: its name's text, inside the link, as a person would click.
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  const panel = page.locator(`#c-${instance.component}`);
  await panel.waitFor({ state: 'visible' });
  t.true(page.url().endsWith(`#c-${instance.component}`));
  // A click a few pixels off its press is still a click, not a drop.
  await page.goto(diagram.url);
  const other = diagram.componentInstances.find((i: any) => !i.isContainer && i.component !== null && i.component !== instance.component);
  const otherBody = (await page.locator(`g.box[data-id="${other.id}"] rect.body`).boundingBox())!;
  await page.mouse.move(otherBody.x + otherBody.width / 2, otherBody.y + otherBody.height / 2);
  await page.mouse.down();
  await page.mouse.move(otherBody.x + otherBody.width / 2 + 2, otherBody.y + otherBody.height / 2 + 1);
  await page.mouse.up();
  await page.locator(`#c-${other.component}`).waitFor({ state: 'visible' });
  await page.waitForTimeout(200);
  t.deepEqual(arranged, []);
  t.is(await commitCount(t), before);
  await page.context().close();
});

browserTest('dropping a box inside a container makes it a child of that container', async (t) => {
  const model = await api(t, 'GET', '/api/external/model');
  const diagram = model.diagrams.find((d: any) => d.level === 'C2');
  const container = diagram.componentInstances.find((i: any) => i.isContainer);
  const box = diagram.componentInstances.find((i: any) => !i.isContainer && i.parent === null);
  const page = await signIn(t, t.context.editorKey);
  await page.goto(diagram.url);
  // Centre of the box onto the container's bottom-left inner corner.
  const target = { x: container.position.x + 1, y: container.position.y + container.height - box.height - 1 };
  const saved = arrangeAnswer(page);
  await drag(page, `g.box[data-id="${box.id}"]`, { dx: target.x - box.position.x, dy: target.y - box.position.y });
  t.is((await saved).status(), 200);
  const after = (await api(t, 'GET', `/api/external/diagram/${diagram.id}`)).componentInstances.find((i: any) => i.id === box.id);
  t.is(after.parent, container.id);
  t.deepEqual(after.position, target);
  await page.context().close();
});

browserTest('a reader sees the diagram but cannot drag anything', async (t) => {
  const model = await api(t, 'GET', '/api/external/model');
  const diagram = model.diagrams.find((d: any) => d.level === 'C1');
  const instance = diagram.componentInstances[0];
  const page = await signIn(t, t.context.readerKey);
  const arranged: string[] = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/arrange')) arranged.push(request.url());
  });
  await page.goto(diagram.url);
  t.is(await page.locator('.diagram-page').getAttribute('data-editable'), 'false');
  t.is(await page.locator('svg .handle').count(), 0);
  const before = await commitCount(t);
  await drag(page, `g.box[data-id="${instance.id}"]`, { dx: 4, dy: 4 });
  await page.waitForTimeout(300);
  t.deepEqual(arranged, []);
  t.is(await commitCount(t), before);
  const after = (await api(t, 'GET', `/api/external/diagram/${diagram.id}`)).componentInstances.find((i: any) => i.id === instance.id);
  t.deepEqual(after.position, instance.position);
  await page.context().close();
});

browserTest('a page older than the model gets the 412 message, no reload asked once caught up, and changes nothing', async (t) => {
  const model = await api(t, 'GET', '/api/external/model');
  const diagram = model.diagrams.find((d: any) => d.level === 'C3');
  const instance = diagram.componentInstances.find((i: any) => !i.isContainer);
  const page = await signIn(t, t.context.editorKey);
  await page.goto(diagram.url);
  // An open page follows the model (live.js), except under a drag: the change lands mid-drag.
  const body = page.locator(`g.box[data-id="${instance.id}"] rect.body`).first();
  await body.scrollIntoViewIfNeeded();
  const box = (await body.boundingBox())!;
  await page.mouse.move(box.x + 6, box.y + 6);
  await page.mouse.down();
  await page.mouse.move(box.x + 6 + GRID, box.y + 6, { steps: 3 });
  await api(t, 'POST', '/api/external/tag', [{ name: 'Changed meanwhile', color: 'red' }]);
  const head = await git(t, 'rev-parse', 'main');
  const refused = arrangeAnswer(page);
  await page.mouse.move(box.x + 6 + 2 * GRID, box.y + 6, { steps: 3 });
  await page.mouse.up();
  t.is((await refused).status(), 412);
  const notice = page.locator('#notice');
  await notice.waitFor({ state: 'visible' });
  t.regex((await notice.textContent())!, /The diagram changed since this page was loaded/);
  t.is(await git(t, 'rev-parse', 'main'), head);
  // live.js then brings the page up to the change (held back under the drag): the notice no
  // longer says to reload, and says the page is current.
  await page.waitForFunction(
    (commit) => (globalThis as any).document.querySelector('article.diagram-page').dataset.commit === commit,
    head,
  );
  await page.waitForFunction(() => /now shows the current version/.test((globalThis as any).document.getElementById('notice').textContent));
  t.notRegex((await notice.textContent())!, /reload/i);
  t.regex((await notice.textContent())!, /your change was not saved/i);
  t.is(await notice.getByRole('button', { name: 'Reload' }).count(), 0);
  t.is(await notice.getAttribute('role'), 'alert');
  await page.screenshot({ path: join(ARTIFACTS, 'stale-page.png'), fullPage: true });
  // The preview went back to the stored place.
  t.is((await drawn(page)).instances[instance.id].x, instance.position.x * GRID);
  await page.context().close();
});

browserTest(
  'a write elsewhere in the model does not make the next drop on an open page a false 412: the page follows the commit',
  async (t) => {
    const model = await api(t, 'GET', '/api/external/model');
    const diagram = model.diagrams.find((d: any) => d.level === 'C1');
    const box = diagram.componentInstances.find((i: any) => !i.isContainer && i.parent === null);
    const page = await signIn(t, t.context.editorKey);
    await page.goto(diagram.url);
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.live === 'open');
    // A pipeline's write to a component this diagram does not show.
    await api(t, 'POST', '/api/external/component', [{ name: 'Written by a pipeline elsewhere' }]);
    const head = await git(t, 'rev-parse', 'main');
    await page.waitForFunction(
      (commit) => (globalThis as any).document.querySelector('article.diagram-page')?.dataset.commit === commit,
      head,
    );
    const saved = arrangeAnswer(page);
    await drag(page, `g.box[data-id="${box.id}"]`, { dx: 1, dy: 0 });
    t.is((await saved).status(), 200);
    t.is(await git(t, 'rev-parse', 'main^'), head, 'the drop is one commit on top of the write');
    await page.context().close();
  },
);

browserTest('on a phone the pages fit the screen: tables scroll within them, a long unbroken description wraps', async (t) => {
  const model = await api(t, 'GET', '/api/external/model');
  const [long] = await api(t, 'POST', '/api/external/component', [{ name: 'Long talker', desc: 'x'.repeat(2000) }]);
  const page = await signIn(t, t.context.editorKey);
  await page.setViewportSize({ width: 375, height: 740 });
  const origin = new URL(model.diagrams[0].url).origin;
  for (const path of ['/', `/orgs/demo/components/${long.id}`, `${new URL(model.diagrams[0].url).pathname}/history`]) {
    await page.goto(`${origin}${path}`);
    const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
    const wide = await page.evaluate(() =>
      Array.from((globalThis as any).document.querySelectorAll('body *') as any[])
        .filter((e) => e.getBoundingClientRect().right > 375)
        .slice(0, 3)
        .map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`),
    );
    t.true(width <= 375, `${path}: ${width} px wide: ${wide.join(', ')}`);
  }
  await page.context().close();
});

browserTest(
  "a diagram's link followed from another site opens the page for a signed-in person, and the sign-in page for anyone else",
  async (t) => {
    const model = await api(t, 'GET', '/api/external/model');
    const target = model.diagrams[0].url;
    // A wiki on another site (localhost is another site than 127.0.0.1) linking to the diagram.
    const wiki = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<a id="link" href="${target}">Payments context</a>`);
    });
    wiki.listen(0, '127.0.0.1');
    await once(wiki, 'listening');
    const wikiUrl = `http://localhost:${(wiki.address() as AddressInfo).port}/`;
    try {
      const page = await signIn(t, t.context.editorKey);
      t.is((await page.context().cookies())[0]?.sameSite, 'Strict', 'the cookie stays off cross-site requests');
      await page.goto(wikiUrl);
      await Promise.all([page.waitForURL(target), page.click('#link')]);
      t.is(await page.locator('.diagram-page > h1').textContent(), model.diagrams[0].name);
      await page.context().close();

      const stranger = await t.context.browser.newContext();
      const other = await stranger.newPage();
      await other.goto(wikiUrl);
      await Promise.all([other.waitForURL(/\/sign-in\?/), other.click('#link')]);
      t.is(new URL(other.url()).searchParams.get('next'), new URL(target).pathname);
      await stranger.close();
    } finally {
      wiki.close();
    }
  },
);

browserTest(
  'an editor arranges with the keyboard: arrow keys move the focused box or text area, Shift+arrows resize it, Enter saves one drop, Escape puts it back',
  async (t) => {
    const model = await api(t, 'GET', '/api/external/model');
    const diagram = model.diagrams.find((d: any) => d.level === 'C4');
    const instance = diagram.componentInstances.find((i: any) => !i.isContainer && i.parent === null && i.component !== null);
    const placeholder = diagram.componentInstances.find((i: any) => i.component === null && !i.isContainer);
    const [area] = diagram.textareas;
    const page = await signIn(t, t.context.editorKey);
    const arranged: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/arrange')) arranged.push(request.postData() ?? '');
    });
    await page.goto(diagram.url);
    const before = await commitCount(t);
    const stored = async (id: string) => {
      const served = await api(t, 'GET', `/api/external/diagram/${diagram.id}`);
      return [...served.componentInstances, ...served.textareas].find((e: any) => e.id === id);
    };
    const focusedId = () =>
      page.evaluate(() => (globalThis as any).document.activeElement?.closest('[data-id]')?.getAttribute('data-id') ?? null);
    const press = async (...keys: string[]) => {
      for (const key of keys) await page.keyboard.press(key);
    };

    // Tab reaches the box (its link); Escape puts a move back, and nothing is sent.
    await page.locator(`g.box[data-id="${instance.id}"] a`).focus();
    await press('ArrowLeft', 'ArrowLeft', 'Escape');
    t.is(await page.locator(`g.box[data-id="${instance.id}"]`).getAttribute('transform'), 'translate(0,0)', 'put back');
    t.deepEqual(arranged, []);

    // Arrows move it a grid unit a press; Enter saves the move as one drop and keeps the focus there.
    let saved = arrangeAnswer(page);
    await press('ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowDown', 'Enter');
    t.is((await saved).status(), 200);
    t.deepEqual((await stored(instance.id)).position, { x: instance.position.x + 3, y: instance.position.y + 1 });
    t.is(await commitCount(t), before + 1, 'one commit for the whole move');
    t.false(page.url().includes('#c-'), 'Enter saved the move rather than opening the panel');
    t.is(await focusedId(), instance.id, 'the focus stays on the box moved');

    // Shift+arrows resize it.
    saved = arrangeAnswer(page);
    await press('Shift+ArrowRight', 'Shift+ArrowRight', 'Shift+ArrowDown', 'Enter');
    t.is((await saved).status(), 200);
    t.like(await stored(instance.id), { width: instance.width + 2, height: instance.height + 1 });
    t.is(await commitCount(t), before + 2);

    // A placeholder and a text area have no link; they take the focus all the same.
    for (const element of [placeholder, area]) {
      await page.locator(`[data-id="${element.id}"]`).first().focus();
      t.is(await focusedId(), element.id);
      saved = arrangeAnswer(page);
      await press('ArrowUp', 'Enter');
      t.is((await saved).status(), 200);
      t.deepEqual((await stored(element.id)).position, { x: element.position.x, y: element.position.y - 1 });
    }
    t.is(await commitCount(t), before + 4);
    await page.context().close();
  },
);
