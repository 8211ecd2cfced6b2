import test from 'ava';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, CLI, lastLine, serveProcess } from './support/process.js';
import { run } from './support/server.js';

async function dataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'c4store-cli-'));
}

async function get(url: string, key: string, path: string) {
  const response = await fetch(url + path, { headers: { 'x-api-key': key } });
  return { status: response.status, body: (await response.json()) as any };
}

async function failure(args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, [CLI, ...args]);
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
  throw new Error(`c4store ${args.join(' ')} succeeded`);
}

test('org create makes a bare repo with the default types and prints a working key last', async (t) => {
  const data = await dataDir();
  const output = await cli(
    'org',
    'create',
    'acme',
    '--name',
    'Acme Corp',
    '--member',
    'a@acme.test',
    '--member',
    'b@acme.test',
    '--data',
    data,
  );
  const key = lastLine(output);
  t.regex(key, /^c4s_[A-Za-z0-9_-]{43}$/);
  const { stdout: bare } = await run('git', ['--git-dir', join(data, 'orgs', 'acme.git'), 'rev-parse', '--is-bare-repository']);
  t.is(bare.trim(), 'true');
  const organization = (await run('git', ['--git-dir', join(data, 'orgs', 'acme.git'), 'show', 'main:organization.yaml'])).stdout;
  t.is(
    organization,
    '# yaml-language-server: $schema=.c4store/schemas/organization.json\nname: Acme Corp\nslug: acme\nmembers:\n  - a@acme.test\n  - b@acme.test\n',
  );
  const server = await serveProcess(data);
  t.teardown(() => server.stop());
  const types = await get(server.url, key, '/api/external/type');
  t.is(types.status, 200);
  t.deepEqual(
    types.body.map((type: { slug: string }) => type.slug),
    ['person', 'software-system', 'container', 'component', 'database', 'queue'],
  );
  const keysFile = await stat(join(data, 'keys.yaml'));
  t.is(keysFile.mode & 0o777, 0o600);
  t.false((await readFile(join(data, 'keys.yaml'), 'utf8')).includes(key));
});

test('org create --from loads a model folder; refuses bad slugs, existing orgs and broken folders', async (t) => {
  const data = await dataDir();
  t.teardown(() => rm(data, { recursive: true, force: true }));
  const key = lastLine(await cli('org', 'create', 'shop', '--from', 'sample-repo', '--data', data));
  const server = await serveProcess(data);
  t.teardown(() => server.stop());
  const model = await get(server.url, key, '/api/external/model');
  t.is(model.body.components.length, 32);
  t.is(model.body.diagrams.length, 4);
  t.deepEqual(model.body.diagrams.map((d: { level: string }) => d.level).sort(), ['C1', 'C2', 'C3', 'C4']);

  const badSlug = await failure(['org', 'create', '../evil', '--data', data]);
  t.is(badSlug.code, 1);
  t.regex(badSlug.stderr, /Invalid organization slug '\.\.\/evil'/);
  const again = await failure(['org', 'create', 'shop', '--data', data]);
  t.regex(again.stderr, /Organization 'shop' already exists\./);
  const missing = await failure(['org', 'create', 'other', '--from', join(data, 'nope'), '--data', data]);
  t.regex(missing.stderr, /no such folder/);
  const usage = await failure(['org', 'create', '--data', data]);
  t.is(usage.code, 2);
  t.regex(usage.stderr, /usage: c4store org create/);
  const unknown = await failure(['frobnicate']);
  t.is(unknown.code, 2);

  // What the first key needs is checked before the organization is made: a refusal makes nothing.
  const role = await failure(['org', 'create', 'readers', '--role', 'reader', '--data', data]);
  t.is(role.code, 2);
  t.regex(role.stderr, /org create makes an editor key; a reader key is made with key create --role reader/);
  const label = await failure(['org', 'create', 'labelled', '--label', 'a\u0007b', '--data', data]);
  t.regex(label.stderr, /A key label must not contain control characters/);
  const keysFile = join(data, 'keys.yaml');
  const keys = await readFile(keysFile, 'utf8');
  await writeFile(keysFile, keys.slice(0, 150));
  const damaged = await failure(['org', 'create', 'neworg', '--data', data]);
  t.is(damaged.code, 1);
  t.regex(damaged.stderr, /keys\.yaml/);
  await writeFile(keysFile, keys);
  for (const slug of ['readers', 'labelled', 'neworg']) t.false(existsSync(join(data, 'orgs', `${slug}.git`)), slug);
  t.regex(await cli('org', 'create', 'neworg', '--data', data), /created organization 'neworg'/);
});

