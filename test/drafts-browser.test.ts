/**
 * The draft page in a real browser (Debian's chromium driven by playwright-core): the list of
 * open drafts from the navigation, the changes in words, a diagram as as-is / changes / to-be,
 * a conflict settled by a choice, the merge; a reader sees no buttons. Screenshots go to
 * test-artifacts/.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import {
  ARTIFACTS,
  arrangeAnswer,
  callApi,
  drag,
  EDITOR_AND_READER,
  type EditorAndReader,
  editorAndReader,
  rigGit,
  signIn,
  useBrowserRig,
} from './support/browser.js';
import { run } from './support/server.js';

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
  // The same in words, beside the drawing: for screen readers and for eyes that cannot tell the colours.
  t.regex(
    (await figure.locator('.panel.changes .marks-in-words').textContent())!,
    /^Added: box Fraud Check, relation checks\. Changed: .*box Ledger DB/,
  );
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
  // No side is chosen for the reviewer: the form asks for a choice first.
  t.is(await row.locator('input:checked').count(), 0);
  t.false(await page.locator('#merge-form').evaluate((form: any) => form.checkValidity()), 'no merge without a choice');
  await row.locator('input[value=main]').check();
  await page.screenshot({ path: join(ARTIFACTS, 'draft-conflict.png'), fullPage: true });

  // A change made to the draft after the page was loaded is not merged unseen: back to the page, nothing merged.
  const mainHead = await rigGit(t.context, 'acme', 'rev-parse', 'main');
  await api(t, 'POST', '/api/external/component?draft=payments-v2', [{ ref: 'late', name: 'Unreviewed late addition' }]);
  await Promise.all([page.waitForURL(/\?refused=changed$/), page.click('text=Merge into main')]);
  t.regex((await page.textContent('p.problem[role=alert]'))!, /The draft changed since you loaded this page: nothing was merged/);
  t.is(await rigGit(t.context, 'acme', 'rev-parse', 'main'), mainHead);
  t.regex((await page.textContent('ul.changes'))!, /added component Unreviewed late addition/);
  await page.locator('table.conflicts tbody tr input[value=main]').check();
  const mainBefore = (await api(t, 'GET', '/api/external/drafts/payments-v2')).base;
  await Promise.all([page.waitForURL(`${url}/orgs/acme/drafts/payments-v2`), page.click('text=Merge into main')]);
  t.is(await page.textContent('.draft-state'), 'merged');
  t.is(await page.locator('text=Merge into main').count(), 0);
  await page.screenshot({ path: join(ARTIFACTS, 'draft-merged.png'), fullPage: true });

  const components = await api(t, 'GET', '/api/external/component');
  t.deepEqual(components.map((c: { name: string }) => c.name).sort(), [
    'API',
    'Fraud Check',
    'Postgres',
    'Unreviewed late addition',
    'Web',
  ]);
  const [subject, parents] = (await rigGit(t.context, 'acme', 'log', '-1', '--format=%s%n%P', 'main')).split('\n');
  t.regex(subject, /^Merged draft 'payments-v2'/);
  t.is(parents.split(' ').length, 2);
  t.not(mainBefore, undefined);
  await page.context().close();
});

browserTest(
  'the draft page shows a change of the organization, and a diagram the draft deleted, marked deleted, among those it compares',
  async (t) => {
    await api(t, 'POST', '/api/external/component', [
      { ref: 'old-web', name: 'Old Web' },
      { ref: 'old-api', name: 'Old API' },
    ]);
    const [kept, gone] = await api(t, 'POST', '/api/external/diagram', [
      {
        ref: 'kept',
        name: 'Kept C2',
        level: 'C2',
        componentInstances: [{ ref: 'w', component: 'old-web', position: { x: 0, y: 0 }, width: 10, height: 5 }],
      },
      {
        ref: 'gone',
        name: 'Legacy C2',
        level: 'C2',
        componentInstances: [
          { ref: 'w', component: 'old-web', position: { x: 0, y: 0 }, width: 10, height: 5 },
          { ref: 'a', component: 'old-api', position: { x: 20, y: 0 }, width: 10, height: 5 },
        ],
        relations: [{ ref: 'wa', fromComponentInstance: 'w', toComponentInstance: 'a', label: 'calls' }],
      },
    ]);
    await api(t, 'POST', '/api/external/drafts', { name: 'retire', title: 'Retire the legacy view' });
    // The draft moves the box of one diagram and deletes the other, over the API...
    await api(t, 'POST', '/api/external/diagram?draft=retire', [
      { ref: 'kept', name: 'Kept C2', level: 'C2', componentInstances: [{ ref: 'w', component: 'old-web', position: { x: 0, y: 8 } }] },
    ]);
    await api(t, 'DELETE', `/api/external/diagrams/${gone.id}?draft=retire`);
    // ...and renames the organization, with a member more, over git (organization.yaml is no resource of the API).
    const parent = await mkdtemp(join(tmpdir(), 'c4store-drafts-browser-clone-'));
    t.teardown(() => rm(parent, { recursive: true, force: true }));
    const remote = new URL(`${t.context.server.url}/git/acme.git`);
    remote.username = 'ci';
    remote.password = t.context.editorKey;
    const dir = join(parent, 'model');
    const env = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
    const git = (...args: string[]) => run('git', ['-C', dir, '-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', ...args], { env });
    await run('git', ['clone', '-q', remote.href, dir], { env });
    await git('checkout', '-q', 'drafts/retire');
    const file = join(dir, 'organization.yaml');
    const yaml = await readFile(file, 'utf8');
    const edited = yaml.replace(/^name: Acme$/m, 'name: Acme Corp').replace(/^members: \[\]$/m, 'members:\n  - grace@example.com');
    t.not(edited, yaml);
    await writeFile(file, edited);
    await git('commit', '-q', '-am', 'Acme Corp, with Grace');
    await git('push', '-q', 'origin', 'drafts/retire');

    const page = await signIn(t.context, t.context.readerKey, { next: '/orgs/acme/drafts/retire' });
    const words = await page.$$eval('.changes li', (items) => items.map((li) => li.textContent));
    t.deepEqual(words, [
      "renamed the organization 'Acme' to 'Acme Corp'",
      'added member grace@example.com',
      'removed diagram Legacy C2',
      'on Kept C2: moved 1 box',
    ]);

    // Both diagrams are compared, the deleted one after the changed one, and said to be deleted.
    const figures = await page.$$eval('section.diff-figure', (sections) => sections.map((s) => (s as any).dataset.diagram));
    t.deepEqual(figures, [kept.id, gone.id]);
    const figure = page.locator(`section.diff-figure[data-diagram="${gone.id}"]`);
    t.is(await figure.locator('h3').textContent(), 'Legacy C2 deleted');
    t.true(await figure.locator('h3 .deleted-mark').isVisible());
    t.true(await figure.locator('.panel.changes svg').isVisible());
    const elements = [...gone.componentInstances, ...gone.relations].map((e: { id: string }) => e.id).sort();
    const marked = async (panel: string, mark: string) =>
      (await figure.locator(`.panel.${panel} g[data-id]${mark}`).evaluateAll((gs) => gs.map((g) => (g as any).dataset.id))).sort();
    t.deepEqual([...new Set(await marked('changes', '.c4-removed'))], elements, "every element of main's diagram, marked removed");
    t.is(await figure.locator('.panel.changes g[data-id]:not(.c4-removed)').count(), 0);
    t.is(
      await figure.locator('.panel.changes .marks-in-words').textContent(),
      'The draft deletes this diagram: everything on it is marked removed. Removed: box Old Web, box Old API, relation calls.',
    );
    await page.screenshot({ path: join(ARTIFACTS, 'draft-deleted-diagram.png'), fullPage: true });
    await figure.locator('label.as-is').click();
    t.true(await figure.locator('.panel.as-is svg').isVisible());
    t.false(await figure.locator('.panel.changes svg').isVisible());
    t.is(await figure.locator('.panel.as-is g[data-kind="instance"]').count(), 2);
    t.is(await figure.locator('.panel.as-is g.c4-removed').count(), 0);
    await figure.locator('label.to-be').click();
    t.true(await figure.locator('.panel.to-be').isVisible());
    t.is(await figure.locator('.panel.to-be').textContent(), 'Not in the draft: the draft deletes this diagram.');
    t.is(await figure.locator('.panel.to-be svg').count(), 0);

    // Its name opens it as main had it where the draft began: main's page of that commit.
    const base = (await api(t, 'GET', '/api/external/drafts/retire')).changes.from;
    await Promise.all([
      page.waitForURL(`${t.context.server.url}/orgs/acme/diagrams/${gone.id}?at=${base}`),
      figure.locator('h3 a').click(),
    ]);
    t.is(await page.locator('g.box[data-kind="instance"]').count(), 2);
    await page.context().close();
  },
);

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

/**
 * The seed-form body of the C2 `name` with its two boxes, Web and API, and a relation between
 * them; `apiY` moves the API box down (the Web box keeps where it stands).
 */
