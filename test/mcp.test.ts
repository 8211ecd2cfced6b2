/**
 * `/mcp` with the official SDK's own client (StreamableHTTPClientTransport) over real HTTP
 * against a real server of the sample organization (CONTRACT.md §10, issue 28).
 */
import test from 'ava';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect as netConnect, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { resourcePath } from '../src/model/paths.js';
import { isErrorLine, run, TestServer } from './support/server.js';

const SAMPLE = join(import.meta.dirname, '..', 'sample-repo');
let s: TestServer;

test.before(async () => {
  s = await TestServer.start({ from: SAMPLE, slug: 'demo' });
});
test.after.always(() => s?.close());

/** A client of the SDK's own on `server` (the shared one unless given) with `key`, named `name`; `query` after `/mcp`; `headers` on every request. */
async function connect(
  key: string,
  name = 'test-agent',
  server: TestServer = s,
  query = '',
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp${query}`), {
      requestInit: { headers: { ...headers, authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

type Text = { type: 'text'; text: string };

/** What a get_model or render_diagram answer tells of itself, which is no JSON: the JSON of its last text. */
function factsOf(answer: object): any {
  const texts = (answer as { content: Array<{ type: string; text?: string }> }).content.filter((c) => c.type === 'text');
  return JSON.parse(texts.at(-1)!.text!);
}

test('tools are listed for an editor key, only the read tools for a reader key, each with a schema and annotations', async (t) => {
  const editor = await connect(s.key);
  t.teardown(() => editor.close());
  const reader = await connect(s.readerKey);
  t.teardown(() => reader.close());
  const all = (await editor.listTools()).tools;
  const read = (await reader.listTools()).tools;
  for (const name of ['search', 'get_component', 'get_diagram', 'render_diagram', 'get_model', 'history', 'diff']) {
    const listed = all.find((tool) => tool.name === name);
    t.truthy(listed, name);
    t.is(listed!.inputSchema.type, 'object');
    t.true(listed!.annotations?.readOnlyHint, name);
    t.true((listed!.description ?? '').length > 30, name);
  }
  t.true(read.every((tool) => tool.annotations?.readOnlyHint === true));
  t.deepEqual(
    read.map((tool) => tool.name),
    all.filter((tool) => tool.annotations?.readOnlyHint).map((tool) => tool.name),
  );
});

test('every read tool answers on the sample organization, as text and as structured content (get_model and render_diagram: their facts as JSON after it)', async (t) => {
  const client = await connect(s.readerKey);
  t.teardown(() => client.close());
  const components = (await s.get('/api/external/components')).body as { id: string; name: string }[];
  const diagrams = (await s.get('/api/external/diagrams')).body as { id: string; name: string }[];
  const component = components[0]!;

  const found = await client.callTool({ name: 'search', arguments: { kind: 'components', name: component.name.slice(0, 4) } });
  t.falsy(found.isError);
  t.true((found.structuredContent as { items: { id: string }[] }).items.some((c) => c.id === component.id));

  const one = await client.callTool({ name: 'get_component', arguments: { id: component.id } });
  t.is((one.structuredContent as { name: string }).name, component.name);
  t.true(Array.isArray((one.structuredContent as { diagrams: unknown[] }).diagrams));

  const diagram = await client.callTool({ name: 'get_diagram', arguments: { id: diagrams[0]!.id } });
  t.is((diagram.structuredContent as { name: string }).name, diagrams[0]!.name);

  // A ref names a resource as in the single GETs of the API.
  const byRef = (await s.get('/api/external/components')).body.find((c: { ref?: string }) => c.ref !== undefined) as {
    id: string;
    ref: string;
  };
  const gotByRef = await client.callTool({ name: 'get_component', arguments: { id: byRef.ref } });
  t.is((gotByRef.structuredContent as { id: string }).id, byRef.id);
  const diagramRef = (await s.get(`/api/external/diagram/${diagrams[0]!.id}`)).body.ref as string;
  const drawnByRef = await client.callTool({ name: 'render_diagram', arguments: { id: diagramRef } });
  t.regex(factsOf(drawnByRef).url, new RegExp(`/orgs/demo/diagrams/${diagrams[0]!.id}$`));

  const drawn = await client.callTool({ name: 'render_diagram', arguments: { id: diagrams[0]!.id } });
  t.regex((drawn.content as Text[])[0]!.text, /^<svg[\s>]/);
  t.regex(factsOf(drawn).url, new RegExp(`/orgs/demo/diagrams/${diagrams[0]!.id}$`));

  const model = await client.callTool({ name: 'get_model', arguments: {} });
  t.regex((model.content as Text[])[0]!.text, /components:/);
  t.is(factsOf(model).components, components.length);

  const history = await client.callTool({ name: 'history', arguments: { limit: 5 } });
  t.true((history.structuredContent as { total: number }).total >= 1);
  // One found is counted as one: "1 commit", "1 component".
  t.regex(((await client.callTool({ name: 'history', arguments: { limit: 1 } })).content as Text[])[0]!.text, /^1 commit:\n/);
  const byId = await client.callTool({ name: 'search', arguments: { kind: 'components', name: component.name } });
  const counted = (byId.structuredContent as { total: number }).total;
  t.regex((byId.content as Text[])[0]!.text, counted === 1 ? /^1 component:\n/ : /^\d+ components:\n/);

  const diff = await client.callTool({ name: 'diff', arguments: { from: 'main', to: 'main' } });
  t.deepEqual((diff.structuredContent as { added: unknown[] }).added, []);
});

test('bad arguments and unknown ids are tool errors with the REST texts; the server goes on answering', async (t) => {
  const client = await connect(s.key);
  t.teardown(() => client.close());
  const bad = await client.callTool({ name: 'get_component', arguments: { id: 42 } });
  t.true(bad.isError);
  t.is((bad.content as Text[])[0]!.text, 'Invalid JSON: id: Expected string, received number');
  const missing = await client.callTool({ name: 'get_diagram', arguments: { id: 'nope' } });
  t.true(missing.isError);
  t.is((missing.content as Text[])[0]!.text, "Diagram with id 'nope' does not exist.");
  // A tool that does not exist is a protocol error, as the MCP specification has it (a tool's refusal is isError).
  await t.throwsAsync(client.callTool({ name: 'drop_tables', arguments: {} }), {
    message: "MCP error -32602: Unknown tool 'drop_tables'.",
  });
  // Each refusal in the API's own words (a path-like id was a protocol error -32603 with an internal text).
  for (const [name, args, text] of [
    ['history', { resource: '../x' }, "Invalid resource id '../x'."],
    [
      'create_draft',
      { name: 'BAD' },
      "Invalid draft name 'BAD': use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit (at most 63).",
    ],
    [
      'draft_diff',
      { draft: '../x' },
      "Invalid draft name '../x': use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit (at most 63).",
    ],
    ['render_diagram', { id: 'x', format: 'gif' }, "Invalid JSON: format: Invalid enum value. Expected 'svg' | 'png', received 'gif'"],
    [
      'search',
      { kind: 'people' },
      "Invalid JSON: kind: Invalid enum value. Expected 'components' | 'diagrams' | 'dependencies', received 'people'",
    ],
    ['history', { resource: '' }, 'Invalid JSON: resource: String must contain at least 1 character(s)'],
  ] as const) {
    const refused = await client.callTool({ name, arguments: args });
    t.true(refused.isError, name);
    t.is((refused.content as Text[])[0]!.text, text, name);
  }
  const whole = factsOf(await client.callTool({ name: 'get_model', arguments: {} })) as { totalChars: number };
  t.true((await client.callTool({ name: 'get_model', arguments: { offset: whole.totalChars } })).isError, 'at the end is past it');
  const past = await client.callTool({ name: 'get_model', arguments: { offset: 99_999_999 } });
  t.true(past.isError);
  t.regex(
    (past.content as Text[])[0]!.text,
    /^offset 99999999 is past the end of the model's YAML \(\d+ characters\): start again at 0\.$/,
  );
  t.is((await s.get('/api/external/drafts/bad')).status, 404, 'no draft was opened');
  t.is((await client.listTools()).tools.length > 0, true, 'the session still answers');
  t.is((await s.get('/healthz')).status, 200);
});

test('without a key 401, with a wrong key 401, from another site 403, and a session is its key’s alone', async (t) => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>, body: unknown = initialize) =>
    fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
  const none = await post({});
  t.is(none.status, 401);
  t.deepEqual(await none.json(), { error: 'Missing API key.' });
  t.is((await post({ authorization: 'Bearer nope' })).status, 401);
  const foreign = await post({ authorization: `Bearer ${s.key}`, origin: 'https://evil.example' });
  t.is(foreign.status, 403);
  const made = await post({ authorization: `Bearer ${s.key}` });
  t.is(made.status, 200);
  const session = made.headers.get('mcp-session-id')!;
  t.truthy(session);
  const stolen = await post(
    { authorization: `Bearer ${s.readerKey}`, 'mcp-session-id': session },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  );
  t.is(stolen.status, 404);
  // A body that is no JSON the API takes: the transport's -32700 Parse error, in the API's words.
  for (const [text, words] of [
    ['{"jsonrpc":"2.0",', /^Parse error: Invalid JSON: /],
    ['{"jsonrpc":"2.0","id":3,"id":4,"method":"tools/list"}', /^Parse error: Invalid JSON: key 'id' is given more than once/],
  ] as const) {
    const reply = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${s.key}`,
        'mcp-session-id': session,
      },
      body: text,
    });
    t.is(reply.status, 400);
    const answer = (await reply.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
    t.like(answer, { jsonrpc: '2.0', id: null, error: { code: -32700 } });
    t.regex(answer.error.message, words);
  }
  // Params the method cannot take: the protocol's -32602, in words, not an internal error.
  for (const params of [{ name: 'search', arguments: [1, 2] }, { arguments: {} }, undefined]) {
    const reply = await post(
      { authorization: `Bearer ${s.key}`, 'mcp-session-id': session },
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params },
    );
    t.is(reply.status, 200);
    const answer = (await reply.json()) as { id: number; error: { code: number; message: string } };
    t.is(answer.id, 7);
    t.is(answer.error.code, -32602, JSON.stringify(params));
    t.regex(answer.error.message, /^Invalid params: /);
  }
});

