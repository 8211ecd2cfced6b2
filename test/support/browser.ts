/**
 * What every browser test file sets up alike: Debian's Chromium (chromium.ts), one real server on
 * a temporary data directory with its organizations and keys, started before the file's tests and
 * stopped after them, a key's calls of the API, and browser contexts signed in through the
 * sign-in page. Screenshots go to test-artifacts/.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestFn } from 'ava';
import { chromium, type Browser, type Page, type Response } from 'playwright-core';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.js';
import { Orgs } from '../../src/service/orgs.js';
import { KeyStore } from '../../src/store/keys.js';
import { CHROMIUM_ARGS, ensureChromium } from './chromium.js';
import { run } from './server.js';

export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');
export const SAMPLE = join(import.meta.dirname, '..', '..', 'sample-repo');

/** Chromium's executable, or null where it cannot be had (the browser tests are then skipped, said loudly). */
export const chromiumPath = await ensureChromium();

export interface OrgSetup {
  /** A folder in the repository layout to start from (`SAMPLE`); else an empty organization. */
  from?: string;
  name?: string;
  /**
   * The keys to make, by the name the tests ask for each under (`rig.keys.<name>`). `earlier`: a
   * label an earlier version let through and today's refuses (src/store/keys.ts checkKeyLabel),
   * put into keys.yaml as that version left it (unsealed; the server's start seals it).
   */
  keys: Record<string, { label: string; role?: 'reader'; earlier?: boolean }>;
}

export interface BrowserRig {
  browser: Browser;
  server: RunningServer;
  dataDir: string;
  /** The keys made, by the names OrgSetup gave them. */
  keys: Record<string, string>;
}

/** The keys most browser tests sign in with: an editor's and a reader's (`OrgSetup.keys`). */
export const EDITOR_AND_READER: OrgSetup['keys'] = { editor: { label: 'Ada Editor' }, reader: { label: 'Rita Reader', role: 'reader' } };

/** A test context with those two keys by their role. */
export interface EditorAndReader extends BrowserRig {
  editorKey: string;
  readerKey: string;
}

export function editorAndReader(rig: BrowserRig): Omit<EditorAndReader, keyof BrowserRig> {
  return { editorKey: rig.keys.editor, readerKey: rig.keys.reader };
}

