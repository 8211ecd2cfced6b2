/**
 * Cooperative scheduling of short synchronous file operations (see object-storage.ts for why
 * loose objects are read and written synchronously).
 */
const IO_SLICE_MS = 4;
const pendingIo: Array<() => void> = [];
let pendingIoHead = 0;
let sliceStartedAt: number | null = null;
let drainScheduled = false;

/**
 * Runs a short synchronous file operation now if the current slice of the event loop has
 * time left, else queues it for a later turn. Loading 10,000 blobs thus runs at the speed
 * of synchronous reads while the event loop still serves others every few milliseconds.
 */
export function runSyncIo<T>(operation: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const job = () => {
      try {
        resolve(operation());
      } catch (error) {
        reject(error);
      }
    };
    if (pendingIoHead === pendingIo.length && sliceHasTime()) job();
    else {
      pendingIo.push(job);
      scheduleDrain();
    }
  });
}

/**
 * Resolves at once while the current slice of the event loop has time left, else once other
 * work has had a turn: for a loop of short synchronous steps (hashing a commit's blobs) that
 * would otherwise run back to back, each `await` of a settled promise being only a microtask.
 */
export async function nextIoSlice(): Promise<void> {
  while (!sliceHasTime()) await new Promise((resolve) => setImmediate(resolve));
}

function sliceHasTime(): boolean {
  if (sliceStartedAt === null) {
    startSlice();
    return true;
  }
  return performance.now() - sliceStartedAt < IO_SLICE_MS;
}

function startSlice(): number {
  sliceStartedAt = performance.now();
  // Runs as soon as the event loop gets a turn: from then on, a new slice.
  setImmediate(() => (sliceStartedAt = null));
  return sliceStartedAt;
}

function scheduleDrain(): void {
  if (drainScheduled) return;
  drainScheduled = true;
  setImmediate(drainPendingIo);
}

function drainPendingIo(): void {
  drainScheduled = false;
  const started = startSlice();
  while (pendingIoHead < pendingIo.length && performance.now() - started < IO_SLICE_MS) {
    pendingIo[pendingIoHead++]!();
  }
  if (pendingIoHead < pendingIo.length) scheduleDrain();
  else {
    pendingIo.length = 0;
    pendingIoHead = 0;
  }
}
