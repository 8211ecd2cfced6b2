import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import {
  axiosClient,
  curl,
  findPythonWithRequests,
  makeBodies,
  nodeFetch,
  pythonRequests,
  type Bodies,
  type Case,
  type Client,
  type Try,
} from './support/clients.js';
import { TestServer } from './support/server.js';

/**
 * Issue 20: every common client gets its answer. Node's fetch, curl, Python requests and axios
 * each send every case 20 times to a real server; every try must get the right status and error
 * body, never a client-side error (EPIPE, reset). Refusals decided by the headers are answered
 * before the body is read, and what the client still sends is read and discarded (lingering
 * close), so a client busy uploading still reads its answer; where the client keeps connections
 * alive, it goes on using the same connection after an error.
 */

const exec = promisify(execFile);
const TIMES = 20;
const BODY_LIMIT = 64 * 1024;
const TAG = [{ name: 'matrix', color: 'blue' }];

let s: TestServer;
let bodies: Bodies;
let bodyDir: string;
/** The client port of every request the server received, in order. */
const ports: number[] = [];

test.before(async () => {
  s = await TestServer.start({ bodyLimit: BODY_LIMIT });
  bodyDir = await mkdtemp(join(tmpdir(), 'c4store-matrix-'));
  bodies = await makeBodies(TAG, BODY_LIMIT, bodyDir);
  const record = (req: IncomingMessage) => ports.push(req.socket.remotePort!);
  s.server.server.prependListener('request', record);
  s.server.server.prependListener('checkContinue', record);
});

test.after.always(async () => {
  await s?.close();
  if (bodyDir) await rm(bodyDir, { recursive: true, force: true });
});

interface Expected {
  status: number;
  /** The exact body, or a check of it. */
  body: string | ((text: string) => boolean);
  /** The client's connection is kept for the next try. */
  reused: boolean;
}

const error = (message: string) => JSON.stringify({ error: message });
const writtenTag = (text: string) => JSON.parse(text)[0]?.name === 'matrix';

function cases(): Array<[Case, Expected]> {
  const write = { method: 'POST', path: '/api/external/tag', key: s.key } as const;
  return [
    [
      { ...write, name: 'success', body: 'json' },
      { status: 200, body: writtenTag, reused: true },
    ],
    [
      { ...write, name: '401', key: 'c4s_not-a-key-of-this-server', body: 'json' },
      { status: 401, body: error('Invalid API key.'), reused: true },
    ],
    [
      { ...write, name: '403', key: s.readerKey, body: 'json' },
      { status: 403, body: error('This API key may only read.'), reused: true },
    ],
    [
      { ...write, name: '404', method: 'GET', path: '/api/external/no-such-thing', body: 'none' },
      { status: 404, body: error('Not found.'), reused: true },
    ],
    [
      { ...write, name: '413 by Content-Length', body: 'declared' },
      { status: 413, body: error('Request body too large.'), reused: true },
    ],
    [
      { ...write, name: '413 chunked', body: 'chunked' },
      { status: 413, body: error('Request body too large.'), reused: false },
    ],
    [
      { ...write, name: '415', contentType: 'text/plain', body: 'json' },
      { status: 415, body: error('Unsupported Content-Type: text/plain.'), reused: true },
    ],
    [
      { ...write, name: 'gzip body', body: 'gzip' },
      { status: 200, body: writtenTag, reused: true },
    ],
  ];
}

/** Runs every case against `client`; a failed try is reported with its case and index. */
async function runMatrix(client: Client, timings: string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const [c, expected] of cases()) {
    const before = ports.length;
    const started = performance.now();
    const tries: Try[] = await client.run(s.url, c, bodies, TIMES);
    if (tries.length !== TIMES) problems.push(`${client.name} ${c.name}: ${tries.length} tries answered of ${TIMES}`);
    for (const [i, attempt] of tries.entries()) {
      const where = `${client.name} ${c.name} #${i + 1}`;
      if ('error' in attempt) {
        problems.push(`${where}: ${attempt.error}`);
        continue;
      }
      if (attempt.status !== expected.status) problems.push(`${where}: status ${attempt.status}, body ${attempt.body.slice(0, 100)}`);
      const bodyOk = typeof expected.body === 'string' ? attempt.body === expected.body : expected.body(attempt.body);
      if (!bodyOk) problems.push(`${where}: body ${attempt.body.slice(0, 100)}`);
    }
    timings.push(`${c.name} ${Math.round(performance.now() - started)} ms`);
    const connections = new Set(ports.slice(before)).size;
    // curl asks before uploading a large body (Expect: 100-continue) and is refused instead of
    // invited: that connection must close (RFC 9110 §10.1.1), as the client never sent the body.
    const expectsContinue = client === curl && c.body === 'declared';
    // fetch's pool (undici) may open a second connection while it releases the first.
    if (expected.reused && !expectsContinue && connections > 2)
      problems.push(`${client.name} ${c.name}: ${connections} connections for ${TIMES} tries`);
  }
  return problems;
}

for (const client of [nodeFetch, curl, axiosClient]) {
  test.serial(`client matrix: ${client.name}, every case ${TIMES} times`, async (t) => {
    const timings: string[] = [];
    t.deepEqual(await runMatrix(client, timings), []);
    t.log(timings.join(', '));
  });
}

