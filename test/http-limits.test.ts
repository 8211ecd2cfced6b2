import { connect, type Socket } from 'node:net';
import test from 'ava';
import { RateLimiter } from '../src/http/rate/limiter.js';
import { KeyStore } from '../src/store/keys.js';
import { TestServer } from './support/server.js';

/**
 * What a client meets at the HTTP level besides its request's content: media types in any
 * letter case (issue 16.8), two different Authorization headers (16.8), caps on open
 * connections per client address and in total (16.8), and rate limits per key (issue 15.3).
 */

const API = '/api/external';

/** A raw request on a new connection from `localAddress`; resolves with everything the server sent until it closed. */
function rawRequest(text: string, url: string, localAddress = '127.0.0.1'): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: hostname, localAddress });
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(received));
    socket.on('connect', () => socket.write(text));
  });
}

/** An open connection from `localAddress` that sends nothing (until closed). */
function idleConnection(url: string, localAddress: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: hostname, localAddress });
    socket.on('error', () => {});
    socket.on('connect', () => resolve(socket));
  });
}

test('Content-Type is matched in any letter case (media types are case-insensitive)', async (t) => {
  const s = await TestServer.start();
  try {
    for (const type of ['Application/JSON', 'APPLICATION/JSON; charset=UTF-8', 'Application/Yaml', 'TEXT/YAML']) {
      const body = type.toLowerCase().includes('json')
        ? JSON.stringify([{ name: `t ${type}`, color: 'red' }])
        : `- name: t ${type}\n  color: red\n`;
      const reply = await s.request('POST', `${API}/tag`, { raw: body, headers: { 'content-type': type } });
      t.is(reply.status, 200, `${type}: ${reply.text}`);
    }
    const refused = await s.request('POST', `${API}/tag`, { raw: 'x', headers: { 'content-type': 'Text/Plain' } });
    t.is(refused.status, 415);
    t.deepEqual(refused.body, { error: 'Unsupported Content-Type: Text/Plain.' });
  } finally {
    await s.close();
  }
});

