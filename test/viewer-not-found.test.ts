/**
 * The viewer's 404 page in a real browser (Debian's chromium driven by playwright-core): a
 * signed-in visitor keeps the header every page has (Drafts, who is signed in, Sign out) on an
 * address nothing serves and on a diagram or component that does not exist. The header names
 * only the visitor's own organization: what a page says about an address under another slug is
 * the same whether an organization of that slug exists or not.
 */
import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { KeyStore } from '../src/store/keys.js';
import { type BrowserRig, signIn, useBrowserRig } from './support/browser.js';

const test = anyTest as TestFn<BrowserRig>;
const browserTest = useBrowserRig(
  test,
  'viewer-not-found',
  {
    acme: { name: 'Acme', keys: { editor: { label: 'Ada Editor' } } },
    other: { name: 'Other', keys: { otherEditor: { label: 'Olga Other' } } },
  },
  () => ({}),
);

interface Shown {
  status: number;
  /** The header's text: the home link, and when signed in Drafts, who and Sign out. */
  header: string;
  draftsLink: string | null;
  heading: string;
  /** The page's main part, as HTML. */
  main: string;
}

async function open(page: Page, rig: BrowserRig, path: string): Promise<Shown> {
  const response = await page.goto(rig.server.url + path);
  const drafts = page.locator('header.top a.nav-drafts');
  return {
    status: response!.status(),
    header: ((await page.locator('header.top').textContent()) ?? '').trim(),
    draftsLink: (await drafts.count()) === 0 ? null : await drafts.getAttribute('href'),
    heading: (await page.locator('main h1').textContent()) ?? '',
    main: await page.locator('main').innerHTML(),
  };
}

const SIGNED_IN_HEADER = 'c4storeDraftsAda Editor · acme · can arrangeSign out';

browserTest('a 404 page keeps the header of the signed-in organization, wherever the address points', async (t) => {
  const page = await signIn(t.context, t.context.keys.editor!);
  for (const path of [
    '/orgs/acme/diagrams/no-such-diagram',
    '/orgs/acme/components/no-such-component',
    '/orgs/acme/diagrams/no-such-diagram/history',
    '/orgs/acme/no-such-page',
    '/orgs/acme/diagrams/',
    '/no-such-page',
  ]) {
    const shown = await open(page, t.context, path);
    t.is(shown.status, 404, path);
    t.is(shown.heading, '404', path);
    t.is(shown.header, SIGNED_IN_HEADER, path);
    t.is(shown.draftsLink, '/orgs/acme/drafts', path);
  }

  // Under another organization's slug: the visitor's own header, and the very same page whether
  // that organization exists or not.
  const other = await open(page, t.context, '/orgs/other/no-such-page');
  const ghost = await open(page, t.context, '/orgs/ghost/no-such-page');
  t.is(other.status, 404);
  t.is(other.header, SIGNED_IN_HEADER);
  t.deepEqual(ghost, other);
  t.false(other.main.includes('other'));
  // A page of another organization asks for its key, saying which organization the address
  // names, as the address itself does; the same for a slug no organization has.
  const foreign = await open(page, t.context, '/orgs/other/diagrams/x');
  const nowhere = await open(page, t.context, '/orgs/ghost/diagrams/x');
  t.is(foreign.status, 403);
  t.is(nowhere.status, 403);
  t.true(foreign.main.includes("This page belongs to organization 'other', and you are signed in to 'acme'."));
  t.is(nowhere.main, foreign.main.replaceAll('other', 'ghost'));
  // The header stays the visitor's own there too.
  t.is(foreign.header, SIGNED_IN_HEADER);
  t.is(nowhere.header, SIGNED_IN_HEADER);
  await page.context().close();
});

browserTest('without a session, a 404 page has the bare header and says nothing of any organization', async (t) => {
  const context = await t.context.browser.newContext();
  const page = await context.newPage();
  const known = await open(page, t.context, '/orgs/acme/no-such-page');
  const unknown = await open(page, t.context, '/orgs/ghost/no-such-page');
  t.is(known.status, 404);
  t.is(known.header, 'c4store');
  t.is(known.draftsLink, null);
  t.deepEqual(unknown, known);
  // A session whose key was revoked is no session: the bare header too.
  const signedIn = await signIn(t.context, t.context.keys.otherEditor!);
  const cookies = await signedIn.context().cookies();
  await signedIn.context().close();
  const keys = new KeyStore(t.context.dataDir);
  const [record] = await keys.list('other');
  await keys.revoke('other', record!.id);
  await context.addCookies(cookies);
  t.deepEqual(await open(page, t.context, '/orgs/acme/no-such-page'), known);
  await context.close();
});