test('org create --from holds the folder to what a push of it meets: tags, merge keys, inexact numbers, a ref that is another id', async (t) => {
  const data = await dataDir();
  t.teardown(() => rm(data, { recursive: true, force: true }));
  const payment = 'components/64/01jnjsnmg046yyp0j1g0mqc5fh.yaml';
  const clerk = 'components/d5/01jnjs6zr0evdcrg6a311js3sj.yaml';
  const cases: Array<[name: string, file: string, edit: (text: string) => string, error: RegExp]> = [
    [
      'number',
      payment,
      (text) => text.replace('value: 2650.4', 'value: 9007199254740993'),
      /9007199254740993 .*would become 9007199254740992/,
    ],
    [
      'merge',
      payment,
      (text) => text.replace('state: ACTIVE', 'state: ACTIVE\n<<: { desc: merged }'),
      /merge key '<<' at line 6, column 1/,
    ],
    [
      'tag',
      payment,
      (text) => text.replace('name: Payment Provider', 'name: !custom Payment Provider'),
      /The tag '!custom' at line 3, column 7 is not read here/,
    ],
    [
      'ref',
      clerk,
      (text) => text.replace('ref: warehouse-clerk', 'ref: 01jnjsnmg046yyp0j1g0mqc5fh'),
      /Ref '01jnjsnmg046yyp0j1g0mqc5fh' is taken/,
    ],
  ];
  for (const [name, file, edit, error] of cases) {
    const folder = join(data, `from-${name}`);
    await cp('sample-repo', folder, { recursive: true });
    const text = await readFile(join(folder, file), 'utf8');
    t.not(edit(text), text, name);
    await writeFile(join(folder, file), edit(text));
    const refused = await failure(['org', 'create', name, '--from', folder, '--data', data]);
    t.is(refused.code, 1, name);
    t.true(refused.stderr.includes(file), `${name}: ${refused.stderr}`);
    t.regex(refused.stderr, error, name);
    t.false(existsSync(join(data, 'orgs', `${name}.git`)), name);
  }
});

test('keys: reader role, list, revoke takes effect on a running server within a second', async (t) => {
  const data = await dataDir();
  await cli('org', 'create', 'acme', '--data', data);
  const editor = lastLine(await cli('key', 'create', 'acme', '--label', 'ci', '--data', data));
  const reader = lastLine(await cli('key', 'create', 'acme', '--label', 'dashboard', '--role', 'reader', '--data', data));
  const server = await serveProcess(data);
  t.teardown(() => server.stop());

  const write = (key: string) =>
    fetch(`${server.url}/api/external/tag`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ name: 'X', color: 'red' }]),
    });
  t.is((await write(editor)).status, 200);
  const refused = await write(reader);
  t.is(refused.status, 403);
  t.deepEqual(await refused.json(), { error: 'This API key may only read.' });
  t.is((await get(server.url, reader, '/api/external/tag')).status, 200);

  const listed = (await cli('key', 'list', 'acme', '--data', data)).trim().split('\n');
  t.is(listed.length, 3);
  const ci = listed.find((line) => line.split('\t')[1] === 'ci')!;
  t.regex(ci, /\teditor\t.*\tactive$/);
  await cli('key', 'revoke', 'acme', ci.split('\t')[0], '--data', data);
  const after = await get(server.url, editor, '/api/external/tag');
  t.is(after.status, 401);
  t.deepEqual(after.body, { error: 'Invalid API key.' });
  t.regex(await cli('key', 'list', 'acme', '--data', data), /\tci\teditor\t.*\trevoked /);
  const unknown = await failure(['key', 'revoke', 'acme', 'nope', '--data', data]);
  t.is(unknown.code, 1);
  const badRole = await failure(['key', 'create', 'acme', '--role', 'admin', '--data', data]);
  t.is(badRole.code, 2);
});

