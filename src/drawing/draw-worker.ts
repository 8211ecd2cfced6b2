/**
 * A worker thread drawing diagrams (see draw-pool.ts): routing a large diagram takes long enough
 * to hold every other request of the server, so it is drawn here.
 */
import { parentPort } from 'node:worker_threads';
import type { DrawTask } from './draw-pool.js';
import { drawDiagram } from './svg.js';

parentPort!.on('message', (task: DrawTask & { id: number }) => {
  try {
    parentPort!.postMessage({ id: task.id, svg: drawDiagram(task.diagram, task.model, task.options) });
  } catch (err) {
    parentPort!.postMessage({ id: task.id, error: (err as Error).message ?? String(err) });
  }
});
