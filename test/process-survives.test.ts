/**
 * No request may take the server process down. The server runs as its own process (`c4store
 * serve`), so that a throw outside Koa's error handling ends that process and not the test: every
 * way a body can arrive too large, cut off or aborted, on every path that reads a body itself
 * (the viewer's forms, git over HTTP) and on the API's, and the process must still answer.
 */
import test from 'ava';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, lastLine, serveProcess, type ServerProcess } from './support/process.js';

let dataDir: string;
let server: ServerProcess;
let key: string;
let origin: string;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'c4store-survives-'));
  key = lastLine(await cli('org', 'create', 'demo', '--from', 'sample-repo', '--member', 'ada@example.com', '--data', dataDir));
  server = await serveProcess(dataDir);
  origin = server.url;
});

test.after.always(async () => {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

interface Sent {
  path: string;
  headers?: Record<string, string>;
  /** The body, sent in one piece unless `chunked`. */
  body: Buffer;
  chunked?: boolean;
}

/** Sends a request and resolves with its status, or with the connection's error when the server cut it off. */
function send({ path, headers = {}, body, chunked }: Sent): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpRequest(
      `${origin}${path}`,
      {
        method: 'POST',
        headers: { origin, ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) }), ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', (err) => resolve(err.message));
      },
    );
    req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
    if (chunked) {
      for (let at = 0; at < body.length; at += 16 * 1024) req.write(body.subarray(at, at + 16 * 1024));
      req.end();
    } else req.end(body);
  });
}

/** Declares `declared` bytes, sends `sent` of them, then closes the connection. */
function sendCutOff(path: string, declared: number, sent: number): Promise<void> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nOrigin: ${origin}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(sent, 'a'), () => setTimeout(() => socket.destroy(), 50));
    });
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
}

async function alive(t: import('ava').ExecutionContext, after: string): Promise<void> {
  t.is(server.child.exitCode, null, `the process exited after ${after}:\n${server.output.slice(-20).join('\n')}`);
  const health = await fetch(`${origin}/healthz`);
  t.is(health.status, 200, `after ${after}`);
}

const form = (fields: Record<string, string>) => Buffer.from(new URLSearchParams(fields).toString());
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

test.serial('sign-in: a body over its 4 KB limit answers 413 and the process goes on, however it arrives', async (t) => {
  for (const size of [4097, 6000, 100_000, 3_000_000]) {
    for (const chunked of [false, true]) {
      const status = await send({ path: '/sign-in', headers: FORM, body: form({ key: 'x'.repeat(size) }), chunked });
      // A client still writing may see the connection closed before it reads the 413 (lingering close bounds what it reads).
      t.true(status === 413 || typeof status === 'string', `sign-in of ${size} bytes${chunked ? ', chunked' : ''}: ${status}`);
      await alive(t, `a ${size}-byte sign-in${chunked ? ' (chunked)' : ''}`);
    }
  }
  for (const [declared, sent] of [
    [10_000, 5_000],
    [2_000, 1_000],
    [50_000_000, 200_000],
  ]) {
    await sendCutOff('/sign-in', declared, sent);
    await alive(t, `a sign-in declaring ${declared} bytes cut off after ${sent}`);
  }
});

test.serial("the panel's form: a description over 4 KB is saved; one over the body limit is refused; the process goes on", async (t) => {
  const signIn = await fetch(`${origin}/sign-in`, {
    method: 'POST',
    headers: { origin, ...FORM },
    body: form({ key, next: '/' }),
    redirect: 'manual',
  });
  t.is(signIn.status, 303);
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
  const components = (await (await fetch(`${origin}/api/external/component`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
    id: string;
    name: string;
  }[];
  const { id, name } = components[0];
  const desc = 'A long description. '.repeat(400).trim();
  const saved = await send({
    path: `/orgs/demo/components/${id}/edit`,
    headers: { ...FORM, cookie },
    body: form({ name, desc, next: '/' }),
  });
  t.is(saved, 303);
  const after = (await (await fetch(`${origin}/api/external/component/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
    desc: string;
  };
  t.is(after.desc, desc);
  const refused = await send({
    path: `/orgs/demo/components/${id}/edit`,
    headers: { ...FORM, cookie },
    body: form({ name, desc: 'x'.repeat(11 * 1024 * 1024) }),
    chunked: true,
  });
  t.true(refused === 413 || typeof refused === 'string', String(refused));
  await sendCutOff(`/orgs/demo/components/${id}/edit`, 100_000, 10_000);
  await alive(t, 'the panel form tries');
});

test.serial('the API and git over HTTP: bodies too large, cut off and aborted leave the process answering', async (t) => {
  const auth = { authorization: `Bearer ${key}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const cases: Sent[] = [
    { path: '/api/external/component', headers: json, body: Buffer.alloc(12 * 1024 * 1024, 'a') },
    { path: '/api/external/component', headers: json, body: Buffer.alloc(12 * 1024 * 1024, 'a'), chunked: true },
    { path: '/api/external/model', headers: { ...auth, 'content-type': 'application/yaml' }, body: Buffer.alloc(300_000, '-') },
    { path: '/api/external/component', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(100_000, 'a') },
    { path: '/git/demo.git/git-receive-pack', headers: auth, body: Buffer.alloc(1_000_000, 0) },
    { path: '/sign-out', headers: FORM, body: Buffer.alloc(100_000, 'a') },
  ];
  for (const sent of cases) {
    const status = await send(sent);
    t.true(typeof status === 'string' || (status >= 300 && status < 500), `${sent.path}: ${status}`);
    await alive(t, `POST ${sent.path}`);
  }
  for (const path of ['/api/external/component', '/git/demo.git/git-receive-pack', '/orgs/demo/diagrams/x/arrange']) {
    await sendCutOff(path, 1_000_000, 100_000);
    await alive(t, `a cut-off POST ${path}`);
  }
  t.false(
    server.output.some((line) => /TypeError|uncaught|Unhandled/i.test(line)),
    server.output.filter((line) => /Error/.test(line)).join('\n'),
  );
});