function twoBoxesBody(name: string, apiY?: number) {
  const placed = (x: number, y: number) => ({ position: { x, y }, width: 10, height: 5 });
  return [
    {
      ref: name,
      name: `${name} C2`,
      level: 'C2',
      componentInstances: [
        { ref: 'w', component: `${name}-web`, ...(apiY === undefined ? placed(0, 0) : {}) },
        { ref: 'a', component: `${name}-api`, ...(apiY === undefined ? placed(20, 0) : { position: { x: 20, y: apiY } }) },
      ],
      relations: [{ ref: 'wa', fromComponentInstance: 'w', toComponentInstance: 'a', label: 'calls' }],
    },
  ];
}

/** That C2 on main: the diagram the drags below move. */
async function twoBoxes(t: { context: Context }, name: string) {
  await api(t, 'POST', '/api/external/component', [
    { ref: `${name}-web`, name: `${name} Web` },
    { ref: `${name}-api`, name: `${name} API` },
  ]);
  const [diagram] = await api(t, 'POST', '/api/external/diagram', twoBoxesBody(name));
  const box = (ref: string) => diagram.componentInstances.find((i: { ref: string }) => i.ref === ref);
  return { diagram, web: box('w'), apiBox: box('a') };
}

const positionIn = async (t: { context: Context }, diagramId: string, instanceId: string, query = '') =>
  (await api(t, 'GET', `/api/external/diagram/${diagramId}${query}`)).componentInstances.find((i: { id: string }) => i.id === instanceId)
    .position;