test('a JSON-RPC batch is served only to a session whose protocol version has batches (2025-03-26), refused from 2025-06-18 on', async (t) => {
  const post = (body: unknown, session?: string, version?: string) => postTo(s.url, body, s.readerKey, session, version);
  const initialize = (protocolVersion: string) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const batch = [
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { jsonrpc: '2.0', id: 3, method: 'ping' },
  ];
  // What the server settles on is the SDK's answer to initialize: the refusal follows it, whatever was asked.
  for (const asked of ['2025-03-26', '2025-06-18', '2025-11-25', '1999-01-01']) {
    const made = await post(initialize(asked));
    t.is(made.status, 200, asked);
    const { protocolVersion } = ((await made.json()) as { result: { protocolVersion: string } }).result;
    const session = made.headers.get('mcp-session-id')!;
    const reply = await post(batch, session, protocolVersion);
    if (protocolVersion === '2025-03-26') {
      t.is(reply.status, 200, asked);
      const answers = (await reply.json()) as Array<{ id: number; result: unknown }>;
      t.deepEqual(
        answers.map((a) => a.id),
        [2, 3],
      );
      t.true(answers.every((a) => a.result !== undefined));
      continue;
    }
    t.true(protocolVersion >= '2025-06-18', asked);
    t.is(reply.status, 400, asked);
    t.regex(reply.headers.get('content-type') ?? '', /^application\/json/);
    t.deepEqual(await reply.json(), {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: `Invalid Request: MCP ${protocolVersion} has no batches (a JSON array of messages in one POST): send each message in a POST of its own.`,
      },
    });
    // A batch of notifications only is a batch all the same.
    t.is((await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }], session, protocolVersion)).status, 400, asked);
    // The session goes on: each message in a POST of its own is answered.
    const one = await post(batch[0], session, protocolVersion);
    t.is(one.status, 200, asked);
    t.is(((await one.json()) as { id: number }).id, 2);
  }
  // An initialize sent as a batch under a version without batches opens no session.
  const wrapped = await post([initialize('2025-06-18')]);
  t.is(wrapped.status, 400);
  t.is(wrapped.headers.get('mcp-session-id'), null);
  t.is(((await wrapped.json()) as { error: { code: number } }).error.code, -32600);
  const older = await post([initialize('2025-03-26')]);
  t.is(older.status, 200);
  t.truthy(older.headers.get('mcp-session-id'));
  t.is(((await older.json()) as { result: { protocolVersion: string } }).result.protocolVersion, '2025-03-26');
});

test('a batch member whose params its method cannot take gets exactly what it would get alone: -32602 in words, the other members answered', async (t) => {
  const session = await rawSession(s.readerKey, '2025-03-26');
  const post = (body: unknown) => postTo(s.url, body, s.readerKey, session, '2025-03-26');
  const members = [
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search', arguments: 5 } },
    { jsonrpc: '2.0', id: 4, method: 'tools/call', params: {} },
    { jsonrpc: '2.0', id: 5, method: 'resources/read', params: {} },
    { jsonrpc: '2.0', id: 6, method: 'tools/list', params: { cursor: 5 } },
    { jsonrpc: '2.0', id: 7, method: 'resources/list', params: { cursor: null } },
    { jsonrpc: '2.0', id: 8, method: 'initialize', params: {} },
  ];
  const alone = [];
  for (const member of members) {
    const reply = await post(member);
    const answer = (await reply.json()) as { error: { code: number; message: string } };
    t.is(answer.error.code, -32602, JSON.stringify(member));
    alone.push(answer);
  }
  const ping = { jsonrpc: '2.0', id: 9, method: 'ping' };
  const reply = await post([...members, ping]);
  t.is(reply.status, 200);
  t.deepEqual(await reply.json(), [...alone, { jsonrpc: '2.0', id: 9, result: {} }]);
});

test("an unexpected failure inside a tool (a damaged object in the repository) is logged with the request id, and the agent is told so without the server's insides", async (t) => {
  const own = await TestServer.start();
  t.teardown(() => own.close());
  const first = await own.head();
  t.is((await own.post('/api/external/tag', [{ name: 'later', color: 'red' }])).status, 200);
  // The first commit's tree, a loose object as org create wrote it, damaged on disk: git log cannot read it.
  const tree = (await own.git('rev-parse', `${first}^{tree}`)).trim();
  await writeFile(join(own.gitdir, 'objects', tree.slice(0, 2), tree.slice(2)), 'damaged');
  const requestId = 'mcp-damaged-history';
  const agent = await connect(own.key, 'test-agent', own, '', { 'x-request-id': requestId });
  t.teardown(() => agent.close());
  const answer = (await agent.callTool({ name: 'history', arguments: {} })) as { isError?: boolean; content: Text[] };
  t.true(answer.isError);
  t.is(answer.content.length, 1);
  t.is(
    answer.content[0]!.text,
    `Internal error: history could not be carried out. The server's log has the details, under request id '${requestId}'.`,
  );
  const errors = own.logs.filter(isErrorLine).map((line) => JSON.parse(line) as { requestId?: string; msg: string });
  t.is(errors.length, 1, own.logs.filter(isErrorLine).join('\n'));
  t.is(errors[0]!.requestId, requestId);
  t.regex(errors[0]!.msg, /^error POST \/mcp tools\/call 'history': /);
  t.regex(errors[0]!.msg, new RegExp(`${tree}.*is corrupt`), 'the cause is in the log');
  // The session goes on.
  const model = (await agent.callTool({ name: 'get_model', arguments: {} })) as { isError?: boolean; content: Text[] };
  t.not(model.isError, true, model.content[0]?.text);
});

test('a request augmented with a task (MCP 2025-11-25), which this server declares no capability for, is processed as without it', async (t) => {
  const session = await rawSession(s.readerKey, '2025-11-25');
  const post = (body: unknown) => postTo(s.url, body, s.readerKey, session, '2025-11-25');
  const call = { name: 'search', arguments: { kind: 'diagrams', level: 'C1' } };
  const plain = (await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: call })).json()) as { result: unknown };
  t.truthy(plain.result);
  const tasked = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { ...call, task: { ttl: 60000 } } });
  t.is(tasked.status, 200);
  t.deepEqual(await tasked.json(), plain);
  const read = await post({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'c4store:///model.yaml', task: {} } });
  t.truthy(((await read.json()) as { result?: unknown }).result);
});

/**
 * A server of its own whose calls of `tool` wait, once called, until the test releases them
 * (TestPauses.toolCalled): `called` resolves when one is waiting.
 */
async function holdingTool(tool: string) {
  let called!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (called = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = await TestServer.start({
    testPauses: {
      toolCalled: async (name) => {
        if (name !== tool) return;
        called();
        await released;
      },
    },
  });
  return { server, called: reached, release };
}

test('a request the client cancels while it runs is answered -32800 in its POST, which would otherwise never end, alone or in a batch', async (t) => {
  const { server, called, release } = await holdingTool('get_model');
  t.teardown(() => server.close());
  const session = await rawSession(server.key, '2025-03-26', server.url);
  const post = (body: unknown) => postTo(server.url, body, server.key, session, '2025-03-26');
  const cancelled = (id: number) => ({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32800,
      message: `Request cancelled: the client cancelled request ${id} (notifications/cancelled); what it had begun may still have been done.`,
    },
  });
  const alone = post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'get_model', arguments: {} } });
  const batch = post([
    { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'get_model', arguments: {} } },
    { jsonrpc: '2.0', id: 7, method: 'ping' },
  ]);
  await called;
  for (const requestId of [5, 6]) {
    const notified = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'no longer needed' } });
    t.is(notified.status, 202);
  }
  release();
  t.deepEqual(await (await alone).json(), cancelled(5));
  t.deepEqual(await (await batch).json(), [cancelled(6), { jsonrpc: '2.0', id: 7, result: {} }]);
  // A cancellation of a request already answered, or of none, changes nothing; the session goes on.
  t.is((await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } })).status, 202);
  const model = (await (
    await post({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'get_model', arguments: {} } })
  ).json()) as {
    result?: { content: Text[] };
  };
  t.regex(model.result?.content[0]?.text ?? '', /^types:/);
});

test('a request whose id is that of a request still in progress in its session is refused -32600 with no id; the one in progress gets its own answer', async (t) => {
  const { server, called, release } = await holdingTool('get_model');
  t.teardown(() => server.close());
  const session = await rawSession(server.key, '2025-03-26', server.url);
  const post = (body: unknown) => postTo(server.url, body, server.key, session, '2025-03-26');
  const first = post({ jsonrpc: '2.0', id: 'same', method: 'tools/call', params: { name: 'get_model', arguments: {} } });
  await called;
  const refusal = (id: string | number) => ({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: `Invalid Request: id ${JSON.stringify(id)} is that of a request still in progress in this session: give each request an id of its own.`,
    },
  });
  const again = await post({ jsonrpc: '2.0', id: 'same', method: 'ping' });
  t.is(again.status, 400);
  t.deepEqual(await again.json(), refusal('same'));
  // In a batch, beside another request or twice in the batch itself: none of its messages run.
  const batched = await post([
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', id: 'same', method: 'ping' },
  ]);
  t.is(batched.status, 400);
  t.deepEqual(await batched.json(), refusal('same'));
  const twice = await post([
    { jsonrpc: '2.0', id: 2, method: 'ping' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ]);
  t.is(twice.status, 400);
  t.deepEqual(await twice.json(), refusal(2));
  // Another id is served meanwhile.
  t.like(await (await post({ jsonrpc: '2.0', id: 3, method: 'ping' })).json(), { id: 3, result: {} });
  release();
  const answer = (await (await first).json()) as { id: unknown; result?: { content: Text[] } };
  t.is(answer.id, 'same');
  t.regex(answer.result?.content[0]?.text ?? '', /^types:/);
  // Answered, its id may be used again.
  t.like(await (await post({ jsonrpc: '2.0', id: 'same', method: 'ping' })).json(), { id: 'same', result: {} });
});

