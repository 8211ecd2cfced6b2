import { connect, type Socket } from 'node:net';
import test from 'ava';
import { Orgs } from '../src/service/orgs.js';
import { KeyStore } from '../src/store/keys.js';
import { MEMBERS, TestServer } from './support/server.js';

/**
 * Issue 16 point 4: the request-body budget counts bytes actually received, per organization
 * as well as server-wide, and an upload that stalls is cut off. Before, the budget was
 * server-wide and reserved from the declared Content-Length before a byte arrived: seven idle
 * uploads of one key made every write of every organization answer 503.
 */

const KB = 1024;
const STALL_MS = 1500;

let s: TestServer;
let otherKey: string;

test.before(async () => {
  s = await TestServer.start({
    bodyLimit: 1024 * KB,
    bodyBudget: 2048 * KB,
    bodyBudgetPerOrg: 1200 * KB,
    bodyStallTimeout: STALL_MS,
    requestTimeout: 60_000,
  });
  await new Orgs(s.dataDir).create('beta', { name: 'Beta', members: MEMBERS, author: { name: 'test', email: 'test@test' } });
  otherKey = (await new KeyStore(s.dataDir).create('beta', { label: 'beta pipeline' })).key;
});

test.after.always(async () => {
  await s?.close();
});

interface Upload {
  socket: Socket;
  /** What the server sent back, once it closed the connection or answered. */
  answer: Promise<string>;
}

/** A raw upload that declares `length` bytes and sends `first` of them, then keeps sending one byte every 100 ms if `trickle`. */
function upload(key: string, length: number, first: number, trickle: boolean): Upload {
  const { hostname, port } = new URL(s.url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  const answer = new Promise<string>((resolve) => {
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (/\r\n\r\n[\s\S]*\}$/.test(received)) resolve(received);
    });
    socket.on('close', () => resolve(received));
  });
  socket.write(
    `POST /api/external/tag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${length}\r\n\r\n[${' '.repeat(first - 1)}`,
  );
  if (trickle) {
    const timer = setInterval(() => (socket.writable ? socket.write(' ') : clearInterval(timer)), 100);
    socket.on('close', () => clearInterval(timer));
  }
  return { socket, answer };
}

async function post(key: string, bytes: number): Promise<{ status: number; body: unknown; retryAfter: string | null }> {
  const body = `[${' '.repeat(bytes - 40)}{"name":"n${bytes}","color":"red"}]`;
  const response = await fetch(`${s.url}/api/external/tag`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, body: await response.json(), retryAfter: response.headers.get('retry-after') };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

test.serial('seven idle uploads from one key hold nothing: other organizations, and the same one, still write', async (t) => {
  const idle = Array.from({ length: 7 }, () => upload(s.key, 900 * KB, 1, false));
  await settle();
  t.like(await post(otherKey, 300 * KB), { status: 200 }, 'another organization');
  t.like(await post(s.key, 300 * KB), { status: 200 }, 'the same organization');
  for (const u of idle) u.socket.destroy();
});

test.serial(
  'bytes received count per organization and server-wide: a full organization is refused alone; the server bound holds',
  async (t) => {
    // acme's two uploads in progress have sent 1,100 KB of its 1,200 KB share ...
    const acme = [upload(s.key, 1000 * KB, 550 * KB, true), upload(s.key, 1000 * KB, 550 * KB, true)];
    await settle();
    // ... so acme's next 300 KB is refused, naming the organization's share,
    t.deepEqual(await post(s.key, 300 * KB), {
      status: 503,
      retryAfter: '1',
      body: { error: "This organization's uploads are holding too many request bytes; retry shortly." },
    });
    // while beta still writes.
    t.like(await post(otherKey, 300 * KB), { status: 200 });
    // beta's own upload of 800 KB brings the server to 1,900 KB of its 2,048 KB: beta's 300 KB more is over the server's bound.
    const beta = upload(otherKey, 1000 * KB, 800 * KB, true);
    await settle();
    t.deepEqual(await post(otherKey, 300 * KB), {
      status: 503,
      retryAfter: '1',
      body: { error: 'The server is holding too many request bodies; retry shortly.' },
    });
    // Uploads that end give their bytes back.
    for (const u of [...acme, beta]) u.socket.destroy();
    await settle();
    t.like(await post(s.key, 300 * KB), { status: 200 });
    t.like(await post(otherKey, 300 * KB), { status: 200 });
  },
);

test.serial('an upload that stops sending is cut off after bodyStallTimeout with 408, and its bytes come back', async (t) => {
  const head = await s.head();
  const started = performance.now();
  const stalled = [upload(s.key, 1000 * KB, 550 * KB, false), upload(s.key, 1000 * KB, 550 * KB, false)];
  await settle();
  t.is((await post(s.key, 300 * KB)).status, 503, 'the stalled uploads hold what they sent');
  const answers = await Promise.all(stalled.map((u) => u.answer));
  const ms = performance.now() - started;
  for (const answer of answers) {
    t.regex(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    t.regex(answer, /\r\nConnection: close\r\n/);
    t.true(answer.endsWith('{"error":"Request timeout: the body stopped arriving."}'));
  }
  t.true(ms >= STALL_MS - 100 && ms < STALL_MS + 2000, `cut off after ${Math.round(ms)} ms`);
  t.like(await post(s.key, 300 * KB), { status: 200 }, 'their bytes came back');
  t.not(await s.head(), head);
  for (const u of stalled) u.socket.destroy();
});