browserTest("dragging a box on a draft's diagram commits to the draft's branch, never to main; so does the panel's edit", async (t) => {
  const { diagram, web, apiBox } = await twoBoxes(t, 'layout');
  // A draft with no commits of its own: its head is main's, so the page's If-Match would match main too.
  await api(t, 'POST', '/api/external/drafts', { name: 'layout-tweak', title: 'Tidy the layout' });
  const main = await rigGit(t.context, 'acme', 'rev-parse', 'main');
  t.is(await rigGit(t.context, 'acme', 'rev-parse', 'drafts/layout-tweak'), main);

  const path = `/orgs/acme/diagrams/${diagram.id}?draft=layout-tweak`;
  const page = await signIn(t.context, t.context.editorKey, { next: path });
  t.regex((await page.textContent('.draft-banner'))!, /Draft layout-tweak.*go into the draft, not main/s);
  t.is(await page.getAttribute('article.diagram-page', 'data-editable'), 'true');
  const saved = arrangeAnswer(page);
  await drag(page, `g.box[data-id="${web.id}"]`, { dx: 3, dy: 2 });
  const answer = await saved;
  t.is(answer.status(), 200);
  t.is(new URL(answer.url()).search, '?draft=layout-tweak');

  const head = await rigGit(t.context, 'acme', 'rev-parse', 'drafts/layout-tweak');
  t.is(await rigGit(t.context, 'acme', 'rev-parse', 'main'), main, 'main never moves');
  t.is(await rigGit(t.context, 'acme', 'rev-parse', `${head}^`), main, 'one commit on the draft');
  t.is(await rigGit(t.context, 'acme', 'log', '-1', '--format=%an|%s', head), "Ada Editor|Moved 'layout Web' on 'layout C2'");
  t.deepEqual(await positionIn(t, diagram.id, web.id, '?draft=layout-tweak'), { x: 3, y: 2 });
  t.deepEqual(await positionIn(t, diagram.id, web.id), { x: 0, y: 0 });
  t.is(await page.getAttribute('article.diagram-page', 'data-commit'), head);

  // A second drop needs no reload (the page shows the draft's new head), and goes to the draft too.
  const again = arrangeAnswer(page);
  await drag(page, `g.box[data-id="${web.id}"]`, { dx: 1, dy: 0 });
  t.is((await again).status(), 200);
  t.deepEqual(await positionIn(t, diagram.id, web.id, '?draft=layout-tweak'), { x: 4, y: 2 });
  t.is(await rigGit(t.context, 'acme', 'rev-list', '--count', 'main..drafts/layout-tweak'), '2');
  t.is(await rigGit(t.context, 'acme', 'rev-parse', 'main'), main);

  // The panel's edit of a name goes to the draft as well, and comes back to the draft's page.
  const panel = page.locator(`#c-${web.component}`);
  await page.goto(`${t.context.server.url}${path}#c-${web.component}`);
  await panel.locator('details.edit summary').click();
  await panel.locator('input[name=name]').fill('Web Shop');
  const edited = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/edit'));
  await panel.locator('button[type=submit]').click();
  const sent = await edited;
  t.is(new URL(sent.url()).search, '?draft=layout-tweak');
  t.is(sent.status(), 303);
  t.is(sent.headers().location, `${path}#c-${web.component}`);
  await page.waitForURL(`${t.context.server.url}${path}#c-${web.component}`);
  t.is((await api(t, 'GET', `/api/external/components/${web.component}?draft=layout-tweak`)).name, 'Web Shop');
  t.is((await api(t, 'GET', `/api/external/components/${web.component}`)).name, 'layout Web');
  t.is(await rigGit(t.context, 'acme', 'rev-list', '--count', 'main..drafts/layout-tweak'), '3');
  t.is(await rigGit(t.context, 'acme', 'rev-parse', 'main'), main);

  // The page follows the draft's branch (live.js): another writer's move in the draft is drawn.
  await page.waitForFunction(() => (globalThis as any).document.body.dataset.live === 'open');
  await api(t, 'POST', '/api/external/diagram?draft=layout-tweak', twoBoxesBody('layout', 9));
  await page.waitForSelector(`g.box[data-id="${apiBox.id}"][data-y="9"]`);
  t.is(await page.getAttribute('article.diagram-page', 'data-commit'), await rigGit(t.context, 'acme', 'rev-parse', 'drafts/layout-tweak'));
  t.is(await rigGit(t.context, 'acme', 'rev-parse', 'main'), main);

  // The draft page tells the moves and links to the diagram as the draft has it.
  await page.goto(`${t.context.server.url}/orgs/acme/drafts/layout-tweak`);
  const words = await page.$$eval('.changes li', (items) => items.map((li) => li.textContent));
  t.true(words.includes('on layout C2: moved 2 boxes'), words.join(' | '));
  await Promise.all([
    page.waitForURL(`${t.context.server.url}${path}`),
    page.click(`section.diff-figure[data-diagram="${diagram.id}"] h3 a`),
  ]);
  t.is(await page.getAttribute('article.diagram-page', 'data-editable'), 'true');
  await page.screenshot({ path: join(ARTIFACTS, 'draft-diagram.png'), fullPage: true });
  await page.context().close();
});

