/**
 * An id or a ref names one resource of its kind (docs/api.md §2.1): a ref that is another
 * resource's id, or a client-chosen id that is another's ref, is refused by the write step's
 * one check (Draft.finish), whichever way the write comes in — both forms of the API, drafts and
 * their merges, the agents' tools — and by the push check; `c4store check` reports what a push
 * refuses. A pair stored before the rule is still read and written. Real server, real HTTP, real git.
 */
import test from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { checkDirectory } from '../src/check/check.js';
import { resourcePath } from '../src/model/paths.js';
import { API, no, ok } from './support/current.js';
import { cloneFor, GIT_ENV as ENV, gitIn as git } from './support/git-clone.js';
import { run, TestServer, withServer } from './support/server.js';

/** The refusal's text and what it concerns (C4store-Error-Context), as `no`'s last two arguments. */
const refTaken = (ref: string, kind: string, holder: string, element: string) =>
  [
    `Ref '${ref}' is taken: it is the id of the ${kind} '${holder}', and an id or a ref names one ${kind}.`,
    { context: `${kind} '${element}'` },
  ] as const;
const idTaken = (id: string, kind: string, holder: string, element: string) =>
  [
    `Id '${id}' is taken: it is the ref of the ${kind} '${holder}', and an id or a ref names one ${kind}.`,
    { context: `${kind} '${element}'` },
  ] as const;

test('seed forms: a ref that is the id of another resource of the kind is refused, for every kind; its own id is fine', (t) =>
  withServer(async (s) => {
    const [payments] = await ok(t, s, 'POST', `${API}/component`, [{ name: 'Payments' }]);
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      [{ ref: payments.id, name: 'Billing' }],
      400,
      ...refTaken(payments.id, 'component', 'Payments', 'Billing'),
    );
    await no(
      t,
      s,
      'PUT',
      `${API}/component`,
      [{ ref: payments.id, name: 'Billing' }],
      400,
      ...refTaken(payments.id, 'component', 'Payments', 'Billing'),
    );
    await no(
      t,
      s,
      'POST',
      `${API}/model`,
      { components: [{ ref: payments.id, name: 'Billing' }] },
      400,
      ...refTaken(payments.id, 'component', 'Payments', 'Billing'),
    );
    // An update giving a stored component the ref: the same.
    const [billing] = await ok(t, s, 'POST', `${API}/component`, [{ name: 'Billing' }]);
    await no(
      t,
      s,
      'POST',
      `${API}/component`,
      [{ id: billing.id, ref: payments.id, name: 'Billing' }],
      400,
      ...refTaken(payments.id, 'component', 'Payments', 'Billing'),
    );

    const [pci] = await ok(t, s, 'POST', `${API}/tag`, [{ name: 'PCI', color: 'red' }]);
    await no(t, s, 'POST', `${API}/tag`, [{ ref: pci.id, name: 'GDPR', color: 'blue' }], 400, ...refTaken(pci.id, 'tag', 'PCI', 'GDPR'));
    const [team] = await ok(t, s, 'PUT', `${API}/attribute`, [{ name: 'Team', type: 'STRING' }]);
    await no(
      t,
      s,
      'PUT',
      `${API}/attribute`,
      [{ ref: team.id, name: 'Owner', type: 'STRING' }],
      400,
      ...refTaken(team.id, 'attribute', 'Team', 'Owner'),
    );
    const [c1] = await ok(t, s, 'POST', `${API}/diagram`, [{ name: 'Context', level: 'C1' }]);
    await no(
      t,
      s,
      'POST',
      `${API}/diagram`,
      [{ ref: c1.id, name: 'Containers', level: 'C2' }],
      400,
      ...refTaken(c1.id, 'diagram', 'Context', 'Containers'),
    );

    // A ref that is the resource's own id names one resource: kept, and found either way.
    const [self] = await ok(t, s, 'POST', `${API}/component`, [{ id: payments.id, ref: payments.id, name: 'Payments' }]);
    t.is(self.ref, payments.id);
    // Another kind's id as a ref names nothing twice (each lookup is of one kind).
    const [tagged] = await ok(t, s, 'POST', `${API}/tag`, [{ ref: payments.id, name: 'Payments tag', color: 'green' }]);
    t.is((await s.get(`${API}/tag/${payments.id}`)).body.id, tagged.id);
    t.is((await s.get(`${API}/component/${payments.id}`)).body.name, 'Payments');
  }));