test('two Authorization headers with different keys: 401 Invalid API key., whichever comes first', async (t) => {
  const s = await TestServer.start();
  try {
    const head = await s.head();
    const body = JSON.stringify([{ name: 'two keys', color: 'red' }]);
    for (const [first, second] of [
      [s.key, s.readerKey],
      [s.readerKey, s.key],
      [s.key, 'c4s_unknownunknownunknownunknown'],
    ]) {
      const answer = await rawRequest(
        `POST ${API}/tag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${first}\r\nAuthorization: Bearer ${second}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        s.url,
      );
      t.regex(answer, /^HTTP\/1\.1 401 /);
      t.true(answer.endsWith('{"error":"Invalid API key."}'), answer);
    }
    // The same key twice is still that key.
    const same = await rawRequest(
      `GET ${API}/tag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nAuthorization: Bearer ${s.key}\r\nConnection: close\r\n\r\n`,
      s.url,
    );
    t.regex(same, /^HTTP\/1\.1 200 /);
    t.is(await s.head(), head);
  } finally {
    await s.close();
  }
});

test('open connections are capped per client address and in total: 503 with Retry-After, room kept for others', async (t) => {
  const s = await TestServer.start({ maxConnections: 6, maxConnectionsPerAddress: 4 });
  const get = `GET ${API}/tag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nConnection: close\r\n\r\n`;
  const open: Socket[] = [];
  try {
    // One client address holds its four connections ...
    for (let i = 0; i < 4; i++) open.push(await idleConnection(s.url, '127.0.0.1'));
    // ... its fifth is refused ...
    const fifth = await rawRequest(get, s.url, '127.0.0.1');
    t.regex(fifth, /^HTTP\/1\.1 503 /);
    t.regex(fifth, /\r\nRetry-After: 1\r\n/);
    t.true(fifth.endsWith('{"error":"Too many open connections from this address; retry shortly."}'), fifth);
    // ... while another address is served.
    t.regex(await rawRequest(get, s.url, '127.0.0.2'), /^HTTP\/1\.1 200 /);
    // Two more from a third address fill the server's six; then everyone is refused.
    for (let i = 0; i < 2; i++) open.push(await idleConnection(s.url, '127.0.0.3'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const full = await rawRequest(get, s.url, '127.0.0.4');
    t.true(full.startsWith('HTTP/1.1 503 ') && full.endsWith('{"error":"Too many open connections; retry shortly."}'), full);
    // A refused connection that sends nothing is closed soon, and closed connections make room.
    const silent = await idleConnection(s.url, '127.0.0.5');
    const closedAfter = await new Promise<number>((resolve) => {
      const started = performance.now();
      silent.on('close', () => resolve(performance.now() - started));
    });
    t.true(closedAfter < 4000, `a silent refused connection closed after ${Math.round(closedAfter)} ms`);
    for (const socket of open.splice(0)) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.regex(await rawRequest(get, s.url, '127.0.0.1'), /^HTTP\/1\.1 200 /);
  } finally {
    for (const socket of open) socket.destroy();
    await s.close();
  }
});

test('rate limits per key: beyond the configured rate, 429 with Retry-After and the error object; other keys unaffected', async (t) => {
  const s = await TestServer.start({ readsPerMinute: 5, writesPerMinute: 3 });
  try {
    const count = await s.commitCount();
    for (let i = 0; i < 3; i++) t.is((await s.post(`${API}/tag`, [{ name: `rated ${i}`, color: 'red' }])).status, 200);
    const refused = await s.post(`${API}/tag`, [{ name: 'one too many', color: 'red' }]);
    t.is(refused.status, 429);
    // The bucket refills one write per 20 s: the wait is 20 s less the time the three writes took.
    const wait = Number(refused.headers.get('retry-after'));
    t.true(wait >= 15 && wait <= 20, `Retry-After: ${wait}`);
    t.deepEqual(refused.body, { error: `Rate limit exceeded: this key may make 3 writes a minute; retry in ${wait} s.` });
    t.is(await s.commitCount(), count + 3, 'the refused write changed nothing');
    // Reads are counted apart: five, then 429.
    for (let i = 0; i < 5; i++) t.is((await s.get(`${API}/tag`)).status, 200);
    const tooManyReads = await s.get(`${API}/tag`);
    t.is(tooManyReads.status, 429);
    const readWait = Number(tooManyReads.headers.get('retry-after'));
    t.true(readWait >= 8 && readWait <= 12, `Retry-After: ${readWait}`);
    t.deepEqual(tooManyReads.body, { error: `Rate limit exceeded: this key may make 5 reads a minute; retry in ${readWait} s.` });
    // Another key of the same organization has its own count.
    const { key } = await new KeyStore(s.dataDir).create(s.slug, { label: 'second pipeline' });
    t.is((await s.post(`${API}/tag`, [{ name: 'other key', color: 'red' }], { key })).status, 200);
    // Refused before the body is read: a 429 needs no body upload (curl's Expect: 100-continue is answered 429).
    const big = await s.request('POST', `${API}/tag`, { raw: ' '.repeat(50_000), headers: { 'content-type': 'application/json' } });
    t.is(big.status, 429);
  } finally {
    await s.close();
  }
  // Without the options, no limit.
  const free = await TestServer.start();
  try {
    for (let i = 0; i < 30; i++) t.is((await free.get(`${API}/tag`)).status, 200);
  } finally {
    await free.close();
  }
});

test("the rate limiter refills one request per 60/rate seconds, up to a minute's worth", (t) => {
  let now = 0;
  const limiter = new RateLimiter(60, () => now);
  for (let i = 0; i < 60; i++) t.is(limiter.take('k'), 0);
  t.is(limiter.take('k'), 1);
  now += 1000;
  t.is(limiter.take('k'), 0);
  t.is(limiter.take('k'), 1);
  now += 10 * 60_000;
  for (let i = 0; i < 60; i++) t.is(limiter.take('k'), 0, "never more than a minute's worth saved up");
  t.is(limiter.take('k'), 1);
  t.is(limiter.take('other'), 0);
});
