/**
 * A refusal's `error` is the rule's text exactly (CONTRACT.md §3: "exactly these where they
 * apply"), and what it concerns — the attribute, the element of the body — comes beside it in
 * the `C4store-Error-Context` header, percent-encoded (docs/api.md §5.4); the agents' tools,
 * which have no header, keep it in the text. Real servers over real HTTP, the MCP SDK's own client.
 */
import test, { type ExecutionContext } from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { resourcePath } from '../src/model/paths.js';
import { errorContext, type Reply, type TestServer, withServer } from './support/server.js';

const API = '/api/external';

/** A required LIST attribute `Team` on containers (client-chosen id `team`). */
async function team(s: TestServer, required = true): Promise<void> {
  const reply = await s.post(`${API}/attributes`, {
    id: 'team',
    name: 'Team',
    type: 'LIST',
    list: ['Storefront', 'Checkout'],
    required,
    forTypes: ['container'],
  });
  if (reply.status !== 201) throw new Error(reply.text);
}

/**
 * Refused with `status`, a body of exactly `{"error": text}`, and `context` in the header (none
 * when undefined), leaving main where it was.
 */
async function refusedWith(
  t: ExecutionContext,
  s: TestServer,
  send: () => Promise<Reply>,
  status: number,
  text: string,
  context: string | undefined,
): Promise<Reply> {
  const head = await s.head();
  const reply = await send();
  t.is(reply.status, status, reply.text);
  t.deepEqual(reply.body, { error: text });
  t.is(errorContext(reply), context);
  t.is(await s.head(), head, 'a refusal changes nothing');
  return reply;
}

test("the older form's array bodies: the contract's texts exactly, the element and attribute in C4store-Error-Context", (t) =>
  withServer(async (s) => {
    await team(s);
    const post = (path: string, body: unknown) => () => s.post(`${API}${path}`, body);
    // The second element of the array is the one refused: the header says which.
    const missing = await refusedWith(
      t,
      s,
      post('/component', [
        { name: 'Web Shop', typeSlug: 'container', attributes: [{ id: 'team', value: 'Storefront' }] },
        { name: 'Mobile App', typeSlug: 'container' },
      ]),
      400,
      "Required attribute 'team' has no value.",
      "attribute 'Team', element 1 'Mobile App'",
    );
    t.is(missing.headers.get('c4store-error-context'), "attribute 'Team', element 1 'Mobile App'", 'printable ASCII is sent as is');
    await refusedWith(
      t,
      s,
      post('/component', [{ name: 'Shop', typeSlug: 'container', attributes: [{ id: 'team', value: 'Warehouse' }] }]),
      400,
      "Value for LIST attribute 'team' must be one of: Storefront, Checkout.",
      "attribute 'Team', element 0 'Shop'",
    );
    await refusedWith(
      t,
      s,
      post('/diagram', [{ name: 'Returns', level: 'C2', componentInstances: [{ component: 'shop-apii' }] }]),
      400,
      "Ref 'shop-apii' does not resolve to a component.",
      "element 0 'Returns'",
    );
    await refusedWith(
      t,
      s,
      post('/diagram', [
        { name: 'Fine', level: 'C1' },
        {
          name: 'Nested',
          level: 'C2',
          componentInstances: [
            { ref: 'outer', isContainer: true },
            { ref: 'inner', isContainer: true, parent: 'outer' },
          ],
        },
      ]),
      400,
      "Container instance 'inner' cannot have a parent.",
      "element 1 'Nested'",
    );
    await refusedWith(
      t,
      s,
      post('/diagram', [{ name: 'Flat', level: 'C2', componentInstances: [{ ref: 'plain' }, { ref: 'kid', parent: 'plain' }] }]),
      400,
      "Parent 'plain' is not a container instance of this diagram.",
      "element 0 'Flat'",
    );
    // A text that names what it concerns by itself has no header.
    await refusedWith(
      t,
      s,
      post('/tag', [{ id: 'no-such-tag', name: 'x', color: 'red' }]),
      400,
      "Tag with id 'no-such-tag' does not exist.",
      undefined,
    );
  }));

test("the current form's single objects: POST and PATCH name the element by its kind", (t) =>
  withServer(async (s) => {
    await team(s);
    await refusedWith(
      t,
      s,
      () => s.post(`${API}/components`, { name: 'Mobile App', typeSlug: 'container' }),
      400,
      "Required attribute 'team' has no value.",
      "attribute 'Team', component 'Mobile App'",
    );
    const shop = await s.post(`${API}/components`, {
      id: 'shop',
      name: 'Web Shop',
      typeSlug: 'container',
      attributes: [{ id: 'team', value: 'Storefront' }],
    });
    t.is(shop.status, 201, shop.text);
    await refusedWith(
      t,
      s,
      () => s.request('PATCH', `${API}/components/shop`, { body: { attributes: [{ id: 'team', value: 'Warehouse' }] } }),
      400,
      "Value for LIST attribute 'team' must be one of: Storefront, Checkout.",
      "attribute 'Team', component 'Web Shop'",
    );
    await refusedWith(
      t,
      s,
      () =>
        s.post(`${API}/diagrams`, {
          name: 'Nested',
          level: 'C2',
          componentInstances: [
            { ref: 'outer', isContainer: true },
            { ref: 'inner', isContainer: true, parent: 'outer' },
          ],
        }),
      400,
      "Container instance 'inner' cannot have a parent.",
      "diagram 'Nested'",
    );
  }));

