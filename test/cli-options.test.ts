import test from 'ava';
import { spawn } from 'node:child_process';
import { chmod, cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, CLI, lastLine, serveProcess, untilListening } from './support/process.js';
import { run } from './support/server.js';

/**
 * The command line's numbers and paths: a value it cannot honour is a usage error (exit 2, a
 * sentence on stderr) before anything is made, never a different value taken unsaid.
 */

async function dataDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const data = await mkdtemp(join(tmpdir(), 'c4store-cli-options-'));
  t.teardown(() => rm(data, { recursive: true, force: true }));
  return data;
}

/**
 * Runs the command line until it exits, or, for a `serve` it should have refused, until it
 * listens (then it is stopped and the outcome says so): a refusal test never waits on a server.
 */
async function outcome(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stderr: string; listening?: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const stderr: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const listening = untilListening(child, (line, stream) => stream === 'stderr' && stderr.push(line)).catch(() => undefined);
  const first = await Promise.race([exited.then(() => undefined), listening]);
  if (first !== undefined) child.kill('SIGKILL');
  const code = await exited;
  return { code: first === undefined ? code : null, stderr: stderr.join('\n'), listening: first };
}

test('serve refuses a number of seconds longer than a timer can wait: it fired at once (every layout cancelled, requests cut off)', async (t) => {
  const data = await dataDir(t);
  // 2^31 - 1 ms is about 24.8 days; Node fires a longer timer after 1 ms.
  for (const option of ['--layout-timeout', '--write-timeout', '--drain-delay', '--shutdown-timeout']) {
    const refused = await outcome(['serve', '--data', data, '--port', '0', option, '3000000']);
    t.is(refused.listening, undefined, `${option} 3000000 was taken`);
    t.is(refused.code, 2, option);
    t.regex(refused.stderr, new RegExp(`invalid ${option} '3000000': use a number of seconds .* at most 2147483`), option);
  }
});

test('serve: a timeout of the longest a timer waits is honoured (a layout runs, it is not cancelled at once)', async (t) => {
  const data = await dataDir(t);
  const key = lastLine(await cli('org', 'create', 'acme', '--data', data));
  const server = await serveProcess(data, '--layout-timeout', '2147483', '--write-timeout', '2147483');
  t.teardown(() => server.stop());
  const response = await fetch(`${server.url}/api/external/diagram`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify([{ name: 'Two', level: 'C1', componentInstances: [{ placeholder: 'a' }, { placeholder: 'b' }] }]),
  });
  t.is(response.status, 200, await response.clone().text());
});

test('mirror add refuses an --interval or --timeout longer than a timer can wait: each push was stopped after 1 ms', async (t) => {
  const data = await dataDir(t);
  await cli('org', 'create', 'acme', '--data', data);
  for (const option of ['--interval', '--timeout']) {
    const refused = await outcome(['mirror', 'add', 'acme', '/srv/mirror.git', option, '3000000', '--data', data]);
    t.is(refused.code, 2, option);
    t.regex(refused.stderr, new RegExp(`${option} must be a number of seconds.*at most 2147483`), option);
  }
  t.is(await readFile(join(data, 'mirrors.yaml'), 'utf8').catch(() => 'none'), 'none', 'nothing was written');
});

test('an empty or non-decimal number is refused, not read as 0 (an empty --port served on a random one, an empty --pack-every never packed)', async (t) => {
  const data = await dataDir(t);
  await cli('org', 'create', 'acme', '--data', data);
  const cases: Array<[args: string[], error: RegExp]> = [
    [['serve', '--port', ''], /invalid --port '': a whole number from 0 to 65535/],
    [['serve', '--port', ' 0'], /invalid --port ' 0'/],
    [['serve', '--port', '0x50'], /invalid --port '0x50'/],
    [['serve', '--port', '1e3'], /invalid --port '1e3'/],
    [['serve', '--pack-every', ''], /--pack-every must be a whole number of commits \(0: never\), not ''/],
    [['serve', '--pack-every', '1e3'], /--pack-every must be a whole number/],
    [['serve', '--reads-per-minute', ''], /invalid --reads-per-minute ''/],
    [['serve', '--max-org-components', ' '], /invalid --max-org-components ' '/],
    [['serve', '--drain-delay', ''], /invalid --drain-delay ''/],
    [['serve', '--shutdown-timeout', '0x10'], /invalid --shutdown-timeout '0x10'/],
    [['mirror', 'add', 'acme', '/srv/mirror.git', '--interval', ''], /--interval must be a number of seconds/],
    [['mirror', 'add', 'acme', '/srv/mirror.git', '--timeout', ' '], /--timeout must be a number of seconds/],
  ];
  for (const [args, error] of cases) {
    const refused = await outcome([...args, '--data', data]);
    t.is(refused.listening, undefined, `${args.join(' ')} was taken`);
    t.is(refused.code, 2, args.join(' '));
    t.regex(refused.stderr, error, args.join(' '));
  }
  t.is(await readFile(join(data, 'mirrors.yaml'), 'utf8').catch(() => 'none'), 'none', 'nothing was written');
});

