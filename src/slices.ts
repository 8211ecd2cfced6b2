/**
 * Large answers built in slices of the event loop (issue 15.1). One process serves every
 * organization: the list of 100,000 components (29 MB of JSON), the whole model (70–80 MB) or
 * an export of it took 0.3–2.7 s to build, and every other request waited that long. Such an
 * answer is written as a generator of text pieces; the builder here runs it a slice at a time,
 * letting other requests in between, and gives the same bytes a single pass would.
 */

/** Longest run of one task before other work gets a turn (ms). */
const SLICE_MS = 8;
/** Pieces built between looks at the clock. */
const PIECES_PER_LOOK = 32;
/** Text gathered before it is encoded: large enough that encoding costs little per call. */
const ENCODE_CHARS = 64 * 1024;

/**
 * One task's share of the event loop (an answer being built, a write step): it runs SLICE_MS,
 * then lets other work have a turn. The share starts when the Slice is made.
 */
export class Slice {
  private start = performance.now();

  /** Whether the task has run its share since the Slice was made or its last turn. */
  get spent(): boolean {
    return performance.now() - this.start >= SLICE_MS;
  }

  /** Waits for the event loop's next turn; a new share starts then. */
  async giveTurn(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.start = performance.now();
  }
}

/**
 * A piece of text, or `undefined`: a point where the builder may pause without output
 * (a generator working its way through the model before it writes anything).
 */
export type Piece = string | undefined;

/** The text of `pieces` as UTF-8, built in slices of the event loop. */
export async function textInSlices(pieces: Iterable<Piece>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let pending = '';
  const slice = new Slice();
  const turn = async () => {
    if (slice.spent) await slice.giveTurn();
  };
  const encode = () => {
    const chunk = Buffer.from(pending);
    chunks.push(chunk);
    bytes += chunk.length;
    pending = '';
  };
  let count = 0;
  for (const piece of pieces) {
    if (piece !== undefined) {
      pending += piece;
      if (pending.length >= ENCODE_CHARS) encode();
    }
    if (++count % PIECES_PER_LOOK === 0) await turn();
  }
  if (pending !== '') encode();
  if (chunks.length === 1) return chunks[0]!;
  // Copied into one buffer a slice at a time too: 80 MB at once held the loop for ~50 ms.
  const body = Buffer.allocUnsafe(bytes);
  let offset = 0;
  for (let i = 0; i < chunks.length; i++) {
    offset += chunks[i]!.copy(body, offset);
    if (i % PIECES_PER_LOOK === 0) await turn();
  }
  return body;
}

/** The text of `pieces` in one pass, for callers with nothing to wait for them (the command line). */
export function textOf(pieces: Iterable<Piece>): string {
  let text = '';
  for (const piece of pieces) if (piece !== undefined) text += piece;
  return text;
}

/** `items` mapped one at a time as they are taken: a list presented lazily, inside the slices. */
export function* mapped<T, U>(items: Iterable<T>, map: (item: T) => U): Generator<U> {
  for (const item of items) yield map(item);
}

/** Whether `value` is a list to write item by item: an array, or a lazy iterable such as `mapped`'s. */
export function isList(value: unknown): value is Iterable<unknown> {
  return (
    Array.isArray(value) ||
    (value !== null && typeof value === 'object' && typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function')
  );
}

/**
 * JSON.stringify(value) in pieces: one per item of a top-level list, or of a list directly
 * under a top-level key; lists may be lazy iterables. Joined, the pieces are exactly what
 * JSON.stringify gives for the same value with its lists as arrays.
 */
export function* jsonPieces(value: unknown): Generator<string> {
  if (isList(value)) {
    yield* jsonListPieces(value);
    return;
  }
  if (value === null || typeof value !== 'object') {
    yield JSON.stringify(value);
    return;
  }
  let first = true;
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    const head = `${first ? '{' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (isList(item)) {
      yield head;
      yield* jsonListPieces(item);
    } else {
      yield head + JSON.stringify(item);
    }
  }
  yield first ? '{}' : '}';
}

function* jsonListPieces(items: Iterable<unknown>): Generator<string> {
  let first = true;
  for (const item of items) {
    // As in JSON.stringify of an array: what JSON cannot hold is written as null.
    yield (first ? '[' : ',') + (JSON.stringify(item) ?? 'null');
    first = false;
  }
  yield first ? '[]' : ']';
}
