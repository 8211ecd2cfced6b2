import { connect, type Socket } from 'node:net';
import test from 'ava';
import { TestServer } from './support/server.js';

/**
 * Issue 16 point 5: a client that stops reading its answer must not pin memory. Each key's
 * responses not yet handed to its clients are bounded (a GET beyond is 503), and a response
 * not handed over within the send timeout is cut off, connection closed, its bytes released.
 */

const SEND_TIMEOUT = 1500;
const MB = 1024 * 1024;

let s: TestServer;

test.before(async () => {
  s = await TestServer.start({ sendBytesPerKey: 2 * MB, sendTimeout: SEND_TIMEOUT, bodyLimit: 16 * MB });
  // Eight components of ~1.1 MB each: the list is ~9 MB, more than loopback's socket buffers take.
  const components = Array.from({ length: 8 }, (_, i) => ({ name: `big ${i}`, typeSlug: 'container', desc: 'x'.repeat(1100 * 1024) }));
  const reply = await s.post('/api/external/component', components);
  if (reply.status !== 200) throw new Error(`setup: ${reply.status} ${reply.text.slice(0, 200)}`);
});

test.after.always(async () => {
  await s?.close();
});

/** Asks for the component list and does not read the answer (a paused socket reads nothing, not even the close). */
function pausedReader(key: string): Promise<Socket> {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    socket.on('connect', () => {
      socket.write(`GET /api/external/component HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
      socket.pause();
      resolve(socket);
    });
  });
}

/** Reads what the server sent until it closed the connection: the bytes received. */
function readToClose(socket: Socket): Promise<number> {
  return new Promise((resolve) => {
    let received = 0;
    socket.on('data', (chunk) => (received += chunk.length));
    socket.on('close', () => resolve(received));
    socket.resume();
  });
}

test.serial(
  "a key's unread responses are bounded: beyond, its GETs are 503; the send timeout cuts the reader off and frees them",
  async (t) => {
    const paused = await pausedReader(s.readerKey);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The same key's next large read would hold a second copy: refused.
    const refused = await s.get('/api/external/component', { key: s.readerKey });
    t.is(refused.status, 503);
    t.is(refused.headers.get('retry-after'), '1');
    t.deepEqual(refused.body, { error: "Too many response bytes are waiting for this key's clients to read them; retry shortly." });
    // Another key is not held up.
    const other = await s.get('/api/external/component');
    t.is(other.status, 200);
    t.is(other.body.length, 8);
    // The paused reader is cut off after the send timeout (it gets part of the list, then the close) ...
    await new Promise((resolve) => setTimeout(resolve, SEND_TIMEOUT + 200));
    const received = await readToClose(paused);
    t.true(received < other.text.length, `${received} bytes of ${other.text.length} before the close`);
    // ... and its key reads again.
    const again = await s.get('/api/external/component', { key: s.readerKey });
    t.is(again.status, 200);
  },
);

test.serial(
  'while the key holds more than its bound, even its small reads wait; a closed connection frees the bytes at once',
  async (t) => {
    const paused = await pausedReader(s.readerKey);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const small = await s.get('/api/external/type', { key: s.readerKey });
    t.is(small.status, 503, 'the key already holds more than its bound');
    paused.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.is((await s.get('/api/external/type', { key: s.readerKey })).status, 200, 'a closed connection frees its bytes at once');
  },
);