test('member add commits the organization file and makes the address a valid USERLIST value', async (t) => {
  const data = await dataDir();
  const key = lastLine(await cli('org', 'create', 'acme', '--data', data));
  const server = await serveProcess(data);
  t.teardown(() => server.stop());
  const post = (path: string, body: unknown) =>
    fetch(server.url + path, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const [owner] = (await post('/api/external/attribute', [{ name: 'Owner', type: 'USERLIST' }])).body;
  const component = (email: string) =>
    post('/api/external/component', [{ ref: 'api', name: 'API', attributes: [{ id: owner.id, value: email }] }]);
  t.is((await component('new@acme.test')).status, 400);
  const gitdir = join(data, 'orgs', 'acme.git');
  const before = Number((await run('git', ['--git-dir', gitdir, 'rev-list', '--count', 'main'])).stdout);
  await cli('member', 'add', 'acme', 'new@acme.test', '--data', data);
  t.is(Number((await run('git', ['--git-dir', gitdir, 'rev-list', '--count', 'main'])).stdout), before + 1);
  await cli('member', 'add', 'acme', 'new@acme.test', '--data', data);
  t.is(Number((await run('git', ['--git-dir', gitdir, 'rev-list', '--count', 'main'])).stdout), before + 1, 'adding twice is no change');
  const accepted = await component('new@acme.test');
  t.is(accepted.status, 200);
  t.is(accepted.body[0].attributes[0].value, 'new@acme.test');
  const bad = await failure(['member', 'add', 'acme', 'not-an-address', '--data', data]);
  t.is(bad.code, 2);
  const coloured = await failure(['member', 'add', 'acme', '\u001b[31mred@acme.test', '--data', data]);
  t.is(coloured.code, 2);
  // Shown escaped: the refusal itself must not colour the operator's terminal.
  t.true(coloured.stderr.includes("'\\u001b[31mred@acme.test' is not an e-mail address"), coloured.stderr);
  const commits = Number((await run('git', ['--git-dir', gitdir, 'rev-list', '--count', 'main'])).stdout);
  const cased = await failure(['member', 'add', 'acme', 'New@Acme.test', '--data', data]);
  t.regex(cased.stderr, /'acme' already has the member new@acme\.test, which New@Acme\.test is in another case\./);
  t.is(Number((await run('git', ['--git-dir', gitdir, 'rev-list', '--count', 'main'])).stdout), commits, 'nothing added');
  // org create --member holds members to the same rule (it stored any text before), and a name to be one.
  // Control and format characters too: a terminal escape or a right-to-left override is no address, and would reach every terminal listing members.
  for (const member of [
    'not-an-address',
    '"><img src=x onerror=alert(1)>@x.com',
    'a@b',
    'a@-b.c',
    'a@b..c',
    '\u001b[31mred@acme.test',
    'a\u202eoc.b@acme.test',
    'bell\u0007@acme.test',
  ]) {
    const refused = await failure(['org', 'create', 'other', '--member', member, '--data', data]);
    t.is(refused.code, 2);
    t.regex(refused.stderr, /is not an e-mail address/);
  }
  // One address, one member, whatever its case, as member add holds it: two --member in two cases made two members.
  const twice = await failure(['org', 'create', 'other', '--member', 'a@acme.test', '--member', 'A@Acme.test', '--data', data]);
  t.is(twice.code, 1);
  t.regex(twice.stderr, /Member A@Acme\.test is a@acme\.test in another case: an address is one member, whatever its case\./);
  const unnamed = await failure(['org', 'create', 'other', '--name', ' ', '--data', data]);
  t.is(unnamed.code, 2);
  t.regex(unnamed.stderr, /--name must not be empty/);
  t.false(existsSync(join(data, 'orgs', 'other.git')), 'nothing was made');
});

test('serve --demo (npm start) creates the demo organization once and prints a curl command that works', async (t) => {
  const data = await dataDir();
  const first = await serveProcess(data, '--demo');
  const curl = first.output.find((line) => line.startsWith('try: curl '))!;
  t.truthy(curl);
  const { stdout } = await run('sh', ['-c', curl.slice('try: '.length)]);
  t.is(JSON.parse(stdout).length, 32);
  // The start-up message names the viewer's address too; it asks for the key first.
  t.true(first.output.includes(`viewer: ${first.url}/ (sign in with an API key of the organization)`));
  t.is((await fetch(`${first.url}/`, { redirect: 'manual' })).headers.get('location'), '/sign-in?next=%2F');
  // The built server finds the viewer's stylesheet and script in the package.
  for (const asset of ['viewer.css', 'viewer.js']) t.is((await fetch(`${first.url}/viewer/${asset}`)).status, 200);
  await first.stop();
  const second = await serveProcess(data, '--demo');
  t.teardown(() => second.stop());
  t.false(second.output.some((line) => line.startsWith('try: curl ')));
  t.is((await run('git', ['--git-dir', join(data, 'orgs', 'demo.git'), 'rev-list', '--count', 'main'])).stdout.trim(), '1');
});

test('serve --demo on a busy port still shows the demo key it made, and says how to pick a port', async (t) => {
  const data = await dataDir();
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => busy.close());
  const port = String((busy.address() as AddressInfo).port);
  let outcome: { code: number; stdout: string; stderr: string } | undefined;
  try {
    await run(process.execPath, [CLI, 'serve', '--demo', '--data', data, '--port', port]);
  } catch (err) {
    outcome = err as { code: number; stdout: string; stderr: string };
  }
  t.is(outcome?.code, 1);
  t.regex(outcome!.stderr, new RegExp(`port ${port} is in use: start on another one with --port N \\(npm start -- --port N\\)`));
  const key = /its API key \(shown once\):\n(\S+)/.exec(outcome!.stdout)?.[1];
  t.truthy(key, outcome!.stdout);
  // The organization is there, and the key shown opens it.
  const server = await serveProcess(data, '--demo');
  t.teardown(() => server.stop());
  t.is((await get(server.url, key!, '/api/external/component')).body.length, 32);
  // Its first commit names the folder, not the path of the machine that made it.
  const subject = (await run('git', ['--git-dir', join(data, 'orgs', 'demo.git'), 'log', '--format=%s', 'main'])).stdout.trim();
  t.is(subject, 'Create organization demo from sample-repo/');
});

