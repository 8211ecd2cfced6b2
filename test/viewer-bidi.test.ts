/**
 * Names with bidirectional controls in a real browser (Debian's chromium driven by
 * playwright-core): a RIGHT-TO-LEFT OVERRIDE (U+202E) in a name, obeyed, shows the rest of the
 * name and the text after it on its line backwards, so a page could say something else than the
 * data. Every line that holds model text followed by more text is checked by where Chromium lays
 * out each character: in logical order, each one right of the one before it or on a later line.
 * A line built the old way, with the name not isolated and its override obeyed, fails that check
 * (the control case below), so the check can tell.
 */
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { ARTIFACTS, callApi, type EditorAndReader, editorAndReader, signIn, useBrowserRig } from './support/browser.js';

type Context = EditorAndReader;

const test = anyTest as TestFn<Context>;
/**
 * The signed-in key's label is model text too: the header shows it, drafts and share links name it.
 * Today's `key create` refuses such a label; one an earlier version made is shown all the same.
 */
const LABEL = 'Ada \u202eEditor';
const browserTest = useBrowserRig(
  test,
  'viewer-bidi',
  { acme: { name: 'Acme', keys: { editor: { label: LABEL, earlier: true }, reader: { label: 'Rita Reader', role: 'reader' } } } },
  editorAndReader,
);

const api = (t: { context: Context }, method: string, path: string, body?: unknown) =>
  callApi(t.context, t.context.editorKey, method, path, body);

/** An override in the middle of a name. */
const SPOOF = 'abc\u202edef';
/**
 * An isolate's end (U+2069) and then an override: in `<bdi>` alone, Chromium lets the U+2069 end
 * the name's isolation and the override then runs on to the end of the line.
 */
const BREAKOUT = 'dia\u2069\u202egram';
const RAW_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/;

interface Line {
  text: string;
  /** Every visible character right of the one before it, or on a later line. */
  inOrder: boolean;
  /** Where each character was drawn, for the message of a failure. */
  where: string;
}

/**
 * Each element matching `selector`, as laid out: its visible characters (spaces and zero-width
 * characters left out) in document order, HTML and SVG text alike (Range rectangles).
 */
function lines(page: Page, selector: string): Promise<Line[]> {
  return page.$$eval(selector, (elements) => {
    // Runs in the page; the test's TypeScript knows no DOM.
    const document = (globalThis as any).document;
    return elements.map((element) => {
      const chars: Array<{ ch: string; left: number; top: number; bottom: number }> = [];
      const walker = document.createTreeWalker(element, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < node.data.length; i++) {
          if (/\s/.test(node.data[i])) continue;
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const rect = range.getBoundingClientRect();
          if (rect.width === 0) continue;
          chars.push({ ch: node.data[i], left: rect.left, top: rect.top, bottom: rect.bottom });
        }
      }
      let inOrder = chars.length > 0;
      for (let k = 1; k < chars.length; k++) {
        const [a, b] = [chars[k - 1]!, chars[k]!];
        const laterLine = b.top >= a.bottom - 1;
        if (!laterLine && !(b.left > a.left)) inOrder = false;
      }
      return {
        text: element.textContent ?? '',
        inOrder,
        where: chars.map((c) => `${c.ch}@${Math.round(c.left)},${Math.round(c.top)}`).join(' '),
      };
    });
  });
}

/**
 * Text of the page's flow that shows a bidi control (`[U+`) outside a `<bdi>`: model text that is
 * not isolated. The drawing (SVG), the `<title>` and form fields are not the page's flow.
 */
function unisolated(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const document = (globalThis as any).document;
    const found: string[] = [];
    const walker = document.createTreeWalker(document.body, 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.data.includes('[U+') && !node.parentElement.closest('bdi, svg, textarea')) found.push(node.data);
    }
    return found;
  });
}

/** Asserts that `selector` matches at least one element, each in logical order and holding `shown`. */
async function assertInOrder(t: any, page: Page, selector: string, shown: string): Promise<void> {
  const found = await lines(page, selector);
  t.true(found.length > 0, `${selector}: nothing found`);
  t.deepEqual(await unisolated(page), [], `${page.url()}: model text outside <bdi>`);
  for (const line of found) {
    t.true(line.text.includes(shown), `${selector}: '${line.text}' should show '${shown}'`);
    t.false(RAW_CONTROLS.test(line.text), `${selector}: '${line.text}' holds a bidi control`);
    t.true(line.inOrder, `${selector}: '${line.text}' is not in logical order: ${line.where}`);
  }
}

