/**
 * A worker thread running the automatic layout (see pool.ts): the layered layout and the
 * placement search are synchronous and would hold every other request of the server while they run.
 */
import { parentPort } from 'node:worker_threads';
import { layoutDiagram, type LayoutInput } from './layout.js';

parentPort!.on('message', (message: { id: number; input: LayoutInput }) => {
  layoutDiagram(message.input).then(
    (result) => parentPort!.postMessage({ id: message.id, result }),
    (err: unknown) => parentPort!.postMessage({ id: message.id, error: (err as Error).message ?? String(err) }),
  );
});
