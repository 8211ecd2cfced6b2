/**
 * A live page whose session ends, in a real browser: signed out elsewhere or its key revoked, an
 * open page says it no longer follows changes and links to sign in again (back to the page),
 * rather than going on silently showing a drawing that no longer changes; so does a draft's page
 * whose resume point is gone (the draft force-pushed back), linking the drafts and main's diagram.
 * A stream refused on the way (no connection, a balancer's 503) is tried again and says nothing.
 */
import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { KeyStore } from '../src/store/keys.js';
import { type BrowserRig, callApi, rigGit, SAMPLE, signIn, useBrowserRig } from './support/browser.js';

const test = anyTest as TestFn<BrowserRig>;
// A short keep-alive: an ended session ends an open stream at the next one (src/events/sse.ts).
const browserTest = useBrowserRig(
  test,
  'live-session',
  { demo: { from: SAMPLE, keys: { editor: { label: 'Ada Editor' }, revoked: { label: 'Rex Revoked' } } } },
  () => ({}),
  { events: { stream: { heartbeatMs: 200 } } },
);

async function aDiagram(t: { context: BrowserRig }): Promise<{ id: string; component: string }> {
  const diagrams = await callApi(t.context, t.context.keys.editor, 'GET', '/api/external/diagram');
  const diagram = diagrams.find((d: any) => d.componentInstances.some((i: any) => i.component !== null));
  return { id: diagram.id, component: diagram.componentInstances.find((i: any) => i.component !== null).component };
}

/** live.js marks the page once its stream is open. */
async function streamOpen(page: Page): Promise<void> {
  await page.waitForFunction(() => (globalThis as any).document.body.dataset.live === 'open');
}

const ENDED = /no longer follows changes/;

/** The notice that the page stopped following, once it is shown; its text and its link. */
async function endedNotice(page: Page): Promise<{ text: string; href: string | null }> {
  const notice = page.getByRole('alert').filter({ hasText: ENDED });
  await notice.waitFor({ state: 'visible' });
  const link = notice.getByRole('link', { name: /sign in/i });
  return { text: (await notice.textContent())!, href: await link.getAttribute('href') };
}

browserTest('a diagram page signed out elsewhere says it no longer follows changes and links to sign in again', async (t) => {
  const { id } = await aDiagram(t);
  const path = `/orgs/demo/diagrams/${id}`;
  const page = await signIn(t.context, t.context.keys.editor, { next: path });
  await streamOpen(page);
  t.is(await page.getByRole('alert').filter({ hasText: ENDED }).count(), 0, 'no notice while the stream is open');

  // Sign-out from another tab: the same cookie, another request.
  const cookie = (await page.context().cookies()).find((c) => c.name === 'c4s_session')!;
  const out = await fetch(`${t.context.server.url}/sign-out`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `${cookie.name}=${cookie.value}`, origin: t.context.server.url },
  });
  t.is(out.status, 303, 'signed out');

  const notice = await endedNotice(page);
  t.regex(notice.text, /sign in again/i);
  t.is(notice.href, `/sign-in?next=${encodeURIComponent(path)}`, 'the link comes back to this page');
  t.not(await page.evaluate(() => (globalThis as any).document.body.dataset.live), 'open');

  // The link signs in again and lands on the page, which follows changes again.
  await page.getByRole('alert').filter({ hasText: ENDED }).getByRole('link').click();
  await page.waitForURL((url) => url.pathname === '/sign-in');
  await page.fill('#key', t.context.keys.editor);
  await Promise.all([page.waitForURL(t.context.server.url + path), page.click('button[type=submit]')]);
  await streamOpen(page);
  t.is(await page.getByRole('alert').filter({ hasText: ENDED }).count(), 0);
  await page.context().close();
});

browserTest('a component page whose key is revoked says it no longer follows changes', async (t) => {
  const { component } = await aDiagram(t);
  const path = `/orgs/demo/components/${component}`;
  const page = await signIn(t.context, t.context.keys.revoked, { next: path });
  await streamOpen(page);
  const store = new KeyStore(t.context.dataDir);
  const record = (await store.list('demo')).find((k) => k.label === 'Rex Revoked')!;
  await store.revoke('demo', record.id);

  const notice = await endedNotice(page);
  t.is(notice.href, `/sign-in?next=${encodeURIComponent(path)}`);
  await page.context().close();
});

