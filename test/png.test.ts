/**
 * The PNG renderer's isolation (src/drawing/png.ts, src/processes.ts): resvg 2.6.2 aborts the
 * process it runs in on a marker drawn wholly outside the picture (a Rust panic, exit 134, from
 * whichever thread). The service's own drawings keep every arrowhead on the canvas
 * (drawing.test.ts); this SVG is made by hand to hit the panic all the same.
 */
import test from 'ava';
import { renderPng } from '../src/drawing/png.js';

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