test('$PORT that is not a port is named as $PORT (the message said invalid --port undefined); an empty one is refused, not port 0', async (t) => {
  const data = await dataDir(t);
  for (const port of ['abc', '']) {
    const refused = await outcome(['serve', '--data', data], { PORT: port });
    t.is(refused.listening, undefined, `PORT=${port} was taken`);
    t.is(refused.code, 2);
    t.true(refused.stderr.includes(`invalid $PORT '${port}': a whole number from 0 to 65535`), refused.stderr);
  }
});

test('--data or $C4STORE_DATA given empty is refused: it meant the current folder, where org create made orgs/ and keys.yaml', async (t) => {
  const cwd = await dataDir(t);
  for (const [args, env, error] of [
    [['--data', ''], {}, /--data must name a folder, not ''/],
    [[], { C4STORE_DATA: '' }, /\$C4STORE_DATA must name a folder, not ''/],
  ] as const) {
    const child = spawn(process.execPath, [CLI, 'org', 'create', 'acme', ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    t.is(code, 2);
    t.regex(stderr, error);
    t.deepEqual(await readdir(cwd), [], 'nothing was made');
  }
});

test('serve --demo with an option it refuses makes no demo organization: it did, and its key, shown only by the start that made it, was lost', async (t) => {
  const data = await dataDir(t);
  for (const args of [
    ['--public-url', 'notaurl'],
    ['--layout-timeout', '0'],
    ['--reads-per-minute', 'many'],
  ]) {
    const refused = await outcome(['serve', '--demo', '--data', data, '--port', '0', ...args]);
    t.is(refused.code, 2, args.join(' '));
    t.deepEqual(await readdir(data), [], `${args.join(' ')}: nothing was made`);
  }
});

/**
 * A folder this process cannot write: made read-only by its mode, or, for root (whom modes do
 * not stop), by mounting a read-only file system on it; undefined when neither can be had here.
 */
async function readOnlyFolder(t: { teardown(fn: () => Promise<void>): void }, prepare: (dir: string) => Promise<void>) {
  const dir = await dataDir(t);
  await prepare(dir);
  await chmod(dir, 0o555);
  t.teardown(() => chmod(dir, 0o755));
  const probe = join(dir, 'probe');
  const writable = await writeFile(probe, '').then(
    () => true,
    () => false,
  );
  if (!writable) return dir;
  await rm(probe);
  // Root: the same contents on a read-only tmpfs over the folder.
  const copy = await dataDir(t);
  await cp(dir, copy, { recursive: true });
  const mounted = await run('mount', ['-t', 'tmpfs', 'tmpfs', dir]).then(
    () => true,
    () => false,
  );
  if (!mounted) return undefined;
  t.teardown(async () => {
    await run('umount', [dir]);
  });
  await cp(copy, dir, { recursive: true });
  await run('mount', ['-o', 'remount,ro', dir]);
  return dir;
}

test('serve refuses a data directory it cannot write: it started, /healthz said ok, and every write answered 500 Internal error', async (t) => {
  const data = await readOnlyFolder(t, async (dir) => {
    await cli('org', 'create', 'acme', '--data', dir);
  });
  if (data === undefined) {
    t.pass('no read-only folder can be made here (root without mount)');
    return;
  }
  const refused = await outcome(['serve', '--data', data, '--port', '0']);
  t.is(refused.listening, undefined, 'it served');
  t.is(refused.code, 1);
  t.true(refused.stderr.includes(`the data directory ${data} cannot be written`), refused.stderr);
  t.notRegex(refused.stderr, /\n\s+at /);
});

test('--data naming a file or a link to nothing is said so: it was the ENOTDIR of the first file read in it, or a write check of EEXIST', async (t) => {
  const dir = await dataDir(t);
  const file = join(dir, 'file');
  await writeFile(file, 'not a data directory\n');
  const dangling = join(dir, 'dangling');
  await symlink(join(dir, 'nowhere'), dangling);
  for (const [data, error] of [
    [file, `the data directory ${file} is not a folder`],
    [dangling, `the data directory ${dangling} is a symbolic link to nothing (${join(dir, 'nowhere')})`],
  ] as const) {
    for (const args of [
      ['org', 'create', 'acme'],
      ['key', 'create', 'acme'],
      ['mirror', 'list'],
      ['serve', '--port', '0'],
    ]) {
      const refused = await outcome([...args, '--data', data]);
      t.is(refused.listening, undefined, `${args.join(' ')} served`);
      t.is(refused.code, 1, args.join(' '));
      t.true(refused.stderr.includes(error), `${args.join(' ')}: ${refused.stderr}`);
    }
  }
  t.is(await readFile(file, 'utf8'), 'not a data directory\n');
  t.deepEqual((await readdir(dir)).sort(), ['dangling', 'file']);
});

test('an option the command does not take is refused, not ignored: key create --name made a key labelled api, mirror list --interval listed', async (t) => {
  const data = await dataDir(t);
  await cli('org', 'create', 'acme', '--data', data);
  const keys = await readFile(join(data, 'keys.yaml'), 'utf8');
  const cases: Array<[args: string[], option: string, command: string]> = [
    [['key', 'create', 'acme', '--name', 'CI key'], '--name', 'key create'],
    [['key', 'list', 'acme', '--port', '80'], '--port', 'key list'],
    [['org', 'create', 'other', '--interval', '5'], '--interval', 'org create'],
    [['member', 'add', 'acme', 'a@acme.test', '--role', 'reader'], '--role', 'member add'],
    [['mirror', 'add', 'acme', '/srv/m.git', '--event', 'model.changed'], '--event', 'mirror add'],
    [['webhook', 'add', 'acme', 'http://127.0.0.1:9/h', '--webhook-allow-private', '--interval', '5'], '--interval', 'webhook add'],
    [['export', 'acme', '--format', 'mermaid', '--label', 'x'], '--label', 'export'],
    [['upgrade', 'acme', '--from', 'sample-repo'], '--from', 'upgrade'],
    [['serve', '--port', '0', '--label', 'x'], '--label', 'serve'],
  ];
  for (const [args, option, command] of cases) {
    const refused = await outcome([...args, '--data', data]);
    t.is(refused.listening, undefined, `${args.join(' ')} served`);
    t.is(refused.code, 2, args.join(' '));
    t.true(refused.stderr.includes(`${command} does not take ${option}`), `${args.join(' ')}: ${refused.stderr}`);
  }
  t.is(await readFile(join(data, 'keys.yaml'), 'utf8'), keys, 'no key made');
  t.deepEqual(await readdir(join(data, 'orgs')), ['acme.git'], 'no organization made');
  t.deepEqual((await readdir(data)).sort(), ['keys.yaml', 'orgs'], 'no mirror or webhook added');
  const check = await outcome(['check', 'sample-repo', '--data', data]);
  t.is(check.code, 2);
  t.true(check.stderr.includes('check does not take --data'), check.stderr);
});

test('an option of one value given twice is refused, not the last one taken unsaid; --member and --event add up', async (t) => {
  const data = await dataDir(t);
  const other = await dataDir(t);
  const twice = await outcome(['org', 'create', 'acme', '--data', data, '--data', other]);
  t.is(twice.code, 2);
  t.true(twice.stderr.includes(`--data is given more than once ('${data}', then '${other}'): give it once`), twice.stderr);
  const served = await outcome(['serve', '--data', data, '--port', '0', '--port', '1']);
  t.is(served.listening, undefined, 'served on one of the two ports');
  t.is(served.code, 2);
  t.true(served.stderr.includes("--port is given more than once ('0', then '1')"), served.stderr);
  const flags = await outcome(['serve', '--data', data, '--port', '0', '--durable', '--durable']);
  t.is(flags.code, 2);
  t.true(flags.stderr.includes('--durable is given more than once: give it once'), flags.stderr);
  t.deepEqual(await readdir(data), [], 'nothing made');
  t.deepEqual(await readdir(other), [], 'nothing made');
  const members = await outcome(['org', 'create', 'acme', '--data', data, '--member', 'a@example.com', '--member', 'b@example.com']);
  t.is(members.code, 0, members.stderr);
});

test('serve --host given empty is refused: it listened on every interface (the default is loopback only) and printed http://:PORT', async (t) => {
  const data = await dataDir(t);
  for (const host of ['', ' ']) {
    const refused = await outcome(['serve', '--data', data, '--port', '0', '--host', host]);
    t.is(refused.listening, undefined, `--host '${host}' served`);
    t.is(refused.code, 2);
    t.true(
      refused.stderr.includes(`--host must name an address to listen on, such as 127.0.0.1 or 0.0.0.0, not '${host}'`),
      refused.stderr,
    );
  }
  // One that names no address of this machine is named in the refusal.
  const unknown = await outcome(['serve', '--data', data, '--port', '0', '--host', '999.1.1.1']);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /cannot listen on --host 999\.1\.1\.1: it is no address of this machine \(ENOTFOUND\)/);
});

test('$C4STORE_DURABLE other than 1 or 0 is refused: true, yes or on were read as not durable, unsaid', async (t) => {
  const data = await dataDir(t);
  for (const value of ['true', 'yes', 'on', ' 1']) {
    for (const args of [
      ['org', 'create', 'acme'],
      ['serve', '--port', '0'],
    ]) {
      const refused = await outcome([...args, '--data', data], { C4STORE_DURABLE: value });
      t.is(refused.listening, undefined, `${args.join(' ')} with C4STORE_DURABLE=${value} served`);
      t.is(refused.code, 2, `${args.join(' ')} with C4STORE_DURABLE=${value}`);
      t.true(refused.stderr.includes(`$C4STORE_DURABLE must be 1 (fsync every write) or 0, not '${value}'`), refused.stderr);
    }
  }
  t.deepEqual(await readdir(data), [], 'nothing was made');
  t.regex(await cli('org', 'create', 'acme', '--data', data), /created organization 'acme'/);
});

test('a $C4STORE_METRICS_TOKEN too short is named as such (it was called --metrics-token)', async (t) => {
  const data = await dataDir(t);
  const refused = await outcome(['serve', '--data', data, '--port', '0'], { C4STORE_METRICS_TOKEN: 'short' });
  t.is(refused.code, 2);
  t.true(refused.stderr.includes('$C4STORE_METRICS_TOKEN must be at least 16 characters'), refused.stderr);
  const option = await outcome(['serve', '--data', data, '--port', '0', '--metrics-token', 'short']);
  t.is(option.code, 2);
  t.true(option.stderr.includes('--metrics-token must be at least 16 characters'), option.stderr);
});

test('a refused key revoke or mirror remove changes nothing: it made a missing data directory, and mirror remove wrote a mirrors.yaml', async (t) => {
  const parent = await dataDir(t);
  const missing = join(parent, 'data');
  for (const args of [
    ['key', 'revoke', 'acme', '0123456789abcdef'],
    ['mirror', 'remove', 'acme', '/srv/mirror.git'],
    ['webhook', 'remove', 'acme', 'wh_0123456789abcdef'],
  ]) {
    const refused = await outcome([...args, '--data', missing]);
    t.is(refused.code, 1, args.join(' '));
    t.deepEqual(await readdir(parent), [], `${args.join(' ')}: nothing was made`);
  }
  const data = await dataDir(t);
  await cli('org', 'create', 'acme', '--data', data);
  const before = (await readdir(data)).sort();
  const refused = await outcome(['mirror', 'remove', 'acme', '/srv/mirror.git', '--data', data]);
  t.is(refused.code, 1);
  t.true(refused.stderr.includes("'acme' has no mirror /srv/mirror.git"), refused.stderr);
  t.deepEqual((await readdir(data)).sort(), before, 'no mirrors.yaml written');
});
