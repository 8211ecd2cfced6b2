/**
 * A worker thread that parses large YAML request bodies (see yaml-pool.ts): the `yaml`
 * package takes seconds on a body of a few MB, which must not stall every other request.
 */
import { parentPort } from 'node:worker_threads';
import { parseYamlText } from './body-parse.js';

parentPort!.on('message', (message: { id: number; text: string; limit: number }) => {
  // Checked here: a value its aliases expand past the limit must not be copied to the server's thread.
  const parsed = parseYamlText(message.text, message.limit);
  try {
    parentPort!.postMessage({ id: message.id, ...parsed });
  } catch (err) {
    // A value structured clone cannot carry (none is known for the core schema).
    parentPort!.postMessage({ id: message.id, error: `Invalid YAML: ${(err as Error).message}` });
  }
});

// Loaded and listening: the pool times parses from here, not from the thread's start.
parentPort!.postMessage({ ready: true });
