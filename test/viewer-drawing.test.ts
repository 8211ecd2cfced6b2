/**
 * The drawing as a file: the viewer's `.svg` and `.png` addresses and the API's `Accept:
 * image/svg+xml` / `image/png` (both forms), their headers, `?scale=`, and ids that end in
 * `.svg` or `.png` themselves.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import test from 'ava';
import { syntheticDiagram } from '../bench/drawing-fixture.js';
import { OFF_THREAD_FROM } from '../src/drawing/draw-pool.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { childrenRunning, serveProcess, until } from './support/process.js';
import { sessionCookie, TestServer, withServer } from './support/server.js';

const API = '/api/external';

const cookieOf = (s: TestServer, key = s.key) => sessionCookie(s.url, key);

/** A diagram of two boxes and a relation, posted in the current form with the id `id`. */
async function diagram(s: TestServer, id: string, name: string): Promise<{ id: string; url: string }> {
  const reply = await s.post(`${API}/diagrams`, {
    id,
    name,
    level: 'C2',
    componentInstances: [
      { ref: 'a', componentId: 'api', position: { x: 0, y: 0 }, width: 12, height: 6 },
      { ref: 'b', componentId: 'db', position: { x: 30, y: 0 }, width: 12, height: 6 },
    ],
    relations: [{ fromRef: 'a', toRef: 'b', label: 'reads' }],
  });
  if (reply.status !== 201) throw new Error(`POST ${id}: ${reply.status} ${reply.text}`);
  return reply.body;
}

async function components(s: TestServer, names: Record<string, string> = {}): Promise<void> {
  const reply = await s.post(`${API}/component`, [
    { ref: 'api', name: names.api ?? 'Shop API' },
    { ref: 'db', name: names.db ?? 'Orders DB' },
  ]);
  if (reply.status !== 200) throw new Error(reply.text);
}

interface Png {
  width: number;
  height: number;
  /** Pixels darker than mid-grey. */
  dark: number;
  /** Each pixel's luminance (0 black to 255 white), row by row. */
  luminance: Uint8Array;
}

/** Reads a PNG as rendered here (8-bit RGBA, no interlace): its size and how much ink it holds. */
function readPng(bytes: Buffer): Png {
  if (!bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error('not a PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 4;
  const idat: Buffer[] = [];
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8) throw new Error('expected 8-bit channels');
      channels = { 2: 3, 6: 4, 0: 1, 4: 2 }[data[9]!] ?? 4;
    }
    if (type === 'IDAT') idat.push(data);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  let previous = Buffer.alloc(stride);
  let dark = 0;
  const luminances = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const left = i >= channels ? line[i - channels]! : 0;
      const up = previous[i]!;
      const upLeft = i >= channels ? previous[i - channels]! : 0;
      const predictor = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter]!;
      line[i] = (line[i]! + predictor) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const p = x * channels;
      const luminance = channels >= 3 ? (line[p]! + line[p + 1]! + line[p + 2]!) / 3 : line[p]!;
      if (luminance < 128) dark++;
      luminances[y * width + x] = luminance;
    }
    previous = line;
  }
  return { width, height, dark, luminance: luminances };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

const svgSize = (svg: string) => {
  const open = /<svg\b[^>]*>/.exec(svg)![0];
  return { width: Number(/\swidth="([\d.]+)"/.exec(open)![1]), height: Number(/\sheight="([\d.]+)"/.exec(open)![1]) };
};

/** A diagram's SVG, and whether its PNG at `scale` is inked (darker than 160) at a point of the SVG. */
async function drawnBoth(url: string, cookie: string, scale: number): Promise<{ svg: string; inkAt: (x: number, y: number) => boolean }> {
  const svg = await (await fetch(`${url}.svg`, { headers: { cookie } })).text();
  const [vx, vy] = /viewBox="([^"]+)"/.exec(svg)![1]!.split(' ').map(Number) as [number, number];
  const png = readPng(Buffer.from(await (await fetch(`${url}.png?scale=${scale}`, { headers: { cookie } })).arrayBuffer()));
  const inkAt = (x: number, y: number) => png.luminance[Math.round((y - vy) * scale) * png.width + Math.round((x - vx) * scale)]! < 160;
  return { svg, inkAt };
}