async function model(t: { context: Context }) {
  const [tag] = await api(t, 'POST', '/api/external/tag', [{ name: 'red\u202eflag', color: 'red' }]);
  const components = await api(t, 'POST', '/api/external/component', [
    { ref: 'spoof', name: SPOOF, typeSlug: 'container', desc: 'first\u202esecond', apiContext: 'run\u202e 7' },
    { ref: 'web', name: 'Web', typeSlug: 'container' },
    { ref: 'db', name: 'Store', typeSlug: 'database' },
  ]);
  const [diagram] = await api(t, 'POST', '/api/external/diagram', [
    {
      ref: 'd',
      name: BREAKOUT,
      level: 'C2',
      tags: [{ id: tag.id }],
      desc: 'the \u202edescription',
      componentInstances: [
        { ref: 'box', component: 'spoof', isContainer: true, position: { x: 0, y: 0 }, width: 40, height: 16 },
        { ref: 'w', component: 'web', parent: 'box', position: { x: 2, y: 4 }, width: 10, height: 5 },
        { ref: 's', component: 'db', parent: 'box', position: { x: 26, y: 4 }, width: 10, height: 5 },
      ],
      relations: [{ ref: 'r', fromComponentInstance: 'w', toComponentInstance: 's', label: 're\u202ead' }],
      textareas: [{ ref: 'note', position: { x: 0, y: 20 }, width: 30, text: 'a \u202enote' }],
    },
  ]);
  const spoof = components.find((c: { ref: string }) => c.ref === 'spoof');
  return { diagram, spoof };
}