test('a session ended (DELETE /mcp) while one of its requests runs ends once that request is answered: its POST gets its answer, later requests 404', async (t) => {
  const { server, called, release } = await holdingTool('get_model');
  t.teardown(() => server.close());
  const session = await rawSession(server.key, '2025-06-18', server.url);
  const running = postTo(
    server.url,
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_model', arguments: {} } },
    server.key,
    session,
    '2025-06-18',
  );
  await called;
  const ended = await fetch(`${server.url}/mcp`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${server.key}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
  });
  t.is(ended.status, 200);
  const after = await postTo(server.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, server.key, session, '2025-06-18');
  t.is(after.status, 404, 'the session takes no new request');
  release();
  const answer = (await (await running).json()) as { id: number; result?: { content: Text[] } };
  t.is(answer.id, 2);
  t.regex(answer.result?.content[0]?.text ?? '', /^types:/);
});

test("a batch counts against its key's rate as the messages it holds, not as one request: 100 calls in one POST do not pass for one", async (t) => {
  const own = await TestServer.start({ writesPerMinute: 5 });
  t.teardown(() => own.close());
  const session = await rawSession(own.key, '2025-03-26', own.url);
  const post = (body: unknown) => postTo(own.url, body, own.key, session, '2025-03-26');
  const pings = (ids: number[]) => ids.map((id) => ({ jsonrpc: '2.0', id, method: 'ping' }));
  // The initialize took one of the five; two more in a batch of two.
  const two = await post(pings([2, 3]));
  t.is(two.status, 200);
  t.is(((await two.json()) as unknown[]).length, 2);
  // Three left: a batch of ten is refused whole, none of it run.
  const ten = await post(pings([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]));
  t.is(ten.status, 429);
  t.regex(ten.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
  t.regex(((await ten.json()) as { error: string }).error, /^Rate limit exceeded: this key may make 5 writes a minute; retry in \d+ s\.$/);
});

test("a body of a type other than JSON (YAML, which the API takes; a +json type) is the API's 415 before the body is read, as the docs say", async (t) => {
  const session = await rawSession(s.readerKey);
  for (const type of ['application/yaml', 'text/yaml', 'application/problem+json', 'text/plain']) {
    const reply = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': type,
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${s.readerKey}`,
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
      },
      body: type.includes('yaml') ? 'jsonrpc: "2.0"\nid: 2\nmethod: ping\n' : '{"jsonrpc":"2.0","id":2,"method":"ping"}',
    });
    t.is(reply.status, 415, type);
    t.deepEqual(await reply.json(), { error: `Unsupported Content-Type: ${type}.` }, type);
  }
  // JSON with parameters is JSON.
  const json = await postTo(s.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, s.readerKey, session);
  t.is(json.status, 200);
});

// Serial: alone, before the others. Its 1.5-second send timeout also bounds its own pings' answers,
// and beside the heavy tests (thousands of components, batches of model pages) a ping's fetch was
// cut off ('terminated'), with main's code as with this.
test.serial(
  "a client that stops reading its MCP answers is bounded as the API's: its key's next POST is 503 while they wait, and the send timeout cuts it off",
  async (t) => {
    const MB = 1024 * 1024;
    // A batch's own bounds (50 requests, 2,000,000 characters) lifted: what is tested here is the send bounds, with an answer larger than loopback's socket buffers take.
    const own = await TestServer.start({
      sendBytesPerKey: MB,
      sendTimeout: 1500,
      bodyLimit: 16 * MB,
      mcpBatch: { requests: 100, answerChars: 16 * MB },
    });
    t.teardown(() => own.close());
    // A model of ~6.6 MB, and a batch that asks for all of it a page at a time: an answer larger than loopback's socket buffers take.
    const components = Array.from({ length: 6 }, (_, i) => ({ name: `big ${i}`, typeSlug: 'container', desc: 'x'.repeat(1100 * 1024) }));
    t.is((await own.post('/api/external/component', components)).status, 200);
    const session = await rawSession(own.key, '2025-03-26', own.url);
    const pages = Array.from({ length: 100 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 10,
      method: 'tools/call',
      params: { name: 'get_model', arguments: { offset: i * 59_000 } },
    }));
    const body = JSON.stringify(pages);
    const { hostname, port } = new URL(own.url);
    const paused = await new Promise<Socket>((resolve) => {
      const socket = netConnect(Number(port), hostname);
      socket.on('error', () => {});
      socket.on('connect', () => {
        socket.write(
          `POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${own.key}\r\nContent-Type: application/json\r\n` +
            `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${session}\r\nMcp-Protocol-Version: 2025-03-26\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        socket.pause();
        resolve(socket);
      });
    });
    let gone = false;
    const closed = new Promise<number>((resolve) => {
      let received = 0;
      paused.on('data', (chunk: Buffer) => (received += chunk.length));
      paused.on('close', () => {
        gone = true;
        resolve(received);
      });
    });
    // Once its answer waits unread, the key's next POST is refused (asked until then: no sleep decides it).
    const ping = () => postTo(own.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, own.key, session, '2025-03-26');
    let refused: Response | undefined;
    while (refused === undefined && !gone) {
      const reply = await ping();
      if (reply.status === 503) refused = reply;
      else await reply.text();
    }
    t.is(refused?.status, 503);
    t.is(refused?.headers.get('retry-after'), '1');
    t.deepEqual(await refused?.json(), {
      error: "Too many response bytes are waiting for this key's clients to read them; retry shortly.",
    });
    // The reader that never reads is cut off, short of its answer, and the key is served again.
    paused.resume();
    t.true((await closed) < 6 * MB);
    t.is((await ping()).status, 200);
  },
);

test("the client's name in a commit's Agent trailer is held to 100 characters, and an empty one is said so: a 50,000-character name is not copied into every commit", async (t) => {
  const own = await TestServer.start();
  t.teardown(() => own.close());
  for (const [name, trailer] of [
    ['a'.repeat(50_000), `Agent: ${'a'.repeat(99)}…`],
    ['   ', 'Agent: (no name given)'],
  ] as const) {
    const agent = await connect(own.key, name, own);
    t.teardown(() => agent.close());
    const draft = `named-${name.length}`;
    t.falsy((await agent.callTool({ name: 'create_draft', arguments: { name: draft } })).isError);
    const written = await agent.callTool({
      name: 'write_model',
      arguments: { draft, components: [{ ref: 'x', name: 'X', typeSlug: 'container' }] },
    });
    t.falsy(written.isError, JSON.stringify(written.content).slice(0, 300));
    const message = await own.git('log', '-1', '--format=%B', `refs/heads/drafts/${draft}`);
    t.is(message.trimEnd().split('\n').at(-1), trailer);
  }
});

test('an argument a tool does not take (a misspelt filter, draft or list) is refused naming what it takes, rather than ignored: nothing read or written on a guess', async (t) => {
  const agent = await connect(s.key, 'typo-agent');
  t.teardown(() => agent.close());
  t.falsy((await agent.callTool({ name: 'create_draft', arguments: { name: 'typos' } })).isError);
  const head = (await s.git('rev-parse', 'refs/heads/drafts/typos')).trim();
  for (const [name, args, text] of [
    [
      'search',
      { kind: 'components', name: 'Shop', tagid: 'x' },
      "search takes no argument 'tagid': it takes kind, name, typeId, tagId, attributeId, attributeValue, state, componentId, level, draft.",
    ],
    ['get_model', { drafts: 'typos' }, "get_model takes no argument 'drafts': it takes draft, offset."],
    [
      'write_model',
      { draft: 'typos', component: [{ ref: 'x', name: 'X', typeSlug: 'container' }], diagram: [] },
      "write_model takes no arguments 'component', 'diagram': it takes draft, head, components, diagrams.",
    ],
  ] as const) {
    const answer = (await agent.callTool({ name, arguments: args })) as { isError?: boolean; content: Text[] };
    t.true(answer.isError, name);
    t.is(answer.content[0]!.text, text);
  }
  t.is((await s.git('rev-parse', 'refs/heads/drafts/typos')).trim(), head, 'nothing was written');
});

test('an agent drafts: create_draft, write_model (idempotent by ref), draft_diff; main unchanged, the draft seen with ?draft=, the Agent trailer', async (t) => {
  const client = await connect(s.key, 'review-bot');
  t.teardown(() => client.close());
  const main = await s.head();
  const opened = await client.callTool({ name: 'create_draft', arguments: { name: 'agent-fraud', title: 'Fraud checks' } });
  t.falsy(opened.isError, JSON.stringify(opened.content));
  t.regex((opened.structuredContent as { review: string }).review, /\/orgs\/demo\/drafts\/agent-fraud$/);
  const body = { draft: 'agent-fraud', components: [{ ref: 'fraud-check', name: 'Fraud Check', typeSlug: 'person' }] };
  const written = await client.callTool({ name: 'write_model', arguments: body });
  t.falsy(written.isError, JSON.stringify(written.content));
  const commit = (written.structuredContent as { commit: string }).commit;
  t.is(await s.head(), main, 'main is untouched');
  const inDraft = (await s.get('/api/external/components?draft=agent-fraud')).body as { name: string }[];
  t.true(inDraft.some((c) => c.name === 'Fraud Check'));
  t.false(((await s.get('/api/external/components')).body as { name: string }[]).some((c) => c.name === 'Fraud Check'));
  const message = await s.git('log', '-1', '--format=%an%n%B', 'refs/heads/drafts/agent-fraud');
  t.regex(message, /^test pipeline\n/);
  t.regex(message, /\nAgent: review-bot\n/);
  // The same body again: the ref finds the component, nothing changes, no commit.
  const again = await client.callTool({ name: 'write_model', arguments: body });
  t.is((again.structuredContent as { commit: string }).commit, commit);
  const diff = await client.callTool({ name: 'draft_diff', arguments: { draft: 'agent-fraud' } });
  t.regex((diff.content as Text[])[0]!.text, /added component Fraud Check/);
  // The read tools read the draft when named: the agent sees what it wrote before anyone merges it.
  const readBack = await client.callTool({ name: 'get_component', arguments: { id: 'fraud-check', draft: 'agent-fraud' } });
  t.is((readBack.structuredContent as { name: string }).name, 'Fraud Check');
  t.true((await client.callTool({ name: 'get_component', arguments: { id: 'fraud-check' } })).isError, 'main has no such component');
  const searched = await client.callTool({ name: 'search', arguments: { kind: 'components', name: 'fraud', draft: 'agent-fraud' } });
  t.is((searched.structuredContent as { total: number }).total, 1);
  const yaml = await client.callTool({ name: 'get_model', arguments: { draft: 'agent-fraud' } });
  t.regex((yaml.content as Text[])[0]!.text, /name: Fraud Check/);
  const unknown = await client.callTool({ name: 'get_model', arguments: { draft: 'nope' } });
  t.is((unknown.content as Text[])[0]!.text, "Draft 'nope' does not exist.");
  // main is not a draft: the agent cannot write there.
  const intoMain = await client.callTool({ name: 'write_model', arguments: { draft: 'main', components: [{ name: 'X' }] } });
  t.true(intoMain.isError);
  t.is((intoMain.content as Text[])[0]!.text, "Draft 'main' does not exist.");
});