test('current form: a client-chosen id that is another resource’s ref is refused, the other way round too; a request may move the ref away', (t) =>
  withServer(async (s) => {
    const billing = await ok(t, s, 'POST', `${API}/components`, { ref: 'pay', name: 'Billing' }, { status: 201 });
    await no(
      t,
      s,
      'POST',
      `${API}/components`,
      { id: 'pay', name: 'Payments' },
      400,
      ...idTaken('pay', 'component', 'Billing', 'Payments'),
    );
    await no(
      t,
      s,
      'PATCH',
      `${API}/components/upsert-batch`,
      [{ id: 'pay', name: 'Payments' }],
      400,
      ...idTaken('pay', 'component', 'Billing', 'Payments'),
    );
    await no(
      t,
      s,
      'POST',
      `${API}/template`,
      { components: [{ id: 'pay', name: 'Payments' }] },
      400,
      ...idTaken('pay', 'component', 'Billing', 'Payments'),
    );
    // Both in one request, either order.
    await no(
      t,
      s,
      'PATCH',
      `${API}/components/upsert-batch`,
      [
        { id: 'ledger', name: 'Ledger' },
        { ref: 'ledger', name: 'Ledger reader' },
      ],
      400,
      /^(Ref 'ledger' is taken: it is the id of the component 'Ledger'|Id 'ledger' is taken: it is the ref of the component 'Ledger reader')/,
      { context: /^component 'Ledger( reader)?'$/ },
    );
    // PATCH giving a stored component another's id as its ref.
    await ok(t, s, 'POST', `${API}/components`, { id: 'ledger', name: 'Ledger' }, { status: 201 });
    await no(t, s, 'PATCH', `${API}/components/pay`, { ref: 'ledger' }, 400, ...refTaken('ledger', 'component', 'Ledger', 'Billing'));
    // The ref moved off Billing in the very request that makes the id: nothing names two.
    const both = await ok(t, s, 'PATCH', `${API}/components/upsert-batch`, [
      { id: 'pay', name: 'Payments' },
      { id: billing.id, ref: 'billing' },
    ]);
    t.deepEqual(
      both.map((c: { id: string; ref?: string }) => [c.id, c.ref]),
      [
        ['pay', undefined],
        [billing.id, 'billing'],
      ],
    );
    t.is((await s.get(`${API}/components/pay`)).body.name, 'Payments');
    t.is((await s.get(`${API}/components/billing`)).body.name, 'Billing');
  }));

test('component instances: a ref that is another instance’s id in the diagram is refused', (t) =>
  withServer(async (s) => {
    const [diagram] = await ok(t, s, 'POST', `${API}/diagram`, [{ name: 'C2', level: 'C2', componentInstances: [{ placeholder: 'A' }] }]);
    const a = diagram.componentInstances[0].id;
    await no(
      t,
      s,
      'POST',
      `${API}/diagram`,
      [
        {
          id: diagram.id,
          name: 'C2',
          level: 'C2',
          componentInstances: [
            { id: a, placeholder: 'A' },
            { ref: a, placeholder: 'B' },
          ],
        },
      ],
      400,
      `Ref '${a}' is taken: it is the id of another component instance of this diagram, and an id or a ref names one instance.`,
      { context: `diagram 'C2'` },
    );
  }));

test('drafts: a write into a draft is refused alike, and a merge whose sides each brought one half of a pair is refused', (t) =>
  withServer(async (s) => {
    t.is((await s.post(`${API}/components`, { id: 'core', name: 'Core' })).status, 201);
    t.is((await s.post(`${API}/drafts`, { name: 'rename' })).status, 201);
    await no(
      t,
      s,
      'POST',
      `${API}/component?draft=rename`,
      [{ ref: 'core', name: 'Other' }],
      400,
      ...refTaken('core', 'component', 'Core', 'Other'),
    );
    // Each side valid alone: the draft gives Billing the ref 'pay', main makes a component 'pay'.
    const billing = (await s.post(`${API}/components?draft=rename`, { ref: 'pay', name: 'Billing' })).body;
    t.is((await s.post(`${API}/components`, { id: 'pay', name: 'Payments' })).status, 201);
    const rule = `${resourcePath('component', billing.id)}: Ref 'pay' is taken: it is the id of the component 'Payments', and an id or a ref names one component.`;
    t.is((await s.get(`${API}/drafts/rename`)).body.problem, rule);
    const head = await s.head();
    const merge = await s.post(`${API}/drafts/rename/merge`, {});
    t.is(merge.status, 409);
    t.deepEqual(merge.body, { error: rule });
    t.is(await s.head(), head, 'a refused merge changes nothing');
  }));