test('--help prints the usage', async (t) => {
  t.regex(await cli('--help'), /c4store org create <slug>/);
});

test('serve --max-* options set the limits; a bad value, or a bad timeout, is a usage error', async (t) => {
  const data = await dataDir();
  t.teardown(() => rm(data, { recursive: true, force: true }));
  const key = lastLine(await cli('org', 'create', 'acme', '--data', data));
  const server = await serveProcess(data, '--max-diagram-instances', '1', '--max-write-elements', '100');
  t.teardown(() => server.stop());
  const response = await fetch(`${server.url}/api/external/diagram`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify([{ name: 'Two', level: 'C1', componentInstances: [{}, {}] }]),
  });
  t.is(response.status, 413);
  t.deepEqual(await response.json(), {
    error:
      "Diagram 'Two' has 2 component instances; the limit is 1 component instances per diagram (raise it with: c4store serve --max-diagram-instances N).",
  });
  const bad = await failure(['serve', '--data', data, '--max-org-components', '0']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /invalid --max-org-components '0': use a whole number of at least 1/);
  const badTimeout = await failure(['serve', '--data', data, '--layout-timeout', 'soon']);
  t.is(badTimeout.code, 2);
  t.regex(badTimeout.stderr, /invalid --layout-timeout 'soon': use a number of seconds above 0/);
  for (const url of ['notaurl', 'ftp://x', 'https://']) {
    const badUrl = await failure(['serve', '--data', data, '--public-url', url]);
    t.is(badUrl.code, 2, url);
    t.regex(badUrl.stderr, /--public-url must be the http\(s\) address clients reach the server at/);
  }
});