test('draft_diff on a merged draft tells what its merge brought into main, after main moved on', async (t) => {
  // A server of its own: merging moves main, which the other tests here hold still.
  const own = await TestServer.start();
  t.teardown(() => own.close());
  const client = await connect(own.key, 'review-bot', own);
  t.teardown(() => client.close());
  t.falsy((await client.callTool({ name: 'create_draft', arguments: { name: 'fraud' } })).isError);
  const written = await client.callTool({
    name: 'write_model',
    arguments: { draft: 'fraud', components: [{ ref: 'fraud', name: 'Fraud Check' }] },
  });
  t.falsy(written.isError, JSON.stringify(written.content));
  t.is((await own.post('/api/external/drafts/fraud/merge', {})).status, 200);
  const mergeCommit = await own.head();
  t.is((await own.post('/api/external/components', { id: 'late', name: 'Late' })).status, 201);

  const diff = await client.callTool({ name: 'draft_diff', arguments: { draft: 'fraud' } });
  t.falsy(diff.isError, JSON.stringify(diff.content));
  t.regex((diff.content as Text[])[0]!.text, /^Merged; what its merge brought into main:\n- added component Fraud Check\n/);
  t.is((diff.structuredContent as { state: string }).state, 'merged');
  const answer = diff.structuredContent as { diff: { to: string; added: Array<{ name: string }> } };
  t.is(answer.diff.to, mergeCommit);
  t.deepEqual(
    answer.diff.added.map((r) => r.name),
    ['Fraud Check'],
  );
});

test('a draft whose one change is an apiContext is said to change it: by write_model, by draft_diff open and merged', async (t) => {
  // A server of its own: merging moves main.
  const own = await TestServer.start();
  t.teardown(() => own.close());
  t.is((await own.post('/api/external/components', { id: 'ledger', name: 'Ledger' })).status, 201);
  const client = await connect(own.key, 'review-bot', own);
  t.teardown(() => client.close());
  const text = (reply: Awaited<ReturnType<Client['callTool']>>) => (reply.content as Text[])[0]!.text;
  t.falsy((await client.callTool({ name: 'create_draft', arguments: { name: 'stamp' } })).isError);
  const main = await own.head();

  const written = await client.callTool({
    name: 'write_model',
    arguments: { draft: 'stamp', components: [{ id: 'ledger', apiContext: 'pipeline run 43' }] },
  });
  t.falsy(written.isError, text(written));
  t.regex(text(written), /^Wrote into draft 'stamp' \(commit [0-9a-f]{12}\):\n- on Ledger: changed apiContext\n/);
  t.deepEqual((written.structuredContent as { changes: string[] }).changes, ['on Ledger: changed apiContext']);

  const open = await client.callTool({ name: 'draft_diff', arguments: { draft: 'stamp' } });
  t.regex(text(open), /^- on Ledger: changed apiContext\n/);
  t.deepEqual((open.structuredContent as { summary: string[] }).summary, ['on Ledger: changed apiContext']);

  t.is((await own.post('/api/external/drafts/stamp/merge', {})).status, 200);
  t.not(await own.head(), main, 'the merge made a commit');
  t.is((await own.get('/api/external/components/ledger')).body.apiContext, 'pipeline run 43');
  const merged = await client.callTool({ name: 'draft_diff', arguments: { draft: 'stamp' } });
  t.is((merged.structuredContent as { state: string }).state, 'merged');
  t.regex(text(merged), /^Merged; what its merge brought into main:\n- on Ledger: changed apiContext\n/);
  t.notRegex(text(merged), /brought nothing/);
});

test("a draft whose one change is the organization's (organization.yaml, pushed over git) is said to change it, open and merged", async (t) => {
  // A server of its own: merging moves main. The push is checked by the hook, which runs dist/cli.js.
  const own = await TestServer.start();
  t.teardown(() => own.close());
  const remote = new URL(`${own.url}/git/${own.slug}.git`);
  remote.username = 'ci';
  remote.password = own.key;
  const parent = await mkdtemp(join(tmpdir(), 'c4store-mcp-clone-'));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  const dir = join(parent, 'model');
  const env = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
  const git = (...args: string[]) => run('git', ['-C', dir, '-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', ...args], { env });
  await run('git', ['clone', '-q', remote.href, dir], { env });
  await git('checkout', '-q', '-b', 'drafts/people', 'origin/main');
  const file = join(dir, 'organization.yaml');
  const yaml = await readFile(file, 'utf8');
  await writeFile(file, yaml.replace('name: Acme', 'name: Acme Corp').replace('  - linus@example.com', '  - grace@example.com'));
  await git('commit', '-q', '-am', 'Rename the organization; Grace for Linus');
  await git('push', '-q', 'origin', 'drafts/people');

  const client = await connect(own.key, 'review-bot', own);
  t.teardown(() => client.close());
  const said = ["renamed the organization 'Acme' to 'Acme Corp'", 'added member grace@example.com', 'removed member linus@example.com'];
  const open = await client.callTool({ name: 'draft_diff', arguments: { draft: 'people' } });
  t.falsy(open.isError, JSON.stringify(open.content));
  t.is((open.content as Text[])[0]!.text.split('\nReview: ')[0], said.map((line) => `- ${line}`).join('\n'));
  t.deepEqual((open.structuredContent as { summary: string[] }).summary, said);

  t.is((await own.post('/api/external/drafts/people/merge', {})).status, 200);
  t.regex(await own.git('show', 'main:organization.yaml'), /name: Acme Corp/);
  const merged = await client.callTool({ name: 'draft_diff', arguments: { draft: 'people' } });
  t.is(
    (merged.content as Text[])[0]!.text.split('\nReview: ')[0],
    `Merged; what its merge brought into main:\n${said.map((line) => `- ${line}`).join('\n')}`,
  );
});

