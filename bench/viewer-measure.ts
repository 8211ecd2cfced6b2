/** Prints the viewer figures (bench/viewer.ts) as JSON: run bundled, by measureViewer. */
import { measureViewerHere } from './viewer.js';

process.stdout.write(JSON.stringify(await measureViewerHere(Number(process.argv[2] ?? 100))));
