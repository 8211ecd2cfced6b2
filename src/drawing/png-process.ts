/**
 * A child process turning the drawing's SVG into PNG bytes (see png.ts). resvg is synchronous,
 * so it must leave the event loop, and it aborts the process it runs in on a bug of its own
 * (2.6.2 panicked on an arrowhead wholly outside the picture): here that ends this child and
 * one request, not the server.
 */
import { Resvg } from '@resvg/resvg-js';
import type { PngTask } from './png.js';

process.on('message', (task: PngTask & { id: number }) => {
  try {
    const resvg = new Resvg(task.svg, {
      fitTo: { mode: 'zoom', value: task.zoom },
      background: '#ffffff',
      font: {
        // The bundled fonts, and fallbacks for scripts they lack (png.ts): never the machine's
        // fonts at large, so what DejaVu draws is the same pixels on every machine.
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
    process.send!({ id: task.id, png: resvg.render().asPng() });
  } catch (err) {
    process.send!({ id: task.id, error: (err as Error).message ?? String(err) });
  }
});
// The server is gone (or let this child go): nothing is left to do.
process.on('disconnect', () => process.exit(0));
