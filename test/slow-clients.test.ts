import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import YAML from 'yaml';
import { YamlPool } from '../src/http/yaml-pool.js';
import { withDirectoryLock } from '../src/store/lock.js';
import { watchLatency } from './support/hostile.js';
import { isErrorLine, TestServer } from './support/server.js';

/**
 * Slow and abusive clients: timeouts cut off connections that trickle their headers or never
 * finish their body (Node checks them every `connectionsCheckingInterval`, which the server
 * derives from the timeouts), while other clients are served; an organization's queue of
 * writes waiting for its lock is bounded (503 + Retry-After); and every piece that bounds
 * what a client can make the server hold: the body limit (also for chunked and compressed
 * bodies) and the YAML worker's heap and time limits. The body budget: body-budget.test.ts.
 */

const HEADERS_TIMEOUT = 1000;
const REQUEST_TIMEOUT = 2000;
const KEEP_ALIVE_TIMEOUT = 500;

let s: TestServer;

test.before(async () => {
  s = await TestServer.start({
    headersTimeout: HEADERS_TIMEOUT,
    requestTimeout: REQUEST_TIMEOUT,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT,
    maxWaitingWrites: 3,
    bodyLimit: 1024 * 1024,
    bodyBudget: 1536 * 1024,
  });
});

test.after.always(async () => {
  await s?.close();
});

interface Connection {
  socket: Socket;
  /** Resolves when the server has closed the connection: what it sent, and after how long. */
  closed: Promise<{ received: string; ms: number }>;
}

/** A raw connection to the server; `start` writes what the client sends first. */
function open(start: (socket: Socket) => void): Promise<Connection> {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname);
    const closed = new Promise<{ received: string; ms: number }>((done) => {
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('error', () => {});
      socket.on('close', () => done({ received: Buffer.concat(chunks).toString('latin1'), ms: performance.now() - started }));
    });
    socket.on('connect', () => {
      start(socket);
      resolve({ socket, closed });
    });
  });
}

/** Writes one byte every `ms` until the socket closes. */
function trickle(socket: Socket, ms: number, byte = 'a'): void {
  const timer = setInterval(() => {
    if (socket.writable) socket.write(byte);
    else clearInterval(timer);
  }, ms);
  socket.on('close', () => clearInterval(timer));
}

const REQUEST_TIMED_OUT =
  'HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 28\r\nConnection: close\r\n\r\n{"error":"Request timeout."}';

test.serial(
  'headers sent byte by byte, or never: 408 in the contract form and closed after headersTimeout; others are served meanwhile',
  async (t) => {
    const watcher = watchLatency(s.url, s.readerKey, 20);
    const slow = await Promise.all([
      ...Array.from({ length: 40 }, () =>
        open((socket) => {
          socket.write('GET /api/external/tag HTTP/1.1\r\nHost: x\r\nX-Slow: ');
          trickle(socket, 100);
        }),
      ),
      ...Array.from({ length: 40 }, () => open(() => {})), // connects, sends nothing
    ]);
    const results = await Promise.all(slow.map((c) => c.closed));
    const latency = await watcher.stop();
    // Closed by the timeout (its 408), not before it; how soon after is for bench/timing.ts.
    for (const { received, ms } of results) {
      t.is(received, REQUEST_TIMED_OUT);
      t.true(ms >= HEADERS_TIMEOUT - 50, `closed after ${Math.round(ms)} ms`);
    }
    t.deepEqual(latency.failures, []);
    t.true(latency.count >= 1, `${latency.count} GETs, every one answered`);
  },
);