test('the agents’ write_model is refused alike', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  t.is((await s.post(`${API}/components`, { id: 'core', name: 'Core' })).status, 201);
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${s.key}` } } }),
  );
  t.teardown(() => client.close());
  t.falsy((await client.callTool({ name: 'create_draft', arguments: { name: 'agent' } })).isError);
  const head = (await s.git('rev-parse', 'refs/heads/drafts/agent')).trim();
  const written = await client.callTool({
    name: 'write_model',
    arguments: { draft: 'agent', components: [{ ref: 'core', name: 'Other' }] },
  });
  t.true(written.isError);
  // With what it concerns in the text: an agent has no header to read it in.
  t.regex(
    (written.content as Array<{ text: string }>)[0]!.text,
    /^Ref 'core' is taken: it is the id of the component 'Core'.* \(component 'Other'\)$/,
  );
  t.is((await s.git('rev-parse', 'refs/heads/drafts/agent')).trim(), head);
});

test('a push bringing in such a pair is refused naming the file; one already stored stays readable and writable', async (t) => {
  const s = await TestServer.start();
  t.teardown(() => s.close());
  const [payments, billing] = (await s.post(`${API}/component`, [{ name: 'Payments' }, { name: 'Billing' }])).body;
  const dir = await cloneFor(t, s, 'c4store-names-');
  const file = resourcePath('component', billing.id);
  const text = await readFile(join(dir, file), 'utf8');
  await writeFile(
    join(dir, file),
    text.replace(/^id: .*\n/m, (line) => `${line}ref: ${payments.id}\n`),
  );
  await git(dir, ['commit', '-qam', 'Billing takes the id of Payments as its ref']);
  const head = await s.head();
  const refused = await git(dir, ['push', 'origin', 'HEAD:refs/heads/main']).then(
    () => '',
    (err: { stderr?: string }) => String(err.stderr),
  );
  t.regex(refused, new RegExp(`${file}: Ref '${payments.id}' is taken: it is the id of the component 'Payments'`));
  t.is(await s.head(), head, 'main did not move');
  // `c4store check` of the clone says what the push refused, at the ref.
  const refLine = (await readFile(join(dir, file), 'utf8')).split('\n').indexOf(`ref: ${payments.id}`) + 1;
  t.deepEqual(
    (await checkDirectory(dir)).problems.map((p) => `${p.file}:${p.line}: ${p.message}`),
    [
      `${file}:${refLine}: Ref '${payments.id}' is taken: it is the id of the component 'Payments', and an id or a ref names one component.`,
    ],
  );

  // A pair from before the rule (put on main past the check, as an old repository has it): served,
  // and its resources written as they are; only a new pair is refused.
  await run('git', ['--git-dir', s.gitdir, 'fetch', '-q', dir, '+HEAD:refs/heads/main'], { env: ENV });
  t.is((await s.get(`${API}/component/${billing.id}`)).body.ref, payments.id);
  t.is((await s.get(`${API}/component/${payments.id}`)).body.name, 'Payments', 'an id is found before a ref');
  const written = await s.post(`${API}/component`, [{ id: billing.id, ref: payments.id, name: 'Billing', desc: 'Invoices' }]);
  t.is(written.status, 200, written.text);
  t.is(written.body[0].desc, 'Invoices');

  // A draft branched from that main, changing something else: its commits bring in no pair.
  await git(dir, ['pull', '-q', '--rebase', 'origin', 'main']);
  await git(dir, ['switch', '-q', '-c', 'drafts/rename']);
  const paymentsFile = resourcePath('component', payments.id);
  await writeFile(join(dir, paymentsFile), (await readFile(join(dir, paymentsFile), 'utf8')).replace(/^name: .*$/m, 'name: Payments v2'));
  await git(dir, ['commit', '-qam', 'Rename Payments']);
  const pushed = await git(dir, ['push', 'origin', 'HEAD:refs/heads/drafts/rename']).then(
    () => '',
    (err: { stderr?: string }) => String(err.stderr),
  );
  t.is(pushed, '', 'a draft that leaves the old pair alone is taken');
  t.is((await s.get(`${API}/component/${payments.id}?draft=rename`)).body.name, 'Payments v2');
});
