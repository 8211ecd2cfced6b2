/**
 * The viewer when the instance serving a drop dies in the middle of it, in Debian's Chromium:
 * behind a real HAProxy (docs/haproxy.cfg) in front of two `c4store serve` processes on one data
 * directory the page shows the drop saved, once; with no other instance to take it the page says
 * it cannot know, never that the drop was not saved.
 */
import test, { type ExecutionContext } from 'ava';
import { once } from 'node:events';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from './support/chromium.js';
import { drag } from './support/browser.js';
import { type Balancer, askHaproxy, freePort, haproxy, startBalancer } from './support/haproxy.js';
import { cli, lastLine, type ServerProcess, serveProcess } from './support/process.js';
import { run } from './support/server.js';

const chromiumPath = await ensureChromium();

/**
 * The commit `main` names, read from the ref files themselves (asked every millisecond, no
 * process started): the loose ref, else packed-refs; neither, for the instant a writer or git's
 * packing replaces them, is asked again.
 */
async function mainOf(gitdir: string): Promise<string> {
  for (;;) {
    const loose = await readFile(join(gitdir, 'refs', 'heads', 'main'), 'utf8').catch(() => '');
    if (/^[0-9a-f]{40,64}\n$/.test(loose)) return loose.trim();
    const packed = await readFile(join(gitdir, 'packed-refs'), 'utf8').catch(() => '');
    const found = /^([0-9a-f]{40,64}) refs\/heads\/main$/m.exec(packed)?.[1];
    if (found !== undefined && loose === '') return found;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * A diagram large enough that drawing the answer to a drop takes a while after its commit (the
 * window in which the test kills the instance): boxes in a grid, each related to its neighbour.
 */
function gridDiagram(size: number) {
  const components = Array.from({ length: size }, (_, i) => ({ ref: `s${i}`, name: `Service ${i}`, typeSlug: 'software-system' }));
  const componentInstances = components.map((c, i) => ({
    ref: c.ref,
    component: c.ref,
    position: { x: (i % 20) * 14, y: Math.floor(i / 20) * 9 },
    width: 10,
    height: 6,
  }));
  const relations = components
    .slice(1)
    .map((c, i) => ({ fromComponentInstance: `s${i}`, toComponentInstance: c.ref, label: `calls ${i}` }));
  return { components, diagrams: [{ ref: 'grid', name: 'Grid', level: 'C1', componentInstances, relations }] };
}

/** An organization with the grid diagram, made through `url` (an instance): its key, the diagram and its first box. */
async function gridOrganization(dataDir: string, url: string): Promise<{ key: string; diagram: string; box: string }> {
  const key = lastLine(await cli('key', 'create', 'acme', '--data', dataDir));
  const written = await fetch(`${url}/api/external/model`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(gridDiagram(400)),
  });
  if (written.status !== 200) throw new Error(await written.text());
  const diagram = ((await written.json()) as { diagrams: Array<{ id: string; componentInstances: Array<{ id: string }> }> }).diagrams[0]!;
  return { key, diagram: diagram.id, box: diagram.componentInstances[0]!.id };
}

/** The diagram's page at `base`, signed in with `key` through the sign-in page. */
async function diagramPage(browser: Browser, base: string, key: string, diagram: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript('globalThis.__name = (f) => f;');
  const page = await context.newPage();
  await page.goto(`${base}/sign-in?next=${encodeURIComponent(`/orgs/acme/diagrams/${diagram}`)}`);
  await page.fill('#key', key);
  await Promise.all([page.waitForURL(`${base}/orgs/acme/diagrams/${diagram}`), page.click('button[type=submit]')]);
  return page;
}

/**
 * Drags `box` three units right and kills `instance` the moment main has moved past `shown`,
 * before it answers (`beforeKill` runs first); the commit made. Asserts that it was killed
 * before it answered (it logs a request once answered: all it wrote is read once its pipes
 * closed), or the test would show nothing.
 */
async function dropAndKill(
  t: ExecutionContext,
  page: Page,
  gitdir: string,
  box: string,
  instance: ServerProcess,
  beforeKill: () => Promise<unknown> = async () => {},
): Promise<string> {
  const shown = await mainOf(gitdir);
  t.is(await page.locator('article.diagram-page').getAttribute('data-commit'), shown);
  await drag(page, `g.box[data-id="${box}"]`, { dx: 3, dy: 0 });
  const dropped = Date.now() + 60_000;
  while ((await mainOf(gitdir)) === shown) {
    if (Date.now() > dropped) throw new Error('the drop made no commit');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await beforeKill();
  const closed = once(instance.child, 'close');
  instance.child.kill('SIGKILL');
  const committed = await mainOf(gitdir);
  await closed;
  t.false(
    instance.output.some((line) => line.includes('/arrange')),
    'the instance answered the drop before it was killed',
  );
  await page.waitForSelector('article.diagram-page:not([aria-busy])', { timeout: 120_000 });
  return committed;
}

(haproxy.path && chromiumPath ? test : test.skip)(
  'a drop whose instance is killed after its commit is shown saved, once, by the page behind HAProxy',
  async (t) => {
    t.timeout(240_000);
    const dataDir = await mkdtemp(join(tmpdir(), 'c4store-multi-viewer-'));
    const gitdir = join(dataDir, 'orgs', 'acme.git');
    const instances: ServerProcess[] = [];
    let balancer: Balancer | undefined;
    let browser: Browser | undefined;
    try {
      await cli('org', 'create', 'acme', '--data', dataDir);
      const ports = [await freePort(), await freePort()];
      for (const port of ports) instances.push(await serveProcess(dataDir, '--port', String(port)));
      const { key, diagram, box } = await gridOrganization(dataDir, instances[0]!.url);
      balancer = await startBalancer(
        ports.map((port) => `127.0.0.1:${port}`),
        dataDir,
      );
      await balancer.until('c1', 'UP');
      await balancer.until('c2', 'UP');
      browser = await chromium.launch({ executablePath: chromiumPath!, args: CHROMIUM_ARGS });
      const page = await diagramPage(browser, balancer.url, key, diagram);

      // The drop goes to the first instance, killed once it has committed; the second takes
      // whatever comes after (Chromium sends the drop again, or the page does).
      await askHaproxy(balancer.socket, 'disable server c4store/c2');
      await balancer.until('c2', 'MAINT');
      const committed = await dropAndKill(t, page, gitdir, box, instances[0]!, () =>
        askHaproxy(balancer!.socket, 'enable server c4store/c2'),
      );

      const notice = page.locator('#notice');
      t.true(await notice.isHidden(), `the page says: ${await notice.textContent()}`);
      t.is(await page.locator('article.diagram-page').getAttribute('data-commit'), committed, 'the page goes on from the drop');
      t.is(await page.locator(`g.box[data-id="${box}"]`).getAttribute('data-x'), '3', 'the box stays where it was dropped');
      t.is(await mainOf(gitdir), committed, 'the drop is one commit');
      t.regex((await run('git', ['--git-dir', gitdir, 'log', '-1', '--format=%s', 'main'])).stdout, /^Moved 'Service 0' on 'Grid'/);
    } finally {
      await browser?.close();
      await balancer?.stop();
      for (const instance of instances) await instance.stop('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  },
);

(chromiumPath ? test : test.skip)(
  'a drop whose only instance is killed after its commit: the page says it may or may not be saved, never that it was not',
  async (t) => {
    t.timeout(240_000);
    const dataDir = await mkdtemp(join(tmpdir(), 'c4store-killed-viewer-'));
    const gitdir = join(dataDir, 'orgs', 'acme.git');
    let instance: ServerProcess | undefined;
    let browser: Browser | undefined;
    try {
      await cli('org', 'create', 'acme', '--data', dataDir);
      instance = await serveProcess(dataDir);
      const { key, diagram, box } = await gridOrganization(dataDir, instance.url);
      browser = await chromium.launch({ executablePath: chromiumPath!, args: CHROMIUM_ARGS });
      const page = await diagramPage(browser, instance.url, key, diagram);
      await dropAndKill(t, page, gitdir, box, instance);
      const notice = page.locator('#notice');
      t.is(
        (await notice.textContent())!.replace('Reload', ''),
        'The server did not answer, so your change may or may not have been saved: reload to see the diagram as it is now.',
      );
      t.true(await notice.locator('button', { hasText: 'Reload' }).isVisible());
    } finally {
      await browser?.close();
      await instance?.stop('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  },
);
