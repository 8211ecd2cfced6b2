#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { putOrganization } from './model/draft.js';
import { newId } from './model/ids.js';
import { apiContextOf } from './http/resource.js';
import { startServer } from './server.js';
import { Orgs } from './service/orgs.js';
import { KeyStore, type Role } from './store/keys.js';

const USAGE = `c4store — a git-backed store for C4 architecture models

Usage:
  c4store serve [--data DIR] [--port 8080] [--host 127.0.0.1] [--public-url URL] [--durable] [--demo]
  c4store org create <slug> [--name NAME] [--member EMAIL]... [--from DIR] [--data DIR]
  c4store key create <slug> [--label LABEL] [--role editor|reader] [--data DIR]
  c4store key revoke <slug> <key-id> [--data DIR]
  c4store key list <slug> [--data DIR]
  c4store member add <slug> <email> [--data DIR]
  c4store upgrade <slug> [--data DIR]

The data directory defaults to $C4STORE_DATA, else ./data. --durable (or C4STORE_DURABLE=1)
fsyncs every write before answering it. --demo creates organization 'demo' from sample-repo/
when the data directory has no organization yet, and prints its key.
org create and key create print the new API key as the last line of standard output.
upgrade moves an organization's repository from the flat layout (components/<id>.yaml) to
the sharded one (components/<shard>/<id>.yaml) in one commit; serve does so at start-up.`;

class UsageError extends Error {}

const CLI_AUTHOR = { name: 'c4store command line', email: 'cli@c4store' };
const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const OPTIONS = {
  data: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'public-url': { type: 'string' },
  durable: { type: 'boolean' },
  demo: { type: 'boolean' },
  name: { type: 'string' },
  member: { type: 'string', multiple: true },
  from: { type: 'string' },
  label: { type: 'string' },
  role: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function dataDir(values: Values): string {
  return resolve(values.data ?? process.env.C4STORE_DATA ?? 'data');
}

function durable(values: Values): boolean {
  return values.durable ?? process.env.C4STORE_DURABLE === '1';
}

function positionals(args: string[], count: number, usage: string): string[] {
  if (args.length !== count) throw new UsageError(`usage: c4store ${usage}`);
  return args;
}

async function serve(values: Values): Promise<void> {
  const data = dataDir(values);
  const port = Number(values.port ?? process.env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`invalid --port ${values.port}`);
  const orgs = new Orgs(data, { durable: durable(values) });
  let demoKey: string | undefined;
  if (values.demo && (await orgs.list()).length === 0) {
    await orgs.create('demo', { from: join(PACKAGE_ROOT, 'sample-repo'), author: CLI_AUTHOR });
    demoKey = (await new KeyStore(data).create('demo', { label: 'demo' })).key;
  }
  // Before serving: repositories from before sharding move to the sharded layout (one commit each).
  for (const slug of await orgs.list()) {
    try {
      const upgrade = await orgs.get(slug).upgradeLayout(CLI_AUTHOR);
      if (upgrade.moved > 0) console.log(describeUpgrade(slug, upgrade));
    } catch (err) {
      console.error(`'${slug}' stays in its layout for now: ${(err as Error).message}`);
    }
  }
  const server = await startServer({
    dataDir: data, port, host: values.host, publicUrl: values['public-url'], durable: durable(values),
  });
  if (demoKey) {
    console.log(`created organization 'demo' from sample-repo/ in ${data}; its API key (shown once):\n${demoKey}`);
    console.log(`try: curl -H 'Authorization: Bearer ${demoKey}' ${server.url}/api/external/component`);
  } else if (values.demo) {
    console.log(`serving the organizations in ${data}; a new key: node dist/cli.js key create <slug> --data ${data}`);
  }
  console.log(`listening on ${server.url}`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function describeUpgrade(slug: string, { commit, moved }: { commit: string; moved: number }): string {
  return moved === 0
    ? `'${slug}' already uses the sharded layout (commit ${commit})`
    : `moved ${moved} files of '${slug}' to the sharded layout in commit ${commit}`;
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals: args } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, sub, ...rest] = args;
  if (values.help || command === undefined || command === 'help') {
    console.log(USAGE);
    return;
  }
  const data = dataDir(values);
  const orgs = new Orgs(data, { durable: durable(values) });
  const keys = new KeyStore(data);
  const requireOrg = (slug: string) => {
    if (!orgs.exists(slug)) throw new Error(`organization '${slug}' does not exist in ${data}`);
  };
  if (command === 'upgrade') {
    const [slug] = positionals(args.slice(1), 1, 'upgrade <slug>');
    requireOrg(slug);
    console.log(describeUpgrade(slug, await orgs.get(slug).upgradeLayout(CLI_AUTHOR)));
    return;
  }
  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'serve':
      if (sub !== undefined) throw new UsageError('usage: c4store serve [options]');
      return serve(values);
    case 'org create': {
      const [slug] = positionals(rest, 1, 'org create <slug> [--name NAME] [--member EMAIL]... [--from DIR]');
      if (values.from && !existsSync(values.from)) throw new Error(`--from ${values.from}: no such folder`);
      await orgs.create(slug, { name: values.name, members: values.member, from: values.from, author: CLI_AUTHOR });
      const { key, record } = await keys.create(slug, { label: values.label ?? 'admin' });
      console.log(`created organization '${slug}' in ${orgs.gitdir(slug)}`);
      console.log(`API key ${record.id} (${record.label}, ${record.role}), shown once:`);
      console.log(key);
      return;
    }
    case 'key create': {
      const [slug] = positionals(rest, 1, 'key create <slug> [--label LABEL] [--role editor|reader]');
      requireOrg(slug);
      const role = (values.role ?? 'editor') as Role;
      if (role !== 'editor' && role !== 'reader') throw new UsageError(`--role must be editor or reader, not '${values.role}'`);
      const { key, record } = await keys.create(slug, { label: values.label, role });
      console.log(`API key ${record.id} (${record.label}, ${record.role}) for '${slug}', shown once:`);
      console.log(key);
      return;
    }
    case 'key revoke': {
      const [slug, keyId] = positionals(rest, 2, 'key revoke <slug> <key-id>');
      const record = await keys.revoke(slug, keyId);
      console.log(`revoked key ${record.id} (${record.label}) of '${slug}'`);
      return;
    }
    case 'key list': {
      const [slug] = positionals(rest, 1, 'key list <slug>');
      requireOrg(slug);
      for (const k of await keys.list(slug)) {
        console.log([k.id, k.label, k.role, k.created, k.revoked ? `revoked ${k.revoked}` : 'active'].join('\t'));
      }
      return;
    }
    case 'member add': {
      const [slug, email] = positionals(rest, 2, 'member add <slug> <email>');
      requireOrg(slug);
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError(`'${email}' is not an e-mail address`);
      const org = orgs.get(slug);
      const { snapshot } = await org.write({
        author: CLI_AUTHOR,
        title: `c4store member add ${email}`,
        options: { apiContext: apiContextOf(new Date()), newId: () => newId(), layout: 'keep' },
      }, (draft) => {
        const { members } = draft.base.organization;
        if (!members.includes(email)) putOrganization(draft, { ...draft.base.organization, members: [...members, email] });
      });
      console.log(`${email} is a member of '${slug}' (commit ${snapshot.commit})`);
      return;
    }
    default:
      throw new UsageError(`unknown command '${args.join(' ')}'\n\n${USAGE}`);
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  console.error(`c4store: ${(err as Error).message}`);
  process.exit(usage ? 2 : 1);
});
