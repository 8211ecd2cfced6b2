/**
 * A worker thread turning the drawing's SVG into PNG bytes (see png.ts): resvg is synchronous,
 * and a large diagram takes long enough to hold every other request of the server.
 */
import { parentPort } from 'node:worker_threads';
import { Resvg } from '@resvg/resvg-js';
import type { PngTask } from './png.js';

parentPort!.on('message', (task: PngTask & { id: number }) => {
  try {
    const resvg = new Resvg(task.svg, {
      fitTo: { mode: 'zoom', value: task.zoom },
      background: '#ffffff',
      font: {
        // Only the bundled fonts: the same pixels on every machine, whatever it has installed.
        loadSystemFonts: false,
        fontFiles: task.fontFiles,
        defaultFontFamily: 'DejaVu Sans',
        sansSerifFamily: 'DejaVu Sans',
        serifFamily: 'DejaVu Serif',
        monospaceFamily: 'DejaVu Sans Mono',
        cursiveFamily: 'DejaVu Sans',
        fantasyFamily: 'DejaVu Sans',
      },
      logLevel: 'off',
    });
    const png = resvg.render().asPng();
    parentPort!.postMessage({ id: task.id, png }, [png.buffer as ArrayBuffer]);
  } catch (err) {
    parentPort!.postMessage({ id: task.id, error: (err as Error).message ?? String(err) });
  }
});
