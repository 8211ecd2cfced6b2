/**
 * keys.yaml's seal (src/store/keys.ts): the first line counts the keys and hashes the rest, so
 * that a file cut short (a disk fault) or changed behind c4store's back is refused, 503 naming
 * it, by the server and by the command line alike, and never read as a shorter list of keys or
 * a key without its revocation. A file without a seal (an earlier version's, or one edited by
 * hand with its seal deleted) still loads, its keys checked one by one, and is sealed by the
 * next write. The real command line (dist/cli.js) and the real server (`c4store serve`).
 */
import test from 'ava';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { cli, CLI, lastLine, type ServerProcess, serveProcess } from './support/process.js';
import { run } from './support/server.js';

const REFUSAL = /^The data directory's keys\.yaml cannot be read: .+\. Requests that need it are refused until it is repaired\.$/;
const SEAL_REFUSAL =
  "The data directory's keys.yaml cannot be read: its seal (the first line) does not match the rest: the file was cut short, or changed by other means than c4store (after a change by hand, delete the seal line to have each key checked and the file sealed again). Requests that need it are refused until it is repaired.";
const SEAL = /^# c4store seal: (\d+) keys, sha256 [0-9a-f]{64}\n/;

const dirs: string[] = [];
test.after.always(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/**
 * An organization `acme` made by the command line with three keys: `admin`, `kept`, and
 * `leaving`, revoked, the file's last record. A server runs over it.
 */
async function organization(): Promise<{
  data: string;
  file: string;
  admin: string;
  kept: string;
  leaving: string;
  server: ServerProcess;
}> {
  const data = await mkdtemp(join(tmpdir(), 'c4store-keys-seal-'));
  dirs.push(data);
  const admin = lastLine(await cli('org', 'create', 'acme', '--data', data));
  const kept = lastLine(await cli('key', 'create', 'acme', '--label', 'kept', '--data', data));
  const leaving = lastLine(await cli('key', 'create', 'acme', '--label', 'leaving', '--data', data));
  const leavingId = (await cli('key', 'list', 'acme', '--data', data))
    .split('\n')
    .find((line) => line.split('\t')[1] === 'leaving')!
    .split('\t')[0]!;
  await cli('key', 'revoke', 'acme', leavingId, '--data', data);
  const server = await serveProcess(data);
  return { data, file: join(data, 'keys.yaml'), admin, kept, leaving, server };
}

async function status(server: ServerProcess, key: string): Promise<{ status: number; error?: string }> {
  const response = await fetch(`${server.url}/api/external/tag`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await response.json()) as { error?: string };
  return { status: response.status, error: body.error };
}

async function cliFailure(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, [CLI, ...args]);
  } catch (err) {
    const { code, stderr } = err as { code: number; stderr: string };
    return { code, stderr };
  }
  throw new Error(`c4store ${args.join(' ')} succeeded`);
}

/** The file as the version before seals wrote it: its records as they are, `revokedLast` as still earlier versions ordered them. */
function unsealed(sealedText: string, revokedLast = false): string {
  const records = (parse(sealedText) as { keys: Array<Record<string, string>> }).keys.map((record) => {
    if (!revokedLast || record.revoked === undefined) return record;
    const { revoked, ...rest } = record;
    return { ...rest, revoked };
  });
  return `# c4store API keys: SHA-256 hashes only. Manage with \`c4store key ...\`.\n${stringify({ keys: records })}`;
}

test('every writer seals the file: its first line counts the keys and hashes the rest', async (t) => {
  const { file, server } = await organization();
  t.teardown(() => server.stop());
  const text = await readFile(file, 'utf8');
  t.is(SEAL.exec(text)?.[1], '3', text);
  t.deepEqual(
    (parse(text) as { keys: Array<{ label: string }> }).keys.map((key) => key.label),
    ['admin', 'kept', 'leaving'],
  );
});

test('a keys.yaml cut short anywhere is refused, by the server (503 naming it) and the command line alike, and nothing is written over it', async (t) => {
  const { data, file, admin, leaving, server } = await organization();
  t.teardown(() => server.stop());
  const whole = await readFile(file, 'utf8');
  t.is((await status(server, admin)).status, 200);
  t.is((await status(server, leaving)).status, 401);

  const lastRecord = whole.lastIndexOf('  - id:');
  for (let cut = 0; cut < whole.length; cut++) {
    await writeFile(file, whole.slice(0, cut));
    const answer = await status(server, admin);
    t.is(answer.status, 503, `cut at ${cut}`);
    t.regex(answer.error ?? '', REFUSAL, `cut at ${cut}`);
    // Inside the revoked key's record: never valid again, whatever the cut leaves of it.
    if (cut >= lastRecord) t.is((await status(server, leaving)).status, 503, `cut at ${cut}`);
  }

  // The cuts the seal is for: a whole record dropped at a line boundary, a time cut inside.
  const createdOfLast = whole.indexOf('created: ', lastRecord) + 'created: '.length;
  for (const cut of [lastRecord, createdOfLast + 13]) {
    const damaged = whole.slice(0, cut);
    await writeFile(file, damaged);
    t.deepEqual(await status(server, admin), { status: 503, error: SEAL_REFUSAL }, JSON.stringify(damaged.slice(lastRecord)));
    for (const args of [
      ['key', 'list', 'acme'],
      ['key', 'create', 'acme', '--label', 'another'],
      ['key', 'revoke', 'acme', '0123456789abcdef'],
    ]) {
      const refused = await cliFailure(...args, '--data', data);
      t.is(refused.code, 1, args.join(' '));
      t.is(refused.stderr.trim(), `c4store: ${SEAL_REFUSAL}`, args.join(' '));
    }
    t.is(await readFile(file, 'utf8'), damaged, 'nothing was written over it');
  }

  await writeFile(file, whole);
  t.is((await status(server, admin)).status, 200);
  t.is((await status(server, leaving)).status, 401);
});

