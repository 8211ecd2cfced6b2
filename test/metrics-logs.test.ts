/**
 * Following one request through the logs: its id, taken from `X-Request-Id` or made, echoed in
 * the answer (errors included) and written on its one JSON log line; an id that could carry
 * anything unwanted into the log is replaced.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { isErrorLine, TestServer } from './support/server.js';

const API = '/api/external';

function lineOf(s: TestServer, requestId: string): Record<string, unknown> {
  const lines = s.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.requestId === requestId);
  if (lines.length !== 1) throw new Error(`${lines.length} log lines for ${requestId}`);
  return lines[0]!;
}

test('the request id sent is echoed and logged, on answers and refusals alike', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    const written = await s.post(`${API}/tag`, [{ name: 'traced', color: 'red' }], { headers: { 'x-request-id': 'req-1' } });
    t.is(written.headers.get('x-request-id'), 'req-1');
    t.like(lineOf(s, 'req-1'), { method: 'POST', route: `${API}/tag`, status: 200, org: 'acme', level: 'info' });

    const refused = await s.get(`${API}/tag`, { key: 'c4s_wrong', headers: { 'x-request-id': 'req-2' } });
    t.is(refused.status, 401);
    t.is(refused.headers.get('x-request-id'), 'req-2');
    t.like(lineOf(s, 'req-2'), { status: 401 });
    t.false('keyId' in lineOf(s, 'req-2'), 'no key id for a key that opened nothing');

    const page = await fetch(`${s.url}/sign-in`, { headers: { 'x-request-id': 'req-3' } });
    t.is(page.headers.get('x-request-id'), 'req-3', 'the viewer too');
  } finally {
    await s.close();
  }
});

test("an unexpected error's line in the log carries the request's id, as the request's own line does", async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    const first = await s.head();
    t.is((await s.post(`${API}/tag`, [{ name: 'later', color: 'red' }])).status, 200);
    // The first commit's tree, a loose object as org create wrote it, damaged on disk: git log cannot read it.
    const tree = (await s.git('rev-parse', `${first}^{tree}`)).trim();
    await writeFile(join(s.gitdir, 'objects', tree.slice(0, 2), tree.slice(2)), 'damaged');
    const answer = await s.get(`${API}/history`, { headers: { 'x-request-id': 'req-broken' } });
    t.is(answer.status, 500, answer.text);
    t.deepEqual(answer.body, { error: 'Internal error.' });
    t.is(answer.headers.get('x-request-id'), 'req-broken');
    const errors = s.logs.filter(isErrorLine).map((line) => JSON.parse(line) as { requestId?: string; msg: string });
    t.is(errors.length, 1, s.logs.filter(isErrorLine).join('\n'));
    t.is(errors[0]!.requestId, 'req-broken');
    t.regex(errors[0]!.msg, new RegExp(`^error GET ${API}/history: `));
  } finally {
    await s.close();
  }
});

test('a request id that is too long, has spaces or controls, or looks like a key is replaced by a new one', async (t) => {
  const s = await TestServer.start({ packEvery: 0 });
  try {
    for (const unwanted of ['x'.repeat(129), 'two words', 'line\tbreak', s.key, 'a"b']) {
      const answer = await s.get(`${API}/tag`, { headers: { 'x-request-id': unwanted } });
      const id = answer.headers.get('x-request-id')!;
      t.regex(id, /^[0-9a-f-]{36}$/, unwanted);
      t.is(lineOf(s, id).status, 200);
    }
    t.false(s.logs.join('\n').includes(s.key));
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add((await s.get(`${API}/tag`)).headers.get('x-request-id')!);
    t.is(ids.size, 3, 'each request gets its own');
  } finally {
    await s.close();
  }
});

test('a log line that cannot be written loses the line, never the answer or the process', async (t) => {
  let failing = false;
  const kept: string[] = [];
  const s = await TestServer.start({
    log: (line) => {
      if (failing) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      kept.push(line);
    },
  });
  try {
    failing = true;
    const created = await s.post('/api/external/tag', [{ name: 'logged nowhere', color: 'red' }]);
    t.is(created.status, 200);
    t.is((await s.get('/api/external/tag')).status, 200);
    failing = false;
    const after = await s.get('/api/external/tag');
    t.is(after.status, 200, 'the server still answers');
    t.true(after.text.includes('logged nowhere'), 'the write made while the log failed is kept');
    await new Promise((resolve) => setImmediate(resolve));
    t.true(
      kept.some((line) => line.includes(after.headers.get('x-request-id')!)),
      'lines are written again',
    );
  } finally {
    await s.close();
  }
});