browserTest("a drag on a draft merged or closed meanwhile is refused with the contract's error; their pages take no drags", async (t) => {
  const { diagram, web, apiBox } = await twoBoxes(t, 'late');
  for (const [name, end, error] of [
    ['late-merge', 'merge', "Draft 'late-merge' is merged; open a new draft for further changes."],
    ['late-close', 'close', "Draft 'late-close' is closed; reopen it to change it."],
  ] as const) {
    await api(t, 'POST', '/api/external/drafts', { name });
    // The draft moves the API box down: its own work, which the refused drags leave alone.
    await api(t, 'POST', `/api/external/diagram?draft=${name}`, twoBoxesBody('late', 9));
    const path = `/orgs/acme/diagrams/${diagram.id}?draft=${name}`;
    const page = await signIn(t.context, t.context.editorKey, { next: path });
    t.is(await page.getAttribute('article.diagram-page', 'data-editable'), 'true');
    // Behind the page's back, the draft is merged or closed.
    if (end === 'merge') await api(t, 'POST', `/api/external/drafts/${name}/merge`, {});
    else await api(t, 'DELETE', `/api/external/drafts/${name}`);
    const refs = await rigGit(t.context, 'acme', 'for-each-ref', '--format=%(refname) %(objectname)');

    const refused = arrangeAnswer(page);
    await drag(page, `g.box[data-id="${web.id}"]`, { dx: 2, dy: 2 });
    const answer = await refused;
    t.is(answer.status(), 409);
    t.deepEqual(await answer.json(), { error });
    await page.locator('#notice').waitFor({ state: 'visible' });
    t.is((await page.textContent('#notice'))!.trim(), `Not saved: ${error}`);
    t.is(await page.getAttribute(`g.box[data-id="${web.id}"]`, 'transform'), 'translate(0,0)', 'the box back where it was');
    t.is(await rigGit(t.context, 'acme', 'for-each-ref', '--format=%(refname) %(objectname)'), refs, 'no ref moved');
    t.deepEqual(await positionIn(t, diagram.id, web.id, `?draft=${name}`), { x: 0, y: 0 });

    // Loaded again: read only, saying why.
    await page.reload();
    t.is(await page.getAttribute('article.diagram-page', 'data-editable'), 'false');
    t.regex((await page.textContent('.draft-banner'))!, end === 'merge' ? /is merged: read only/ : /is closed: read only/);
    t.is(await page.locator('.hint').count(), 0);
    t.is(await page.locator('details.edit').count(), 0);
    let sent = 0;
    page.on('request', (request) => void (request.method() === 'POST' && sent++));
    await drag(page, `g.box[data-id="${web.id}"]`, { dx: 2, dy: 2 });
    t.is(sent, 0, 'a drag on a read-only page sends nothing');
    t.is(await rigGit(t.context, 'acme', 'for-each-ref', '--format=%(refname) %(objectname)'), refs);
    t.deepEqual(await positionIn(t, diagram.id, apiBox.id, `?draft=${name}`), { x: 20, y: 9 });
    await page.context().close();
  }
});