test('a revocation taken out of a sealed file does not make its key valid again: the file is refused', async (t) => {
  const { file, admin, leaving, server } = await organization();
  t.teardown(() => server.stop());
  const whole = await readFile(file, 'utf8');
  const withoutRevocation = whole.replace(/^ {4}revoked: .*\n/m, '');
  t.not(withoutRevocation, whole);
  await writeFile(file, withoutRevocation);
  t.deepEqual(await status(server, leaving), { status: 503, error: SEAL_REFUSAL });
  t.deepEqual(await status(server, admin), { status: 503, error: SEAL_REFUSAL });
});

test('a keys.yaml without a seal (an earlier version wrote it) still loads, each key checked whole; the next write seals it', async (t) => {
  const { data, file, admin, kept, leaving, server } = await organization();
  t.teardown(() => server.stop());
  const sealed = await readFile(file, 'utf8');
  for (const revokedLast of [false, true]) {
    const older = unsealed(sealed, revokedLast);
    await writeFile(file, older, { mode: 0o600 });
    t.is((await status(server, admin)).status, 200);
    t.is((await status(server, kept)).status, 200);
    t.is((await status(server, leaving)).status, 401, 'a revoked key stays revoked');
    const listed = await cli('key', 'list', 'acme', '--data', data);
    t.regex(listed, /\tleaving\teditor\t\S+\trevoked \d{4}-/);
    t.is(await readFile(file, 'utf8'), older, 'reading changes nothing');
  }

  // Without a seal nothing tells a cut file from a whole one but its keys: each must be whole.
  const older = unsealed(sealed);
  const created = older.lastIndexOf('created: ') + 'created: '.length;
  const damagedEntries: Array<[string, string]> = [
    ['a time cut short', older.slice(0, created + 13)],
    ['a record without its hash and time', older.slice(0, older.lastIndexOf('    hash: '))],
    ['a key recorded twice', `${older}${older.slice(older.indexOf('  - id:'), older.indexOf('  - id:', older.indexOf('  - id:') + 1))}`],
  ];
  for (const [kind, damaged] of damagedEntries) {
    await writeFile(file, damaged);
    const answer = await status(server, admin);
    t.is(answer.status, 503, kind);
    t.regex(answer.error ?? '', REFUSAL, kind);
    t.regex(
      (await cliFailure('key', 'list', 'acme', '--data', data)).stderr,
      /^c4store: The data directory's keys\.yaml cannot be read: /,
      kind,
    );
  }

  // The command line's next write seals it, every key as it was.
  await writeFile(file, older);
  const added = lastLine(await cli('key', 'create', 'acme', '--label', 'added', '--data', data));
  const resealed = await readFile(file, 'utf8');
  t.is(SEAL.exec(resealed)?.[1], '4');
  for (const key of [admin, kept, added]) t.is((await status(server, key)).status, 200);
  t.is((await status(server, leaving)).status, 401);
});

test('a server start seals a keys.yaml without a seal, keys unchanged', async (t) => {
  const { data, file, admin, leaving, server } = await organization();
  const sealed = await readFile(file, 'utf8');
  await server.stop();
  await writeFile(file, unsealed(sealed, true), { mode: 0o600 });
  const restarted = await serveProcess(data);
  t.teardown(() => restarted.stop());
  const text = await readFile(file, 'utf8');
  t.is(SEAL.exec(text)?.[1], '3');
  t.deepEqual(parse(text).keys, parse(sealed).keys, 'the same keys, in the same order, each revocation before its hash');
  t.is((await status(restarted, admin)).status, 200);
  t.is((await status(restarted, leaving)).status, 401);
});

test('after a change by hand, deleting the seal line makes the file valid again, as the refusal says; the next write seals it anew', async (t) => {
  const { data, file, admin, kept, server } = await organization();
  t.teardown(() => server.stop());
  const sealed = await readFile(file, 'utf8');
  const edited = sealed.replace('label: kept', 'label: renamed');
  await writeFile(file, edited);
  t.deepEqual(await status(server, kept), { status: 503, error: SEAL_REFUSAL });
  t.is((await cliFailure('key', 'list', 'acme', '--data', data)).stderr.trim(), `c4store: ${SEAL_REFUSAL}`);

  await writeFile(file, edited.slice(edited.indexOf('\n') + 1));
  t.is((await status(server, kept)).status, 200);
  t.regex(await cli('key', 'list', 'acme', '--data', data), /\trenamed\teditor\t/);
  await cli('key', 'create', 'acme', '--label', 'after-edit', '--data', data);
  const resealed = await readFile(file, 'utf8');
  t.is(SEAL.exec(resealed)?.[1], '4');
  t.true(resealed.includes('label: renamed'));
  t.is((await status(server, admin)).status, 200);
});
