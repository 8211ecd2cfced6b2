/**
 * Reads many loose blobs on a worker thread while the main thread goes on, handing each one
 * over as soon as its batch is read. A cold start (no blob cache) thus parses one batch while
 * the worker reads the next, on two cores side by side: at 10,000 components the main thread
 * no longer spends ~300 ms opening, reading and inflating 11,000 files before it can parse.
 */
import type { Worker } from 'node:worker_threads';
import { moduleBeside, startModuleWorker } from '../threads.js';
import type { ReadBatch, ReadRequest } from './loose-reader-worker.js';

const WORKER_URL = moduleBeside(import.meta.url, 'loose-reader-worker');
const BATCH_SIZE = 128;

/**
 * Calls `onBlob` for every oid the worker read as a loose blob, in batches, and `onAbsent` for
 * those it did not (packed, missing, corrupt or not a blob: the caller reads them its own way).
 * Resolves when every oid has had one or the other; if the worker cannot start or dies, the
 * oids it had not reported yet go to `onAbsent`.
 */
export function readLooseBlobs(
  objectsDir: string,
  oids: readonly string[],
  onBlob: (oid: string, content: Buffer) => void,
  onAbsent: (oid: string) => void,
): Promise<void> {
  const pending = new Set(oids);
  const giveUp = () => {
    for (const oid of pending) onAbsent(oid);
    pending.clear();
  };
  let worker: Worker;
  try {
    worker = startModuleWorker(WORKER_URL);
  } catch {
    giveUp();
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      giveUp();
      void worker.terminate();
      resolve();
    };
    worker.on('message', (batch: ReadBatch) => {
      const bytes = Buffer.from(batch.bytes);
      batch.oids.forEach((oid, i) => {
        if (!pending.delete(oid)) return;
        onBlob(oid, bytes.subarray(batch.offsets[i], batch.offsets[i + 1]));
      });
      for (const oid of batch.absent) if (pending.delete(oid)) onAbsent(oid);
      if (pending.size === 0) finish();
    });
    worker.once('error', finish);
    worker.once('exit', finish);
    const request: ReadRequest = { objectsDir, oids: [...oids], batchSize: BATCH_SIZE };
    worker.postMessage(request);
  });
}