test('the header is percent-encoded: a Chinese name, an emoji and a % come back exactly through decodeURIComponent', (t) =>
  withServer(async (s) => {
    await team(s);
    const chinese = await refusedWith(
      t,
      s,
      () => s.post(`${API}/component`, [{ name: '支付网关 🚀', typeSlug: 'container' }]),
      400,
      "Required attribute 'team' has no value.",
      "attribute 'Team', element 0 '支付网关 🚀'",
    );
    // UTF-8 bytes, upper-case hex; the space and the quotes are printable ASCII and stay.
    t.is(chinese.headers.get('c4store-error-context'), "attribute 'Team', element 0 '%E6%94%AF%E4%BB%98%E7%BD%91%E5%85%B3 %F0%9F%9A%80'");
    const percent = await refusedWith(
      t,
      s,
      () => s.post(`${API}/component`, [{ name: '100% sure %41 50%', typeSlug: 'container' }]),
      400,
      "Required attribute 'team' has no value.",
      "attribute 'Team', element 0 '100% sure %41 50%'",
    );
    // `%41` must not come back as `A`: every % is encoded.
    t.is(percent.headers.get('c4store-error-context'), "attribute 'Team', element 0 '100%25 sure %2541 50%25'");
    // A lone surrogate, which no UTF-8 holds, is sent as U+FFFD: the header still decodes.
    await refusedWith(
      t,
      s,
      () => s.post(`${API}/component`, [{ name: 'half \ud800 pair', typeSlug: 'container' }]),
      400,
      "Required attribute 'team' has no value.",
      "attribute 'Team', element 0 'half \ufffd pair'",
    );
  }));

test('a YAML client gets the YAML error object with the same exact text and the same header', (t) =>
  withServer(async (s) => {
    await team(s);
    const reply = await refusedWith(
      t,
      s,
      () => s.post(`${API}/component`, [{ name: 'Mobile App', typeSlug: 'container' }], { yaml: true }),
      400,
      "Required attribute 'team' has no value.",
      "attribute 'Team', element 0 'Mobile App'",
    );
    t.regex(reply.headers.get('content-type') ?? '', /^application\/yaml/);
    t.is(reply.text, `error: Required attribute 'team' has no value.\n`);
  }));

test("a draft's merge refused for a rule: 409 with the rule's text exactly, the attribute in the header; the draft's problem says it whole", (t) =>
  withServer(async (s) => {
    await team(s, false);
    t.is((await s.post(`${API}/drafts`, { name: 'mobile' })).status, 201);
    // Valid in the draft: Team is not required there.
    const written = await s.post(`${API}/components?draft=mobile`, { id: 'mobile-app', name: 'Mobile App', typeSlug: 'container' });
    t.is(written.status, 201, written.text);
    // main makes Team required; main has no container, so that is valid on main too.
    const required = await s.request('PATCH', `${API}/attributes/team`, { body: { required: true } });
    t.is(required.status, 200, required.text);
    const text = `${resourcePath('component', 'mobile-app')}: Required attribute 'team' has no value.`;
    t.is((await s.get(`${API}/drafts/mobile`)).body.problem, `${text} (attribute 'Team')`);
    await refusedWith(t, s, () => s.post(`${API}/drafts/mobile/merge`, {}), 409, text, "attribute 'Team'");
    const yaml = await refusedWith(t, s, () => s.post(`${API}/drafts/mobile/merge`, {}, { yaml: true }), 409, text, "attribute 'Team'");
    t.regex(yaml.headers.get('content-type') ?? '', /^application\/yaml/);
    // Catching up is refused alike, on the draft's branch.
    const draftHead = (await s.git('rev-parse', 'refs/heads/drafts/mobile')).trim();
    await refusedWith(t, s, () => s.post(`${API}/drafts/mobile/update`, {}), 409, text, "attribute 'Team'");
    t.is((await s.git('rev-parse', 'refs/heads/drafts/mobile')).trim(), draftHead);
  }));

test("an agent's tool refusal keeps what it concerns in its text: MCP has no header to carry it", (t) =>
  withServer(async (s) => {
    await team(s);
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${s.key}` } } }),
    );
    t.teardown(() => client.close());
    t.falsy((await client.callTool({ name: 'create_draft', arguments: { name: 'agent' } })).isError);
    const refused = await client.callTool({
      name: 'write_model',
      arguments: { draft: 'agent', components: [{ ref: 'mobile-app', name: '支付 100%', typeSlug: 'container' }] },
    });
    t.true(refused.isError);
    t.is(
      (refused.content as Array<{ text: string }>)[0]!.text,
      "Required attribute 'team' has no value. (attribute 'Team', element components.0 '支付 100%')",
    );
  }));