test('the signed-in SVG, by address and by Accept, is never stored by a cache and never sniffed', (t) =>
  withServer(async (s) => {
    await components(s);
    const d = await diagram(s, 'shop', 'Shop');
    const cookie = await cookieOf(s);
    const answers = [
      await fetch(`${d.url}.svg`, { headers: { cookie } }),
      await fetch(`${s.url}${API}/diagram/shop`, { headers: { authorization: `Bearer ${s.key}`, accept: 'image/svg+xml' } }),
      await fetch(`${s.url}${API}/diagrams/shop`, { headers: { authorization: `Bearer ${s.key}`, accept: 'image/svg+xml' } }),
    ];
    for (const answer of answers) {
      t.is(answer.status, 200, answer.url);
      t.is(answer.headers.get('content-type'), 'image/svg+xml; charset=utf-8');
      t.is(answer.headers.get('cache-control'), 'no-store');
      t.is(answer.headers.get('x-content-type-options'), 'nosniff');
      t.true((await answer.text()).startsWith('<svg'));
    }
  }));

test('a drawing asked for again is the same; after a component is renamed or the diagram changed, every form shows the change', (t) =>
  withServer(async (s) => {
    await components(s);
    const d = await diagram(s, 'shop', 'Shop');
    const cookie = await cookieOf(s);
    const forms = async () => {
      // The share form's token is drawn anew with every page (a form sent again is told by it): not part of the drawing.
      const page = (await (await fetch(d.url, { headers: { cookie } })).text()).replace(/name="token" value="[^"]*"/, 'name="token"');
      const svg = await (await fetch(`${d.url}.svg`, { headers: { cookie } })).text();
      const api = await (
        await fetch(`${s.url}${API}/diagrams/shop`, { headers: { authorization: `Bearer ${s.key}`, accept: 'image/svg+xml' } })
      ).text();
      return { page, svg, api };
    };
    const before = await forms();
    t.deepEqual(await forms(), before);
    t.true(before.svg.includes('Shop API'));
    await components(s, { api: 'Checkout API' });
    const renamed = await forms();
    for (const text of Object.values(renamed)) {
      t.true(text.includes('Checkout API'));
      t.false(text.includes('Shop API'));
    }
    const relabelled = await s.request('PATCH', `${API}/diagrams/shop`, {
      body: {
        componentInstances: [
          { ref: 'a', componentId: 'api', position: { x: 0, y: 0 }, width: 12, height: 6 },
          { ref: 'b', componentId: 'db', position: { x: 30, y: 0 }, width: 12, height: 6 },
        ],
        relations: [{ fromRef: 'a', toRef: 'b', label: 'writes' }],
      },
    });
    t.is(relabelled.status, 200, relabelled.text);
    for (const text of Object.values(await forms())) {
      t.true(text.includes('>writes<'));
      t.false(text.includes('>reads<'));
    }
  }));

