/**
 * The PNG renderer's isolation (src/drawing/png.ts, src/processes.ts): resvg 2.6.2 aborts the
 * process it runs in on a marker drawn wholly outside the picture (a Rust panic, exit 134, from
 * whichever thread). The service's own drawings keep every arrowhead on the canvas
 * (drawing.test.ts); this SVG is made by hand to hit the panic all the same.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { ensureFonts } from '../scripts/ensure-fonts.mjs';
import { renderPng } from '../src/drawing/png.js';
import { drawDiagram } from '../src/drawing/svg.js';
import { component, diagram, instance, model } from './support/drawing-model.js';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { childrenRunning, serveProcessWith, until } from './support/process.js';

const ARROW_OFF_CANVAS =
  '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><defs><marker id="m" markerWidth="10" markerHeight="10" ' +
  'refX="5" refY="5" orient="auto"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>' +
  '<path d="M10,10 L300,300" stroke="black" marker-end="url(#m)"/></svg>';
const HELLO = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><text x="10" y="28">Hello</text></svg>';

test('resvg aborting its process fails that one PNG: this process goes on, and the next PNG is drawn', async (t) => {
  const before = await renderPng(HELLO);
  t.is(before.subarray(0, 8).toString('latin1'), '\x89PNG\r\n\x1a\n');
  await t.throwsAsync(renderPng(ARROW_OFF_CANVAS), { message: /renderer stopped/ });
  const after = await renderPng(HELLO, 2);
  t.is(after.subarray(0, 8).toString('latin1'), '\x89PNG\r\n\x1a\n');
  // Width, from the IHDR chunk: twice the picture's at scale 2.
  t.is(after.readUInt32BE(16), 2 * before.readUInt32BE(16));
});

test.serial(
  'a renderer killed while idle, before this process heard of it, does not fail the next picture: a new one draws it',
  async (t) => {
    t.is((await renderPng(HELLO)).subarray(1, 4).toString('latin1'), 'PNG');
    const [renderer] = await childrenRunning(process.pid, 'png-process');
    t.truthy(renderer);
    process.kill(renderer!, 'SIGKILL');
    // Not waiting for its exit to be noticed (the built server's test met 'the renderer stopped' so).
    t.is((await renderPng(HELLO)).subarray(1, 4).toString('latin1'), 'PNG');
  },
);

test('the built server ends its idle PNG renderer (C4STORE_PNG_IDLE_MS) and starts another for the next picture', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'c4store-png-idle-'));
  await new Orgs(dataDir).create('demo', { from: join(import.meta.dirname, '..', 'sample-repo'), author: { name: 't', email: 't@t' } });
  const { key } = await new KeyStore(dataDir).create('demo');
  const server = await serveProcessWith({ C4STORE_PNG_IDLE_MS: '1500' }, dataDir);
  t.teardown(async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  const headers = { authorization: `Bearer ${key}` };
  const [diagram] = (await (await fetch(`${server.url}/api/external/diagram`, { headers })).json()) as Array<{ id: string }>;
  const png = (scale: number) =>
    fetch(`${server.url}/api/external/diagram/${diagram!.id}?scale=${scale}`, { headers: { ...headers, accept: 'image/png' } });
  const renderers = () => childrenRunning(server.child.pid!, 'png-process.js');
  t.is((await png(1)).status, 200);
  t.is((await renderers()).length, 1);
  await until(async () => (await renderers()).length === 0);
  const again = await png(2);
  t.is(again.status, 200, server.output.join('\n'));
  const bytes = Buffer.from(await again.arrayBuffer());
  t.is(bytes.subarray(1, 4).toString('latin1'), 'PNG');
});

const fontsMissing = ensureFonts();
(fontsMissing === undefined ? test : test.skip)(
  "Chinese, Japanese and Korean are drawn in a diagram's PNG with the machine's fallback fonts, not as empty boxes",
  async (t) => {
    // With no font for a script, every character of it is the same empty box: two names of one
    // character each would give the same picture.
    const pictureOf = (name: string) => {
      const m = model();
      component(m, 'c', name, 'container');
      return renderPng(drawDiagram(diagram({ componentInstances: [instance('i', 'c', 0, 0)] }), m));
    };
    for (const [one, other] of [
      ['中', '文'],
      ['か', 'き'],
      ['한', '글'],
    ] as const) {
      t.false((await pictureOf(one)).equals(await pictureOf(other)), `${one} and ${other} are drawn as different glyphs`);
    }
  },
);