browserTest('a stream refused on the way (no connection, then a 503) is tried again, with no notice', async (t) => {
  const { id } = await aDiagram(t);
  const path = `/orgs/demo/diagrams/${id}`;
  const page = await signIn(t.context, t.context.keys.editor, { next: '/' });
  // The page's first two attempts at its stream fail: no connection, then a balancer's 503.
  const failures = ['abort', '503'];
  await page.route('**/orgs/demo/events**', async (route) => {
    const failure = route.request().method() === 'GET' ? failures.shift() : undefined;
    if (failure === 'abort') await route.abort('connectionrefused');
    else if (failure === '503') await route.fulfill({ status: 503, contentType: 'text/plain', body: 'Service Unavailable' });
    else await route.continue();
  });
  await page.goto(t.context.server.url + path);
  await streamOpen(page);
  t.deepEqual(failures, [], 'both failures were met');
  t.is(await page.getByRole('alert').filter({ hasText: ENDED }).count(), 0);
  await page.context().close();
});

/** The page as a browser tab put in the background and shown again: live.js lets go of its stream and opens it anew. */
async function hideAndShow(page: Page, meanwhile: () => Promise<unknown>): Promise<void> {
  const setHidden = (hidden: boolean) =>
    page.evaluate((hidden) => {
      const document = (globalThis as any).document;
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
      document.dispatchEvent(new Event('visibilitychange'));
    }, hidden);
  await setHidden(true);
  await meanwhile();
  await setHidden(false);
}

browserTest(
  "a draft's diagram page whose resume point is gone (the draft force-pushed back) says it no longer follows the draft, linking the drafts and main's diagram",
  async (t) => {
    const { id } = await aDiagram(t);
    const key = t.context.keys.editor;
    await callApi(t.context, key, 'POST', '/api/external/drafts', { name: 'rewound' });
    const base = (await callApi(t.context, key, 'GET', '/api/external/drafts/rewound')).head;
    await callApi(t.context, key, 'POST', '/api/external/tag?draft=rewound', [{ name: 'Proposed', color: 'green' }]);
    const path = `/orgs/demo/diagrams/${id}?draft=rewound`;
    const page = await signIn(t.context, key, { next: path });
    await streamOpen(page);

    // Meanwhile the draft is force-pushed back to where it started: the commit the page shows is on it no more.
    await hideAndShow(page, () => {
      const remote = new URL(`${t.context.server.url}/git/demo.git`);
      remote.username = 'ci';
      remote.password = key;
      return rigGit(t.context, 'demo', 'push', '-q', '--force', remote.href, `${base}:refs/heads/drafts/rewound`);
    });

    const notice = page.getByRole('alert').filter({ hasText: /no longer follows/ });
    await notice.waitFor({ state: 'visible' });
    t.regex((await notice.textContent())!, /draft 'rewound' was rewritten or removed/i);
    t.is(await notice.getByRole('link', { name: 'the drafts' }).getAttribute('href'), '/orgs/demo/drafts');
    t.is(await notice.getByRole('link', { name: 'this diagram on main' }).getAttribute('href'), `/orgs/demo/diagrams/${id}`);
    t.is(await page.evaluate(() => (globalThis as any).document.body.dataset.live), 'ended');
    await page.context().close();
  },
);

browserTest(
  "a draft's diagram page whose draft is merged meanwhile says so, linking the draft and main's diagram; a merged draft's page listens to nothing",
  async (t) => {
    const { id } = await aDiagram(t);
    const key = t.context.keys.editor;
    await callApi(t.context, key, 'POST', '/api/external/drafts', { name: 'to-merge' });
    await callApi(t.context, key, 'POST', '/api/external/tag?draft=to-merge', [{ name: 'Merged soon', color: 'green' }]);
    const path = `/orgs/demo/diagrams/${id}?draft=to-merge`;
    const page = await signIn(t.context, key, { next: path });
    await streamOpen(page);

    await callApi(t.context, key, 'POST', '/api/external/drafts/to-merge/merge', {});
    const notice = page.getByRole('alert').filter({ hasText: /no longer follows/ });
    await notice.waitFor({ state: 'visible' });
    t.regex((await notice.textContent())!, /draft 'to-merge' was merged or closed since this page was loaded/i);
    t.is(await notice.getByRole('link', { name: 'the draft' }).getAttribute('href'), '/orgs/demo/drafts/to-merge');
    t.is(await notice.getByRole('link', { name: 'this diagram on main' }).getAttribute('href'), `/orgs/demo/diagrams/${id}`);
    t.is(await page.evaluate(() => (globalThis as any).document.body.dataset.live), 'ended');

    // Loaded once merged, the page says so in its banner, and follows nothing: the draft changes no more.
    const streams: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/orgs/demo/events') streams.push(request.url());
    });
    await page.goto(t.context.server.url + path);
    await page.waitForLoadState('networkidle');
    t.is(await page.locator('p.draft-banner').getAttribute('data-state'), 'merged');
    t.deepEqual(streams, []);
    t.is(await page.getByRole('alert').count(), 0);
    await page.context().close();
  },
);