test('a diagram whose id ends in .svg or .png has a page and drawings of its own, beside a diagram named like its stem', (t) =>
  withServer(async (s) => {
    await components(s);
    const plain = await diagram(s, 'shop', 'Plain shop');
    const svgNamed = await diagram(s, 'shop.svg', 'Shop named like a drawing');
    const pngNamed = await diagram(s, 'shop.png', 'Shop named like a picture');
    t.is(plain.url, `${s.url}/orgs/${s.slug}/diagrams/shop`);
    t.is(svgNamed.url, `${s.url}/orgs/${s.slug}/diagrams/shop%2Esvg`);
    t.is(pngNamed.url, `${s.url}/orgs/${s.slug}/diagrams/shop%2Epng`);
    // The seed's form names the same url.
    t.is((await s.get(`${API}/diagram/shop.svg`)).body.url, svgNamed.url);
    const cookie = await cookieOf(s);
    const page = async (url: string) => {
      const answer = await fetch(url, { headers: { cookie }, redirect: 'manual' });
      return { status: answer.status, type: answer.headers.get('content-type'), text: await answer.text() };
    };
    // The name is isolated in the heading (<bdi>, src/escape.ts): the heading's text without its tags.
    const title = (html: string) => /<h1>(.*?)<\/h1>/s.exec(html)?.[1]?.replace(/<[^>]*>/g, '');
    t.is(title((await page(svgNamed.url)).text), 'Shop named like a drawing');
    t.is(title((await page(pngNamed.url)).text), 'Shop named like a picture');
    t.is(title((await page(plain.url)).text), 'Plain shop');
    // `shop.svg` as typed is the drawing of `shop`; the drawing of `shop.svg` is its own.
    t.regex((await page(`${plain.url}.svg`)).text, /aria-label="Plain shop/);
    t.regex((await page(`${svgNamed.url}.svg`)).text, /aria-label="Shop named like a drawing/);
    t.is((await page(`${pngNamed.url}.png`)).type, 'image/png');
    // The page links its own drawings and history.
    const html = (await page(svgNamed.url)).text;
    t.true(html.includes('href="/orgs/acme/diagrams/shop%2Esvg.svg"'));
    t.true(html.includes('href="/orgs/acme/diagrams/shop%2Esvg.png"'));
    t.true(html.includes('href="/orgs/acme/diagrams/shop%2Esvg/history"'));
    t.is((await page(`${svgNamed.url}/history`)).status, 200);
    // Typed with a plain dot when no diagram is named like its stem: still its page.
    await s.request('DELETE', `${API}/diagrams/shop`);
    t.is(title((await page(`${s.url}/orgs/${s.slug}/diagrams/shop.svg`)).text), 'Shop named like a drawing');
    t.is((await page(`${s.url}/orgs/${s.slug}/diagrams/nothing.svg`)).status, 404);
    // The old address keeps the difference too.
    const old = await fetch(`${s.url}/diagrams/shop%2Esvg`, { headers: { cookie }, redirect: 'manual' });
    t.is(old.status, 301);
    t.is(old.headers.get('location'), '/orgs/acme/diagrams/shop%2Esvg');
    const oldDrawing = await fetch(`${s.url}/diagrams/shop%2Esvg.svg`, { headers: { cookie }, redirect: 'manual' });
    t.is(oldDrawing.headers.get('location'), '/orgs/acme/diagrams/shop%2Esvg.svg');
  }));

test('PNG: the .png address and Accept: image/png on both forms, the SVG rasterized with the bundled font at ?scale=', async (t) => {
  const s = await TestServer.start();
  try {
    await components(s);
    const d = await diagram(s, 'shop', 'Shop');
    const cookie = await cookieOf(s);
    const svg = await (await fetch(`${d.url}.svg`, { headers: { cookie } })).text();
    const size = svgSize(svg);
    const byAddress = await fetch(`${d.url}.png`, { headers: { cookie } });
    t.is(byAddress.status, 200);
    t.is(byAddress.headers.get('content-type'), 'image/png');
    t.is(byAddress.headers.get('cache-control'), 'no-store');
    t.is(byAddress.headers.get('x-content-type-options'), 'nosniff');
    t.is(byAddress.headers.get('etag'), `"${await s.head()}"`);
    const png = Buffer.from(await byAddress.arrayBuffer());
    const read = readPng(png);
    t.deepEqual([read.width, read.height], [Math.round(size.width), Math.round(size.height)]);
    t.true(read.dark > 0, 'the boxes and text are drawn');
    for (const path of [`${API}/diagram/shop`, `${API}/diagrams/shop`]) {
      const answer = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${s.key}`, accept: 'image/png' } });
      t.is(answer.status, 200, path);
      t.is(answer.headers.get('content-type'), 'image/png');
      t.true(Buffer.from(await answer.arrayBuffer()).equals(png), `${path}: the same picture`);
    }
    const unauthorized = await fetch(`${s.url}${API}/diagram/shop`, { headers: { accept: 'image/png' } });
    t.is(unauthorized.status, 401);
    // Twice the scale, twice the pixels each way.
    const double = readPng(Buffer.from(await (await fetch(`${d.url}.png?scale=2`, { headers: { cookie } })).arrayBuffer()));
    t.deepEqual([double.width, double.height], [Math.round(size.width * 2), Math.round(size.height * 2)]);
    for (const scale of ['0', '5', 'x', '-1', '1e3']) {
      const bad = await fetch(`${s.url}${API}/diagram/shop?scale=${scale}`, {
        headers: { authorization: `Bearer ${s.key}`, accept: 'image/png' },
      });
      t.is(bad.status, 400, scale);
      t.deepEqual(await bad.json(), { error: `Invalid scale '${scale}': a number from 0.25 to 4.` });
    }
    const twice = await fetch(`${s.url}${API}/diagram/shop?scale=1&scale=2`, {
      headers: { authorization: `Bearer ${s.key}`, accept: 'image/png' },
    });
    t.deepEqual([twice.status, await twice.json()], [400, { error: "Query parameter 'scale' is given more than once." }]);
    // Text is drawn with the bundled font: longer names, more ink, in the same boxes.
    await s.post(`${API}/component`, [{ ref: 'api', name: 'Shop API with a much longer name' }]);
    const longer = readPng(Buffer.from(await (await fetch(`${d.url}.png`, { headers: { cookie } })).arrayBuffer()));
    t.true(longer.dark > read.dark, `${longer.dark} > ${read.dark}`);
    // JSON stays the default.
    t.is((await s.get(`${API}/diagram/shop`)).body.id, 'shop');
  } finally {
    await s.close();
  }
});

test('PNG: every arrowhead points along its relation, down, up and left as well as right (as the browser draws the SVG)', (t) =>
  withServer(async (s) => {
    await components(s);
    await s.post(`${API}/component`, [{ ref: 'queue', name: 'Order Queue' }]);
    const reply = await s.post(`${API}/diagrams`, {
      id: 'arrows',
      name: 'Arrows',
      level: 'C2',
      componentInstances: [
        { ref: 'a', componentId: 'api', position: { x: 0, y: 0 }, width: 12, height: 6 },
        { ref: 'b', componentId: 'db', position: { x: 0, y: 24 }, width: 12, height: 6 },
        { ref: 'c', componentId: 'queue', position: { x: 36, y: 24 }, width: 12, height: 6 },
      ],
      relations: [
        { fromRef: 'a', toRef: 'b' },
        { fromRef: 'c', toRef: 'b' },
        { fromRef: 'c', toRef: 'a' },
      ],
    });
    t.is(reply.status, 201, reply.text);
    const { svg, inkAt } = await drawnBoth(reply.body.url, await cookieOf(s), 2);
    const directions = new Set<string>();
    for (const [, d] of svg.matchAll(/<g class="relation"[^>]*><path d="([^"]+)"/g)) {
      const n = d!.match(/-?\d+(\.\d+)?/g)!.map(Number);
      const [x0, y0, x1, y1] = n.slice(-4) as [number, number, number, number];
      const length = Math.hypot(x1 - x0, y1 - y0);
      const [dx, dy] = [(x1 - x0) / length, (y1 - y0) / length];
      directions.add(`${Math.sign(dx)},${Math.sign(dy)}`);
      // 8 px back from the tip the head is ~6 px wide: ink 2.5 px to either side of the line.
      for (const side of [-1, 1]) {
        t.true(inkAt(x1 - 8 * dx - side * 2.5 * dy, y1 - 8 * dy + side * 2.5 * dx), `${d}: the head beside its line's end`);
      }
    }
    t.true(directions.size >= 2, `arrows in ${[...directions].join(' ')}`);
  }));

test("PNG: a boundary's title keeps the space between its name and [Type]", (t) =>
  withServer(async (s) => {
    await components(s);
    const reply = await s.post(`${API}/diagrams`, {
      id: 'boundary',
      name: 'Boundary',
      level: 'C2',
      componentInstances: [
        { ref: 'outer', componentId: 'api', isContainer: true, position: { x: 0, y: 0 }, width: 40, height: 16 },
        { ref: 'inner', componentId: 'db', parent: 'outer', position: { x: 2, y: 4 }, width: 12, height: 6 },
      ],
    });
    t.is(reply.status, 201, reply.text);
    const scale = 2;
    const { svg, inkAt } = await drawnBoth(reply.body.url, await cookieOf(s), scale);
    const [, x, y] = /<text class="name" x="([\d.]+)" y="([\d.]+)">Shop API/.exec(svg)!.map(Number) as [number, number, number];
    // The title's row, pixel column by column: inked or not; gaps of 6 pixels or more part words (letters are 4 apart at most).
    const inked: boolean[] = [];
    for (let column = x; column < x + 400; column += 1 / scale) {
      let ink = false;
      for (let row = y - 11; row <= y + 3 && !ink; row += 1 / scale) ink = inkAt(column, row);
      inked.push(ink);
    }
    const words = inked
      .map((ink) => (ink ? '1' : '0'))
      .join('')
      .replace(/^0+|0+$/g, '')
      .split(/0{6,}/);
    t.is(words.length, 4, `Shop · API · [no · type]: three spaces between four words, not ${words.length - 1}`);
  }));

test('a large PNG is drawn off the event loop: light requests are answered while it is drawn, and it is bounded in pixels', (t) =>
  withServer(async (s) => {
    await components(s);
    // Far apart: 12,600 × 7,000 px at scale 1, over the 16 Mpx bound at any scale.
    const reply = await s.post(`${API}/diagrams`, {
      id: 'wide',
      name: 'Wide',
      level: 'C2',
      componentInstances: [
        { ref: 'a', componentId: 'api', position: { x: 0, y: 0 }, width: 12, height: 6 },
        { ref: 'b', componentId: 'db', position: { x: 880, y: 490 }, width: 12, height: 6 },
      ],
    });
    t.is(reply.status, 201, reply.text);
    let drawn = false;
    const png = fetch(`${s.url}${API}/diagram/wide?scale=4`, { headers: { authorization: `Bearer ${s.key}`, accept: 'image/png' } }).then(
      async (answer) => {
        drawn = true;
        return { status: answer.status, bytes: Buffer.from(await answer.arrayBuffer()) };
      },
    );
    // Ordered, not timed: each of these is answered before the picture is done.
    for (let n = 0; n < 3; n++) {
      t.is((await s.get('/healthz')).status, 200);
      t.false(drawn, `light request ${n + 1} answered while the PNG is drawn`);
    }
    const { status, bytes } = await png;
    t.is(status, 200);
    const { width, height } = readPng(bytes);
    t.true(width * height <= 16_000_000, `${width} × ${height}`);
    t.true(width * height > 15_500_000, 'as large as the bound allows');
  }));

test('the built server (dist/, npm run build first) draws PNGs and large diagrams too: its workers, its PNG process and resvg are found beside cli.js', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'c4store-png-dist-'));
  await new Orgs(dataDir).create('demo', { from: join(import.meta.dirname, '..', 'sample-repo'), author: { name: 't', email: 't@t' } });
  await new Orgs(dataDir).create('synthetic', { author: { name: 't', email: 't@t' } });
  const { key } = await new KeyStore(dataDir).create('demo');
  const synthetic = (await new KeyStore(dataDir).create('synthetic')).key;
  const server = await serveProcess(dataDir);
  try {
    const headers = { authorization: `Bearer ${key}` };
    const [diagram] = (await (await fetch(`${server.url}/api/external/diagram`, { headers })).json()) as Array<{ id: string }>;
    const answer = await fetch(`${server.url}/api/external/diagram/${diagram.id}`, { headers: { ...headers, accept: 'image/png' } });
    t.is(answer.status, 200, server.output.join('\n'));
    const png = readPng(Buffer.from(await answer.arrayBuffer()));
    t.true(png.width > 100 && png.dark > 0);
    // resvg runs in a child process of the server (src/drawing/png-process.ts); one that is gone
    // (killed here; a panic of resvg ends it the same way) is replaced for the next drawing.
    const renderers = await childrenRunning(server.child.pid!, 'png-process.js');
    t.is(renderers.length, 1);
    process.kill(renderers[0]!, 'SIGKILL');
    await until(async () => (await childrenRunning(server.child.pid!, 'png-process.js')).length === 0);
    const again = await fetch(`${server.url}/api/external/diagram/${diagram.id}?scale=2`, { headers: { ...headers, accept: 'image/png' } });
    t.is(again.status, 200, server.output.join('\n'));
    t.is(readPng(Buffer.from(await again.arrayBuffer())).width, png.width * 2);
    // A diagram drawn on the drawing worker (src/drawing/draw-pool.ts).
    const json = { authorization: `Bearer ${synthetic}`, 'content-type': 'application/json' };
    const { components, diagram: large } = syntheticDiagram(80);
    t.true(large.componentInstances.length + large.relations.length >= OFF_THREAD_FROM);
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    t.is((await post('/api/external/component', components)).status, 200);
    const created = await post('/api/external/diagram', [large]);
    t.is(created.status, 200);
    const [posted] = (await created.json()) as Array<{ id: string }>;
    const svg = await fetch(`${server.url}/api/external/diagram/${posted!.id}`, { headers: { ...json, accept: 'image/svg+xml' } });
    t.is(svg.status, 200, server.output.join('\n'));
    t.is((await svg.text()).split('<g class="relation" ').length - 1, large.relations.length);
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});