test('key list says a key made for an earlier organization under the slug opens nothing: it listed it as active', async (t) => {
  const data = await dataDir();
  t.teardown(() => rm(data, { recursive: true, force: true }));
  const old = lastLine(await cli('org', 'create', 'acme', '--data', data));
  await rm(join(data, 'orgs', 'acme.git'), { recursive: true });
  const current = lastLine(await cli('org', 'create', 'acme', '--data', data));
  const listed = (await cli('key', 'list', 'acme', '--data', data)).trim().split('\n');
  t.is(listed.length, 2);
  t.regex(listed[0]!, /\tadmin\teditor\t.*\topens nothing: made for an earlier organization under this slug$/);
  t.regex(listed[1]!, /\tadmin\teditor\t.*\tactive$/);
  const server = await serveProcess(data);
  t.teardown(() => server.stop());
  t.is((await get(server.url, old, '/api/external/tag')).status, 401);
  t.is((await get(server.url, current, '/api/external/tag')).status, 200);
});

test('org create --from refuses entries a push refuses for their shape (a linked model file was skipped unsaid), and a file for a folder', async (t) => {
  const data = await dataDir();
  t.teardown(() => rm(data, { recursive: true, force: true }));
  const folder = join(data, 'from');
  await cp('sample-repo', folder, { recursive: true });
  // A tag no diagram names: skipped, the organization was made without it.
  const tag = 'tags/01jng6t8r05djpm6hze0xs31dd.yaml';
  await rename(join(folder, tag), join(data, 'tag.yaml'));
  await symlink(join(data, 'tag.yaml'), join(folder, tag));
  const linked = await failure(['org', 'create', 'linked', '--from', folder, '--data', data]);
  t.is(linked.code, 1);
  t.true(linked.stderr.includes(`${tag}: must be a plain file (mode 100644) as c4store writes it, not mode 120000.`), linked.stderr);
  t.false(existsSync(join(data, 'orgs', 'linked.git')));
  const file = await failure(['org', 'create', 'file', '--from', join(folder, 'organization.yaml'), '--data', data]);
  t.is(file.code, 1);
  t.regex(file.stderr, /--from .*organization\.yaml: not a folder/);
  t.notRegex(file.stderr, /ENOTDIR/);
  t.false(existsSync(join(data, 'orgs', 'file.git')));
});

test('a webhook whose subscription.json is gone is listed as damaged and can be removed: it was neither listed nor removable, yet held a place toward the 20', async (t) => {
  const data = await dataDir();
  t.teardown(() => rm(data, { recursive: true, force: true }));
  await cli('org', 'create', 'acme', '--data', data);
  const added = await cli('webhook', 'add', 'acme', 'http://127.0.0.1:9/hook', '--webhook-allow-private', '--data', data);
  const id = /webhook (wh_[0-9a-f]+) /.exec(added)![1]!;
  const folder = join(data, 'webhooks', 'acme', id);
  await rm(join(folder, 'subscription.json'));
  const listed = (await cli('webhook', 'list', 'acme', '--data', data)).trim();
  t.is(
    listed,
    `${id}\t\t\t\tdamaged: Webhook ${id} of 'acme': its subscription.json cannot be read (it is missing); repair the file, or remove the webhook.`,
  );
  t.regex(await cli('webhook', 'remove', 'acme', id, '--data', data), new RegExp(`removed webhook ${id} of 'acme'`));
  t.false(existsSync(folder));
  t.is((await cli('webhook', 'list', 'acme', '--data', data)).trim(), '');
});