async function startRig(prefix: string, orgs: Record<string, OrgSetup>, options: Partial<ServerOptions> = {}): Promise<BrowserRig> {
  const dataDir = await mkdtemp(join(tmpdir(), `c4store-${prefix}-`));
  const keys: Record<string, string> = {};
  const store = new KeyStore(dataDir);
  for (const [slug, org] of Object.entries(orgs)) {
    await new Orgs(dataDir).create(slug, { from: org.from, name: org.name, author: { name: 'test', email: 'test@test' } });
    for (const [name, key] of Object.entries(org.keys)) {
      const placeholder = key.earlier ? `earlier-label-of-${name}` : key.label;
      keys[name] = (await store.create(slug, { label: placeholder, role: key.role })).key;
      if (key.earlier) {
        const file = join(dataDir, 'keys.yaml');
        const text = await readFile(file, 'utf8');
        await writeFile(
          file,
          text.replace(/^# c4store seal: .*\n/, '').replace(`label: ${placeholder}`, `label: ${JSON.stringify(key.label)}`),
        );
      }
    }
  }
  const server = await startServer({ ...options, dataDir, port: 0, log: () => {} });
  try {
    const browser = await chromium.launch({ executablePath: chromiumPath!, args: CHROMIUM_ARGS });
    await mkdir(ARTIFACTS, { recursive: true });
    return { browser, server, dataDir, keys };
  } catch (err) {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Starts the file's server and browser before its tests (with `more`: what else its context
 * holds, made once they run) and stops them after; the tests' context is the rig and `more`.
 * `options`: the server's, beyond its data directory and port (a short keep-alive of the events).
 * Returns how to declare a browser test: serial (one browser for all), or skipped without Chromium.
 */
export function useBrowserRig<C extends BrowserRig>(
  test: TestFn<C>,
  prefix: string,
  orgs: Record<string, OrgSetup>,
  more: (rig: BrowserRig) => Omit<C, keyof BrowserRig> | Promise<Omit<C, keyof BrowserRig>>,
  options: Partial<ServerOptions> = {},
): TestFn<C>['serial'] | TestFn<C>['serial']['skip'] {
  test.before(async (t) => {
    if (!chromiumPath) return;
    const rig = await startRig(prefix, orgs, options);
    t.context = { ...rig, ...(await more(rig)) } as C;
  });
  test.after.always(async (t) => {
    if (!t.context?.browser) return;
    await t.context.browser.close();
    await t.context.server.close();
    await rm(t.context.dataDir, { recursive: true, force: true });
  });
  return chromiumPath ? test.serial : test.serial.skip;
}

/** A call of the API with `key`: a JSON body; the answer as JSON (or as text for another `accept`); a status not 2xx throws. */
export async function callApi(
  rig: BrowserRig,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  accept = 'application/json',
): Promise<any> {
  const response = await fetch(rig.server.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return accept === 'application/json' ? JSON.parse(text) : text;
}

/** git on an organization's repository in the rig's data directory: its standard output, trimmed. */
export async function rigGit(rig: BrowserRig, slug: string, ...args: string[]): Promise<string> {
  return (await run('git', ['--git-dir', join(rig.dataDir, 'orgs', `${slug}.git`), ...args])).stdout.trim();
}

/**
 * A new browser context (1400 × 900) signed in with `key` through the sign-in page: it opens
 * `next` (a page that needs a session), is sent to sign in, pastes the key and lands on `next`.
 * A `next` with a fragment (`#c-<id>`, an open panel) starts at the sign-in page with it: the
 * server never sees a fragment, so its redirect cannot carry one.
 */
export async function signIn(rig: BrowserRig, key: string, options: { next?: string; hasTouch?: boolean } = {}): Promise<Page> {
  const { next = '/', hasTouch } = options;
  const context = await rig.browser.newContext({ viewport: { width: 1400, height: 900 }, hasTouch });
  // tsx compiles the page.evaluate callbacks of test files with esbuild's keepNames, which wraps
  // named functions in a `__name` helper that exists only in Node.
  await context.addInitScript('globalThis.__name = (f) => f;');
  const page = await context.newPage();
  await page.goto(next.includes('#') ? `${rig.server.url}/sign-in?next=${encodeURIComponent(next)}` : rig.server.url + next);
  if (!page.url().startsWith(`${rig.server.url}/sign-in?`)) throw new Error(`expected the sign-in page, got ${page.url()}`);
  await page.fill('#key', key);
  await Promise.all([page.waitForURL(rig.server.url + next), page.click('button[type=submit]')]);
  return page;
}

/** Pixels per grid unit of the drawing (GRID_PX of src/drawing/svg.ts): a position of 1 is 14 px. */
export const GRID = 14;

/** Screen pixels per drawing unit of the element `selector`'s body or frame. */
export function screenScale(page: Page, selector: string): Promise<number> {
  return page
    .locator(`${selector} rect.body, ${selector} rect.frame`)
    .first()
    .evaluate((el: any) => el.getBoundingClientRect().width / Number(el.getAttribute('width')));
}

/**
 * The answer to the page's next drop (its POST to `/arrange`), once the page has handled it:
 * drawn what came back and taken its commit (viewer.js clears `aria-busy` then, and takes no
 * other drag before). The response alone comes a turn earlier, before the page has run.
 */
export async function arrangeAnswer(page: Page): Promise<Response> {
  const response = await page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/arrange'));
  await page.waitForSelector('article.diagram-page:not([aria-busy])');
  return response;
}

/** Drags the box of `selector` by whole grid units, from the middle of its top edge zone. */
export async function drag(page: Page, selector: string, units: { dx: number; dy: number }, handle = false): Promise<void> {
  const target = page.locator(handle ? `${selector} rect.handle` : `${selector} rect.body, ${selector} rect.frame`).first();
  await target.scrollIntoViewIfNeeded();
  const box = (await target.boundingBox())!;
  // The page shows the drawing zoomed to fit: screen pixels per grid unit, from the box itself.
  const unit = GRID * (await screenScale(page, selector));
  const start = handle ? { x: box.x + box.width / 2, y: box.y + box.height / 2 } : { x: box.x + 6, y: box.y + 6 };
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await page.mouse.move(start.x + (units.dx * unit) / 2, start.y + (units.dy * unit) / 2, { steps: 3 });
  await page.mouse.move(start.x + units.dx * unit, start.y + units.dy * unit, { steps: 3 });
  await page.mouse.up();
}
