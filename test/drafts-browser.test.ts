/**
 * The draft page in a real browser (Debian's chromium driven by playwright-core): the list of
 * open drafts from the navigation, the changes in words, a diagram as as-is / changes / to-be,
 * a conflict settled by a choice, the merge; a reader sees no buttons. Screenshots go to
 * test-artifacts/.
 */
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import {
  ARTIFACTS,
  callApi,
  EDITOR_AND_READER,
  type EditorAndReader,
  editorAndReader,
  rigGit,
  signIn,
  useBrowserRig,
} from './support/browser.js';

type Context = EditorAndReader;

const test = anyTest as TestFn<Context>;
const browserTest = useBrowserRig(test, 'drafts-browser', { acme: { name: 'Acme', keys: EDITOR_AND_READER } }, editorAndReader);

const api = (t: { context: Context }, method: string, path: string, body?: unknown) =>
  callApi(t.context, t.context.editorKey, method, path, body);

browserTest('the draft page: changes in words, as-is / changes / to-be, a conflict settled by a choice, merged', async (t) => {
  await api(t, 'POST', '/api/external/component', [
    { ref: 'web', name: 'Web' },
    { ref: 'api', name: 'API' },
    { ref: 'db', name: 'Database' },
  ]);
  const [diagram] = await api(t, 'POST', '/api/external/diagram', [
    {
      ref: 'c2',
      name: 'Payments C2',
      level: 'C2',
      componentInstances: [
        { ref: 'w', component: 'web', position: { x: 0, y: 0 }, width: 10, height: 5 },
        { ref: 'a', component: 'api', position: { x: 20, y: 0 }, width: 10, height: 5 },
        { ref: 'd', component: 'db', position: { x: 40, y: 0 }, width: 10, height: 5 },
      ],
      relations: [
        { ref: 'wa', fromComponentInstance: 'w', toComponentInstance: 'a', label: 'calls' },
        { ref: 'ad', fromComponentInstance: 'a', toComponentInstance: 'd', label: 'reads' },
      ],
    },
  ]);
  await api(t, 'POST', '/api/external/drafts', { name: 'payments-v2', title: 'Payments v2', desc: 'Fraud checks before the ledger' });
  await api(t, 'POST', '/api/external/component?draft=payments-v2', [
    { ref: 'fraud', name: 'Fraud Check' },
    { ref: 'db', name: 'Ledger DB' },
  ]);
  await api(t, 'POST', '/api/external/diagram?draft=payments-v2', [
    {
      ref: 'c2',
      name: 'Payments C2',
      level: 'C2',
      componentInstances: [
        { ref: 'w', component: 'web', position: { x: 0, y: 10 } },
        { ref: 'a', component: 'api', position: { x: 20, y: 10 } },
        { ref: 'd', component: 'db' },
        { ref: 'f', component: 'fraud', position: { x: 20, y: 22 }, width: 10, height: 5 },
      ],
      relations: [
        { ref: 'wa', fromComponentInstance: 'w', toComponentInstance: 'a', label: 'calls' },
        { ref: 'ad', fromComponentInstance: 'a', toComponentInstance: 'd', label: 'SQL' },
        { ref: 'af', fromComponentInstance: 'a', toComponentInstance: 'f', label: 'checks' },
      ],
    },
  ]);
  // main renames the database meanwhile: a conflict with the draft's name for it.
  await api(t, 'POST', '/api/external/component', [{ ref: 'db', name: 'Postgres' }]);

  const page = await signIn(t.context, t.context.editorKey);
  const url = t.context.server.url;
  await page.click('a.nav-drafts');
  await page.waitForURL(`${url}/orgs/acme/drafts`);
  await Promise.all([page.waitForURL(`${url}/orgs/acme/drafts/payments-v2`), page.click('text=payments-v2')]);

  t.is(await page.textContent('h1'), 'Payments v2');
  t.is(await page.textContent('.draft-desc'), 'Fraud checks before the ledger');
  t.regex((await page.textContent('.draft-meta'))!, /by Ada Editor/);
  const words = await page.$$eval('.changes li', (items) => items.map((li) => li.textContent));
  t.true(words.includes('added component Fraud Check'), words.join(' | '));
  t.true(words.includes("on Payments C2: added 1 box, moved 2 boxes, added 1 relation, relabelled 'SQL'"), words.join(' | '));
  t.true(words.includes("on Ledger DB: renamed 'Database' to 'Ledger DB'"), words.join(' | '));

  // The three modes of one layout; changes first.
  const figure = page.locator(`section.diff-figure[data-diagram="${diagram.id}"]`);
  t.true(await figure.locator('.panel.changes svg').isVisible());
  t.false(await figure.locator('.panel.as-is svg').isVisible());
  t.is(await figure.locator('.panel.changes g.c4-added').count(), 3, 'the new box, its relation and that relation’s label');
  t.true((await figure.locator('.panel.changes g.c4-changed').count()) >= 2);
  await page.screenshot({ path: join(ARTIFACTS, 'draft-changes.png'), fullPage: true });
  await figure.locator('label.as-is').click();
  t.true(await figure.locator('.panel.as-is svg').isVisible());
  t.false(await figure.locator('.panel.changes svg').isVisible());
  t.is(await figure.locator('.panel.as-is g[data-kind="instance"]').count(), 3);
  await page.screenshot({ path: join(ARTIFACTS, 'draft-as-is.png'), fullPage: true });
  await figure.locator('label.to-be').click();
  t.true(await figure.locator('.panel.to-be svg').isVisible());
  t.is(await figure.locator('.panel.to-be g[data-kind="instance"]').count(), 4);
  await page.screenshot({ path: join(ARTIFACTS, 'draft-to-be.png'), fullPage: true });

  // The conflict with its three values; keep main's name, merge.
  const row = page.locator('table.conflicts tbody tr');
  t.is(await row.count(), 1);
  t.regex((await row.textContent())!, /Database.*Postgres.*Ledger DB/s);
  await row.locator('input[value=main]').check();
  await page.screenshot({ path: join(ARTIFACTS, 'draft-conflict.png'), fullPage: true });
  const mainBefore = (await api(t, 'GET', '/api/external/drafts/payments-v2')).base;
  await Promise.all([page.waitForURL(`${url}/orgs/acme/drafts/payments-v2`), page.click('text=Merge into main')]);
  t.is(await page.textContent('.draft-state'), 'merged');
  t.is(await page.locator('text=Merge into main').count(), 0);
  await page.screenshot({ path: join(ARTIFACTS, 'draft-merged.png'), fullPage: true });

  const components = await api(t, 'GET', '/api/external/component');
  t.deepEqual(components.map((c: { name: string }) => c.name).sort(), ['API', 'Fraud Check', 'Postgres', 'Web']);
  const [subject, parents] = (await rigGit(t.context, 'acme', 'log', '-1', '--format=%s%n%P', 'main')).split('\n');
  t.regex(subject, /^Merged draft 'payments-v2'/);
  t.is(parents.split(' ').length, 2);
  t.not(mainBefore, undefined);
  await page.context().close();
});

browserTest('a reader sees a draft but no merge or close button, and no choices', async (t) => {
  await api(t, 'POST', '/api/external/drafts', { name: 'reader-view' });
  await api(t, 'POST', '/api/external/component?draft=reader-view', [{ name: 'Queue' }]);
  const page = await signIn(t.context, t.context.readerKey);
  await page.goto(`${t.context.server.url}/orgs/acme/drafts/reader-view`);
  t.regex((await page.textContent('.changes'))!, /added component Queue/);
  t.is(await page.locator('text=Merge into main').count(), 0);
  t.is(await page.locator('text=Close draft').count(), 0);
  await page.context().close();
});

browserTest('an editor closes a draft from its page', async (t) => {
  await api(t, 'POST', '/api/external/drafts', { name: 'to-close', title: 'Not now' });
  const page = await signIn(t.context, t.context.editorKey);
  await page.goto(`${t.context.server.url}/orgs/acme/drafts/to-close`);
  await Promise.all([page.waitForURL(`${t.context.server.url}/orgs/acme/drafts`), page.click('text=Close draft')]);
  t.is((await api(t, 'GET', '/api/external/drafts/to-close')).state, 'closed');
  await page.context().close();
});
