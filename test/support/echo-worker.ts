/** A worker for test/worker-pool.test.ts: answers a task with its thread id, after `sleepMs`, or not at all. */
import { parentPort, threadId } from 'node:worker_threads';

interface Task {
  id: number;
  sleepMs?: number;
  silent?: boolean;
  crash?: boolean;
}

parentPort!.postMessage({ ready: true });
parentPort!.on('message', (task: Task) => {
  if (task.crash) throw new Error('asked to crash');
  if (task.silent) return;
  const began = Date.now();
  setTimeout(() => parentPort!.postMessage({ id: task.id, threadId, began, ended: Date.now() }), task.sleepMs ?? 0);
});