test('render_diagram of a diagram the draft deleted: with compare "main", main\'s drawing with every element marked removed; without, an error that says so', async (t) => {
  // A server of its own: merging moves main.
  const own = await TestServer.start({ from: SAMPLE, slug: 'demo' });
  t.teardown(() => own.close());
  const shown = (await own.get('/api/external/diagram/shop-containers')).body as {
    id: string;
    name: string;
    componentInstances: unknown[];
    relations: unknown[];
    textareas?: unknown[];
  };
  t.true(shown.componentInstances.length > 0 && shown.relations.length > 0);
  t.is((await own.post('/api/external/drafts', { name: 'drop' })).status, 201);
  const dropped = await own.request('DELETE', `/api/external/diagrams/${shown.id}?draft=drop&cascade=true`);
  t.is(dropped.status, 200, dropped.text.slice(0, 300));
  t.is((await own.get(`/api/external/diagram/${shown.id}?draft=drop`)).status, 404, 'the draft has it no more');
  const client = await connect(own.readerKey, 'review-bot', own);
  t.teardown(() => client.close());
  const call = async (args: Record<string, unknown>) => {
    const reply = await client.callTool({ name: 'render_diagram', arguments: args });
    const content = reply.content as Array<{ type: string; text?: string; data?: string }>;
    return { isError: reply.isError === true, text: content[0]!.text!, content, structured: reply.isError ? undefined : factsOf(reply) };
  };
  /** Each drawn element's mark, by its id (src/drawing/svg.ts writes its groups as <g class="…" …data-id="…">). */
  const marksOf = (svg: string) =>
    new Map(
      [...svg.matchAll(/<g class="([^"]*)"[^>]*? data-id="([^"]+)"/g)].map(([, classes, id]) => [
        id!,
        classes!.split(' ').find((c) => c.startsWith('c4-')),
      ]),
    );
  const ids = [...shown.componentInstances, ...shown.relations, ...(shown.textareas ?? [])].map((e) => (e as { id: string }).id).sort();

  const told = `Draft 'drop' deleted diagram '${shown.name}' (id '${shown.id}'): render_diagram with compare "main" draws it as main had it, every element marked removed.`;
  for (const id of [shown.id, 'shop-containers']) {
    const plain = await call({ id, draft: 'drop' });
    t.true(plain.isError, id);
    t.is(plain.text, told);
  }
  const drawn = await call({ id: 'shop-containers', draft: 'drop', compare: 'main' });
  t.false(drawn.isError, drawn.text);
  t.regex(drawn.text, /^<svg[\s>]/);
  const marks = marksOf(drawn.text);
  t.deepEqual([...marks.keys()].sort(), ids, "every element of main's diagram is drawn");
  t.deepEqual(new Set(marks.values()), new Set(['c4-removed']));
  t.like(drawn.structured, { id: shown.id, name: shown.name, draft: 'drop', deleted: true, mediaType: 'image/svg+xml' });
  t.regex(drawn.structured.url, /\/orgs\/demo\/drafts\/drop$/, "the draft's review page: the diagram has no page in the draft");
  // Its visual diff's address draws the same (the API's diagram GET with the same parameters likewise).
  t.regex(drawn.structured.svg, new RegExp(`/orgs/demo/diagrams/${shown.id}\\.svg\\?draft=drop&compare=main$`));
  const api = await own.get(`/api/external/diagram/${shown.id}?draft=drop&compare=main`, { headers: { accept: 'image/svg+xml' } });
  t.is(api.status, 200);
  t.is(api.text, drawn.text);
  // The same drawing as the visual diff draws an element the draft removed (drafts/visual-diff.ts).
  t.regex(drawn.text, /class="[^"]*c4-removed/);

  const png = await call({ id: shown.id, draft: 'drop', compare: 'main', format: 'png' });
  t.false(png.isError, png.text);
  t.regex(
    png.text,
    new RegExp(`^'${shown.name}' \\(deleted by draft 'drop': as main had it, every element marked removed\\) drawn as PNG`),
  );
  const image = png.content.find((c) => c.type === 'image')!;
  t.deepEqual([...Buffer.from(image.data!, 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  t.regex(png.structured.png, new RegExp(`/orgs/demo/diagrams/${shown.id}\\.png\\?draft=drop&compare=main$`));

  // A diagram neither the draft nor main had is not found, as before.
  const none = await call({ id: 'nope', draft: 'drop', compare: 'main' });
  t.is(none.text, "Diagram with id 'nope' does not exist.");
  const diff = await client.callTool({ name: 'draft_diff', arguments: { draft: 'drop' } });
  const listed = (diff.structuredContent as { diagrams: Array<{ id: string; deleted?: boolean; drawing: string }> }).diagrams;
  t.deepEqual(
    listed.find((d) => d.id === shown.id),
    { id: shown.id, name: shown.name, drawing: `${own.url}/orgs/demo/diagrams/${shown.id}.svg?draft=drop&compare=main`, deleted: true },
  );
  t.regex(
    (diff.content as Text[])[0]!.text,
    /\nrender_diagram with draft and compare "main" draws a changed diagram with its changes marked, and a diagram it deleted as main had it, every element marked removed\.\n/,
  );

  // Merged, the deletion is what its merge brought into main: still drawn so.
  t.is((await own.post('/api/external/drafts/drop/merge', {})).status, 200);
  t.is((await own.get(`/api/external/diagram/${shown.id}`)).status, 404);
  const merged = await call({ id: shown.id, draft: 'drop', compare: 'main' });
  t.false(merged.isError, merged.text);
  t.deepEqual([...marksOf(merged.text).keys()].sort(), ids);
  t.deepEqual(new Set(marksOf(merged.text).values()), new Set(['c4-removed']));
});

test('a reader key can neither see nor call the draft tools', async (t) => {
  const reader = await connect(s.readerKey);
  t.teardown(() => reader.close());
  const names = (await reader.listTools()).tools.map((tool) => tool.name);
  t.false(names.includes('create_draft'));
  t.false(names.includes('write_model'));
  t.true(names.includes('draft_diff'));
  const refused = await reader.callTool({ name: 'create_draft', arguments: { name: 'nope' } });
  t.true(refused.isError);
  t.is((await s.get('/api/external/drafts/nope')).status, 404, 'nothing was opened');
});

test('a reader key is told only what it may do: its instructions and its tools name no tool it cannot call, and say it may only read', async (t) => {
  const editor = await connect(s.key);
  t.teardown(() => editor.close());
  const reader = await connect(s.readerKey);
  t.teardown(() => reader.close());
  const all = (await editor.listTools()).tools.map((tool) => tool.name);
  const listed = (await reader.listTools()).tools;
  const withheld = all.filter((name) => !listed.some((tool) => tool.name === name));
  t.deepEqual(withheld.sort(), ['create_draft', 'write_model']);
  const instructions = reader.getInstructions() ?? '';
  const told = [instructions, ...listed.map((tool) => JSON.stringify(tool))];
  for (const name of withheld) {
    for (const text of told) t.false(text.includes(name), `${name} in ${text.slice(0, 120)}…`);
  }
  t.regex(instructions, /may only read/);
  for (const name of listed.map((tool) => tool.name)) t.true(instructions.includes(name), `the reader is told of ${name}`);
  // An editor is told of every tool, the drafts it writes among them.
  const editorInstructions = editor.getInstructions() ?? '';
  for (const name of all) t.true(editorInstructions.includes(name), `the editor is told of ${name}`);
});

test('resources: the model as YAML and each diagram drawn; render_diagram also as a PNG picture', async (t) => {
  const client = await connect(s.readerKey);
  t.teardown(() => client.close());
  const diagrams = (await s.get('/api/external/diagrams')).body as { id: string; name: string }[];
  const { resources } = await client.listResources();
  t.is(resources[0]!.uri, 'c4store:///model.yaml');
  t.is(resources.length, 1 + diagrams.length);
  const yaml = await client.readResource({ uri: 'c4store:///model.yaml' });
  t.regex((yaml.contents[0] as { text: string }).text, /^types:/m);
  const drawn = await client.readResource({ uri: `c4store:///diagrams/${diagrams[0]!.id}.svg` });
  t.regex((drawn.contents[0] as { text: string }).text, /^<svg[\s>]/);
  await t.throwsAsync(client.readResource({ uri: 'c4store:///diagrams/nope.svg' }), { message: /does not exist/ });
  const png = await client.callTool({ name: 'render_diagram', arguments: { id: diagrams[0]!.id, format: 'png' } });
  const image = (png.content as { type: string; data?: string; mimeType?: string }[]).find((c) => c.type === 'image')!;
  t.is(image.mimeType, 'image/png');
  t.deepEqual([...Buffer.from(image.data!, 'base64').subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
});

test('answers stay within 60,000 characters, still whole JSON: a commit of many files is shown, long lists and diffs are shortened with their totals, a large drawing is an address', async (t) => {
  const big = await TestServer.start({ slug: 'big' });
  t.teardown(() => big.close());
  const before = await big.head();
  const long = 'a component with a rather long name, to fill the answer';
  const made = await big.post(
    '/api/external/component',
    Array.from({ length: 1200 }, (_, i) => ({ ref: `c${i}`, name: `${long} ${i}` })),
  );
  t.is(made.status, 200, made.text);
  const instances = Array.from({ length: 400 }, (_, i) => ({
    component: made.body[i].id,
    position: { x: (i % 20) * 300, y: Math.floor(i / 20) * 200 },
  }));
  t.is((await big.post('/api/external/diagram', [{ ref: 'wide', name: 'Wide', level: 'C2', componentInstances: instances }])).status, 200);
  const client = await connect(big.key, 'big-agent', big);
  t.teardown(() => client.close());
  const call = async (name: string, args: Record<string, unknown>) => {
    const answer = await client.callTool({ name, arguments: args });
    t.falsy(answer.isError, JSON.stringify(answer.content).slice(0, 300));
    const text = (answer.content as Text[])[0]!.text;
    const shown = (answer.content as Text[]).reduce((sum, block) => sum + (block.text ?? '').length, 0);
    t.true(shown <= 60_000, `${name}: ${shown} characters`);
    t.true(JSON.stringify(answer.structuredContent ?? {}).length <= 60_000, `${name}: structured content`);
    return { text, structured: answer.structuredContent as any };
  };

  const history = await call('history', { limit: 5 });
  const imported = history.structured.items[1];
  t.regex(imported.summary, /create 1200/);
  t.is(imported.resourcesTotal, 1200);
  t.true(imported.resources.length > 10 && imported.resources.length < 1200);
  // Every commit is shown (one shortened inside): the agent is not sent after a rest there is not.
  t.is(history.structured.items.length, 3);
  t.regex(history.text, /^3 commits \(cut: lists inside them shortened, their lengths beside them as <name>Total\):\n\[/);

  const found = await call('search', { kind: 'components', name: 'rather long' });
  t.is(found.structured.total, 1200);
  t.regex(found.text, /^1200 components \(the first \d+ shown; narrow the search for the rest\):\n\[/);
  t.is(JSON.parse(found.text.slice(found.text.indexOf('\n') + 1)).length, found.structured.items.length);

  const diff = await call('diff', { from: before });
  t.is(diff.structured.addedTotal, 1201);
  t.true(diff.structured.added.length > 10);
  t.regex(diff.text, /^\(cut: lists shortened/);
  t.deepEqual(JSON.parse(diff.text.slice(diff.text.indexOf('\n') + 1)), diff.structured);

  const diagram = await call('get_diagram', { id: 'wide' });
  t.is(diagram.structured.componentInstancesTotal, 400);
  // A draft whose one change is told in a line longer than an answer (a 70,000-character name).
  t.is((await big.post('/api/external/drafts', { name: 'long-name' })).status, 201);
  t.is((await big.post('/api/external/components?draft=long-name', { id: 'long', name: 'n'.repeat(70_000) })).status, 201);
  const told = await call('draft_diff', { draft: 'long-name' });
  t.regex(told.text, /\n… \(cut: the review page has every change\)\nReview: /);
  const drawn = await call('render_diagram', { id: 'wide' });
  t.regex(
    drawn.text,
    /^The SVG of 'Wide' is \d+ characters, too large for an answer: it is at http:\/\/\S+\/orgs\/big\/diagrams\/\S+\.svg/,
  );
});

test("write_model tells an agent what it changed, what it ignored and what a sent list removed; head guards a draft against another agent's write; draft_diff says how main stands", async (t) => {
  // A server of its own: main moves here.
  const own = await TestServer.start({ from: SAMPLE, slug: 'demo' });
  t.teardown(() => own.close());
  const client = await connect(own.key, 'agent-a', own);
  t.teardown(() => client.close());
  const call = async (name: string, args: Record<string, unknown>) => {
    const reply = await client.callTool({ name, arguments: args });
    return { isError: reply.isError === true, text: (reply.content as Text[])[0]!.text, structured: reply.structuredContent as any };
  };

  // `main` would read as the main branch everywhere a draft is named.
  const named = await call('create_draft', { name: 'main' });
  t.true(named.isError);
  t.is(named.text, "Invalid draft name 'main': it names the main branch; choose another.");
  const opened = await call('create_draft', { name: 'fraud', from: 'main' });
  t.false(opened.isError, opened.text);

  // A misspelt field is named, not silently dropped.
  const typo = await call('write_model', {
    draft: 'fraud',
    components: [{ ref: 'fraud-svc', name: 'Fraud Service', descr: 'Scores orders' }],
  });
  t.false(typo.isError, typo.text);
  t.deepEqual(typo.structured.ignoredFields, ['components.0.descr']);
  t.regex(typo.text, /^Wrote into draft 'fraud' \(commit [0-9a-f]{12}\):\n- added component Fraud Service\n/);
  t.regex(typo.text, /Ignored, not fields of write_model \(nothing was written for them\): components\.0\.descr/);

  // A sent componentInstances list replaces the diagram's: the answer says what that removed.
  const replaced = await call('write_model', {
    draft: 'fraud',
    head: typo.structured.commit,
    diagrams: [{ ref: 'shop-containers', componentInstances: [{ ref: 'fraud', component: 'fraud-svc' }] }],
  });
  t.false(replaced.isError, replaced.text);
  t.regex(replaced.text, /- on Northwind Shop - Containers: added 1 box, removed \d+ boxes, removed \d+ relations/);
  t.true(replaced.structured.changes.some((line: string) => /removed \d+ boxes/.test(line)));
  const tools = (await client.listTools()).tools;
  t.regex(JSON.stringify(tools.find((tool) => tool.name === 'write_model')!.inputSchema), /REPLACES the stored one/);

  // head: a write from a stale read of the draft is refused, and changes nothing.
  const stale = await call('write_model', {
    draft: 'fraud',
    head: typo.structured.commit,
    components: [{ ref: 'fraud-svc', name: 'Late' }],
  });
  t.true(stale.isError);
  t.is(stale.text, `The model has changed since ${typo.structured.commit}.`);
  t.is(await own.git('rev-parse', 'drafts/fraud').then((out) => out.trim()), replaced.structured.commit);
  // head as the answers print it (12 characters) will do.
  const short = await call('write_model', {
    draft: 'fraud',
    head: replaced.structured.commit.slice(0, 12),
    components: [{ ref: 'fraud-svc', name: 'Fraud Service' }],
  });
  t.false(short.isError, short.text);
  t.true((await call('write_model', { draft: 'fraud', head: '' })).isError);
  // Diagrams found or written in a draft are addressed in it.
  const found = await call('search', { kind: 'diagrams', name: 'Containers', draft: 'fraud' });
  t.regex(found.structured.items[0].url, /\?draft=fraud$/);
  t.regex(replaced.structured.diagrams[0].url, /\?draft=fraud$/);

  // The visual diff, drawn for the agent; the draft's page address carries the draft.
  const drawn = await call('render_diagram', { id: 'shop-containers', draft: 'fraud', compare: 'main' });
  t.false(drawn.isError, drawn.text);
  t.regex(drawn.text, /class="[^"]*c4-added/);
  t.regex(drawn.text, /class="[^"]*c4-removed/);
  t.true((await call('render_diagram', { id: 'shop-containers', compare: 'main' })).isError);
  const read = await call('get_diagram', { id: 'shop-containers', draft: 'fraud' });
  t.regex(read.structured.url, /\?draft=fraud$/);

  // main moves on the same field: draft_diff says the draft is behind and where a merge conflicts.
  t.is((await call('write_model', { draft: 'fraud', components: [{ ref: 'shop-api', desc: 'Draft side' }] })).isError, false);
  t.is((await own.request('PATCH', '/api/external/components/shop-api', { body: { desc: 'Main side' } })).status, 200);
  const diff = await call('draft_diff', { draft: 'fraud' });
  t.is(diff.structured.behind, 1);
  t.deepEqual(
    diff.structured.conflicts.map((c: { field: string }) => c.field),
    ['desc'],
  );
  t.regex(
    diff.text,
    /main has 1 commit the draft does not\.\nA merge now conflicts on 1 field \(conflicts lists them\): component 'Shop API' desc\./,
  );
  t.regex(diff.text, /render_diagram with draft and compare "main"/);

  // history by ref, and a draft's own.
  const byRef = await call('history', { resource: 'shop-api' });
  t.true(byRef.structured.total >= 1);
  const draftHistory = await call('history', { draft: 'fraud', limit: 100 });
  t.is(draftHistory.structured.items[0].id, (await own.git('rev-parse', 'drafts/fraud')).trim());
  t.is((await call('history', { draft: 'fraud', resource: 'fraud-svc' })).structured.total, 1);

  // A reader is told why it cannot write, not that the tool does not exist.
  const reader = await connect(own.readerKey, 'agent-r', own);
  t.teardown(() => reader.close());
  const refused = await reader.callTool({ name: 'write_model', arguments: { draft: 'fraud' } });
  t.is((refused.content as Text[])[0]!.text, "Tool 'write_model' changes the model: this API key may only read.");
});

test('one key holds at most 100 sessions: its own idlest goes, never another key’s', async (t) => {
  const own = await TestServer.start();
  t.teardown(() => own.close());
  const post = (key: string, body: unknown, session?: string) => postTo(own.url, body, key, session);
  const open = async (key: string) => {
    const reply = await post(key, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    t.is(reply.status, 200);
    await reply.text();
    return reply.headers.get('mcp-session-id')!;
  };
  const alive = async (key: string, session: string) => {
    const reply = await post(key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
    await reply.text();
    return reply.status === 200;
  };
  const editors = await open(own.key);
  const readers: string[] = [];
  for (let i = 0; i < 101; i++) readers.push(await open(own.readerKey));
  t.true(await alive(own.key, editors), "another key's session stays");
  t.false(await alive(own.readerKey, readers[0]!), 'the key’s own idlest made room');
  t.true(await alive(own.readerKey, readers[100]!));
  t.true(await alive(own.readerKey, readers[1]!));
  // An initialize the transport refuses (its Accept lacks text/event-stream: 406) opens no session, nor makes room for one.
  const refused = await fetch(`${own.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${own.readerKey}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  t.is(refused.status, 406);
  t.true(await alive(own.readerKey, readers[2]!), 'the idlest session is still there');
});

test('a refusal that names a huge argument stays within an answer: the start and the advice at its end are kept', async (t) => {
  const client = await connect(s.key);
  t.teardown(() => client.close());
  const huge = 'q'.repeat(300_000);
  for (const [name, args] of [
    ['search', { kind: 'components', draft: huge }],
    ['search', { kind: 'components', state: huge }],
    ['write_model', { draft: huge }],
    ['create_draft', { name: huge }],
  ] as const) {
    const refused = await client.callTool({ name, arguments: args });
    t.true(refused.isError, name);
    const text = (refused.content as Text[])[0]!.text;
    t.true(text.length <= 60_000, `${name}: ${text.length} characters`);
    t.regex(text, /^Invalid (draft name|state) 'qqq/, name);
    t.regex(text, /…/, name);
    // What to do instead is said at the end of the sentence: it is kept.
    t.regex(text, /(at most 63\)|ARCHIVED)\.$/, name);
  }
  const drafts = (await s.get('/api/external/drafts')).body as { name: string }[];
  t.false(
    drafts.some((d) => d.name.startsWith('qqq')),
    'nothing was opened',
  );
});

test('list cursors: one that is not a string, or names no page, is the protocol error -32602 in words', async (t) => {
  const post = (body: unknown, session?: string) => postRaw(body, s.readerKey, session);
  const made = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const session = made.headers.get('mcp-session-id')!;
  await made.text();
  for (const [method, params] of [
    ['tools/list', { cursor: 5 }],
    ['resources/list', { cursor: null }],
    ['resources/templates/list', { cursor: 7 }],
    ['resources/list', { cursor: '-1' }],
    ['resources/list', { cursor: '-600' }],
    ['resources/list', { cursor: 'abc' }],
    ['resources/list', { cursor: '0.5' }],
    ['resources/list', { cursor: '1e400' }],
  ] as const) {
    const reply = await post({ jsonrpc: '2.0', id: 9, method, params }, session);
    const answer = (await reply.json()) as { id: unknown; error?: { code: number; message: string } };
    const label = `${method} ${JSON.stringify(params)}`;
    t.is(answer.id, 9, label);
    t.is(answer.error?.code, -32602, label);
    t.regex(answer.error?.message ?? '', /cursor|params/, label);
    t.notRegex(answer.error?.message ?? '', /invalid_type/, label);
  }
  // The cursors the server gives are taken, and one past the end is an empty page.
  for (const cursor of ['0', '500']) {
    const reply = await post({ jsonrpc: '2.0', id: 10, method: 'resources/list', params: { cursor } }, session);
    const answer = (await reply.json()) as { result?: { resources: unknown[] } };
    t.true(Array.isArray(answer.result?.resources), cursor);
  }
});

test('a protocol error says its sentence once: the client puts "MCP error <code>:" before it, the server does not', async (t) => {
  const client = await connect(s.readerKey);
  t.teardown(() => client.close());
  await t.throwsAsync(client.readResource({ uri: 'c4store:///diagrams/nope.svg' }), {
    message: "MCP error -32602: Resource 'c4store:///diagrams/nope.svg' does not exist.",
  });
  await t.throwsAsync(client.listResources({ cursor: '-1' }), {
    message: "MCP error -32602: Invalid cursor '-1': use the nextCursor of the previous resources/list answer.",
  });
});

test("a query on /mcp's address (the API's ?draft=, ?at=, ?layout=) changes nothing a tool does: its arguments alone say what it reads and writes", async (t) => {
  const agent = await connect(s.key, 'query-agent');
  t.teardown(() => agent.close());
  t.falsy((await agent.callTool({ name: 'create_draft', arguments: { name: 'query-probe' } })).isError);
  const probe = { draft: 'query-probe', components: [{ ref: 'query-probe', name: 'Query Probe', typeSlug: 'person' }] };
  t.falsy((await agent.callTool({ name: 'write_model', arguments: probe })).isError);
  const text = (answer: object) => (answer as { content: Text[] }).content.map((c) => c.text ?? '').join('\n');

  const drafted = await connect(s.readerKey, 'query-agent', s, '?draft=query-probe');
  t.teardown(() => drafted.close());
  t.notRegex(text(await drafted.callTool({ name: 'get_model', arguments: {} })), /Query Probe/, 'get_model reads main');
  t.true((await drafted.callTool({ name: 'get_component', arguments: { id: 'query-probe' } })).isError, 'main has no such component');
  const yaml = await drafted.readResource({ uri: 'c4store:///model.yaml' });
  t.notRegex((yaml.contents[0] as { text: string }).text, /Query Probe/, 'the model resource is main');

  const elsewhen = await connect(s.readerKey, 'query-agent', s, '?at=nope');
  t.teardown(() => elsewhen.close());
  t.falsy((await elsewhen.callTool({ name: 'get_model', arguments: {} })).isError);
  t.true((await elsewhen.listResources()).resources.length > 0);

  const laidOut = await connect(s.key, 'query-agent', s, '?layout=bogus');
  t.teardown(() => laidOut.close());
  const written = await laidOut.callTool({
    name: 'write_model',
    arguments: { ...probe, components: [{ ...probe.components[0], desc: 'Probes.' }] },
  });
  t.falsy(written.isError, text(written));
});

/**
 * What the model is shown of a tool's answer by a client that, as Claude Code and Cursor do, gives
 * it the answer's structuredContent when there is one (as JSON), else its content.
 */
function shownToModel(answer: object): string {
  const { structuredContent, content } = answer as { structuredContent?: unknown; content: Array<{ type: string; text?: string }> };
  if (structuredContent !== undefined) return JSON.stringify(structuredContent);
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}

test('a client that shows the model only structuredContent, when an answer has it, still shows the YAML of get_model and the drawing of render_diagram', async (t) => {
  const client = await connect(s.readerKey);
  t.teardown(() => client.close());
  const diagram = ((await s.get('/api/external/diagrams')).body as { id: string }[])[0]!;
  t.regex(shownToModel(await client.callTool({ name: 'get_model', arguments: {} })), /^components:$/m);
  t.regex(shownToModel(await client.callTool({ name: 'render_diagram', arguments: { id: diagram.id } })), /^<svg[\s>]/);
  t.regex(shownToModel(await client.callTool({ name: 'render_diagram', arguments: { id: diagram.id, format: 'png' } })), /\[image\]/);
});

/** A raw POST to the shared server's /mcp of `body` as JSON with `key`, in `session` when given. */
function postRaw(body: unknown, key: string, session?: string): Promise<Response> {
  return postTo(s.url, body, key, session);
}

/** A raw POST to `url`/mcp of `body` as JSON with `key`, in `session` and under protocol `version` when given. */
function postTo(url: string, body: unknown, key: string, session?: string, version?: string): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${key}`,
      ...(session === undefined ? {} : { 'mcp-session-id': session }),
      ...(version === undefined ? {} : { 'mcp-protocol-version': version }),
    },
    body: JSON.stringify(body),
  });
}

/** A session opened by a raw initialize with `key`, of protocol `version`, on `url` (the shared server's unless given). */
async function rawSession(key: string, protocolVersion = '2025-06-18', url = s.url): Promise<string> {
  const made = await postTo(
    url,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    },
    key,
  );
  await made.text();
  return made.headers.get('mcp-session-id')!;
}

test('JSON that is no JSON-RPC message is -32600 Invalid Request, as JSON-RPC has it (-32700 is for what does not parse), with its id when it has one', async (t) => {
  const session = await rawSession(s.readerKey);
  for (const [body, id] of [
    [{ id: 5, method: 'ping' }, 5],
    [{ jsonrpc: '1.0', id: 'a', method: 'ping' }, 'a'],
    [{ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, null],
    [{ jsonrpc: '2.0', id: null, method: 'ping' }, null],
    [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, null],
    [{ jsonrpc: '2.0', id: 6, method: 5 }, 6],
    [{ jsonrpc: '2.0', id: 7, method: 'ping', params: [1] }, 7],
    [{ jsonrpc: '2.0', id: 9, method: 'tools/list', params: 5 }, 9],
    [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: 5 }, null],
    ['hello', null],
    [42, null],
    [null, null],
  ] as const) {
    for (const within of [session, undefined]) {
      const label = `${JSON.stringify(body)} ${within === undefined ? 'without' : 'in'} a session`;
      const reply = await postRaw(body, s.readerKey, within);
      t.is(reply.status, 400, label);
      const answer = (await reply.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
      t.like(answer, { jsonrpc: '2.0', id, error: { code: -32600 } }, label);
      t.regex(answer.error.message, /^Invalid Request: /, label);
    }
  }
  const ping = await postRaw({ jsonrpc: '2.0', id: 8, method: 'ping' }, s.readerKey, session);
  t.like(await ping.json(), { id: 8, result: {} }, 'the session goes on');
  // A version with batches: an empty one is no message either (the SDK took it, as a notification, 202).
  const batched = await rawSession(s.readerKey, '2025-03-26');
  const empty = await postRaw([], s.readerKey, batched);
  t.is(empty.status, 400);
  t.like(await empty.json(), { id: null, error: { code: -32600 } });
});

test('an initialize whose params are not what it takes is -32602 saying what it takes, and opens no session (the SDK said "Server not initialized")', async (t) => {
  const valid = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
  for (const params of [
    undefined,
    { protocolVersion: '2025-06-18', capabilities: {} },
    { ...valid, clientInfo: { name: 'no version' } },
    { ...valid, protocolVersion: 20250618 },
    { ...valid, capabilities: 'all' },
    // Deeper than the fields named: what the SDK's own schema takes (it said "Server not initialized").
    { ...valid, capabilities: { experimental: { feature: 'on' } } },
    { ...valid, capabilities: { sampling: 5 } },
    { ...valid, clientInfo: { name: 'raw', version: '1', icons: 'none' } },
  ]) {
    const label = JSON.stringify(params);
    const reply = await postRaw({ jsonrpc: '2.0', id: 'init', method: 'initialize', params }, s.readerKey);
    t.is(reply.headers.get('mcp-session-id'), null, label);
    const answer = (await reply.json()) as { id: unknown; error: { code: number; message: string } };
    t.like(answer, { id: 'init', error: { code: -32602 } }, label);
    t.regex(answer.error.message, /^Invalid params: initialize takes \{"protocolVersion"/, label);
    if (/feature|sampling|icons/.test(label)) t.regex(answer.error.message, / Here: (capabilities|clientInfo)\.\w+/, label);
  }
  // Sent in a session, the same: not the SDK's -32603 with its schema library's dump.
  const session = await rawSession(s.readerKey);
  const deep = { ...valid, capabilities: { sampling: 5 } };
  const inSession = await postRaw({ jsonrpc: '2.0', id: 'again', method: 'initialize', params: deep }, s.readerKey, session);
  const refused = (await inSession.json()) as { id: unknown; error: { code: number; message: string } };
  t.like(refused, { id: 'again', error: { code: -32602 } });
  t.regex(refused.error.message, /^Invalid params: initialize takes .* Here: capabilities\.sampling: /);
});

test('an initialize whose params are larger than any client sends (its capabilities and clientInfo live as long as the session) is -32602 and opens no session', async (t) => {
  const valid = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
  for (const params of [
    { ...valid, capabilities: { experimental: { padding: { text: 'x'.repeat(100_000) } } } },
    { ...valid, clientInfo: { name: 'raw', version: '1', description: 'x'.repeat(100_000) } },
  ]) {
    const reply = await postRaw({ jsonrpc: '2.0', id: 'big', method: 'initialize', params }, s.readerKey);
    t.is(reply.headers.get('mcp-session-id'), null);
    t.like(await reply.json(), {
      id: 'big',
      error: {
        code: -32602,
        message: `Invalid params: initialize's params are ${JSON.stringify(params).length.toLocaleString('en')} characters of JSON, and at most 65,536 are taken: they are kept as long as the session.`,
      },
    });
  }
  // A client's own are far from it.
  const made = await postRaw({ jsonrpc: '2.0', id: 1, method: 'initialize', params: valid }, s.readerKey);
  t.truthy(made.headers.get('mcp-session-id'));
});

test('a session idle longer than the idle time is closed when it is next used: 404, on which the client opens a new one', async (t) => {
  const own = await TestServer.start({ mcpSessionIdleMs: 50 });
  t.teardown(() => own.close());
  const post = (body: unknown, session?: string) => postTo(own.url, body, own.readerKey, session);
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'idle-agent', version: '1' } },
  };
  const made = await post(initialize);
  await made.text();
  const session = made.headers.get('mcp-session-id')!;
  // Longer than the idle time, however busy the machine: the sleep is the least time that passes.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const late = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, session);
  t.is(late.status, 404);
  t.deepEqual(await late.json(), { error: 'Session not found: initialize a new one.' });
  const again = await post(initialize);
  t.is(again.status, 200);
  t.truthy(again.headers.get('mcp-session-id'));
});

test("a draft name of the allowed characters that git takes as no branch name ('..', an ending '.' or '.lock') is refused saying so", async (t) => {
  const client = await connect(s.key);
  t.teardown(() => client.close());
  for (const name of ['agent.lock', 'agent..x', 'agent.']) {
    const refused = await client.callTool({ name: 'create_draft', arguments: { name } });
    t.true(refused.isError, name);
    t.is(
      (refused.content as Text[])[0]!.text,
      `Invalid draft name '${name}': git takes no branch name with '..' or ending in '.' or '.lock'; choose another.`,
      name,
    );
  }
});

test('resources/templates/list, which clients call to discover resources (Codex, gateways that refuse a server on -32601), names the diagrams’ template', async (t) => {
  const client = await connect(s.readerKey);
  t.teardown(() => client.close());
  const { resourceTemplates } = await client.listResourceTemplates();
  t.deepEqual(
    resourceTemplates.map((template) => [template.uriTemplate, template.mimeType]),
    [['c4store:///diagrams/{id}.svg', 'image/svg+xml']],
  );
  const diagram = ((await s.get('/api/external/diagrams')).body as { id: string }[])[0]!;
  const drawn = await client.readResource({ uri: resourceTemplates[0]!.uriTemplate.replace('{id}', diagram.id) });
  t.regex((drawn.contents[0] as { text: string }).text, /^<svg[\s>]/);
});

test('search for the dependencies of a component that does not exist says so, rather than that it has none', async (t) => {
  const client = await connect(s.readerKey);
  t.teardown(() => client.close());
  const none = await client.callTool({ name: 'search', arguments: { kind: 'dependencies', componentId: 'no-such-component' } });
  t.true(none.isError);
  t.is((none.content as Text[])[0]!.text, "Component with id 'no-such-component' does not exist.");
  const component = ((await s.get('/api/external/components')).body as { id: string; ref?: string }[]).find((c) => c.ref)!;
  for (const name of [component.id, component.ref!]) {
    const found = await client.callTool({ name: 'search', arguments: { kind: 'dependencies', componentId: name } });
    t.falsy(found.isError, name);
  }
});

/** A server of its own with a model whose YAML is a few pages of get_model (1,200 components of long names). */
async function largeModelServer(slug: string): Promise<TestServer> {
  const big = await TestServer.start({ slug });
  const long = 'a component with a rather long name, to fill the answer';
  const made = await big.post(
    '/api/external/component',
    Array.from({ length: 1200 }, (_, i) => ({ ref: `c${i}`, name: `${long} ${i}` })),
  );
  if (made.status !== 200) throw new Error(made.text);
  return big;
}

test('resources/read of the model is paged as get_model is: 60,000 characters at a time, each page naming the next by ?offset=', async (t) => {
  const big = await largeModelServer('paged');
  t.teardown(() => big.close());
  const client = await connect(big.readerKey, 'paging-agent', big);
  t.teardown(() => client.close());
  // The whole YAML, by get_model's pages.
  let whole = '';
  for (let offset: number | null = 0; offset !== null; ) {
    const answer = await client.callTool({ name: 'get_model', arguments: { offset } });
    const facts = factsOf(answer);
    whole += (answer.content as Text[])[0]!.text.replace(/\n# … \d+ more characters: call get_model with offset \d+\n$/, '');
    offset = facts.nextOffset;
  }
  t.true(whole.length > 120_000, `${whole.length} characters`);
  const { resources } = await client.listResources();
  t.regex(resources[0]!.description ?? '', /60,000 characters a page/);
  // The resource's pages, followed by the address each names, give the same YAML.
  let read = '';
  let pages = 0;
  for (let uri: string | undefined = 'c4store:///model.yaml'; uri !== undefined; pages++) {
    const answer = await client.readResource({ uri });
    t.is(answer.contents.length, 1);
    const { text, uri: answered, mimeType } = answer.contents[0] as { text: string; uri: string; mimeType: string };
    t.is(answered, uri);
    t.is(mimeType, 'application/yaml');
    t.true(text.length <= 60_000, `${uri}: ${text.length} characters`);
    const next = /\n# … (\d+) more characters: read (c4store:\/\/\/model\.yaml\?offset=(\d+)) \(or call get_model with offset \3\)\n$/.exec(
      text,
    );
    read += next ? text.slice(0, next.index) : text;
    uri = next?.[2];
  }
  t.is(read, whole);
  t.true(pages >= 3, `${pages} pages`);
  // An offset that names no page is refused in words, as get_model refuses one.
  for (const uri of ['c4store:///model.yaml?offset=-1', 'c4store:///model.yaml?offset=x', 'c4store:///model.yaml?at=main']) {
    await t.throwsAsync(client.readResource({ uri }), { message: /^MCP error -32602: Resource '.*' does not exist\./ }, uri);
  }
  await t.throwsAsync(client.readResource({ uri: `c4store:///model.yaml?offset=${whole.length}` }), {
    message: `MCP error -32602: offset ${whole.length} is past the end of the model's YAML (${whole.length} characters): start again at 0.`,
  });
});

test("an unexpected failure inside resources/list or resources/read (main moved behind the server's back to a damaged tree) is logged with the request id, and the agent is told so plainly", async (t) => {
  const own = await TestServer.start();
  t.teardown(() => own.close());
  const requestId = 'mcp-damaged-resources';
  const agent = await connect(own.readerKey, 'test-agent', own, '', { 'x-request-id': requestId });
  t.teardown(() => agent.close());
  t.is((await agent.listResources()).resources[0]!.uri, 'c4store:///model.yaml');
  // A commit made with git's plumbing, not through the server: its tree (one more file) is damaged on disk.
  const head = await own.head();
  const env = { ...process.env, GIT_INDEX_FILE: join(own.dataDir, 'damaging-index') };
  const extra = join(own.dataDir, 'extra.txt');
  await writeFile(extra, 'one more file\n');
  const blob = (await own.git('hash-object', '-w', extra)).trim();
  await run('git', ['--git-dir', own.gitdir, 'read-tree', `${head}^{tree}`], { env });
  await run('git', ['--git-dir', own.gitdir, 'update-index', '--add', '--cacheinfo', `100644,${blob},extra.txt`], { env });
  const tree = (await run('git', ['--git-dir', own.gitdir, 'write-tree'], { env })).stdout.trim();
  const commit = (await own.git('commit-tree', tree, '-p', head, '-m', 'behind the server')).trim();
  await writeFile(join(own.gitdir, 'objects', tree.slice(0, 2), tree.slice(2)), 'damaged');
  await own.git('update-ref', 'refs/heads/main', commit);
  const plainly = (method: string) =>
    `MCP error -32603: Internal error: ${method} could not be carried out. The server's log has the details, under request id '${requestId}'.`;
  await t.throwsAsync(agent.listResources(), { message: plainly('resources/list') });
  await t.throwsAsync(agent.readResource({ uri: 'c4store:///model.yaml' }), { message: plainly('resources/read') });
  const errors = own.logs.filter(isErrorLine).map((line) => JSON.parse(line) as { requestId?: string; msg: string });
  t.is(errors.length, 2, own.logs.filter(isErrorLine).join('\n'));
  t.deepEqual(
    errors.map((e) => e.requestId),
    [requestId, requestId],
  );
  t.regex(errors[0]!.msg, /^error POST \/mcp resources\/list: /);
  t.regex(errors[1]!.msg, /^error POST \/mcp resources\/read 'c4store:\/\/\/model\.yaml': /);
  // The cause is in the log (zlib's, reading the damaged object), not in the answer.
  t.regex(errors[1]!.msg, /incorrect header check/);
  // The session goes on: a diagram that does not exist is still said so.
  await t.throwsAsync(agent.readResource({ uri: 'c4store:///nope' }), { message: /^MCP error -3260[23]: / });
});

test("a batch's answer is bounded: at most 50 requests run, those after are refused in words; answers beyond 2,000,000 characters are replaced by an error saying the request ran", async (t) => {
  const big = await largeModelServer('batched');
  t.teardown(() => big.close());
  const session = await rawSession(big.readerKey, '2025-03-26', big.url);
  const post = async (body: unknown) => {
    const reply = await postTo(big.url, body, big.readerKey, session, '2025-03-26');
    t.is(reply.status, 200);
    const text = await reply.text();
    return { text, answers: JSON.parse(text) as Array<{ id: number; result?: any; error?: { code: number; message: string } }> };
  };
  const pings = await post([
    ...Array.from({ length: 60 }, (_, i) => ({ jsonrpc: '2.0', id: i + 2, method: 'ping' })),
    { jsonrpc: '2.0', method: 'notifications/initialized' },
  ]);
  t.is(pings.answers.length, 60);
  const byId = new Map(pings.answers.map((a) => [a.id, a]));
  for (let id = 2; id < 52; id++) t.deepEqual(byId.get(id)?.result, {}, String(id));
  for (let id = 52; id < 62; id++) {
    t.deepEqual(byId.get(id)?.error, {
      code: -32600,
      message:
        'Invalid Request: a batch runs at most 50 requests, and this one holds 60: those after the 50th, this one among them, were not run. Send them in another POST.',
    });
  }
  // 40 pages of the model are 2,400,000 characters: the answers past 2,000,000 say so instead.
  const pages = await post(
    Array.from({ length: 40 }, (_, i) => ({
      jsonrpc: '2.0',
      id: 100 + i,
      method: 'tools/call',
      params: { name: 'get_model', arguments: {} },
    })),
  );
  t.is(pages.answers.length, 40);
  const given = pages.answers.filter((a) => a.result !== undefined);
  const withheld = pages.answers.filter((a) => a.error !== undefined);
  t.true(given.length >= 20 && withheld.length >= 5, `${given.length} given, ${withheld.length} withheld`);
  for (const answer of withheld) {
    t.deepEqual(answer.error, {
      code: -32000,
      message:
        "Answer withheld: this batch's answers reached 2,000,000 characters, the most one POST carries. The request ran; send it in a POST of its own for its answer.",
    });
  }
  t.true(pages.text.length <= 2_000_000 + 40 * 300, `${pages.text.length} characters`);
});

test("while main's newest commit is no valid model (committed behind the service's back), a tool's answer says which older commit it read, as the API's Warning header does", async (t) => {
  const own = await TestServer.start();
  t.teardown(() => own.close());
  const good = await own.head();
  const clone = await mkdtemp(join(tmpdir(), 'c4store-clone-'));
  t.teardown(() => rm(clone, { recursive: true, force: true }));
  const env = { ...process.env, GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@x', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@x' };
  const git = (...args: string[]) => run('git', ['-C', clone, ...args], { env });
  await run('git', ['clone', '-q', '--branch', 'main', own.gitdir, clone], { env });
  const path = resourcePath('component', '01zzzzzzzzzzzzzzzzzzzzzzzz');
  await mkdir(join(clone, dirname(path)), { recursive: true });
  await writeFile(join(clone, path), 'id: 01zzzzzzzzzzzzzzzzzzzzzzzz\nname: [unclosed\n');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'Broken behind the service');
  // Past the pre-receive check, as someone with file access could.
  await git('push', '-q', '--receive-pack=git -c core.hooksPath=/dev/null receive-pack', 'origin', 'main');
  const agent = await connect(own.readerKey, 'test-agent', own);
  t.teardown(() => agent.close());
  const answer = (await agent.callTool({ name: 'search', arguments: { kind: 'components', state: 'ACTIVE' } })) as {
    isError?: boolean;
    content: Text[];
  };
  t.not(answer.isError, true, answer.content[0]?.text);
  const warning = answer.content[0]!.text;
  t.true(warning.startsWith(`Warning: The model in git is invalid at commit ${await own.head()}: ${path}: `), warning);
  t.true(warning.endsWith(`Serving commit ${good}, the last valid one.`), warning);
  // Put right, the answers say nothing more.
  await git('rm', '-q', path);
  await git('commit', '-q', '-m', 'Fixed');
  await git('push', '-q', 'origin', 'main');
  const fine = (await agent.callTool({ name: 'search', arguments: { kind: 'components', state: 'ACTIVE' } })) as { content: Text[] };
  t.false(
    fine.content.some((c) => c.text?.startsWith('Warning:')),
    fine.content[0]?.text,
  );
});