test.serial(`client matrix: Python requests, every case ${TIMES} times`, async (t) => {
  const python = await findPythonWithRequests((line) => t.log(line));
  if (python === undefined) {
    // Loudly: the test passes only where Debian's python3-requests cannot be installed.
    console.warn('SKIPPED: client matrix for Python requests: no python3 with requests, and apt-get could not install it');
    t.log('SKIPPED: no python3 with requests, and apt-get could not install python3-requests');
    t.pass();
    return;
  }
  const timings: string[] = [];
  t.deepEqual(await runMatrix(pythonRequests(python), timings), []);
  t.log(timings.join(', '));
});

test.serial('Expect: 100-continue: a refusal decided by the headers comes instead of 100 Continue, and no body byte is sent', async (t) => {
  const bodyFile = bodies.files.declared;
  const curlWithExpect = async (key: string, file: string) => {
    const { stdout, stderr } = await exec('curl', [
      '-sv',
      '-X',
      'POST',
      '-H',
      `authorization: Bearer ${key}`,
      '-H',
      'content-type: application/json',
      '-H',
      'Expect: 100-continue',
      '--expect100-timeout',
      '10',
      '-w',
      '\n%{http_code} %{size_upload}',
      '--data-binary',
      `@${file}`,
      `${s.url}/api/external/tag`,
    ]);
    const [body, summary] = stdout.split('\n');
    const [status, uploaded] = summary!.split(' ');
    return { status: Number(status), body, uploaded: Number(uploaded), sawContinue: /^< HTTP\/1\.1 100/m.test(stderr) };
  };
  const head = await s.head();
  t.deepEqual(await curlWithExpect('c4s_wrong', bodies.files.json), {
    status: 401,
    body: error('Invalid API key.'),
    uploaded: 0,
    sawContinue: false,
  });
  t.deepEqual(await curlWithExpect(s.readerKey, bodies.files.json), {
    status: 403,
    body: error('This API key may only read.'),
    uploaded: 0,
    sawContinue: false,
  });
  t.deepEqual(await curlWithExpect(s.key, bodyFile), {
    status: 413,
    body: error('Request body too large.'),
    uploaded: 0,
    sawContinue: false,
  });
  t.is(await s.head(), head);
  // A request that will be read is invited: 100 Continue, then the body, then the answer.
  const accepted = await curlWithExpect(s.key, bodies.files.json);
  t.like(accepted, { status: 200, uploaded: bodies.json.length, sawContinue: true });
});

test.serial(
  'lingering is bounded: after an early answer the server reads at most twice the body limit, for at most lingerMs, then closes',
  async (t) => {
    const LINGER_MS = 1000;
    const local = await TestServer.start({ bodyLimit: BODY_LIMIT, lingerMs: LINGER_MS });
    try {
      const { hostname, port } = new URL(local.url);
      const openUpload = (head: string, mode: 'endless' | 'trickle') =>
        new Promise<{ answer: string; sent: number; ms: number }>((resolve) => {
          // allowHalfOpen: the client does not close its side when the server closes its own.
          const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
          const started = performance.now();
          let answer = '';
          let sent = 0;
          const chunk = `${(16 * 1024).toString(16)}\r\n${' '.repeat(16 * 1024)}\r\n`;
          const pump = () => {
            // A client that never stops sending: as fast as the server takes it.
            while (mode === 'endless' && socket.writable && socket.write(chunk)) sent += 16 * 1024;
          };
          // A byte now and then: the client is still there, and learns of the close by its next write.
          const trickle = mode === 'trickle' ? setInterval(() => socket.writable && socket.write(' '), 100) : undefined;
          socket.on('close', () => clearInterval(trickle));
          socket.on('drain', pump);
          socket.on('data', (data) => (answer += data.toString('latin1')));
          socket.on('error', () => {});
          socket.on('close', () => resolve({ answer, sent, ms: performance.now() - started }));
          socket.on('connect', () => {
            socket.write(head);
            pump();
          });
        });
      const post = (key: string, framing: string) =>
        `POST /api/external/tag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${framing}\r\n`;
      // An endless chunked body: 413 once past the limit, then at most twice the limit more is read.
      const endless = await openUpload(post(local.key, 'Transfer-Encoding: chunked\r\n'), 'endless');
      t.log(`endless upload: ${endless.sent} bytes sent, closed after ${Math.round(endless.ms)} ms`);
      t.regex(endless.answer, /^HTTP\/1\.1 413 /);
      t.true(endless.answer.endsWith(error('Request body too large.')));
      // What the client got into the connection: the limit, twice the limit lingering, plus the sockets' buffers.
      t.true(endless.sent < 3 * BODY_LIMIT + 8 * 1024 * 1024, `${endless.sent} bytes sent before the close`);
      t.true(endless.ms < LINGER_MS + 2000, `closed after ${Math.round(endless.ms)} ms`);
      // A refused upload whose client goes on sending a byte now and then and never closes: closed after lingerMs.
      const silent = await openUpload(post('c4s_wrong', `Content-Length: ${100 * BODY_LIMIT}\r\n`), 'trickle');
      t.regex(silent.answer, /^HTTP\/1\.1 401 [\s\S]*\r\nConnection: close\r\n/);
      t.true(silent.ms >= LINGER_MS - 100 && silent.ms < LINGER_MS + 2000, `closed after ${Math.round(silent.ms)} ms`);
    } finally {
      await local.close();
    }
  },
);