test.serial('a body that never finishes, or trickles: 408 and closed after requestTimeout, nothing written', async (t) => {
  const head = await s.head();
  const watcher = watchLatency(s.url, s.readerKey, 20);
  const request = (length: number) =>
    `POST /api/external/tag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
  const stalled = await Promise.all(
    Array.from({ length: 10 }, () => open((socket) => socket.write(`${request(200)}[{"name":"stalled","color":"red"`))),
  );
  const trickling = await Promise.all(
    Array.from({ length: 10 }, () =>
      open((socket) => {
        socket.write(`${request(400)}[{"name":"trickled","color":"red"}`);
        trickle(socket, 50, ' ');
      }),
    ),
  );
  // Chunked: no length at all, and the last chunk never comes.
  const chunked = await open((socket) => {
    socket.write(
      `POST /api/external/tag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n`,
    );
    trickle(socket, 100, '');
  });
  for (const connection of [...stalled, ...trickling, chunked]) {
    const { received, ms } = await connection.closed;
    t.is(received, REQUEST_TIMED_OUT);
    t.true(ms >= REQUEST_TIMEOUT - 50, `closed after ${Math.round(ms)} ms`);
  }
  const latency = await watcher.stop();
  t.deepEqual(latency.failures, []);
  t.true(latency.count >= 1, `${latency.count} GETs, every one answered`);
  t.is(await s.head(), head);
  // The server goes on serving writes.
  t.is((await s.post('/api/external/tag', [{ name: 'after the slow ones', color: 'green' }])).status, 200);
  t.deepEqual(
    s.logs.filter((line) => isErrorLine(line)),
    [],
  );
});

test.serial('an idle keep-alive connection is closed after keepAliveTimeout', async (t) => {
  const connection = await open((socket) => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
  const { received, ms } = await connection.closed;
  t.regex(received, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"ok":true\}$/);
  t.true(ms >= KEEP_ALIVE_TIMEOUT - 50, `closed after ${Math.round(ms)} ms`);
});

test.serial("writes waiting for one organization's lock are bounded: beyond maxWaitingWrites, 503 with Retry-After", async (t) => {
  const count = await s.commitCount();
  const answers: Array<Promise<Response>> = [];
  let settled = 0;
  await withDirectoryLock(s.gitdir, async () => {
    // Holding the organization's write lock (in this process, as a slow write would), ten writes arrive.
    for (let i = 0; i < 10; i++) {
      const answer = fetch(`${s.url}/api/external/tag`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
        body: JSON.stringify([{ name: `queued ${i}`, color: 'blue' }]),
      });
      answer.finally(() => settled++).catch(() => {});
      answers.push(answer);
    }
    const deadline = Date.now() + 10_000;
    while (settled < 7 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    t.is(settled, 7, 'seven refused at once, three waiting');
  });
  const responses = await Promise.all(answers);
  const bodies = await Promise.all(responses.map((r) => r.json()));
  const refused = responses.map((r, i) => ({ r, body: bodies[i] })).filter(({ r }) => r.status === 503);
  const accepted = responses.filter((r) => r.status === 200);
  t.is(refused.length, 7);
  t.is(accepted.length, 3);
  for (const { r, body } of refused) {
    t.is(r.headers.get('retry-after'), '1');
    t.deepEqual(body, { error: 'Too many writes are waiting for this organization; retry shortly.' });
  }
  t.is(await s.commitCount(), count + 3);
  // Once the queue drained, writes are accepted again.
  t.is((await s.post('/api/external/tag', [{ name: 'after the queue', color: 'blue' }])).status, 200);
});

test.serial('the body limit holds for declared, chunked and compressed bodies (a gzip bomb is cut at the limit)', async (t) => {
  const head = await s.head();
  const limit = 1024 * 1024;
  const send = async (body: RequestInit['body'], headers: Record<string, string> = {}) => {
    const response = await fetch(`${s.url}/api/external/tag`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json', ...headers },
      body,
      duplex: 'half',
    } as RequestInit);
    return { status: response.status, body: await response.json(), connection: response.headers.get('connection') };
  };
  // A body declared at most twice the limit is read and discarded after the answer, so the
  // connection stays usable; one of unknown length is answered with Connection: close.
  const tooLarge = { status: 413, body: { error: 'Request body too large.' }, connection: 'keep-alive' };
  t.deepEqual(await send(' '.repeat(limit + 1)), tooLarge, 'declared');
  const stream = new ReadableStream({
    start(controller) {
      for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(100 * 1024).fill(0x20));
      controller.close();
    },
  });
  t.deepEqual(await send(stream), { ...tooLarge, connection: 'close' }, 'chunked, no length');
  const bomb = gzipSync(Buffer.alloc(200 * limit, 0x20));
  t.true(bomb.length < 300 * 1024, `${bomb.length} bytes of gzip`);
  t.deepEqual(await send(bomb, { 'content-encoding': 'gzip' }), tooLarge, 'gzip bomb: 200 MB of spaces');
  // Within the limit, compressed bodies are fine.
  const fine = await send(gzipSync(JSON.stringify([{ name: 'compressed', color: 'red' }])), { 'content-encoding': 'gzip' });
  t.is(fine.status, 200);
  t.not(await s.head(), head, 'the compressed write committed');
});

test.serial('a large YAML body is parsed on a worker thread: the other client is not held up', async (t) => {
  const local = await TestServer.start();
  try {
    // 10,000 components, the last one invalid: a second of YAML parsing, then a 400 and no write.
    const components = Array.from({ length: 10_000 }, (_, i) => ({
      name: `Component ${i}`,
      desc: 'Some text',
      typeSlug: 'container',
      state: i === 9_999 ? 'NOPE' : 'ACTIVE',
    }));
    const text = YAML.stringify({ components });
    // The other client's GETs, counted as they are answered. While the server parsed on its own
    // thread it would answer none until the parse was done; so GETs answered while the POST is
    // outstanding show the parse ran elsewhere. Counted, not timed: a busy machine makes the
    // parse slower and the count larger (the latency figures: bench/heavy.ts, bench/timing.ts).
    let answered = 0;
    let watching = true;
    const other = (async () => {
      while (watching) {
        const response = await fetch(`${local.url}/api/external/tag?limit=1`, { headers: { authorization: `Bearer ${local.readerKey}` } });
        await response.arrayBuffer();
        t.is(response.status, 200);
        answered++;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    while (answered < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    const before = answered;
    const reply = await local.request('POST', '/api/external/model', { raw: text, headers: { 'content-type': 'application/yaml' } });
    const during = answered - before;
    watching = false;
    await other;
    t.is(reply.status, 400);
    t.deepEqual(reply.body, {
      error: "Invalid JSON: components.9999.state: Invalid enum value. Expected 'DRAFT' | 'ACTIVE' | 'ARCHIVED', received 'NOPE'",
    });
    t.log(`${(text.length / 1e6).toFixed(1)} MB of YAML; the other client had ${during} GETs answered meanwhile`);
    t.true(during >= 5, `${during} GETs answered while the body was parsed`);
  } finally {
    await local.close();
  }
});

test.serial('the YAML worker: a parse needing more heap than allowed, or more time, ends that worker only', async (t) => {
  const text = YAML.stringify({
    components: Array.from({ length: 20_000 }, (_, i) => ({ name: `c${i}`, attributes: [{ id: 'x', value: i }] })),
  });
  const small = new YamlPool({ threads: 1, maxHeapMb: 16 });
  try {
    t.deepEqual(await small.parse(text), { error: 'Invalid YAML: the document needs too much memory to parse.' });
    t.deepEqual(await small.parse('a: [1, 2]'), { value: { a: [1, 2] } }, 'a new worker takes over');
  } finally {
    await small.close();
  }
  const hasty = new YamlPool({ threads: 1, timeoutMs: 1500 });
  try {
    // A worker's start (seconds on a busy machine, from source) does not count into the timeout.
    t.deepEqual(await hasty.parse('warm: up'), { value: { warm: 'up' } });
    t.deepEqual(await hasty.parse(text.repeat(2)), { error: 'Invalid YAML: the document took too long to parse.' });
    t.deepEqual(await hasty.parse('after: timeout'), { value: { after: 'timeout' } }, 'a new worker takes over');
  } finally {
    await hasty.close();
  }
  const pool = new YamlPool({ threads: 2 });
  try {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.parse(`n: ${i}`)));
    t.deepEqual(
      results,
      Array.from({ length: 6 }, (_, i) => ({ value: { n: i } })),
      'more parses than threads wait their turn',
    );
    t.deepEqual(await pool.parse('['.repeat(10_000)), { error: 'Invalid YAML: nested too deeply.' });
  } finally {
    await pool.close();
  }
});