browserTest(
  'a name with bidi controls cannot reorder its line on any page, nor in the drawing: each shown as [U+XXXX], in logical order',
  async (t) => {
    const { diagram, spoof } = await model(t);
    const path = `/orgs/acme/diagrams/${diagram.id}`;
    const page = await signIn(t.context, t.context.editorKey, { next: path });

    // The control case: the same kind of line built the old way is reordered by Chromium, and
    // the check says so (for HTML and for SVG text).
    await page.evaluate(() => {
      const document = (globalThis as any).document;
      const p = document.createElement('p');
      p.id = 'unprotected';
      p.innerHTML = 'Diagram <span>abc\u202edef</span> (C2) follows';
      document.querySelector('main').append(p);
      const svg = document.querySelector('svg.c4-diagram');
      const text = document.createElementNS('http://www.w3.org/2000/svg', 'text');
      text.id = 'unprotected-svg';
      text.setAttribute('x', '0');
      text.setAttribute('y', '0');
      text.innerHTML = 'abc\u202edef <tspan>[Container]</tspan>';
      svg.append(text);
    });
    for (const selector of ['#unprotected', '#unprotected-svg']) {
      const [control] = await lines(page, selector);
      t.false(control!.inOrder, `${selector} should be reordered: ${control!.where}`);
    }
    await page.reload();

    // The header: the key's label, then the organization and the role.
    await assertInOrder(t, page, 'header.top .who', 'Ada [U+202E]Editor · acme · can arrange');
    // The diagram's name (a U+2069 first, which must not end its isolation), its tags after its state.
    t.is(await page.locator('article.diagram-page h1').textContent(), 'dia[U+2069][U+202E]gram');
    t.is(await page.title(), 'dia[U+2069][U+202E]gram · c4store');
    await assertInOrder(t, page, 'article.diagram-page ul.tags', 'red[U+202E]flag');
    await assertInOrder(t, page, 'article.diagram-page > p.desc', 'the [U+202E]description');
    // The shown control says what it is.
    t.regex(
      (await page.locator('article.diagram-page h1 .bidi-control').last().getAttribute('title')) ?? '',
      /U\+202E RIGHT-TO-LEFT OVERRIDE/,
    );

    // The drawing: a boundary's name and [Type] share one <text>; the relation's label; the text area.
    await assertInOrder(t, page, `svg.c4-diagram g.box[data-component="${spoof.id}"] text.name`, 'abc[U+202E]def [Container]');
    await assertInOrder(t, page, 'svg.c4-diagram g.relation-label text', 're[U+202E]ad');
    await assertInOrder(t, page, 'svg.c4-diagram g.textarea text', 'a [U+202E]note');
    const drawn = await page.locator('svg.c4-diagram').evaluate((svg: any) => svg.outerHTML as string);
    t.false(RAW_CONTROLS.test(drawn), 'the inline drawing holds no bidi control');

    // The index: a component's name, then its API badge.
    await page.goto(`${t.context.server.url}/?q=abc`);
    await assertInOrder(t, page, 'table.components tbody td:first-child', 'abc[U+202E]def API');
    // The component's own page.
    await page.goto(`${t.context.server.url}/orgs/acme/components/${spoof.id}`);
    await assertInOrder(t, page, 'ul.appears li', 'dia[U+2069][U+202E]gram (C2)');

    // The component's panel: its notice, the diagrams it appears on, each name followed by more text.
    const panel = `#c-${spoof.id}`;
    await page.goto(`${t.context.server.url}${path}${panel}`);
    await page.waitForSelector(`${panel}:target`);
    await assertInOrder(t, page, `${panel} .api-notice`, 'Updated through the API (run[U+202E] 7): later API updates');
    await assertInOrder(t, page, `${panel} ul.appears li`, 'dia[U+2069][U+202E]gram (C2)');
    await assertInOrder(t, page, `${panel} p.desc`, 'first[U+202E]second');
    // Its form keeps the very characters: saving it saves the name as it is, not as shown.
    t.is(await page.locator(`#name-${spoof.id}`).inputValue(), SPOOF);
    t.is(await page.locator(`#desc-${spoof.id}`).inputValue(), 'first\u202esecond');
    await page.locator(`${panel} details.edit summary`).click();
    await page.fill(`#desc-${spoof.id}`, 'saved from the panel');
    await Promise.all([page.waitForURL(new RegExp(`${path}#c-`)), page.locator(`${panel} form.edit-form button`).click()]);
    const saved = await api(t, 'GET', `/api/external/component/${spoof.id}`);
    t.is(saved.name, SPOOF);
    t.is(saved.desc, 'saved from the panel');

    // The drawing alone: no control left in the SVG, so the PNG (resvg obeys an override and ignores unicode-bidi) has none to obey.
    const svgText = await (await page.request.get(`${t.context.server.url}${path}.svg`)).text();
    t.false(RAW_CONTROLS.test(svgText));
    t.true(svgText.includes('abc[U+202E]def'));
    t.is((await page.request.get(`${t.context.server.url}${path}.png`)).status(), 200);

    // A share link: its label, then who made it (the key's label) and its id.
    await page.goto(t.context.server.url + path);
    await page.locator('details.share summary').click();
    await page.fill('#share-label', 'wi\u202eki');
    await Promise.all([page.waitForURL(`**${path}/share-links`), page.locator('form.make-share button').click()]);
    await assertInOrder(t, page, 'section.share-made h1', 'Share link to dia[U+2069][U+202E]gram');
    await page.goto(t.context.server.url + path);
    await assertInOrder(t, page, 'ul.share-links li', 'wi[U+202E]ki · made');
    t.true((await lines(page, 'ul.share-links li'))[0]!.text.includes('by Ada [U+202E]Editor · '));

    // A draft: its title, its author (the key's label) followed by the rest of the line, its changes in words.
    await api(t, 'POST', '/api/external/drafts', { name: 'bidi', title: 'ti\u202etle', desc: 'why \u202ethis' });
    await api(t, 'POST', '/api/external/component?draft=bidi', [{ id: spoof.id, name: 'new\u202ename' }]);
    await page.goto(`${t.context.server.url}/orgs/acme/drafts/bidi`);
    await assertInOrder(t, page, 'h1', 'ti[U+202E]tle');
    await assertInOrder(t, page, 'p.draft-meta', 'by Ada [U+202E]Editor · opened');
    await assertInOrder(t, page, 'ul.changes li', "renamed 'abc[U+202E]def' to 'new[U+202E]name'");
    t.true((await lines(page, 'ul.changes li'))[0]!.text.startsWith('on new[U+202E]name: '));
    await assertInOrder(t, page, 'p.marks-in-words', 'Changed: box new[U+202E]name.');
    await page.goto(`${t.context.server.url}/orgs/acme/drafts`);
    await assertInOrder(t, page, 'table.drafts tbody tr td:nth-child(2)', 'ti[U+202E]tle');
    // The diagram's history in the draft: its name, then which draft.
    await page.goto(`${t.context.server.url}${path}/history?draft=bidi`);
    await assertInOrder(t, page, 'section.history-page h1', "History of dia[U+2069][U+202E]gram in draft 'bidi'");

    await page.screenshot({ path: join(ARTIFACTS, 'viewer-bidi-history.png') });
    await page.context().close();
  },
);
